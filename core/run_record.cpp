#include "run_record.h"

#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace normlab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSchemaName = "normlab.run";
const char* const kStatusNames[] = {"queued", "running", "done", "stopped", "diverged", "failed"};

// JSON has no NaN or infinity: a diverged loss is written as null.
json number(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

// Reads `object[key]` as T; anything missing or mistyped becomes a UserError naming the field.
template <typename T>
T field(const json& object, const char* key, const std::string& where) {
  const std::string name = where.empty() ? key : where + "." + key;
  if (!object.is_object() || !object.contains(key)) throw UserError("field '" + name + "' is missing");
  const json& value = object.at(key);
  if constexpr (std::is_floating_point_v<T>) {
    if (value.is_null()) return std::numeric_limits<T>::quiet_NaN();
    if (!value.is_number()) throw UserError("field '" + name + "' must be a number");
  } else if constexpr (std::is_integral_v<T>) {
    // nlohmann's get<T> would wrap an out-of-range integer into a different valid-looking one.
    bool fits = false;
    if (value.is_number_unsigned()) {
      fits = value.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<T>::max());
    } else if (value.is_number_integer()) {
      const auto v = value.get<std::int64_t>();
      fits = std::is_signed_v<T> ? v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max()
                                 : v >= 0;
    }
    if (!fits) {
      throw UserError("field '" + name + "' must be an integer from " +
                      std::to_string(std::numeric_limits<T>::min()) + " to " +
                      std::to_string(std::numeric_limits<T>::max()));
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) throw UserError("field '" + name + "' must be a string");
  } else if (!value.is_array() && !value.is_object()) {
    throw UserError("field '" + name + "' must be an object or an array");
  }
  return value.get<T>();
}

json config_to_json(const TrainConfig& c) {
  return {{"norm", to_string(c.model.norm)}, {"layers", c.model.layers},
          {"d_model", c.model.d_model},      {"heads", c.model.heads},
          {"context", c.model.context},      {"vocab", c.model.vocab},
          {"peak_lr", c.peak_lr},            {"warmup_steps", c.warmup_steps},
          {"steps", c.steps},                {"batch_size", c.batch_size},
          {"weight_decay", c.weight_decay},  {"clip_grad_norm", c.clip_grad_norm},
          {"seed", c.seed},                  {"device", c.device},
          {"threads", c.threads},
          {"eval_interval", c.eval_interval}, {"eval_batches", c.eval_batches},
          {"corpus", c.corpus_path}};
}

TrainConfig config_from_json(const json& j, const std::string& name) {
  const std::string at = "config";
  TrainConfig c;
  c.name = name;
  c.model.norm = parse_norm(field<std::string>(j, "norm", at));
  c.model.layers = field<int>(j, "layers", at);
  c.model.d_model = field<int>(j, "d_model", at);
  c.model.heads = field<int>(j, "heads", at);
  c.model.context = field<int>(j, "context", at);
  c.model.vocab = field<int>(j, "vocab", at);
  c.peak_lr = field<double>(j, "peak_lr", at);
  c.warmup_steps = field<int>(j, "warmup_steps", at);
  c.steps = field<int>(j, "steps", at);
  c.batch_size = field<int>(j, "batch_size", at);
  c.weight_decay = field<double>(j, "weight_decay", at);
  c.clip_grad_norm = field<double>(j, "clip_grad_norm", at);
  c.seed = field<std::uint64_t>(j, "seed", at);
  c.device = field<std::string>(j, "device", at);
  c.threads = field<int>(j, "threads", at);
  c.eval_interval = field<int>(j, "eval_interval", at);
  c.eval_batches = field<int>(j, "eval_batches", at);
  c.corpus_path = field<std::string>(j, "corpus", at);
  validate(c);
  return c;
}

// Series are stored column-wise: compact, and easy to check for equal lengths.
template <typename Point, std::size_t N>
json columns(const std::vector<Point>& points, const char* const (&names)[N],
             double (*get)(const Point&, std::size_t)) {
  json out = json::object();
  for (std::size_t k = 0; k < N; ++k) {
    json column = json::array();
    for (const auto& p : points) column.push_back(number(get(p, k)));
    out[names[k]] = std::move(column);
  }
  return out;
}

template <typename Point, std::size_t N>
std::vector<Point> rows(const json& j, const char* where, const char* const (&names)[N],
                        void (*set)(Point&, std::size_t, double)) {
  std::vector<std::vector<double>> data;
  for (const char* name : names) {
    auto column = field<json>(j, name, where);
    std::vector<double> values;
    for (const auto& v : column) {
      if (!v.is_number() && !v.is_null()) {
        throw UserError(std::string("field '") + where + "." + name + "' must hold numbers");
      }
      values.push_back(v.is_null() ? std::nan("") : v.get<double>());
    }
    if (!data.empty() && values.size() != data.front().size()) {
      throw UserError(std::string("columns of '") + where + "' differ in length");
    }
    data.push_back(std::move(values));
  }
  std::vector<Point> points(data.front().size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t k = 0; k < N; ++k) set(points[i], k, data[k][i]);
  }
  return points;
}

const char* const kStepColumns[] = {"step", "wall_s", "lr", "train_loss", "tokens_per_s"};
const char* const kEvalColumns[] = {"step", "wall_s", "val_loss"};

// Step numbers are stored as JSON numbers; converting NaN or 1e10 to int is undefined.
int step_number(double v, const char* column) {
  if (!(v >= 0 && v <= std::numeric_limits<int>::max() && v == std::floor(v))) {
    throw UserError(std::string("field '") + column + "' must hold whole step numbers from 0 to " +
                    std::to_string(std::numeric_limits<int>::max()));
  }
  return int(v);
}

double get_step(const StepMetrics& p, std::size_t k) {
  const double values[] = {double(p.step), p.wall_s, p.lr, p.train_loss, p.tokens_per_s};
  return values[k];
}
void set_step(StepMetrics& p, std::size_t k, double v) {
  switch (k) {
    case 0: p.step = step_number(v, "steps.step"); break;
    case 1: p.wall_s = v; break;
    case 2: p.lr = v; break;
    case 3: p.train_loss = v; break;
    default: p.tokens_per_s = v;
  }
}
double get_eval(const EvalMetrics& p, std::size_t k) {
  const double values[] = {double(p.step), p.wall_s, p.val_loss};
  return values[k];
}
void set_eval(EvalMetrics& p, std::size_t k, double v) {
  switch (k) {
    case 0: p.step = step_number(v, "evals.step"); break;
    case 1: p.wall_s = v; break;
    default: p.val_loss = v;
  }
}

}  // namespace

std::string to_string(RunStatus status) { return kStatusNames[static_cast<int>(status)]; }

RunStatus parse_status(const std::string& text) {
  for (int i = 0; i < int(std::size(kStatusNames)); ++i) {
    if (text == kStatusNames[i]) return static_cast<RunStatus>(i);
  }
  throw UserError("unknown run status '" + text + "'");
}

double RunRecord::final_val_loss() const {
  return evals.empty() ? std::nan("") : evals.back().val_loss;
}

std::string to_json_text(const RunRecord& run) {
  const Environment& e = run.environment;
  json j = {{"schema", kSchemaName},
            {"version", kRunSchemaVersion},
            {"name", run.config.name},
            {"status", to_string(run.status)},
            {"message", run.message},
            {"config", config_to_json(run.config)},
            {"environment", {{"app_version", e.app_version},
                             {"libtorch_version", e.libtorch_version},
                             {"device", e.device},
                             {"device_name", e.device_name},
                             {"threads", e.threads}}},
            {"parameters", run.parameters},
            {"train_tokens", run.train_tokens},
            {"heldout_tokens", run.heldout_tokens},
            {"baseline_loss", number(run.baseline_loss)},
            {"steps", columns(run.steps, kStepColumns, get_step)},
            {"evals", columns(run.evals, kEvalColumns, get_eval)}};
  return j.dump(1) + "\n";
}

RunRecord from_json_text(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& error) {  // parse_error, or out_of_range for 1e999
    throw UserError(std::string("not valid JSON (") + error.what() + ")");
  }
  if (!j.is_object() || !j.contains("schema") || j["schema"] != kSchemaName) {
    throw UserError("not a NormLab run file (no \"schema\": \"normlab.run\")");
  }
  const int version = field<int>(j, "version", "");
  if (version != kRunSchemaVersion) {
    throw UserError("run file schema version " + std::to_string(version) +
                    " is not the supported version " + std::to_string(kRunSchemaVersion));
  }
  RunRecord run;
  const std::string name = field<std::string>(j, "name", "");
  if (name.empty()) throw UserError("field 'name' is empty");
  run.config = config_from_json(field<json>(j, "config", ""), name);
  run.status = parse_status(field<std::string>(j, "status", ""));
  run.message = field<std::string>(j, "message", "");
  const json env = field<json>(j, "environment", "");
  run.environment = {field<std::string>(env, "app_version", "environment"),
                     field<std::string>(env, "libtorch_version", "environment"),
                     field<std::string>(env, "device", "environment"),
                     field<std::string>(env, "device_name", "environment"),
                     field<int>(env, "threads", "environment")};
  run.parameters = field<std::int64_t>(j, "parameters", "");
  run.train_tokens = field<std::int64_t>(j, "train_tokens", "");
  run.heldout_tokens = field<std::int64_t>(j, "heldout_tokens", "");
  run.baseline_loss = field<double>(j, "baseline_loss", "");
  run.steps = rows<StepMetrics>(field<json>(j, "steps", ""), "steps", kStepColumns, set_step);
  run.evals = rows<EvalMetrics>(field<json>(j, "evals", ""), "evals", kEvalColumns, set_eval);
  return run;
}

void write_file_atomically(const fs::path& path, const std::string& contents) {
  // Why the first step that failed did: "No space left on device", "Permission denied"...
  std::string failure;
  const auto fail = [&failure](const std::string& reason) {
    if (failure.empty()) failure = reason;
  };
  std::error_code error;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), error);  // open says why not
  fs::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(std::strerror(errno));
  for (std::size_t done = 0; failure.empty() && done < contents.size();) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? std::strerror(errno) : "the disk took no more bytes");
    else done += std::size_t(n);
  }
  // fsync before rename: after a crash the name points at the old file or the whole new one.
  if (failure.empty() && ::fsync(fd) != 0) fail(std::strerror(errno));
  if (fd >= 0 && ::close(fd) != 0) fail(std::strerror(errno));
  if (failure.empty()) {
    fs::rename(temp, path, error);
    if (error) fail(error.message());
  }
  if (!failure.empty()) {
    fs::remove(temp, error);
    throw UserError("cannot write " + path.string() + ": " + failure);
  }
}

void write_json(const RunRecord& run, const fs::path& path) {
  write_file_atomically(path, to_json_text(run));
}

void write_csv(const std::vector<RunRecord>& runs, const fs::path& path) {
  std::ostringstream csv;
  csv.precision(9);
  csv << "run,step,wall_s,lr,train_loss,val_loss\n";
  for (const auto& run : runs) {
    std::string name = run.config.name;  // quoted: names hold spaces, maybe commas or quotes
    for (std::size_t at = 0; (at = name.find('"', at)) != std::string::npos; at += 2) name.insert(at, "\"");
    auto eval = run.evals.begin();
    for (const auto& s : run.steps) {
      while (eval != run.evals.end() && eval->step < s.step) ++eval;
      csv << '"' << name << "\"," << s.step << ',' << s.wall_s << ',' << s.lr << ',';
      if (std::isfinite(s.train_loss)) csv << s.train_loss;
      csv << ',';
      if (eval != run.evals.end() && eval->step == s.step && std::isfinite(eval->val_loss)) {
        csv << eval->val_loss;
      }
      csv << '\n';
    }
  }
  write_file_atomically(path, csv.str());
}

RunRecord read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return from_json_text(text.str());
  } catch (const UserError& error) {
    throw UserError(path.string() + ": " + error.what());
  }
}

}  // namespace normlab
