#pragma once
// How a fault-injection test says which faults this machine let it try (the set depends on
// privileges: root, tmpfs mounts): as a test property in ctest's record and on stdout.
#include <cstdio>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace normlab::test {

inline void report_faults_tried(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += " [" + name + "]";
  ::testing::Test::RecordProperty("faults", text);
  std::printf("faults tried:%s\n", text.c_str());
}

}  // namespace normlab::test
