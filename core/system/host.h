#pragma once
// The build and the machine a run is made on, as its file records them (Environment): a kept
// run then says itself which engine and which CPU made it, without a table beside it.
#include <string>

namespace normlab {

// The engine this build was made from: the last commit that changed core/, app/, cmake/ or
// CMakeLists.txt (what computes a run's numbers, as scripts/figures.py stamps its blocks),
// with "+changes" where tracked files there differed from it when the build ran; "unknown"
// for a build outside a git checkout (a source tarball). Read by CMake at every build, not
// only at configure time, so a commit without a reconfigure still stamps the right one.
std::string engine_commit();

// The CPU's model name as /proc/cpuinfo gives it ("AMD EPYC", "Intel(R) Xeon(R) ..."), or
// "unknown CPU".
std::string cpu_model();

}  // namespace normlab
