#pragma once
// Running another program without a shell, so no argument is ever read as shell syntax:
// the command line's way to Slurm's sbatch, squeue and sacct.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace normlab {

// The program's path from PATH (or as given, when it holds a slash); nullopt if none is there.
std::optional<std::filesystem::path> find_program(const std::string& name);

struct ProgramOutput {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;     // its standard output
};
// Whether the program's standard error goes to ours (what it says when it refuses) or is
// dropped (a question whose failure is an answer: sacct without accounting).
enum class Errors { Shown, Dropped };
// Runs `program` with `arguments` in `folder` (ours when empty) and waits for it.
// UserError when it cannot be started.
ProgramOutput run_program(const std::filesystem::path& program, const std::vector<std::string>& arguments,
                          Errors errors = Errors::Shown, const std::filesystem::path& folder = {});

}  // namespace normlab
