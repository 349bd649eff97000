#include "host.h"

#include <fstream>

namespace normlab {

// engine_commit() is in engine_commit.cpp, which cmake/NormLabEngineCommit.cmake writes at
// each build.

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    const auto start = colon == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

}  // namespace normlab
