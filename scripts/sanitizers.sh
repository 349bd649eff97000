#!/usr/bin/env bash
# Builds and runs the core and UI test suites under AddressSanitizer + UndefinedBehavior-
# Sanitizer (the asan preset), each stage timed. Not part of .ci/run: on two cores the
# build alone takes ~24 minutes (docs/robustness.md). Run scripts/normlab.sh setup first.
set -euo pipefail
cd "$(dirname "$0")/.."
time cmake --preset asan
time cmake --build --preset asan
time ctest --preset asan -j2
