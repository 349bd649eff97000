// What a run file says of the build and the machine: the commit the build came from, as git
// itself names it, and the CPU's model, as /proc/cpuinfo does.
#include "core/system/host.h"

#include <cstdio>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <optional>
#include <string>

namespace normlab {
namespace {

// cmake/NormLabEngineCommit.cmake's engine_paths.
const std::string kEnginePaths = "core app cmake CMakeLists.txt";

// What a command prints, its trailing newline dropped; nullopt where it fails.
std::optional<std::string> output_of(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string text;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe)) text += buffer;
  if (pclose(pipe) != 0) return std::nullopt;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The tests are built from the tree they test, so the build's engine is the checkout's last
// commit that changed the engine's paths, marked where tracked files there had changed;
// outside a checkout, "unknown".
TEST(Host, TheEngineIsTheLastCommitThatChangedIt) {
  const std::string source = NORMLAB_SOURCE_DIR;
  const auto head =
      output_of("git -C '" + source + "' log -1 --abbrev=7 --format=%h -- " + kEnginePaths + " 2>/dev/null");
  if (!head) {
    EXPECT_EQ(engine_commit(), "unknown");
    return;
  }
  ASSERT_EQ(head->size(), 7u);
  const auto changes = output_of("git -C '" + source + "' status --porcelain --untracked-files=no -- " + kEnginePaths);
  ASSERT_TRUE(changes.has_value());
  EXPECT_EQ(engine_commit(), *head + (changes->empty() ? "" : "+changes"));
}

TEST(Host, TheCpuIsProcCpuinfosModelName) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, expected;
  while (expected.empty() && std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) expected = line.substr(line.find(':') + 2);
  }
  if (expected.empty()) {
    EXPECT_EQ(cpu_model(), "unknown CPU");  // a machine whose kernel names no model
  } else {
    EXPECT_EQ(cpu_model(), expected);
    EXPECT_NE(cpu_model().front(), ' ');
  }
}

}  // namespace
}  // namespace normlab
