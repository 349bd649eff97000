#include "core/runs/run_record.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "core/runs/config_fields.h"
#include "core/runs/run_title.h"
#include "core/runs/verdict.h"
#include "core/system/atomic_file.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

RunRecord sample_run() {
  RunRecord run;
  run.config.name = "post-norm lr 6e-3 warmup 30";
  run.config.model = {4, 64, 2, 32, 1024, NormPlacement::Post, NormType::RmsNorm};
  run.config.peak_lr = 6e-3;
  run.config.warmup_steps = 30;
  run.config.steps = 5;
  run.config.batch_size = 8;
  run.config.weight_decay = 0.05;
  run.config.clip_grad_norm = 1.5;
  run.config.seed = 18'000'000'000'000'000'000ull;  // above INT64_MAX
  run.config.device = "cpu";
  run.config.threads = 3;
  run.config.eval_interval = 2;
  run.config.eval_batches = 3;
  run.config.corpus_path = "/data/text with spaces.txt";
  run.environment = {"0.1.0", "2.11.0", "cpu", "CPU, 2 threads", 2, "fp32", "10154e7+changes", "AMD EPYC"};
  run.parameters = 123'456;
  run.train_tokens = 90'000;
  run.heldout_tokens = 10'000;
  run.baseline_loss = 5.4321;
  run.corpus_name = "text with spaces.txt";
  run.corpus_hash = "0123456789abcdef-1d4c0";
  run.status = RunStatus::Diverged;
  run.message = "training loss became NaN at step 5";
  for (int s = 1; s <= 5; ++s) {
    run.steps.push_back({s, 0.1 * s + 1e-9, 6e-3 / 3 * s, s == 5 ? kNaN : 7.0 - 0.1 * s, 1000.0 / 3 * s});
  }
  run.evals = {{0, 0.0, 6.9}, {2, 0.2, 6.5}, {4, 0.4, 6.123456789012345}};
  return run;
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void expect_equal(const RunRecord& a, const RunRecord& b) {
  EXPECT_EQ(a.config.name, b.config.name);
  EXPECT_EQ(a.config.label, b.config.label);
  EXPECT_EQ(a.config.note, b.config.note);
  EXPECT_EQ(a.config.model.layers, b.config.model.layers);
  EXPECT_EQ(a.config.model.d_model, b.config.model.d_model);
  EXPECT_EQ(a.config.model.heads, b.config.model.heads);
  EXPECT_EQ(a.config.model.context, b.config.model.context);
  EXPECT_EQ(a.config.model.vocab, b.config.model.vocab);
  EXPECT_EQ(a.config.model.norm, b.config.model.norm);
  EXPECT_EQ(a.config.model.norm_type, b.config.model.norm_type);
  EXPECT_EQ(a.config.peak_lr, b.config.peak_lr);
  EXPECT_EQ(a.config.warmup_steps, b.config.warmup_steps);
  EXPECT_EQ(a.config.steps, b.config.steps);
  EXPECT_EQ(a.config.batch_size, b.config.batch_size);
  EXPECT_EQ(a.config.weight_decay, b.config.weight_decay);
  EXPECT_EQ(a.config.clip_grad_norm, b.config.clip_grad_norm);
  EXPECT_EQ(a.config.seed, b.config.seed);
  EXPECT_EQ(a.config.device, b.config.device);
  EXPECT_EQ(a.config.threads, b.config.threads);
  EXPECT_EQ(a.config.eval_interval, b.config.eval_interval);
  EXPECT_EQ(a.config.eval_batches, b.config.eval_batches);
  EXPECT_EQ(a.config.layer_stats_every, b.config.layer_stats_every);
  EXPECT_EQ(a.config.checkpoint_interval, b.config.checkpoint_interval);
  EXPECT_EQ(a.config.final_checkpoint, b.config.final_checkpoint);
  EXPECT_EQ(a.config.corpus_path, b.config.corpus_path);
  EXPECT_EQ(a.environment.app_version, b.environment.app_version);
  EXPECT_EQ(a.environment.libtorch_version, b.environment.libtorch_version);
  EXPECT_EQ(a.environment.device, b.environment.device);
  EXPECT_EQ(a.environment.device_name, b.environment.device_name);
  EXPECT_EQ(a.environment.threads, b.environment.threads);
  EXPECT_EQ(a.environment.precision, b.environment.precision);
  EXPECT_EQ(a.environment.engine, b.environment.engine);
  EXPECT_EQ(a.environment.cpu, b.environment.cpu);
  EXPECT_EQ(a.parameters, b.parameters);
  EXPECT_EQ(a.train_tokens, b.train_tokens);
  EXPECT_EQ(a.heldout_tokens, b.heldout_tokens);
  EXPECT_EQ(a.corpus_name, b.corpus_name);
  EXPECT_EQ(a.corpus_hash, b.corpus_hash);
  EXPECT_TRUE(same(a.baseline_loss, b.baseline_loss));
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.message, b.message);
  ASSERT_EQ(a.series.size(), b.series.size());
  for (std::size_t i = 0; i < a.series.size(); ++i) {
    EXPECT_EQ(a.series[i].name, b.series[i].name);
    EXPECT_EQ(a.series[i].layers, b.series[i].layers);
    EXPECT_EQ(a.series[i].steps, b.series[i].steps);
    ASSERT_EQ(a.series[i].values.size(), b.series[i].values.size());
    for (std::size_t k = 0; k < a.series[i].values.size(); ++k) {
      EXPECT_TRUE(same(a.series[i].values[k], b.series[i].values[k])) << a.series[i].name << " " << k;
    }
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].step, b.steps[i].step);
    EXPECT_TRUE(same(a.steps[i].wall_s, b.steps[i].wall_s));
    EXPECT_TRUE(same(a.steps[i].lr, b.steps[i].lr));
    EXPECT_TRUE(same(a.steps[i].train_loss, b.steps[i].train_loss)) << "step " << i + 1;
    EXPECT_TRUE(same(a.steps[i].tokens_per_s, b.steps[i].tokens_per_s));
  }
  ASSERT_EQ(a.evals.size(), b.evals.size());
  for (std::size_t i = 0; i < a.evals.size(); ++i) {
    EXPECT_EQ(a.evals[i].step, b.evals[i].step);
    EXPECT_TRUE(same(a.evals[i].wall_s, b.evals[i].wall_s));
    EXPECT_TRUE(same(a.evals[i].val_loss, b.evals[i].val_loss));
  }
}

class RunRecordTest : public CacheTest {
 protected:
  // The sample run as JSON, edited by `change`, written to a file and read back.
  std::string read_error(const std::function<void(json&)>& change) {
    json j = json::parse(to_json_text(sample_run()));
    change(j);
    const fs::path path = temp_ / "run.json";
    write_file(path, j.dump());
    const std::string message = user_error([&] { read_json(path); });
    EXPECT_THAT(message, HasSubstr(path.string()));
    return message;
  }

  // `write`'s UserError message, with files capped at 4 KiB: it fails part way, as on a
  // full disk, and works as root, unlike a read-only folder.
  static std::string error_with_files_capped(const std::function<void()>& write) {
    rlimit saved{};
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = saved;
    limited.rlim_cur = 4096;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
    const std::string message = user_error(write);
    ::setrlimit(RLIMIT_FSIZE, &saved);
    ::signal(SIGXFSZ, old_handler);
    return message;
  }

  // A failed write kept the file as it was and left no temp file beside it.
  void expect_old_file_alone(const fs::path& path) {
    EXPECT_EQ(read_file(path), "old contents");
    EXPECT_EQ(std::distance(fs::directory_iterator(temp_.path()), fs::directory_iterator()), 1)
        << "a temp file was left behind";
  }
};

TEST_F(RunRecordTest, JsonRoundTrip) {
  const RunRecord run = sample_run();
  expect_equal(from_json_text(to_json_text(run)), run);
  write_json(run, temp_ / "runs" / "a.json");  // creates the folder
  expect_equal(read_json(temp_ / "runs" / "a.json"), run);
}

// Files from before the corpora had names lack them: read as not known.
TEST_F(RunRecordTest, FileWithoutTheCorpusNameReadsAsUnknown) {
  nlohmann::json j = nlohmann::json::parse(to_json_text(sample_run()));
  ASSERT_EQ(j["corpus_name"], "text with spaces.txt");
  j.erase("corpus_name");
  j.erase("corpus_hash");
  const RunRecord read = from_json_text(j.dump());
  EXPECT_EQ(read.corpus_name, "");
  EXPECT_EQ(read.corpus_hash, "");
}

// Files from before runs kept their engine and CPU lack them: read as not known.
TEST_F(RunRecordTest, FileWithoutTheEngineAndCpuReadsAsUnknown) {
  nlohmann::json j = nlohmann::json::parse(to_json_text(sample_run()));
  ASSERT_EQ(j["environment"]["engine"], "10154e7+changes");
  ASSERT_EQ(j["environment"]["cpu"], "AMD EPYC");
  j["environment"].erase("engine");
  j["environment"].erase("cpu");
  const RunRecord read = from_json_text(j.dump());
  EXPECT_EQ(read.environment.engine, "");
  EXPECT_EQ(read.environment.cpu, "");
  EXPECT_EQ(read.environment.device_name, "CPU, 2 threads");
}

// The user's label and note are the file's, apart from its name.
TEST_F(RunRecordTest, LabelAndNoteRoundTrip) {
  RunRecord run = sample_run();
  run.config.label = "the \"stable\" one";
  run.config.note = "warmup too short?\nrerun with 1000";
  const json j = json::parse(to_json_text(run));
  EXPECT_EQ(j["name"], "post-norm lr 6e-3 warmup 30");
  EXPECT_EQ(j["label"], "the \"stable\" one");
  EXPECT_EQ(j["note"], "warmup too short?\nrerun with 1000");
  expect_equal(from_json_text(j.dump()), run);
}

// Files written before labels (version 7, today's until issue 30) keep their name, which
// sweeps and seed groups go by; a name the settings gave becomes no label (the window
// shows the title), a name of the user's own (--name) the label.
TEST_F(RunRecordTest, VersionSevenFileKeepsItsNameAndTakesItsLabelFromIt) {
  const auto as_version_seven = [](RunRecord run) {
    json j = json::parse(to_json_text(run));
    j["version"] = 7;
    j.erase("label");
    j.erase("note");
    return from_json_text(j.dump());
  };
  RunRecord run = sample_run();
  for (const std::string suffix : {"", " seed 1338", " (2)"}) {
    run.config.name = default_run_name(run.config) + suffix;
    const RunRecord back = as_version_seven(run);
    EXPECT_EQ(back.config.name, run.config.name);
    EXPECT_EQ(back.config.label, "") << suffix;
    EXPECT_EQ(back.config.note, "");
  }
  run.config.name = "tiny, run";
  EXPECT_EQ(as_version_seven(run).config.label, "tiny, run");
  EXPECT_EQ(read_json(fs::path(NORMLAB_TEST_DATA) / "run-v1.json").config.label, "");
}

TEST_F(RunRecordTest, SamePointsAreOneRunsFileTwice) {
  const RunRecord a = sample_run();  // its last training loss is NaN: NaN matches NaN here
  RunRecord b = a;
  b.config.name = "another name";
  b.environment.device_name = "elsewhere";
  EXPECT_TRUE(same_points(a, b));
  b.evals.back().val_loss += 1e-9;
  EXPECT_FALSE(same_points(a, b));
  b = a;
  b.steps.pop_back();
  EXPECT_FALSE(same_points(a, b));
}

TEST_F(RunRecordTest, JsonLayout) {
  const json j = json::parse(to_json_text(sample_run()));
  EXPECT_EQ(j["schema"], "normlab.run");
  EXPECT_EQ(j["version"], kRunSchemaVersion);
  EXPECT_EQ(j["status"], "diverged");
  EXPECT_TRUE(j["steps"]["train_loss"][4].is_null());  // NaN has no JSON form
  EXPECT_EQ(j["steps"]["step"].size(), 5u);
  EXPECT_EQ(j["evals"]["val_loss"].size(), 3u);
}

TEST_F(RunRecordTest, StatusNamesAndFinalValLoss) {
  RunRecord run = sample_run();
  EXPECT_DOUBLE_EQ(run.final_val_loss(), 6.123456789012345);
  run.evals.clear();
  EXPECT_TRUE(std::isnan(run.final_val_loss()));

  for (auto status : {RunStatus::Queued, RunStatus::Running, RunStatus::Done, RunStatus::Stopped, RunStatus::Diverged,
                      RunStatus::Failed, RunStatus::Interrupted}) {
    EXPECT_EQ(parse_status(to_string(status)), status);
  }
  EXPECT_THAT(user_error([] { parse_status("exploded"); }), HasSubstr("exploded"));
}

// The gap compares like with like: the training and held-out loss over the same steps up
// to the last evaluation, not the steps trained since (a running run has some).
TEST_F(RunRecordTest, TrainingLossAndGapAtTheLastEvaluation) {
  RunRecord run = sample_run();  // evaluated at steps 0, 2 and 4; step 5 diverged after it
  const double heldout_between = (6.5 + 6.123456789012345) / 2;  // step 3, between the evaluations at 2 and 4
  const RunRecord::LossesOverSteps losses = run.final_losses();
  EXPECT_EQ(losses.first_step, 1);
  EXPECT_EQ(losses.last_step, 4);
  EXPECT_DOUBLE_EQ(run.final_train_loss(), (6.9 + 6.8 + 6.7 + 6.6) / 4);
  EXPECT_DOUBLE_EQ(losses.heldout, (6.7 + 6.5 + heldout_between + 6.123456789012345) / 4);
  EXPECT_DOUBLE_EQ(run.generalisation_gap(), losses.heldout - (6.9 + 6.8 + 6.7 + 6.6) / 4);

  RunRecord long_run;
  for (int s = 1; s <= 130; ++s) long_run.steps.push_back({s, 0.0, 1e-3, double(s), 0.0});
  long_run.evals = {{0, 0.0, 9.0}, {100, 1.0, 80.0}};
  const double window = double(RunRecord::kGapWindow);
  const double mean_step = 100 - (window - 1) / 2;
  EXPECT_DOUBLE_EQ(long_run.final_train_loss(), mean_step) << "the mean of the steps up to 100";
  EXPECT_NEAR(long_run.generalisation_gap(), 9.0 + (80.0 - 9.0) * mean_step / 100 - mean_step, 1e-12)
      << "the held-out loss over those steps, on the line from step 0 to step 100";
  EXPECT_TRUE(std::isnan(long_run.losses_up_to(120).heldout)) << "past the last evaluation there is none";
  EXPECT_DOUBLE_EQ(long_run.train_loss_at(120), 120 - (window - 1) / 2);

  long_run.evals.resize(1);  // only the evaluation before training: nothing to compare
  EXPECT_TRUE(std::isnan(long_run.final_train_loss()));
  EXPECT_TRUE(std::isnan(long_run.generalisation_gap()));
  long_run.evals.clear();
  EXPECT_TRUE(std::isnan(long_run.final_train_loss()));
}

// Issue 49: at step 50 of a run whose loss falls fast, the mean of the training steps 1–50
// sat far above the held-out loss of the model at step 50, and the gap read -0.6 though the
// model did as well on held-out text as on its own at every step.
TEST_F(RunRecordTest, AGapEarlyInARunIsNotNegativeWhereHeldOutFollowsTraining) {
  RunRecord run;
  const auto loss = [](double step) { return 9.0 - 2.5 * step / 50; };  // 9 at step 0, 6.5 at step 50
  for (int s = 1; s <= 50; ++s) run.steps.push_back({s, 0.0, 1e-3, loss(s), 0.0});
  run.evals = {{0, 0.0, loss(0) + 0.05}, {50, 1.0, loss(50) + 0.05}};  // held-out 0.05 above training throughout
  EXPECT_LT(run.final_val_loss() - run.final_train_loss(), -1.0) << "the last held-out against the steps' mean";
  EXPECT_NEAR(run.generalisation_gap(), 0.05, 1e-12);
  EXPECT_NEAR(run.final_losses().heldout, run.final_train_loss() + 0.05, 1e-12);
}

TEST_F(RunRecordTest, ReadNotJson) {
  EXPECT_THAT(user_error([&] { read_json(temp_ / "absent.json"); }), HasSubstr("absent.json"));

  const fs::path path = temp_ / "notes.json";
  write_file(path, "step,loss\n1,2.0\n");
  const std::string message = user_error([&] { read_json(path); });
  EXPECT_THAT(message, HasSubstr("not valid JSON"));
  EXPECT_THAT(message, HasSubstr(path.string()));
}

TEST_F(RunRecordTest, ReadForeignJsonOrOtherVersion) {
  EXPECT_THAT(read_error([](json& j) {
                j = {{"name", "x"}, {"steps", json::array()}};
              }),
              HasSubstr("not a NormLab run file"));
  EXPECT_THAT(read_error([](json& j) { j["schema"] = "other.app"; }), HasSubstr("not a NormLab run file"));
  EXPECT_THAT(read_error([](json& j) { j = json::array({1, 2}); }), HasSubstr("not a NormLab run file"));
  EXPECT_THAT(read_error([](json& j) { j["version"] = kRunSchemaVersion + 1; }),
              HasSubstr("version " + std::to_string(kRunSchemaVersion + 1)));
}

TEST_F(RunRecordTest, ReadMissingOrMistypedFieldNamesIt) {
  EXPECT_THAT(read_error([](json& j) { j.erase("name"); }), HasSubstr("'name'"));
  EXPECT_THAT(read_error([](json& j) { j.erase("baseline_loss"); }), HasSubstr("'baseline_loss'"));
  EXPECT_THAT(read_error([](json& j) { j["config"].erase("peak_lr"); }), HasSubstr("'config.peak_lr'"));
  EXPECT_THAT(read_error([](json& j) { j["environment"].erase("threads"); }), HasSubstr("'environment.threads'"));
  EXPECT_THAT(read_error([](json& j) { j["evals"].erase("val_loss"); }), HasSubstr("'evals.val_loss'"));
  EXPECT_THAT(read_error([](json& j) { j["parameters"] = "many"; }), HasSubstr("'parameters'"));
  EXPECT_THAT(read_error([](json& j) { j["steps"]["lr"][1] = "fast"; }), HasSubstr("'steps.lr'"));
}

TEST_F(RunRecordTest, ReadColumnsOfDifferentLengths) {
  EXPECT_THAT(read_error([](json& j) { j["steps"]["lr"].erase(0); }), HasSubstr("differ in length"));
}

TEST_F(RunRecordTest, ReadBadValues) {
  EXPECT_THAT(read_error([](json& j) { j["status"] = "exploded"; }), HasSubstr("exploded"));
  EXPECT_THAT(read_error([](json& j) { j["config"]["heads"] = 3; }), HasSubstr("heads"));
  EXPECT_THAT(read_error([](json& j) { j["config"]["norm"] = "middle"; }), HasSubstr("middle"));
}

// A CSV line's cells, quotes undone.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') cells.back() += line[++i];
    else if (line[i] == '"') quoted = !quoted;
    else if (line[i] == ',' && !quoted) cells.emplace_back();
    else cells.back() += line[i];
  }
  return cells;
}

// The first `count` cells of the line, joined by commas: the columns before the settings.
std::string leading_cells(const std::string& line, std::size_t count) {
  const auto cells = csv_cells(line);
  std::string text;
  for (std::size_t i = 0; i < count && i < cells.size(); ++i) text += (i ? "," : "") + cells[i];
  return text;
}

TEST_F(RunRecordTest, CsvRows) {
  RunRecord a = sample_run();
  RunRecord b = sample_run();
  b.config.name = "say \"hi\", twice";
  b.steps.resize(2);
  b.evals = {{0, 0.0, 6.9}, {2, 0.2, 6.25}};
  const fs::path path = temp_ / "runs.csv";
  write_csv({a, b}, path);

  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 1u + 6 + 3);
  EXPECT_EQ(leading_cells(lines[0], 6), "run,step,wall_s,lr,train_loss,val_loss");
  // Step 0: the held-out loss before the first update, with no training columns.
  EXPECT_EQ(leading_cells(lines[1], 6), "post-norm lr 6e-3 warmup 30,0,0,,,6.9");
  EXPECT_EQ(leading_cells(lines[2], 2), "post-norm lr 6e-3 warmup 30,1");
  EXPECT_EQ(csv_cells(lines[2])[5], "");  // step 1: no evaluation
  EXPECT_EQ(csv_cells(lines[3])[5], "6.5");
  EXPECT_EQ(csv_cells(lines[4])[5], "");
  EXPECT_EQ(csv_cells(lines[5])[5], "6.12345679");
  EXPECT_EQ(csv_cells(lines[6])[4], "");  // NaN train loss
  EXPECT_EQ(csv_cells(lines[6])[5], "");  // no evaluation
  EXPECT_EQ(lines[7].rfind("\"say \"\"hi\"\", twice\",0,0,,,6.9,", 0), 0u) << lines[7];
  EXPECT_EQ(leading_cells(lines[8], 2), "say \"hi\", twice,1");
  EXPECT_EQ(csv_cells(lines[9])[5], "6.25");
  for (const auto& line : lines) EXPECT_EQ(csv_cells(line).size(), csv_cells(lines[0]).size()) << line;
}

// Every row ends with its run's settings, a column per field of the settings table named
// by its key, so the runs of one CSV, or of several, group by any of them.
TEST_F(RunRecordTest, CsvRowsCarryTheSettings) {
  RunRecord a = sample_run();
  RunRecord b = sample_run();
  b.config.name = "pre";
  b.config.model.norm = NormPlacement::Pre;
  b.config.peak_lr = 1e-3;
  b.config.corpus_path = "/data/a, b.txt";
  b.config.label = "mine";
  b.config.note = "said \"twice\", here";
  const fs::path path = temp_ / "runs.csv";
  write_csv({a, b}, path);

  const auto lines = read_lines(path);
  const auto header = csv_cells(lines.at(0));
  const auto column = [&](const std::string& name) {
    const auto at = std::find(header.begin(), header.end(), name);
    return at == header.end() ? std::size_t(-1) : std::size_t(at - header.begin());
  };
  for (const ConfigField& field : config_fields())
    EXPECT_NE(column("config." + field.key), std::size_t(-1)) << field.key;
  EXPECT_EQ(column("lr"), 3u);
  EXPECT_EQ(column("step"), 1u);
  ASSERT_EQ(lines.size(), 1u + 6 + 6);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto cells = csv_cells(lines[i]);
    ASSERT_EQ(cells.size(), header.size()) << lines[i];
    const bool first = i <= 6;
    EXPECT_EQ(cells.at(column("config.norm")), first ? "post" : "pre");
    EXPECT_EQ(cells.at(column("config.peak_lr")), first ? "0.006" : "0.001");
    EXPECT_EQ(cells.at(column("config.norm_type")), "rmsnorm");
    EXPECT_EQ(cells.at(column("config.seed")), "18000000000000000000");
    EXPECT_EQ(cells.at(column("config.corpus")), first ? "/data/text with spaces.txt" : "/data/a, b.txt");
    EXPECT_EQ(cells.at(column("display_name")), first ? run_title(a.config) : "mine");
    EXPECT_EQ(cells.at(column("note")), first ? "" : "said \"twice\", here");
    // What the run is doing as of the file, verdict.h's: the same in every row of the run.
    const RunVerdict verdict = judge(first ? a : b);
    EXPECT_EQ(cells.at(column("verdict")), info(verdict.verdict).name);
    EXPECT_EQ(cells.at(column("verdict_step")), verdict.since_step >= 0 ? std::to_string(verdict.since_step) : "");
  }
}

RunRecord run_with_series() {
  RunRecord run = sample_run();
  run.add_point({"grad_norm", 0, 1, {0.5}});
  run.add_point({"grad_norm", 0, 3, {kNaN}});
  run.add_point({"update_ratio", 2, 2, {0.01, 0.02}});
  run.add_point({"update_ratio", 2, 4, {0.03, 0.04}});
  return run;
}

TEST_F(RunRecordTest, NamedSeriesRoundTripWithLayers) {
  const RunRecord run = run_with_series();
  const RunRecord back = from_json_text(to_json_text(run));
  expect_equal(back, run);
  ASSERT_EQ(back.series.size(), 2u);
  const Series* grid = back.find_series("update_ratio");
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ(grid->layers, 2);
  EXPECT_EQ(grid->steps, (std::vector<int>{2, 4}));
  EXPECT_EQ(grid->at(1, 0), 0.03);
  EXPECT_EQ(grid->at(1, 1), 0.04);
  const Series* norm = back.find_series("grad_norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->at(0), 0.5);
  EXPECT_TRUE(std::isnan(norm->at(1)));
  EXPECT_EQ(back.find_series("absent"), nullptr);

  // In the file a layered series is one list per layer.
  const json j = json::parse(to_json_text(run));
  EXPECT_EQ(j["version"], kRunSchemaVersion);
  EXPECT_EQ(j["series"]["update_ratio"]["values"], json::parse("[[0.01, 0.03], [0.02, 0.04]]"));
  EXPECT_EQ(j["series"]["grad_norm"]["values"][0], 0.5);
}

// The file is streamed number by number; its bytes must stay those of nlohmann's
// dump(1) of the whole tree, which files written by earlier versions hold.
TEST_F(RunRecordTest, StreamedJsonIsNlohmannsIndentedDump) {
  RunRecord run = run_with_series();
  run.config.name = "quotes \" and \u00e9 and a\ttab";
  run.add_point({"empty_layers", 3, 1, {kNaN, 1e300, -0.0}});
  for (const RunRecord& r : {run, sample_run(), RunRecord{}}) {
    const std::string text = to_json_text(r);
    EXPECT_EQ(text, json::parse(text).dump(1) + "\n");
    write_json(r, temp_ / "a.json");
    EXPECT_EQ(read_file(temp_ / "a.json"), text);
  }
  EXPECT_THAT(to_json_text(sample_run()), HasSubstr("\"step\": [\n   1.0,\n   2.0,"));
  EXPECT_THAT(to_json_text(RunRecord{}), HasSubstr("\"evals\": {\n  \"step\": [],"));
}

TEST_F(RunRecordTest, SeriesPointsMustKeepTheirLayerCount) {
  RunRecord run;
  run.add_point({"x", 2, 1, {1, 2}});
  EXPECT_THROW(run.add_point({"x", 3, 2, {1, 2, 3}}), std::logic_error);
  EXPECT_THROW(run.add_point({"x", 2, 2, {1}}), std::logic_error);
}

TEST_F(RunRecordTest, ReadBadSeries) {
  const auto broken = [&](const std::function<void(json&)>& change) {
    json j = json::parse(to_json_text(run_with_series()));
    change(j);
    return user_error([&] { from_json_text(j.dump()); });
  };
  EXPECT_THAT(broken([](json& j) { j.erase("series"); }), HasSubstr("'series'"));
  EXPECT_THAT(broken([](json& j) { j["series"]["update_ratio"]["values"].erase(1); }),
              HasSubstr("one array per layer"));
  EXPECT_THAT(broken([](json& j) { j["series"]["update_ratio"]["values"][0].erase(0); }),
              HasSubstr("differ in length"));
  EXPECT_THAT(broken([](json& j) { j["series"]["grad_norm"]["step"].push_back(9); }), HasSubstr("differ in length"));
  EXPECT_THAT(broken([](json& j) { j["series"]["grad_norm"]["values"][0] = "big"; }),
              HasSubstr("'series.grad_norm.values'"));
  EXPECT_THAT(broken([](json& j) { j["version"] = 0; }), HasSubstr("version 0"));
}

// A file the version-1 program wrote (normlab-cli 0.1.0, before named series): it loads,
// and what it held comes back unchanged when written in today's version.
TEST_F(RunRecordTest, VersionOneFileStillLoads) {
  const fs::path fixture = fs::path(NORMLAB_TEST_DATA) / "run-v1.json";
  ASSERT_EQ(json::parse(read_file(fixture))["version"], 1);
  const RunRecord run = read_json(fixture);
  EXPECT_EQ(run.config.name, "post-norm lr 6e-3 warmup 30");
  EXPECT_EQ(run.config.model.norm, NormPlacement::Post);
  EXPECT_EQ(run.config.model.norm_type, NormType::LayerNorm);  // version 1 had no other
  EXPECT_EQ(run.config.steps, 200);
  EXPECT_EQ(run.status, RunStatus::Done);
  EXPECT_EQ(run.steps.size(), 200u);
  EXPECT_EQ(run.evals.size(), 5u);
  EXPECT_TRUE(run.series.empty());  // so no per-layer statistics: the view has nothing to show
  EXPECT_EQ(run.config.layer_stats_every, TrainConfig{}.layer_stats_every);
  expect_equal(from_json_text(to_json_text(run)), run);
}

// run_with_series() as a file from before labels loads: its name is not the one its
// settings give, so it was the user's, and is its label.
RunRecord with_series_from_before_labels() {
  RunRecord run = run_with_series();
  run.config.label = run.config.name;
  return run;
}

// Version 2 (named series, before the layer statistics' interval) still loads.
TEST_F(RunRecordTest, VersionTwoFileStillLoads) {
  json j = json::parse(to_json_text(run_with_series()));
  j["version"] = 2;
  j["config"].erase("layer_stats_every");
  const RunRecord run = from_json_text(j.dump());
  EXPECT_EQ(run.config.layer_stats_every, TrainConfig{}.layer_stats_every);
  expect_equal(run, with_series_from_before_labels());
  j["version"] = 3;
  EXPECT_THAT(user_error([&] { from_json_text(j.dump()); }), HasSubstr("layer_stats_every"));
}

// Version 3 (before the checkpoint settings) still loads, with their defaults.
TEST_F(RunRecordTest, VersionThreeFileStillLoads) {
  RunRecord expected = run_with_series();
  expected.config.checkpoint_interval = 5;
  expected.config.final_checkpoint = "keep";
  json j = json::parse(to_json_text(expected));
  j["version"] = 3;
  j["config"].erase("checkpoint_interval");
  j["config"].erase("final_checkpoint");
  const RunRecord run = from_json_text(j.dump());
  EXPECT_EQ(run.config.checkpoint_interval, TrainConfig{}.checkpoint_interval);
  EXPECT_EQ(run.config.final_checkpoint, TrainConfig{}.final_checkpoint);
  expect_equal(run, with_series_from_before_labels());
  j["version"] = 4;
  EXPECT_THAT(user_error([&] { from_json_text(j.dump()); }), HasSubstr("checkpoint_interval"));
}

// Version 4 (before DyT's alpha0 and the model switches) still loads: QK-norm and scaled
// init off, alpha0 the default; the switches and alpha0 round-trip in today's version.
TEST_F(RunRecordTest, VersionFourFileLoadsWithTheSwitchesOff) {
  RunRecord expected = run_with_series();
  expected.config.model.norm_type = NormType::Dyt;
  expected.config.model.dyt_alpha0 = 2;
  expected.config.model.qk_norm = Switch::On;
  expected.config.model.scaled_residual_init = Switch::On;
  const json today = json::parse(to_json_text(expected));
  EXPECT_EQ(today["config"]["qk_norm"], "on");
  EXPECT_EQ(today["config"]["scaled_residual_init"], "on");
  const RunRecord round_trip = from_json_text(today.dump());
  EXPECT_EQ(round_trip.config.model.qk_norm, Switch::On);
  EXPECT_EQ(round_trip.config.model.scaled_residual_init, Switch::On);
  EXPECT_EQ(round_trip.config.model.dyt_alpha0, 2.0);

  json j = today;
  j["version"] = 4;
  for (const char* key : {"dyt_alpha0", "qk_norm", "scaled_residual_init"}) j["config"].erase(key);
  const RunRecord run = from_json_text(j.dump());
  EXPECT_EQ(run.config.model.qk_norm, Switch::Off);
  EXPECT_EQ(run.config.model.scaled_residual_init, Switch::Off);
  EXPECT_EQ(run.config.model.dyt_alpha0, ModelConfig{}.dyt_alpha0);
  EXPECT_EQ(run.config.model.norm_type, NormType::Dyt);
  j["version"] = 5;
  EXPECT_THAT(user_error([&] { from_json_text(j.dump()); }), HasSubstr("dyt_alpha0"));
}

// Version 5 (before the CPU matmul kernel) loads as what those runs ran with, LibTorch's
// own sgemm, not today's default: a resumed run then continues with the same kernel.
TEST_F(RunRecordTest, VersionFiveFileLoadsWithLibTorchsMatmuls) {
  RunRecord expected = run_with_series();
  ASSERT_NE(expected.config.cpu_matmul, "libtorch");
  json j = json::parse(to_json_text(expected));
  EXPECT_EQ(j["config"]["cpu_matmul"], expected.config.cpu_matmul);
  j["version"] = 5;
  j["config"].erase("cpu_matmul");
  EXPECT_EQ(from_json_text(j.dump()).config.cpu_matmul, "libtorch");
  j["version"] = 6;
  EXPECT_THAT(user_error([&] { from_json_text(j.dump()); }), HasSubstr("cpu_matmul"));
}

RunRecord run_with_text() {
  RunRecord run = sample_run();
  run.config.text_every = 2;
  run.text.prompts = {"In the beginning", "And God said,\n\"Let there be\""};
  run.text.references = {{" the", " heaven"}, {" light", ":"}};
  run.text.samples = {
      {0, {"the the", "the"}, {"Laban prey", "sunder"}, {{0.01, 0.002}, {0.5, 1}}},
      {4, {"God created", "light: and"}, {"the heaven", "there was light"}, {{0.25, 0.125}, {0, 0.75}}}};
  return run;
}

TEST_F(RunRecordTest, TheTextRoundTrips) {
  const RunRecord run = run_with_text();
  const RunRecord back = from_json_text(to_json_text(run));
  EXPECT_EQ(back.config.text_every, 2);
  EXPECT_EQ(back.text.prompts, run.text.prompts);
  ASSERT_EQ(back.text.samples.size(), 2u);
  EXPECT_EQ(back.text.samples[1].step, 4);
  EXPECT_EQ(back.text.samples[1].greedy, run.text.samples[1].greedy);
  EXPECT_EQ(back.text.samples[1].sampled, run.text.samples[1].sampled);
  EXPECT_EQ(back.text.references, run.text.references);
  EXPECT_EQ(back.text.samples[1].reference_probability, run.text.samples[1].reference_probability);
}

// The window's shade for a run comes back from its file; a value no int holds (the wrap
// that once read 4294967298 layers as 2) or a negative one is no shade, not another.
TEST_F(RunRecordTest, AShadeComesBackAndABadOneIsNone) {
  RunRecord run = run_with_text();
  run.config.shade = 3;
  EXPECT_EQ(from_json_text(to_json_text(run)).config.shade, 3);
  for (const json& bad : {json(4294967298LL), json(-2), json(1.5), json("2")}) {
    json j = json::parse(to_json_text(run));
    j["shade"] = bad;
    EXPECT_EQ(from_json_text(j.dump()).config.shade, -1) << bad.dump();
  }
}

TEST_F(RunRecordTest, ReadBadText) {
  const auto broken = [&](const std::function<void(json&)>& change) {
    json j = json::parse(to_json_text(run_with_text()));
    change(j);
    return user_error([&] { from_json_text(j.dump()); });
  };
  EXPECT_THAT(broken([](json& j) { j.erase("text"); }), HasSubstr("'text'"));
  EXPECT_THAT(broken([](json& j) { j["text"]["prompts"] = "one"; }), HasSubstr("'text.prompts'"));
  EXPECT_THAT(broken([](json& j) { j["text"]["samples"][0]["greedy"].erase(1); }), HasSubstr("one text per prompt"));
  EXPECT_THAT(broken([](json& j) { j["text"]["samples"][0]["sampled"][0] = 3; }), HasSubstr("'text.samples.sampled'"));
  EXPECT_THAT(broken([](json& j) { j["text"]["samples"][1]["step"] = 0; }), HasSubstr("increasing step order"));
  EXPECT_THAT(broken([](json& j) { j["text"]["samples"][0]["step"] = -1; }), HasSubstr("'text.samples.step'"));
  EXPECT_THAT(broken([](json& j) { j["text"]["references"].erase(1); }), HasSubstr("one list of tokens per prompt"));
  EXPECT_THAT(broken([](json& j) { j["text"]["samples"][0]["reference_probability"][1].erase(0); }),
              HasSubstr("a probability per reference token"));
  EXPECT_THAT(broken([](json& j) { j["text"]["samples"][0]["reference_probability"][0][0] = 1.5; }),
              HasSubstr("a probability per reference token"));
  EXPECT_THAT(broken([](json& j) { j["text"]["samples"][0].erase("reference_probability"); }),
              HasSubstr("'text.samples.reference_probability'"));
}

// Version 7 (text without references, no final weights) loads so: those runs kept none.
TEST_F(RunRecordTest, VersionSevenFileLoadsWithoutReferencesOrWeights) {
  json j = json::parse(to_json_text(run_with_text()));
  j["version"] = 7;
  j["text"].erase("references");
  for (json& sample : j["text"]["samples"]) sample.erase("reference_probability");
  j["config"].erase("final_weights");
  const RunRecord run = from_json_text(j.dump());
  EXPECT_EQ(run.text.samples.size(), 2u);
  EXPECT_TRUE(run.text.references.empty());
  EXPECT_TRUE(run.text.samples[0].reference_probability.empty());
  EXPECT_EQ(run.config.final_weights, "drop");
}

// Version 8 and before measured the baseline on the whole held-out split; versions 7 and 8
// also recorded the unigram's loss on the evaluated positions, which becomes the baseline.
TEST_F(RunRecordTest, VersionEightFileTakesItsBaselineFromTheEvaluatedPositions) {
  RunRecord old = run_with_series();
  old.add_point({"unigram_loss", 0, 2, {6.25}});
  old.add_point({"unigram_loss", 0, 4, {6.125}});
  json j = json::parse(to_json_text(old));
  j["version"] = 8;
  const RunRecord run = from_json_text(j.dump());
  EXPECT_EQ(run.baseline_loss, 6.125);
  EXPECT_EQ(run.find_series("unigram_loss"), nullptr) << "one number repeated, now the baseline";
  EXPECT_NE(run.find_series("grad_norm"), nullptr);

  json without = json::parse(to_json_text(run_with_series()));
  without["version"] = 8;
  EXPECT_EQ(from_json_text(without.dump()).baseline_loss, 5.4321) << "nothing better recorded";
  j["version"] = kRunSchemaVersion;
  EXPECT_EQ(from_json_text(j.dump()).baseline_loss, 5.4321) << "today's is the baseline already";
}

// Version 6 (before the text) loads with no text and text_every off: those runs wrote none.
TEST_F(RunRecordTest, VersionSixFileLoadsWithoutText) {
  json j = json::parse(to_json_text(run_with_text()));
  j["version"] = 6;
  j.erase("text");
  j["config"].erase("text_every");
  const RunRecord run = from_json_text(j.dump());
  EXPECT_TRUE(run.text.prompts.empty());
  EXPECT_TRUE(run.text.samples.empty());
  EXPECT_EQ(run.config.text_every, 0);
}

TEST_F(RunRecordTest, CsvHasAColumnPerSeriesAndLayer) {
  RunRecord a = run_with_series();
  RunRecord b = sample_run();
  b.config.name = "plain";
  b.steps.resize(2);
  const fs::path path = temp_ / "runs.csv";
  write_csv({a, b}, path);
  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 1u + 6 + 4);  // the second run: steps 0 (evaluated), 1, 2 and 4 (evaluated)
  // The series' columns come before the settings'.
  EXPECT_EQ(leading_cells(lines[0], 10),
            "run,step,wall_s,lr,train_loss,val_loss,grad_norm,update_ratio[0],update_ratio[1],display_name");
  const auto through_series = [&](std::size_t line) { return leading_cells(lines[line], 9); };
  EXPECT_THAT(through_series(1), ::testing::EndsWith(",0,0,,,6.9,,,"));    // step 0: evaluation only
  EXPECT_THAT(through_series(2), ::testing::EndsWith(",0.5,,"));           // step 1: grad_norm only
  EXPECT_THAT(through_series(3), ::testing::EndsWith(",6.5,,0.01,0.02"));  // step 2: evaluation and the grid
  EXPECT_THAT(through_series(4), ::testing::EndsWith(",,,,"));             // step 3: NaN grad_norm is empty
  EXPECT_THAT(through_series(5), ::testing::EndsWith(",0.03,0.04"));
  EXPECT_THAT(through_series(8), ::testing::EndsWith(",,,"));  // a run without series: empty cells
  EXPECT_THAT(through_series(10), ::testing::StartsWith("plain,4,0.4,,,6.12345679"));  // evaluated past its last step
  for (const auto& line : lines) EXPECT_EQ(csv_cells(line).size(), csv_cells(lines[0]).size()) << line;
}

TEST_F(RunRecordTest, OnlyARunningRunIsMarkedInterrupted) {
  RunRecord run = sample_run();
  run.status = RunStatus::Running;
  EXPECT_TRUE(mark_interrupted(run, "its process ended"));
  EXPECT_EQ(run.status, RunStatus::Interrupted);
  EXPECT_EQ(run.message, "its process ended");
  EXPECT_EQ(from_json_text(to_json_text(run)).status, RunStatus::Interrupted);
  for (RunStatus kept : {RunStatus::Queued, RunStatus::Done, RunStatus::Stopped}) {
    run.status = kept;
    EXPECT_FALSE(mark_interrupted(run, "again"));
    EXPECT_EQ(run.status, kept);
  }
}

TEST_F(RunRecordTest, AtomicWriteReplacesContents) {
  const fs::path path = temp_ / "out" / "file.txt";
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  EXPECT_EQ(read_file(path), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(path.parent_path()), fs::directory_iterator()), 1);
}

TEST_F(RunRecordTest, AtomicWriteToBadPathFails) {
  const fs::path path = temp_ / "taken";
  fs::create_directories(path / "inside");
  EXPECT_THAT(user_error([&] { write_file_atomically(path, "data"); }), HasSubstr(path.string()));
  EXPECT_TRUE(fs::is_directory(path / "inside"));
  EXPECT_EQ(std::distance(fs::directory_iterator(temp_.path()), fs::directory_iterator()), 1)
      << "a temp file was left behind";

  const fs::path blocker = temp_ / "blocker";
  write_file(blocker, "old");
  EXPECT_THAT(user_error([&] { write_file_atomically(blocker / "run.json", "data"); }), HasSubstr("cannot write"));
  EXPECT_EQ(read_file(blocker), "old");
}

// A write that fails half way (here: the file size limit, as on a full disk) keeps
// the old file whole and leaves no temp file.
TEST_F(RunRecordTest, AtomicWriteFailingMidwayKeepsOldFile) {
  const fs::path path = temp_ / "run.json";
  write_file(path, "old contents");
  const std::string message = error_with_files_capped([&] { write_file_atomically(path, std::string(100'000, 'x')); });
  EXPECT_THAT(message, HasSubstr(path.string()));
  expect_old_file_alone(path);
}

TEST_F(RunRecordTest, AtomicWriteStreamsIntoTheFile) {
  const fs::path path = temp_ / "big.txt";
  write_file_atomically(path, [](std::ostream& out) {
    for (int i = 0; i < 100'000; ++i) out << i << '\n';
  });
  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 100'000u);
  EXPECT_EQ(lines[99'999], "99999");
}

// A writer that throws leaves the old file and no temp file, and its exception escapes.
TEST_F(RunRecordTest, AtomicWriteWhoseWriterThrowsKeepsOldFile) {
  const fs::path path = temp_ / "run.json";
  write_file(path, "old contents");
  EXPECT_THROW(write_file_atomically(path,
                                     [](std::ostream& out) {
                                       out << std::string(200'000, 'x');
                                       throw std::runtime_error("formatting failed");
                                     }),
               std::runtime_error);
  expect_old_file_alone(path);
}

// A streamed write that fails half way names the reason, as a whole string's does.
TEST_F(RunRecordTest, AtomicStreamedWriteFailingMidwayNamesWhy) {
  const fs::path path = temp_ / "run.csv";
  write_file(path, "old contents");
  const std::string message = error_with_files_capped([&] {
    write_file_atomically(path, [](std::ostream& out) {
      for (int i = 0; i < 100'000; ++i) out << i << '\n';
    });
  });
  EXPECT_THAT(message, HasSubstr(path.string()));
  EXPECT_THAT(message, HasSubstr(std::strerror(EFBIG)));
  expect_old_file_alone(path);
}

// Runs side by side fill the same cache files (the tokenized corpus): threads writing one
// path at once each succeed, and the file holds one write whole.
TEST_F(RunRecordTest, ThreadsWritingOneFileAtOnceEachWriteItWhole) {
  const fs::path path = temp_ / "cache.ids";
  std::vector<std::string> contents;
  for (int t = 0; t < 4; ++t) contents.push_back(std::string(100'000, char('a' + t)));
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (const std::string& text : contents) {
    writers.emplace_back([&, text] {
      for (int i = 0; i < 20; ++i) {
        try {
          write_file_atomically(path, text);
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  }
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(failures, 0);
  EXPECT_THAT(contents, ::testing::Contains(read_file(path)));
  for (const auto& entry : fs::directory_iterator(path.parent_path()))
    EXPECT_EQ(entry.path(), path) << "no temp file left";
}

// A process killed with SIGKILL half way through a write leaves its temp file; the next
// write of that file removes it. Temp files of live processes and of other files stay.
TEST_F(RunRecordTest, AtomicWriteRemovesTempFilesOfKilledWriters) {
  const fs::path path = temp_ / "run.json";
  write_file(path, "old contents");
  const pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    write_file_atomically(path, [](std::ostream& out) {
      out << "half of it" << std::flush;
      ::pause();  // killed here
    });
    ::_exit(1);
  }
  // The writer's temp file: path.tmp-<its pid>-<its write number>.
  const std::string left_prefix = path.filename().string() + ".tmp-" + std::to_string(writer) + "-";
  fs::path left;
  for (int i = 0; i < 1000 && !(!left.empty() && fs::file_size(left) > 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (const auto& entry : fs::directory_iterator(path.parent_path())) {
      if (entry.path().filename().string().rfind(left_prefix, 0) == 0) left = entry.path();
    }
  }
  ::kill(writer, SIGKILL);
  ::waitpid(writer, nullptr, 0);
  ASSERT_EQ(read_file(left), "half of it");
  EXPECT_EQ(read_file(path), "old contents");

  fs::path live = path;
  live += ".tmp-" + std::to_string(::getppid());  // the test runner: alive, maybe writing
  const fs::path other = temp_ / ("other.json.tmp-" + std::to_string(writer));
  const fs::path not_a_pid = temp_ / "run.json.tmp-old";
  for (const fs::path& p : {live, other, not_a_pid}) write_file(p, "keep");

  write_file_atomically(path, "new contents");
  EXPECT_EQ(read_file(path), "new contents");
  EXPECT_FALSE(fs::exists(left));
  for (const fs::path& p : {live, other, not_a_pid}) EXPECT_TRUE(fs::exists(p)) << p;
}

}  // namespace
}  // namespace normlab::test
