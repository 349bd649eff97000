// normlab-cli explain: what a run is doing, in words, from its file alone; two runs compared;
// a folder's runs each.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "core/runs/verdict.h"
#include "core/sweeps/sweep.h"
#include "core/system/user_error.h"

#include "cli_run.h"

namespace normlab::cli {

namespace fs = std::filesystem;

namespace {

// The runs a folder holds: its *.json files but a sweep's description, in name order. A file
// that is not a run is said on stderr and passed over: a folder may hold other JSON.
std::vector<RunRecord> runs_in(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = kSweepDescriptionSuffix;
    const bool description =
        name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (entry.is_regular_file() && entry.path().extension() == ".json" && !description) files.push_back(entry.path());
  }
  if (error) throw UserError("cannot read the folder " + folder.string() + ": " + error.message());
  std::sort(files.begin(), files.end());
  std::vector<RunRecord> runs;
  for (const fs::path& file : files) {
    try {
      runs.push_back(read_json(file));
    } catch (const UserError& e) {
      std::fprintf(stderr, "normlab-cli: passed over %s\n", e.what());
    }
  }
  if (runs.empty()) throw UserError("no run files in " + folder.string());
  return runs;
}

}  // namespace

CLI::App* add_explain_command(CLI::App& app, Options& options) {
  CLI::App* explain = app.add_subcommand(
      "explain", "say what a run is doing and why, from its file: its verdict, the evidence and one sentence");
  explain
      ->add_option("run", options.explain_runs,
                   "a run's file; two to compare them; or a folder, to explain each run in it")
      ->required()
      ->expected(1, 2)
      ->type_name("RUN.json [RUN2.json] | FOLDER");
  explain->add_flag("--json", options.json,
                    "print one JSON object: verdict, since_step, sentence, missing and the evidence; for several "
                    "runs {\"runs\": [...]}, with a \"comparison\" for two");
  return explain;
}

int run_explain(const Options& options) {
  std::vector<RunRecord> runs;
  bool folder = false;
  for (const std::string& path : options.explain_runs) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      if (options.explain_runs.size() > 1) throw UserError("explain takes one folder, or one or two run files");
      runs = runs_in(path);
      folder = true;
    } else {
      runs.push_back(read_json(path));  // UserError naming the file and what is wrong with it
    }
  }
  std::vector<const RunRecord*> pointers;
  for (const RunRecord& run : runs) pointers.push_back(&run);
  if (options.json) {
    std::printf("%s\n", explain_json_text(pointers).c_str());
    return 0;
  }
  for (std::size_t i = 0; i < runs.size(); ++i) std::printf("%s%s", i > 0 ? "\n" : "", explain_text(runs[i]).c_str());
  if (runs.size() == 2 && !folder) std::printf("\n%s\n", compare_sentence(runs[0], runs[1]).c_str());
  return 0;
}

}  // namespace normlab::cli
