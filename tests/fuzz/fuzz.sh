#!/usr/bin/env bash
# A libFuzzer campaign with ASan and UBSan on one of NormLab's file readers:
#   run_record  the run-file reader (from_json_text)
#   weights     the weights reader (load_weights), LibTorch's archive reader behind it
#
#   tests/fuzz/fuzz.sh [seconds=600] [work folder=build/fuzz] [target=run_record]
#
# Needs clang and libFuzzer (Debian: apt install clang libclang-rt-14-dev); the weights
# target also LibTorch (scripts/normlab.sh setup puts it in ~/.cache/normlab). New findings
# land in the work folder as crash-*, timeout-* or oom-*: fix, then copy the input into the
# target's regressions (tests/fuzz/regressions/ for run files) so the test suite replays it.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
work=${2:-build/fuzz}
target=${3:-run_record}
mkdir -p "$work/$target-corpus"
flags=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I.)
case $target in
  run_record)
    clang++ "${flags[@]}" tests/fuzz/run_record_fuzz.cpp core/runs/*.cpp core/system/atomic_file.cpp \
      -o "$work/run_record_fuzz"
    seeds=(tests/fuzz/corpus tests/fuzz/regressions)
    options=(-dict=tests/fuzz/run_record.dict)
    ;;
  weights)
    torch=$(echo "${XDG_CACHE_HOME:-$HOME/.cache}/normlab/torch-$(cat cmake/torch.version)"/lib/python3*/site-packages/torch)
    [ -d "$torch/include" ] || { echo "fuzz.sh: no LibTorch at $torch: run scripts/normlab.sh setup" >&2; exit 2; }
    # LibTorch is not instrumented: the campaign covers NormLab's reader and what it hands
    # LibTorch; ASan still sees LibTorch's reads of memory NormLab owns.
    clang++ "${flags[@]}" -DNORMLAB_TORCH_VERSION="\"$(cat cmake/torch.version)\"" -isystem "$torch/include" -isystem "$torch/include/torch/csrc/api/include" \
      tests/fuzz/weights_fuzz.cpp core/training/weights.cpp core/training/headed_file.cpp core/model/*.cpp \
      core/runs/*.cpp core/data/corpus.cpp core/system/atomic_file.cpp core/system/paths.cpp \
      -L"$torch/lib" -Wl,-rpath,"$torch/lib" -ltorch -ltorch_cpu -lc10 -o "$work/weights_fuzz"
    seeds=(tests/fuzz/weights_corpus)
    options=()
    ;;
  *) echo "fuzz.sh: no target '$target' (run_record, weights)" >&2; exit 2 ;;
esac
# One worker: the machine is shared. -timeout: a file reads in milliseconds.
exec nice -n 10 "$work/${target}_fuzz" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=4096 "${options[@]}" \
  -artifact_prefix="$work/$target-" -print_final_stats=1 "$work/$target-corpus" "${seeds[@]}"
