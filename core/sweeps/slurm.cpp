#include "slurm.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "core/runs/config.h"
#include "core/runs/config_fields.h"

#include "sweep.h"

namespace normlab {

std::string shell_quoted(const std::string& text) {
  if (text.find('\0') != std::string::npos) throw UserError("a NUL character cannot go into a job script");
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string array_spec(const std::vector<int>& tasks, int throttle) {
  std::vector<int> sorted = tasks;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string spec;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t last = i;
    while (last + 1 < sorted.size() && sorted[last + 1] == sorted[last] + 1) ++last;
    spec += (spec.empty() ? "" : ",") + std::to_string(sorted[i]);
    if (last > i) spec += "-" + std::to_string(sorted[last]);
    i = last + 1;
  }
  if (throttle > 0) spec += "%" + std::to_string(throttle);
  return spec;
}

namespace {

// sbatch reads #SBATCH lines itself, with its own rules: only values that mean the same
// under any of them go in.
std::string sbatch_line(const std::string& option, const std::string& value) {
  const bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("._:,=+-/@%").find(char(c)) != std::string_view::npos;
  });
  if (!plain) {
    throw UserError("--" + option + " '" + value +
                    "' is refused: a job script takes only letters, digits and . _ : , = + - / @ % there");
  }
  return "#SBATCH --" + option + "=" + value + "\n";
}

}  // namespace

std::string job_script(const JobScript& job) {
  std::string script = "#!/bin/bash\n";
  script += "# Written by normlab-cli sweep --slurm: array task i trains point i of the " + std::to_string(job.points) +
            " in the sweep's description, resuming its checkpoint if it has one.\n";
  script += sbatch_line("job-name", job.job_name);
  script += sbatch_line("array", array_spec(job.tasks, job.options.throttle));
  script += sbatch_line("output", (job.log_folder / "%A_%a.out").string());
  // A preempted task goes back in the queue; on SIGTERM the run stops after its step and
  // keeps a checkpoint, which the requeued task goes on from.
  script += "#SBATCH --requeue\n";
  const std::pair<const char*, const std::string*> passed[] = {{"partition", &job.options.partition},
                                                               {"account", &job.options.account},
                                                               {"time", &job.options.time},
                                                               {"gres", &job.options.gres}};
  for (const auto& [option, value] : passed) {
    if (!value->empty()) script += sbatch_line(option, *value);
  }
  script += "exec " + shell_quoted(job.cli.string()) + " sweep --sweep-file " + shell_quoted(job.description.string()) +
            " --task \"$SLURM_ARRAY_TASK_ID\"\n";
  return script;
}

std::map<int, std::string> slurm_task_states(const std::string& text, const std::string& job_id) {
  std::map<int, std::string> states;
  std::istringstream lines(text);
  const std::string prefix = job_id + "_";
  for (std::string line; std::getline(lines, line);) {
    const std::size_t bar = line.find('|');
    if (bar == std::string::npos || line.rfind(prefix, 0) != 0) continue;
    const std::string task = line.substr(prefix.size(), bar - prefix.size());
    if (task.empty() || !std::all_of(task.begin(), task.end(), [](unsigned char c) { return std::isdigit(c); })) {
      continue;
    }
    std::string state = line.substr(bar + 1);
    state = state.substr(0, state.find_first_of(" \t\r|"));
    if (!state.empty()) states[std::stoi(task)] = state;
  }
  return states;
}

std::string slurm_jobs_json_text(const std::map<int, std::string>& job_of_task) {
  nlohmann::json tasks = nlohmann::json::object();
  for (const auto& [task, job] : job_of_task) tasks[std::to_string(task)] = job;
  return nlohmann::json{{"tasks", tasks}}.dump(2) + "\n";
}

std::map<int, std::string> slurm_jobs_from_json_text(const std::string& text) {
  std::map<int, std::string> job_of_task;
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text);
    for (const auto& [task, job] : parsed.at("tasks").items()) {
      job_of_task[std::stoi(task)] = job.get<std::string>();
    }
  } catch (const std::exception& error) {
    throw UserError(std::string("the sweep's record of its Slurm jobs is damaged: ") + error.what());
  }
  return job_of_task;
}

const char* name_of(PointState state) { return kPointStates[std::size_t(state)].name; }

namespace {
bool one_of(const std::string& state, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* name) { return state == name; });
}
}  // namespace

PointState point_state(const PointEvidence& evidence, const TrainConfig& wanted) {
  const RunRecord* run = evidence.run && same_experiment(evidence.run->config, wanted) ? evidence.run : nullptr;
  if (run && answers(*run, wanted)) return PointState::Done;
  if (evidence.slurm_state) {
    const std::string& state = *evidence.slurm_state;
    if (one_of(state, {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"}))
      return PointState::Queued;
    if (one_of(state, {"RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "STOPPED", "RESIZING", "SIGNALING",
                       "STAGE_OUT"})) {
      return PointState::Running;
    }
    if (state != "COMPLETED") return PointState::Failed;  // FAILED, CANCELLED, TIMEOUT, PREEMPTED, NODE_FAIL, ...
  }
  if (!run) return evidence.slurm_state ? PointState::Failed : PointState::Missing;  // completed without a run
  if (progress_of(run->status) == RunProgress::Pending && !evidence.slurm_state) {
    return evidence.file_age_s < kLostAfterSeconds ? PointState::Running : PointState::Failed;
  }
  return PointState::Failed;  // cut short, or ended without a result
}

}  // namespace normlab
