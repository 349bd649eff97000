#pragma once
// A sweep as a Slurm job array: array task i trains point i of the sweep its description
// file rebuilds (expand(sweep)[i]), so the task index is the whole contract and any
// scheduler with numbered tasks could drive it. The pure parts live here: the job
// script, its quoting, and where each point stands from Slurm's answers and its run
// file. Running sbatch, squeue and sacct is the command line's business.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/runs/run_record.h"

namespace normlab {

// `text` as one word for a POSIX shell: in single quotes, each ' written '\''. Refuses
// (UserError) a NUL, which no argument can hold.
std::string shell_quoted(const std::string& text);

// What clusters differ in, passed through to sbatch as the job script's #SBATCH lines.
struct SlurmOptions {
  std::string partition, account, time, gres;  // empty: the cluster's default
  int throttle = 0;                            // at most this many tasks at once (%N); 0: no limit
};

// The tasks as sbatch's --array value: "0-3,5,7-8", with "%N" for a throttle.
std::string array_spec(const std::vector<int>& tasks, int throttle);

struct JobScript {
  std::string job_name;               // "normlab-depth"
  std::filesystem::path cli;          // normlab-cli, as the nodes see it
  std::filesystem::path description;  // the sweep's description file, in its folder
  std::filesystem::path log_folder;   // relative to the folder (the job's working directory)
  std::vector<int> tasks;             // the points to train
  int points = 0;                     // of the whole sweep
  SlurmOptions options;
};
// The script sbatch runs once per array task. Paths are shell-quoted; #SBATCH values are
// read by sbatch, not by a shell, so those outside a plain set of characters are refused
// (UserError naming the option).
std::string job_script(const JobScript& job);

// Array tasks' states by task index from squeue's `-r -o '%i|%T'` or sacct's
// `-P -X -o JobID,State` output, for one job id: "123_4|RUNNING" -> {4: "RUNNING"};
// "CANCELLED by 0" -> "CANCELLED". Other jobs' lines and a job's summary line
// ("123_[5-9]" while pending) are skipped.
std::map<int, std::string> slurm_task_states(const std::string& text, const std::string& job_id);

// The job array each task was last submitted in, task index -> job id, as kept beside the
// sweep's runs (DIR/<sweep>.slurm-jobs.json), so --status knows which of Slurm's jobs to read.
inline constexpr const char* kSlurmJobsSuffix = ".slurm-jobs.json";
std::string slurm_jobs_json_text(const std::map<int, std::string>& job_of_task);
std::map<int, std::string> slurm_jobs_from_json_text(const std::string& text);  // UserError if damaged

// Where a point of the sweep stands.
enum class PointState { Done, Queued, Running, Failed, Missing };
struct PointStateInfo {
  PointState value;
  const char* name;
};
inline constexpr PointStateInfo kPointStates[] = {
    {PointState::Done, "done"},     {PointState::Queued, "queued"},   {PointState::Running, "running"},
    {PointState::Failed, "failed"}, {PointState::Missing, "missing"},
};
static_assert(in_enum_order(kPointStates));
const char* name_of(PointState state);

// The point's run file (its record and seconds since it last changed), if any, and
// Slurm's state for its latest task, if Slurm answered. Slurm's word wins while the task
// is queued or running, or after it failed; otherwise the file decides: a result is
// done, a run cut short or one that fell silent (kLostAfterSeconds) failed.
struct PointEvidence {
  const RunRecord* run = nullptr;  // null: no readable file
  double file_age_s = 0;
  std::optional<std::string> slurm_state;  // "RUNNING", "PENDING", "CANCELLED", ...
};
PointState point_state(const PointEvidence& evidence, const TrainConfig& wanted);

}  // namespace normlab
