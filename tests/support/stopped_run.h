#pragma once
// Whether a run file left by a stop is whole: status stopped, consecutive steps, every
// evaluation and series point inside them, its CSV (the command line writes one beside
// it, the window does not) a row per step, and, once the run has trained, a checkpoint at
// its last step whose payload matches its header's hash.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "core/data/corpus.h"
#include "core/runs/run_record.h"
#include "core/training/checkpoint.h"

namespace normlab::test {

// The run as its file holds it (checked with gtest expectations).
enum class Csv { Beside, None };
// A run cut short by closing the window is Interrupted instead (Continue takes it up).
inline RunRecord expect_stopped_and_whole(const std::filesystem::path& file, Csv csv_file,
                                          RunStatus status = RunStatus::Stopped) {
  SCOPED_TRACE(file.filename().string());
  const RunRecord run = read_json(file);
  EXPECT_EQ(run.status, status) << run.message;
  for (std::size_t i = 0; i < run.steps.size(); ++i) EXPECT_EQ(run.steps[i].step, int(i) + 1);
  const int last = run.steps.empty() ? 0 : run.steps.back().step;
  std::set<int> rows;
  for (const auto& s : run.steps) rows.insert(s.step);
  for (const auto& e : run.evals) {
    EXPECT_LE(e.step, last);
    rows.insert(e.step);
  }
  for (const Series& series : run.series) {
    EXPECT_EQ(series.values.size(), series.steps.size() * std::size_t(series.width())) << series.name;
    for (const int step : series.steps) EXPECT_LE(step, last) << series.name;
  }
  if (csv_file == Csv::Beside) {
    std::filesystem::path csv = file;
    std::ifstream in(csv.replace_extension(".csv"));
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    EXPECT_EQ(lines, rows.size() + 1) << "a header and a row per step";
  }
  if (last == 0) return run;
  const std::filesystem::path checkpoint = checkpoint_path(file);
  EXPECT_TRUE(std::filesystem::exists(checkpoint)) << "a stopped run that trained keeps a checkpoint to go on from";
  if (!std::filesystem::exists(checkpoint)) return run;
  const CheckpointHeader header = resumable_checkpoint(checkpoint, run.config);
  EXPECT_EQ(header.step, last);
  std::ostringstream bytes;
  bytes << std::ifstream(checkpoint, std::ios::binary).rdbuf();
  const std::string all = bytes.str();
  EXPECT_EQ(content_hash(std::string_view(all).substr(all.find('\n') + 1)), header.payload_hash);
  return run;
}

}  // namespace normlab::test
