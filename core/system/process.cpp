#include "process.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stop_signals.h"
#include "user_error.h"

namespace normlab {

namespace fs = std::filesystem;

std::optional<fs::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return ::access(name.c_str(), X_OK) == 0 ? std::optional<fs::path>(name) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string folders = path ? path : "";
  for (std::size_t start = 0; start <= folders.size();) {
    std::size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    const fs::path candidate = fs::path(start == end ? "." : folders.substr(start, end - start)) / name;
    std::error_code error;
    if (fs::is_regular_file(candidate, error) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

ProgramOutput run_program(const fs::path& program, const std::vector<std::string>& arguments, Errors errors,
                          const fs::path& folder) {
  int out[2];
  if (::pipe(out) != 0) throw UserError("cannot start " + program.string() + ": " + std::strerror(errno));
  std::vector<std::string> words{program.string()};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw UserError("cannot start " + program.string() + ": " + std::strerror(errno));
  if (pid == 0) {
    unblock_stop_signals();  // the parent's are taken by its own thread (stop_signals.h)
    ::dup2(out[1], STDOUT_FILENO);
    if (errors == Errors::Dropped) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, STDERR_FILENO);
    }
    ::close(out[0]);
    ::close(out[1]);
    if (!folder.empty() && ::chdir(folder.c_str()) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ProgramOutput result;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    result.out.append(buffer, std::size_t(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (result.exit_code == 127 || result.exit_code == 126) {
    throw UserError("cannot start " + program.string() + (result.exit_code == 126 ? " in " + folder.string() : ""));
  }
  return result;
}

}  // namespace normlab
