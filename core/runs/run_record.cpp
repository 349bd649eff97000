#include "run_record.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/system/atomic_file.h"

#include "config_fields.h"
#include "run_text.h"
#include "run_title.h"
#include "verdict.h"

namespace normlab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSchemaName = "normlab.run";
const char* const kStatusNames[] = {"queued", "running", "done", "stopped", "diverged", "failed", "interrupted"};

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
      fits = std::is_signed_v<T> ? v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max() : v >= 0;
    }
    if (!fits) {
      throw UserError("field '" + name + "' must be an integer from " + std::to_string(std::numeric_limits<T>::min()) +
                      " to " + std::to_string(std::numeric_limits<T>::max()));
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) throw UserError("field '" + name + "' must be a string");
  } else if (!value.is_array() && !value.is_object()) {
    throw UserError("field '" + name + "' must be an object or an array");
  }
  return value.get<T>();
}

json config_to_json(const TrainConfig& c) {
  json j = json::object();
  for (const ConfigField& f : config_fields()) {
    visit_field(f, c, [&](const auto& value) {
      if constexpr (std::is_enum_v<std::decay_t<decltype(value)>>) j[f.key] = field_text(f, c);
      else j[f.key] = value;
    });
  }
  return j;
}

// Fields newer than the file's version are not in it and keep their defaults, or take
// the value older files stand for.
TrainConfig config_from_json(const json& j, const std::string& name, int version) {
  const std::string at = "config";
  TrainConfig c;
  c.name = name;
  for (const ConfigField& f : config_fields()) {
    if (version < f.since_version) {
      if (!f.older_files_text.empty()) set_field_text(f, c, f.older_files_text);
      continue;
    }
    visit_field(f, c, [&](auto& value) {
      using T = std::decay_t<decltype(value)>;
      if constexpr (std::is_enum_v<T>) set_field_text(f, c, field<std::string>(j, f.key.c_str(), at));
      else value = field<T>(j, f.key.c_str(), at);
    });
  }
  validate(c);
  return c;
}

std::vector<double> numbers_from(const json& column, const std::string& where) {
  if (!column.is_array()) throw UserError("field '" + where + "' must be an array");
  std::vector<double> values;
  for (const auto& v : column) {
    if (!v.is_number() && !v.is_null()) throw UserError("field '" + where + "' must hold numbers");
    values.push_back(v.is_null() ? std::nan("") : v.get<double>());
  }
  return values;
}

// A column of numbers streamed from the record when the file is written, not held as a
// json array: saves come every few seconds, and a tree of every step's numbers (16 bytes
// each, plus the text) would make each one as large as the file several times over.
struct StreamedColumn {
  std::size_t size;
  std::function<json(std::size_t)> at;
};
using StreamedColumns = std::vector<StreamedColumn>;

// Marks where a streamed column goes in the file's tree: a binary value (a record holds
// none) whose bytes are the column's index.
json column_slot(StreamedColumns& columns, StreamedColumn column) {
  const std::size_t index = columns.size();
  columns.push_back(std::move(column));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&index);
  return json::binary(json::binary_t::container_type(bytes, bytes + sizeof index));
}

const StreamedColumn& slot_column(const json& slot, const StreamedColumns& columns) {
  std::size_t index = 0;
  std::memcpy(&index, slot.get_binary().data(), sizeof index);
  return columns.at(index);
}

void write_spaces(std::ostream& out, int count) {
  for (int i = 0; i < count; ++i) out.put(' ');
}

// Writes `j` byte for byte as j.dump(1) would at depth `indent`, each column slot as the
// array its numbers make; only a single number is held as json at a time.
void dump_streamed(std::ostream& out, const json& j, int indent, const StreamedColumns& columns) {
  const auto list = [&](char open, char close, std::size_t size, const auto& item) {
    if (size == 0) {
      out << open << close;
      return;
    }
    out << open << '\n';
    for (std::size_t i = 0; i < size; ++i) {
      write_spaces(out, indent + 1);
      item(i);
      out << (i + 1 < size ? ",\n" : "\n");
    }
    write_spaces(out, indent);
    out << close;
  };
  if (j.is_binary()) {
    const StreamedColumn& column = slot_column(j, columns);
    list('[', ']', column.size, [&](std::size_t i) { out << column.at(i); });
  } else if (j.is_object()) {
    auto it = j.items().begin();
    list('{', '}', j.size(), [&](std::size_t) {
      out << json(it.key()) << ": ";
      dump_streamed(out, it.value(), indent + 1, columns);
      ++it;
    });
  } else if (j.is_array()) {
    list('[', ']', j.size(), [&](std::size_t i) { dump_streamed(out, j[i], indent + 1, columns); });
  } else {
    out << j;
  }
}

// A series as {"layers": L, "step": [...], "values": [...]}; with layers, "values"
// holds one array per layer, so a layer's curve reads as one list.
json series_to_json(const Series& s, StreamedColumns& columns) {
  const auto values_of = [&s](int layer) {
    return StreamedColumn{s.steps.size(), [&s, layer](std::size_t i) { return number(s.at(i, layer)); }};
  };
  json values = json::array();
  if (s.layers == 0) {
    values = column_slot(columns, values_of(0));
  } else {
    for (int layer = 0; layer < s.layers; ++layer) values.push_back(column_slot(columns, values_of(layer)));
  }
  const json steps = column_slot(columns, {s.steps.size(), [&s](std::size_t i) { return json(s.steps[i]); }});
  return {{"layers", s.layers}, {"step", steps}, {"values", std::move(values)}};
}

// Step numbers are stored as JSON numbers; converting NaN or 1e10 to int is undefined.
int step_number(double v, const char* column) {
  if (!(v >= 0 && v <= std::numeric_limits<int>::max() && v == std::floor(v))) {
    throw UserError(std::string("field '") + column + "' must hold whole step numbers from 0 to " +
                    std::to_string(std::numeric_limits<int>::max()));
  }
  return int(v);
}

Series series_from_json(const std::string& name, const json& j) {
  const std::string where = "series." + name;
  Series s;
  s.name = name;
  s.layers = field<int>(j, "layers", where);
  if (s.layers < 0 || s.layers > 4096) throw UserError("field '" + where + ".layers' is out of range");
  for (const auto& step : field<json>(j, "step", where)) {
    if (!step.is_number()) throw UserError("field '" + where + ".step' must hold whole numbers");
    s.steps.push_back(step_number(step.get<double>(), (where + ".step").c_str()));
  }
  const json values = field<json>(j, "values", where);
  if (s.layers == 0) {
    s.values = numbers_from(values, where + ".values");
  } else {
    if (!values.is_array() || values.size() != std::size_t(s.layers)) {
      throw UserError("field '" + where + ".values' must hold one array per layer");
    }
    s.values.resize(s.steps.size() * std::size_t(s.layers));
    for (int layer = 0; layer < s.layers; ++layer) {
      const auto row = numbers_from(values[std::size_t(layer)], where + ".values");
      if (row.size() != s.steps.size()) throw UserError("columns of '" + where + "' differ in length");
      for (std::size_t i = 0; i < row.size(); ++i) s.values[i * std::size_t(s.layers) + std::size_t(layer)] = row[i];
    }
  }
  if (s.values.size() != s.steps.size() * std::size_t(s.width())) {
    throw UserError("columns of '" + where + "' differ in length");
  }
  return s;
}

// Series are stored column-wise: compact, and easy to check for equal lengths.
template <typename Point, std::size_t N>
json columns(const std::vector<Point>& points, const char* const (&names)[N], double (*get)(const Point&, std::size_t),
             StreamedColumns& streamed) {
  json out = json::object();
  for (std::size_t k = 0; k < N; ++k) {
    out[names[k]] =
        column_slot(streamed, {points.size(), [&points, get, k](std::size_t i) { return number(get(points[i], k)); }});
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

bool same_points(const RunRecord& a, const RunRecord& b) {
  const auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  const auto same_step = [&](const StepMetrics& x, const StepMetrics& y) {
    return x.step == y.step && same(x.train_loss, y.train_loss) && same(x.lr, y.lr);
  };
  const auto same_eval = [&](const EvalMetrics& x, const EvalMetrics& y) {
    return x.step == y.step && same(x.val_loss, y.val_loss);
  };
  return std::equal(a.steps.begin(), a.steps.end(), b.steps.begin(), b.steps.end(), same_step) &&
         std::equal(a.evals.begin(), a.evals.end(), b.evals.begin(), b.evals.end(), same_eval);
}

double RunRecord::final_val_loss() const { return evals.empty() ? std::nan("") : evals.back().val_loss; }

RunRecord::LossesOverSteps RunRecord::final_losses() const {
  if (evals.empty()) return {-1, -1, std::nan(""), std::nan("")};
  return losses_up_to(evals.back().step);
}

RunRecord::LossesOverSteps RunRecord::losses_up_to(int step) const {
  LossesOverSteps losses{-1, -1, std::nan(""), std::nan("")};
  const int first_eval = evals.empty() ? std::numeric_limits<int>::max() : evals.front().step;
  const auto by_step = [](int at, const StepMetrics& s) { return at < s.step; };
  const auto end = std::upper_bound(steps.begin(), steps.end(), step, by_step);
  const auto from = std::upper_bound(steps.begin(), end, first_eval - 1, by_step);  // from the first evaluation on
  const auto begin = end - std::min<std::ptrdiff_t>(end - from, std::ptrdiff_t(kGapWindow));
  if (begin == end) return losses;
  double training = 0, heldout = 0;
  auto after = evals.begin();  // the first evaluation at or past the step in hand
  for (auto s = begin; s != end; ++s) {
    training += s->train_loss;
    after = std::find_if(after, evals.end(), [&](const EvalMetrics& e) { return e.step >= s->step; });
    if (after == evals.end()) {
      heldout = std::nan("");
    } else if (after->step == s->step || after == evals.begin()) {
      heldout += after->val_loss;
    } else {
      const EvalMetrics& before = *std::prev(after);
      const double t = double(s->step - before.step) / double(after->step - before.step);
      heldout += before.val_loss + t * (after->val_loss - before.val_loss);
    }
  }
  const double n = double(end - begin);
  return {begin->step, std::prev(end)->step, training / n, heldout / n};
}

const Series* RunRecord::find_series(const std::string& name) const {
  for (const Series& s : series) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void RunRecord::add_point(const SeriesPoint& point) {
  auto found = std::find_if(series.begin(), series.end(), [&](const Series& s) { return s.name == point.series; });
  if (found == series.end()) found = series.insert(series.end(), Series{point.series, point.layers, {}, {}});
  if (found->layers != point.layers || point.values.size() != std::size_t(found->width())) {
    throw std::logic_error("series '" + point.series + "' recorded with another number of layers");
  }
  found->steps.push_back(point.step);
  found->values.insert(found->values.end(), point.values.begin(), point.values.end());
}

json text_to_json(const RunText& text) {
  json samples = json::array();
  for (const TextSample& s : text.samples) {
    json sample = {{"step", s.step}, {"greedy", s.greedy}, {"sampled", s.sampled}};
    if (!text.references.empty()) sample["reference_probability"] = s.reference_probability;
    samples.push_back(std::move(sample));
  }
  json j = {{"prompts", text.prompts}, {"samples", samples}};
  if (!text.references.empty()) j["references"] = text.references;
  return j;
}

std::vector<std::string> texts_from_json(const json& j, const char* key, const std::string& where) {
  const json list = field<json>(j, key, where);
  if (!list.is_array()) throw UserError("field '" + where + "." + key + "' must be a list of texts");
  std::vector<std::string> texts;
  for (const json& text : list) {
    if (!text.is_string()) throw UserError("field '" + where + "." + key + "' must be a list of texts");
    texts.push_back(text.get<std::string>());
  }
  return texts;
}

// One probability per reference token, each between 0 and 1.
std::vector<std::vector<double>> probabilities_from_json(const json& s, const RunText& text) {
  const json lists = field<json>(s, "reference_probability", "text.samples");
  const char* fault = "field 'text.samples.reference_probability' must hold a probability per reference token";
  if (!lists.is_array() || lists.size() != text.references.size()) throw UserError(fault);
  std::vector<std::vector<double>> probabilities;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    if (!lists[i].is_array() || lists[i].size() != text.references[i].size()) throw UserError(fault);
    auto& list = probabilities.emplace_back();
    for (const json& p : lists[i]) {
      if (!p.is_number() || !(p.get<double>() >= 0 && p.get<double>() <= 1)) throw UserError(fault);
      list.push_back(p.get<double>());
    }
  }
  return probabilities;
}

RunText text_from_json(const json& j) {
  RunText text;
  text.prompts = texts_from_json(j, "prompts", "text");
  if (j.contains("references")) {
    const json references = j.at("references");
    if (!references.is_array() || references.size() != text.prompts.size()) {
      throw UserError("field 'text.references' must hold one list of tokens per prompt");
    }
    for (const json& reference : references) {
      text.references.push_back(texts_from_json(json{{"tokens", reference}}, "tokens", "text.references"));
    }
  }
  const json samples = field<json>(j, "samples", "text");
  if (!samples.is_array()) throw UserError("field 'text.samples' must be a list");
  int last_step = -1;
  for (const json& s : samples) {
    TextSample sample{step_number(field<double>(s, "step", "text.samples"), "text.samples.step"),
                      texts_from_json(s, "greedy", "text.samples"), texts_from_json(s, "sampled", "text.samples")};
    if (sample.greedy.size() != text.prompts.size() || sample.sampled.size() != text.prompts.size()) {
      throw UserError("field 'text.samples' must hold one text per prompt");
    }
    if (!text.references.empty()) sample.reference_probability = probabilities_from_json(s, text);
    if (sample.step <= last_step) throw UserError("field 'text.samples' must be in increasing step order");
    last_step = sample.step;
    text.samples.push_back(std::move(sample));
  }
  return text;
}

RunProgress progress_of(RunStatus status) {
  switch (status) {
    case RunStatus::Done:
    case RunStatus::Diverged: return RunProgress::Result;
    case RunStatus::Running:
    case RunStatus::Queued: return RunProgress::Pending;
    case RunStatus::Stopped:
    case RunStatus::Interrupted:
    case RunStatus::Failed: return RunProgress::CutShort;
  }
  return RunProgress::CutShort;  // not reached: the switch names every status
}

bool mark_interrupted(RunRecord& run, const std::string& why) {
  if (run.status != RunStatus::Running) return false;
  run.status = RunStatus::Interrupted;
  run.message = why;
  return true;
}

void write_json_text(std::ostream& out, const RunRecord& run) {
  const Environment& e = run.environment;
  StreamedColumns streamed;
  json j = {{"schema", kSchemaName},
            {"version", kRunSchemaVersion},
            {"name", run.config.name},
            {"label", run.config.label},
            {"note", run.config.note},
            {"status", to_string(run.status)},
            {"message", run.message},
            {"config", config_to_json(run.config)},
            {"environment",
             {{"app_version", e.app_version},
              {"libtorch_version", e.libtorch_version},
              {"device", e.device},
              {"device_name", e.device_name},
              {"threads", e.threads},
              {"precision", e.precision},
              {"engine", e.engine},
              {"cpu", e.cpu}}},
            {"parameters", run.parameters},
            {"train_tokens", run.train_tokens},
            {"heldout_tokens", run.heldout_tokens},
            {"baseline_loss", number(run.baseline_loss)},
            {"corpus_name", run.corpus_name},
            {"corpus_hash", run.corpus_hash},
            {"steps", columns(run.steps, kStepColumns, get_step, streamed)},
            {"evals", columns(run.evals, kEvalColumns, get_eval, streamed)},
            {"series", json::object()},
            {"text", text_to_json(run.text)}};
  for (const Series& s : run.series) j["series"][s.name] = series_to_json(s, streamed);
  if (run.config.shade >= 0) j["shade"] = run.config.shade;  // the window's runs only
  dump_streamed(out, j, 0, streamed);
  out << '\n';
}

std::string to_json_text(const RunRecord& run) {
  std::ostringstream out;
  write_json_text(out, run);
  return out.str();
}

namespace {

// Before version 9 baseline_loss was over the whole held-out split while the held-out loss
// averages over the evaluated batches, which can be easier or harder. Versions 7 and 8 also
// recorded the unigram's loss on those batches as the series "unigram_loss": that is
// today's baseline, and the series goes (it repeated one number at every evaluation).
void take_baseline_from_evaluated_positions(RunRecord& run) {
  const auto unigram = std::find_if(run.series.begin(), run.series.end(),
                                    [](const Series& s) { return s.name == "unigram_loss" && s.layers == 0; });
  if (unigram == run.series.end()) return;
  if (!unigram->values.empty()) run.baseline_loss = unigram->values.back();
  run.series.erase(unigram);
}

}  // namespace

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
  if (version < 1 || version > kRunSchemaVersion) {
    throw UserError("run file schema version " + std::to_string(version) + " is not one this NormLab reads (1 to " +
                    std::to_string(kRunSchemaVersion) + ")");
  }
  RunRecord run;
  const std::string name = field<std::string>(j, "name", "");
  if (name.empty()) throw UserError("field 'name' is empty");
  run.config = config_from_json(field<json>(j, "config", ""), name, version);
  if (version >= 8) {
    run.config.label = field<std::string>(j, "label", "");
    run.config.note = field<std::string>(j, "note", "");
  } else if (name.rfind(default_run_name(run.config), 0) != 0) {
    run.config.label = name;  // a name the user gave (--name): what they call the run
  }
  // Any other value (negative, past an int, not a whole number) leaves the shade to the window.
  if (const auto shade = j.find("shade");
      shade != j.end() && shade->is_number_integer() && *shade >= 0 && *shade <= std::numeric_limits<int>::max()) {
    run.config.shade = shade->get<int>();
  }
  run.status = parse_status(field<std::string>(j, "status", ""));
  run.message = field<std::string>(j, "message", "");
  const json env = field<json>(j, "environment", "");
  run.environment = {field<std::string>(env, "app_version", "environment"),
                     field<std::string>(env, "libtorch_version", "environment"),
                     field<std::string>(env, "device", "environment"),
                     field<std::string>(env, "device_name", "environment"), field<int>(env, "threads", "environment")};
  if (version >= 3) run.environment.precision = field<std::string>(env, "precision", "environment");
  // Added within version 12, as older readers skip them; a file without them reads as not knowing.
  if (env.contains("engine")) run.environment.engine = field<std::string>(env, "engine", "environment");
  if (env.contains("cpu")) run.environment.cpu = field<std::string>(env, "cpu", "environment");
  run.parameters = field<std::int64_t>(j, "parameters", "");
  run.train_tokens = field<std::int64_t>(j, "train_tokens", "");
  run.heldout_tokens = field<std::int64_t>(j, "heldout_tokens", "");
  run.baseline_loss = field<double>(j, "baseline_loss", "");
  // Written since the corpora had names; a file without them reads as not knowing.
  if (j.contains("corpus_name")) run.corpus_name = field<std::string>(j, "corpus_name", "");
  if (j.contains("corpus_hash")) run.corpus_hash = field<std::string>(j, "corpus_hash", "");
  run.steps = rows<StepMetrics>(field<json>(j, "steps", ""), "steps", kStepColumns, set_step);
  run.evals = rows<EvalMetrics>(field<json>(j, "evals", ""), "evals", kEvalColumns, set_eval);
  if (version >= 2) {
    const json series = field<json>(j, "series", "");
    if (!series.is_object()) throw UserError("field 'series' must be an object");
    for (const auto& [name, s] : series.items()) run.series.push_back(series_from_json(name, s));
  }
  if (version >= 7) run.text = text_from_json(field<json>(j, "text", ""));
  if (version < 9) take_baseline_from_evaluated_positions(run);
  return run;
}

void write_json(const RunRecord& run, const fs::path& path) {
  write_file_atomically(path, [&run](std::ostream& out) { write_json_text(out, run); });
}

namespace {

// A run's settings as the cells its rows end with, one per field of the settings table,
// each led by a comma; text (a corpus path) quoted, as it may hold commas.
std::string settings_cells(const TrainConfig& config) {
  std::string cells;
  for (const ConfigField& f : config_fields()) {
    const bool text = visit_field(
        f, config, [](const auto& value) { return std::is_same_v<std::decay_t<decltype(value)>, std::string>; });
    const std::string value = field_text(f, config);
    cells += ',' + (text ? csv_quoted(value) : value);
  }
  return cells;
}

}  // namespace

void write_csv(const std::vector<RunRecord>& runs, const fs::path& path) {
  // Wide, one row per step: the form the course's notebooks plot directly
  // (df.plot(x="step", y="val_loss")), and the columns earlier versions wrote.
  std::vector<std::pair<std::string, int>> extra;  // (series, layer), in first-seen order
  std::set<std::string> seen;
  for (const auto& run : runs) {
    for (const Series& series : run.series) {
      if (!seen.insert(series.name).second) continue;
      for (int layer = 0; layer < series.width(); ++layer) extra.emplace_back(series.name, series.layers ? layer : -1);
    }
  }
  write_file_atomically(path, [&](std::ostream& csv) {
    // Row by row into the file: a save every few seconds holds no copy of the table.
    csv.precision(9);
    csv << "run,step,wall_s,lr,train_loss,val_loss";
    for (const auto& [name, layer] : extra) csv << ',' << (layer < 0 ? name : name + "[" + std::to_string(layer) + "]");
    // Every row carries its run's settings, so the CSVs of several runs concatenated group
    // by any of them (pandas: df.groupby(["config.norm", "config.peak_lr"])).
    // And what it is doing, as of this file (verdict.h), so a table of runs sorts by it.
    csv << ",display_name,note,verdict,verdict_step";
    for (const ConfigField& f : config_fields()) csv << ",config." << f.key;
    csv << '\n';
    auto cell = [&](double value) {
      csv << ',';
      if (std::isfinite(value)) csv << value;
    };
    for (const auto& run : runs) {
      const std::string name = csv_quoted(run.config.name);
      const RunVerdict verdict = judge(run);
      const std::string settings = ',' + csv_quoted(display_name(run.config)) + ',' + csv_quoted(run.config.note) +
                                   ',' + info(verdict.verdict).name + ',' +
                                   (verdict.since_step >= 0 ? std::to_string(verdict.since_step) : "") +
                                   settings_cells(run.config);
      auto step = run.steps.begin();
      auto eval = run.evals.begin();
      std::map<std::string, std::size_t> next;  // per series: the first point not yet passed
      // A row per step that trained or evaluated, in step order: the evaluation before the
      // first update (step 0) has a row of its own, its training cells empty.
      while (step != run.steps.end() || eval != run.evals.end()) {
        constexpr int kNone = std::numeric_limits<int>::max();
        const int row =
            std::min(step != run.steps.end() ? step->step : kNone, eval != run.evals.end() ? eval->step : kNone);
        const bool trained = step != run.steps.end() && step->step == row;
        const bool evaluated = eval != run.evals.end() && eval->step == row;
        csv << name << ',' << row << ',' << (trained ? step->wall_s : eval->wall_s) << ',';
        if (trained) csv << step->lr;
        cell(trained ? step->train_loss : std::nan(""));
        cell(evaluated ? eval->val_loss : std::nan(""));
        for (const auto& [series_name, layer] : extra) {
          const Series* series = run.find_series(series_name);
          std::size_t& i = next[series_name];
          while (series && i < series->steps.size() && series->steps[i] < row) ++i;
          const bool here = series && i < series->steps.size() && series->steps[i] == row;
          cell(here ? series->at(i, std::max(layer, 0)) : std::nan(""));
        }
        csv << settings << '\n';
        if (trained) ++step;
        if (evaluated) ++eval;
      }
    }
  });
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
