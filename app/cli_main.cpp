// normlab-cli: the whole experiment without a window.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench.h"
#include "config.h"
#include "cuda_backend.h"
#include "memory.h"
#include "presets.h"
#include "run_record.h"
#include "trainer.h"

namespace fs = std::filesystem;
using namespace normlab;

namespace {

constexpr const char* kUsage = R"(normlab-cli: train a small GPT with pre-norm or post-norm blocks and record every point.

Usage:
  normlab-cli train [options]        one run, or the course's five with --preset workshop
  normlab-cli bench [options]        time training steps on a device
  normlab-cli --help | --version

Run options (defaults are the course's 8-layer, d_model 128 model):
  --norm pre|post          where each block normalises (default pre)
                             pre:  x <- x + f(Norm x)    post: x <- Norm(x + f(x))
  --lr X                   peak learning rate (default 1e-3)
  --warmup N               linear warmup steps (default 30)
  --steps N                optimiser updates (default 3000)
  --batch N                sequences per step (default 32)
  --context N              tokens per sequence (default 128)
  --layers N               blocks (default 8)
  --d-model N              model width (default 128)
  --heads N                attention heads (default 4)
  --vocab N                BPE vocabulary size (default 8192)
  --seed N                 seeds the model and the batches (default 1337)
  --device auto|cpu|cuda   auto takes the GPU when LibTorch sees one (default auto)
  --threads N              CPU threads; 0 = OMP_NUM_THREADS, else one per core (default 0)
  --eval-interval N        steps between held-out evaluations (default 100)
  --eval-batches N         held-out batches per evaluation (default 16)
  --clip X                 clip the gradient norm at X; 0 = off (default 0)
  --weight-decay X         AdamW weight decay on matrices (default 0.1)
  --corpus FILE            UTF-8 text to train on (default: the King James Bible)
  --name TEXT              run name (default from norm, lr and warmup)
  --scale full|cpu         full: 3000 steps of 32 x 128 tokens (GPU minutes);
                           cpu: 600 steps of 8 x 64 tokens (CPU minutes).
                           Options given explicitly override the scale.
  --preset workshop        five runs: pre and post at 1e-3 and 6e-3 with warmup 30,
                           post at 1e-3 with warmup 1000 (scaled with --steps)
  --out DIR                where run files go (default ./normlab-runs)

Bench options: the run options above, and
  --bench-steps N          timed steps (default 20)
  --bench-warmup N         untimed steps first (default 3)
  --json                   print the result as one JSON object

Each run writes DIR/<name>.json (the full record) and DIR/<name>.csv (one row per
step), rewritten atomically at every evaluation, so an interrupted run keeps its points.
Ctrl-C stops the current run after its step and keeps what it has.
)";

std::atomic<bool> g_cancel{false};

struct Options {
  std::string command;
  std::map<std::string, std::string> values;  // option name -> text
  bool json = false;
};

const std::vector<std::string> kValueOptions = {
    "norm", "lr", "warmup", "steps", "batch", "context", "layers", "d-model", "heads", "vocab",
    "seed", "device", "threads", "eval-interval", "eval-batches", "clip", "weight-decay", "corpus", "name",
    "scale", "preset", "out", "bench-steps", "bench-warmup"};

Options parse_arguments(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i == 1 && arg.rfind("--", 0) != 0) {
      if (arg != "train" && arg != "bench") throw UserError("unknown command '" + arg + "' (train or bench)");
      options.command = arg;
      continue;
    }
    if (arg == "--json") { options.json = true; continue; }
    if (arg.rfind("--", 0) != 0) throw UserError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2), value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw UserError("option --" + name + " needs a value");
    }
    bool known = false;
    for (const auto& option : kValueOptions) known = known || option == name;
    if (!known) throw UserError("unknown option --" + name + " (see --help)");
    if (options.values.count(name)) throw UserError("option --" + name + " given twice");
    options.values[name] = value;
  }
  if (options.command.empty()) throw UserError("no command: say 'train' or 'bench' (see --help)");
  return options;
}

long long parse_integer(const std::string& name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < 0 || value > 2'000'000'000) {
    throw UserError("--" + name + " needs a whole number, not '" + text + "'");
  }
  return value;
}

double parse_real(const std::string& name, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value)) {
    throw UserError("--" + name + " needs a number, not '" + text + "'");
  }
  return value;
}

// Defaults, then the scale, then every option given explicitly.
TrainConfig build_config(const Options& options) {
  TrainConfig c;
  const auto& v = options.values;
  if (v.count("scale")) c = scaled(c, parse_scale(v.at("scale")));
  const std::map<std::string, std::function<void(const std::string&)>> setters = {
      {"norm", [&](auto& t) { c.model.norm = parse_norm(t); }},
      {"lr", [&](auto& t) { c.peak_lr = parse_real("lr", t); }},
      {"warmup", [&](auto& t) { c.warmup_steps = int(parse_integer("warmup", t)); }},
      {"steps", [&](auto& t) { c.steps = int(parse_integer("steps", t)); }},
      {"batch", [&](auto& t) { c.batch_size = int(parse_integer("batch", t)); }},
      {"context", [&](auto& t) { c.model.context = int(parse_integer("context", t)); }},
      {"layers", [&](auto& t) { c.model.layers = int(parse_integer("layers", t)); }},
      {"d-model", [&](auto& t) { c.model.d_model = int(parse_integer("d-model", t)); }},
      {"heads", [&](auto& t) { c.model.heads = int(parse_integer("heads", t)); }},
      {"vocab", [&](auto& t) { c.model.vocab = int(parse_integer("vocab", t)); }},
      {"seed", [&](auto& t) { c.seed = std::uint64_t(parse_integer("seed", t)); }},
      {"device", [&](auto& t) { c.device = t; }},
      {"threads", [&](auto& t) { c.threads = int(parse_integer("threads", t)); }},
      {"eval-interval", [&](auto& t) { c.eval_interval = int(parse_integer("eval-interval", t)); }},
      {"eval-batches", [&](auto& t) { c.eval_batches = int(parse_integer("eval-batches", t)); }},
      {"clip", [&](auto& t) { c.clip_grad_norm = parse_real("clip", t); }},
      {"weight-decay", [&](auto& t) { c.weight_decay = parse_real("weight-decay", t); }},
      {"corpus", [&](auto& t) { c.corpus_path = t; }},
      {"name", [&](auto& t) { c.name = t; }},
  };
  for (const auto& [name, text] : v) {
    if (auto setter = setters.find(name); setter != setters.end()) setter->second(text);
  }
  validate(c);
  return c;
}

std::string file_stem(const std::string& name) {
  std::string stem;
  for (char ch : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-';
    stem += keep ? ch : '_';
  }
  return stem;
}

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char text[32];
  if (s >= 3600) std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else if (s >= 60) std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%lds", s);
  return text;
}

void save(const RunRecord& run, const fs::path& out) {
  const std::string stem = file_stem(run.config.name);
  write_json(run, out / (stem + ".json"));
  write_csv({run}, out / (stem + ".csv"));
}

// Trains one run with a live progress line; files are refreshed at every evaluation.
RunRecord train_with_progress(const TrainConfig& config, const fs::path& out, const std::string& label) {
  const bool tty = isatty(STDOUT_FILENO);
  double last_val = std::nan(""), last_print = -1;
  double token_rate = 0;
  TrainCallbacks callbacks;
  callbacks.on_stage = [&](const std::string& stage) {
    if (stage != "Training") std::printf("%s  %s\n", label.c_str(), stage.c_str());
    std::fflush(stdout);
  };
  callbacks.on_start = [&](const RunRecord& run) {
    std::printf("%s  %s on %s; %lld parameters; %lld training / %lld held-out tokens; "
                "unigram baseline %.3f nats\n",
                label.c_str(), run.config.name.c_str(), run.environment.device_name.c_str(),
                static_cast<long long>(run.parameters), static_cast<long long>(run.train_tokens),
                static_cast<long long>(run.heldout_tokens), run.baseline_loss);
    std::fflush(stdout);
  };
  callbacks.on_step = [&](const StepMetrics& s) {
    token_rate = token_rate == 0 ? s.tokens_per_s : 0.9 * token_rate + 0.1 * s.tokens_per_s;
    const bool last = s.step == config.steps;
    if (tty ? (s.wall_s - last_print < 0.25 && !last) : (s.step % config.eval_interval != 0 && !last)) return;
    last_print = s.wall_s;
    const double eta = s.wall_s / s.step * (config.steps - s.step);
    std::printf("%s%s  step %d/%d  lr %.2e  train %.3f  held-out %.3f  %.0f tok/s  ETA %s%s",
                tty ? "\r\033[K" : "", label.c_str(), s.step, config.steps, s.lr, s.train_loss,
                last_val, token_rate, duration_text(eta).c_str(), tty ? "" : "\n");
    std::fflush(stdout);
  };
  callbacks.on_eval = [&](const EvalMetrics& e, const RunRecord& run) {
    last_val = e.val_loss;
    save(run, out);
  };
  RunRecord run = train(config, callbacks, &g_cancel);
  if (tty) std::printf("\n");
  save(run, out);
  std::printf("%s  %s: %s, final held-out %.3f nats (baseline %.3f); wrote %s.{json,csv}\n",
              label.c_str(), run.config.name.c_str(), to_string(run.status).c_str(),
              run.final_val_loss(), run.baseline_loss,
              (out / file_stem(run.config.name)).c_str());
  if (!run.message.empty()) std::printf("%s  %s\n", label.c_str(), run.message.c_str());
  return run;
}

int run_train(const Options& options) {
  const TrainConfig base = build_config(options);
  const fs::path out = options.values.count("out") ? options.values.at("out") : "normlab-runs";
  std::vector<TrainConfig> configs{base};
  if (options.values.count("preset")) {
    if (options.values.at("preset") != "workshop") {
      throw UserError("unknown preset '" + options.values.at("preset") + "' (only 'workshop')");
    }
    for (const char* fixed : {"norm", "lr", "warmup", "name"}) {
      if (options.values.count(fixed)) {
        throw UserError(std::string("--") + fixed + " is set by --preset workshop; leave it out");
      }
    }
    configs = workshop_runs(base);
  }
  // Created by the first save, so a run refused for its corpus leaves no empty folder.
  if (std::error_code error; fs::exists(out, error) && !fs::is_directory(out, error)) {
    throw UserError("output folder " + out.string() + " is a file");
  }

  std::vector<RunRecord> runs;
  for (std::size_t i = 0; i < configs.size() && !g_cancel; ++i) {
    const std::string label = "[" + std::to_string(i + 1) + "/" + std::to_string(configs.size()) + "]";
    runs.push_back(train_with_progress(configs[i], out, label));
  }
  if (runs.size() > 1) {
    write_csv(runs, out / "workshop.csv");
    std::printf("\n%-32s %-9s %10s\n", "run", "status", "held-out");
    for (const auto& run : runs) {
      std::printf("%-32s %-9s %10.3f\n", run.config.name.c_str(), to_string(run.status).c_str(),
                  run.final_val_loss());
    }
    std::printf("%-32s %-9s %10.3f\n", "unigram baseline", "", runs.front().baseline_loss);
  }
  return g_cancel ? 130 : 0;
}

int run_bench(const Options& options) {
  const TrainConfig config = build_config(options);
  const auto& v = options.values;
  const int steps = v.count("bench-steps") ? int(parse_integer("bench-steps", v.at("bench-steps"))) : 20;
  const int warmup = v.count("bench-warmup") ? int(parse_integer("bench-warmup", v.at("bench-warmup"))) : 3;
  const BenchResult r = benchmark(config, warmup, steps);
  if (options.json) {
    std::printf("{\"device\": \"%s\", \"libtorch\": \"%s\", \"parameters\": %lld, \"batch\": %d, "
                "\"context\": %d, \"steps\": %d, \"median_ms_per_step\": %.3f, \"tokens_per_s\": %.1f, "
                "\"model_flop_per_s\": %.4g, \"matmul_flop_per_s\": %.4g}\n",
                r.environment.device_name.c_str(), r.environment.libtorch_version.c_str(),
                static_cast<long long>(r.parameters), config.batch_size, config.model.context,
                r.measured_steps, r.median_ms_per_step, r.tokens_per_s, r.achieved_flop_per_s,
                r.matmul_flop_per_s);
    return 0;
  }
  std::printf("device     %s (LibTorch %s)\n", r.environment.device_name.c_str(),
              r.environment.libtorch_version.c_str());
  std::printf("model      %s-norm, %d layers, d_model %d, %d heads, vocab %d: %lld parameters\n",
              to_string(config.model.norm).c_str(), config.model.layers, config.model.d_model,
              config.model.heads, config.model.vocab, static_cast<long long>(r.parameters));
  std::printf("batch      %d x %d tokens\n", config.batch_size, config.model.context);
  std::printf("speed      %.2f ms/step (median of %d, after %d warm-up), %.0f tokens/s\n",
              r.median_ms_per_step, r.measured_steps, warmup, r.tokens_per_s);
  std::printf("compute    %.2f GFLOP/step -> %.2f GFLOP/s = %.1f %% of this device's measured "
              "fp32 matmul rate (%.2f GFLOP/s)\n",
              r.model_flop_per_step / 1e9, r.achieved_flop_per_s / 1e9,
              100 * r.achieved_flop_per_s / r.matmul_flop_per_s, r.matmul_flop_per_s / 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") { std::fputs(kUsage, stdout); return 0; }
    if (arg == "--version") {
      std::printf("normlab-cli %s (LibTorch %s)\n", NORMLAB_VERSION, libtorch_version().c_str());
      return 0;
    }
  }
  std::signal(SIGINT, [](int) { g_cancel = true; });
  keep_freed_memory_for_reuse();
  try {
    const Options options = parse_arguments(argc, argv);
    return options.command == "train" ? run_train(options) : run_bench(options);
  } catch (const UserError& error) {
    std::fprintf(stderr, "normlab-cli: %s\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "normlab-cli: error: %s\n", error.what());
    return 1;
  }
}
