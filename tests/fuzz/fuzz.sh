#!/usr/bin/env bash
# A libFuzzer campaign on the run-file reader (from_json_text), with ASan and UBSan.
#   tests/fuzz/fuzz.sh [seconds=600] [work folder=build/fuzz]
# Needs clang and libFuzzer (Debian: apt install clang libclang-rt-14-dev). New findings
# land in the work folder as crash-*, timeout-* or oom-*: fix, then copy the input into
# tests/fuzz/regressions/ so the normal test suite replays it.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
work=${2:-build/fuzz}
mkdir -p "$work/corpus"
clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I. tests/fuzz/run_record_fuzz.cpp core/runs/*.cpp core/system/atomic_file.cpp \
  -o "$work/run_record_fuzz"
# One worker: the machine is shared. -timeout: a run file reads in milliseconds.
exec nice -n 10 "$work/run_record_fuzz" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -dict=tests/fuzz/run_record.dict -artifact_prefix="$work/" -print_final_stats=1 \
  "$work/corpus" tests/fuzz/corpus tests/fuzz/regressions
