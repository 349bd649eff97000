// This program links the core as the app and the command line do, and ctest starts it
// without GOMP_SPINCOUNT (tests/core/CMakeLists.txt): it must have started again with the
// short spin that libgomp reads as it loads (core/system/idle_threads.cpp).
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace {

// The environment this program image started with: what libgomp read.
std::vector<std::string> starting_environment() {
  std::ifstream in("/proc/self/environ", std::ios::binary);
  std::vector<std::string> entries;
  for (std::string entry; std::getline(in, entry, '\0');) entries.push_back(entry);
  return entries;
}

TEST(IdleThreads, ProgramsStartWithAShortOpenMPSpin) {
  EXPECT_THAT(starting_environment(), ::testing::Contains("GOMP_SPINCOUNT=1000"));
}

}  // namespace
