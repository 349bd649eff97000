#!/usr/bin/env bash
# The GPU check, prepared to run once on a machine with an NVIDIA GPU (the device tool's
# H200, which has CUDA's torch, CMake and a compiler but no network and no Debian -dev
# packages). It builds the headless parts against the torch its python3 holds, then runs
# stages, each under a time limit and each writing its results to $OUT (default
# ./gpu-check-out) as it ends, so a check cut short still brings back what finished:
#
#   tests            the engine's tests, the CUDA ones required (NORMLAB_REQUIRE_CUDA=1)
#   one-run          one full-scale run (3000 x 32 x 128), its training wall time (target <= 3 s)
#   course           the five-run course side by side, full scale (target <= 10 s)
#   compare          NormLab against eager PyTorch
#   bookshelf        the same course on the bookshelf corpus (issue 50), its runs brought back
#   stacks           runs stacked as one model against single steps, and the course unstacked
#   profile          one graphed step's kernels: how many, and the ten that take longest
#   bench            steps a second under TF32 and bf16 settings, with and without the CUDA
#                    graph, and what recording the layer statistics and text costs
#   course-cpu-fp32  the course at --scale cpu with --tf32 off, to set beside the CPU's table
#   compiled         against torch.compile(mode="reduce-overhead"): Inductor's kernels in a
#                    CUDA graph, compiled in about a minute
#   autotuned        against torch.compile(mode="max-autotune"), in whatever time is left
#
#   scripts/gpu-check.sh --prepare   here, once: Debian packages, CUDA's crt headers and the
#                                    KJV cache into .dev/
#   scripts/gpu-check.sh --cpu-only  here: the same stages, shortened, on the CPU: the dry run
#
# There, with .dev carried: the build takes up to 5 minutes of 16 cores and the stages
# about 6, more than one device command's 10 minutes, so the check is two commands on the
# same warm machine (the build stays between them):
#   scripts/gpu-check.sh --deadline 570                # builds, then stages until 570 s
#   scripts/gpu-check.sh --deadline 570 --only "STAGES NOT REACHED"
# A stage gets its own limit or what is left before the deadline, whichever is less;
# $OUT/stages.txt says how each ended, "not reached" included.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }
debs=(libsentencepiece0 libsentencepiece-dev libprotobuf-lite32 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev)

if [ "${1:-}" = --prepare ]; then
  rm -rf .dev/debs .dev/cache && mkdir -p .dev/debs .dev/cache
  (cd .dev/debs && apt-get download "${debs[@]}")
  # CUDA's crt/ headers, which that machine's torch environment lacks (scripts/normlab.sh).
  crt_version=$(sed -n 's/^CUDA_CRT_VERSION=//p' scripts/normlab.sh)
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_17_x86_64 \
    -d .dev/debs "nvidia-cuda-crt==$crt_version"
  # The default corpus and its tokenizer, so the GPU machine needs neither `bible` nor
  # the minute of BPE training.
  NORMLAB_CACHE_DIR="$root/.dev/cache" scripts/normlab.sh cli train --steps 1 --eval-batches 1 \
    --device cpu --out "$(mktemp -d)" >/dev/null
  # The bookshelf corpus (issue 50) where this machine has built it: compressed, as its text
  # and token ids would not fit the device tool's carry otherwise.
  user_cache=${NORMLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/normlab}
  rm -f .dev/bookshelf.tar.xz
  if [ -f "$user_cache/corpus/bookshelf.txt" ]; then
    # Its tokenizer files are named by the text's hash (content_hash, core/data/corpus.cpp).
    hash=$(python3 - "$user_cache/corpus/bookshelf.txt" <<'PY'
import sys
data, h = open(sys.argv[1], "rb").read(), 1469598103934665603
for byte in data:
    h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
print(f"{h:016x}-{len(data):x}")
PY
)
    (cd "$user_cache" && tar -cJf "$root/.dev/bookshelf.tar.xz" corpus/bookshelf.txt tokenizers/"$hash"-*)
  else
    echo "no bookshelf corpus in $user_cache: scripts/normlab.sh bookshelf builds it (the bookshelf stage needs it)"
  fi
  du -sh .dev/debs .dev/cache .dev/bookshelf.tar.xz 2>/dev/null
  du -sh .dev
  exit 0
fi
cpu_only=false only="" deadline=0
while [ $# -gt 0 ]; do
  case $1 in
    --cpu-only) cpu_only=true ;;
    --only) only=$2 && shift ;;
    --deadline) deadline=$2 && shift ;;
    *) echo "gpu-check.sh: unknown option '$1' (see its header)" >&2 && exit 2 ;;
  esac
  shift
done

out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1

# stage NAME SECONDS COMMAND...: runs COMMAND (a program, or a function of this script:
# they and the settings they read are exported) under a time limit, its output also in
# $OUT/NAME.txt, and its end (ok, failed with a status, or cut at the limit) in $OUT/stages.txt.
stage() {
  local name=$1 limit=$2 status=0 start=$SECONDS
  shift 2
  if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then return 0; fi
  if $cpu_only && [ "$name" != build ]; then limit=$((limit * 4)); fi  # 2 cores, not a GPU
  if [ "$deadline" -gt 0 ] && [ $((deadline - SECONDS - 5)) -lt "$limit" ]; then
    limit=$((deadline - SECONDS - 5))
    if [ "$limit" -lt 15 ]; then
      echo "$name: not reached before the deadline of $deadline s" >>"$out/stages.txt"
      return 0
    fi
  fi
  say "$name (at most $limit s)"
  # TERM, not INT: normlab-cli stops on either after its step, and Python ends on TERM
  # without the KeyboardInterrupt traceback INT gave in each cut stage's output.
  timeout --signal=TERM --kill-after=10 "$limit" bash -c 'set -euo pipefail; "$@"' "$name" "$@" 2>&1 |
    tee "$out/$name.txt" || status=${PIPESTATUS[0]}
  case $status in
    0) echo "$name: ok in $((SECONDS - start)) s" >>"$out/stages.txt" ;;
    124 | 137) echo "$name: cut at its limit of $limit s" >>"$out/stages.txt" ;;
    *) echo "$name: failed with status $status after $((SECONDS - start)) s" >>"$out/stages.txt" ;;
  esac
}
rm -f "$out/stages.txt"
export out deadline
export -f say

say "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/machine.txt" || $cpu_only
python3 -c 'import torch; print("python torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' |
  tee -a "$out/machine.txt"

say "dependencies from .dev/debs, unpacked beside the build (not into /)"
deps=$root/build/gpu-deps
rm -rf "$deps" && mkdir -p "$deps"
for deb in .dev/debs/*.deb; do dpkg-deb -x "$deb" "$deps" 2>/dev/null || dpkg -x "$deb" "$deps"; done
python3 -m zipfile -e .dev/debs/nvidia_cuda_crt-*.whl "$deps/crt"
multiarch=$deps/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_PATH=$multiarch/pkgconfig PKG_CONFIG_SYSROOT_DIR=$deps
export LD_LIBRARY_PATH=$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
case $(python3 -c 'import torch; print(torch.__version__)') in
  "$(cat cmake/torch.version)"*) ;;
  *) echo "warning: python3's torch is not the pinned $(cat cmake/torch.version); figures are for that torch" ;;
esac

build() {
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # No gpu install there: its libcurl/libarchive -dev packages are not on that machine, and
  # nothing can be fetched from it anyway. No style check: no clang-format 14 there either.
  cmake -S . -B build/gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DNORMLAB_GUI=OFF -DNORMLAB_GPU_INSTALL=OFF \
    -DNORMLAB_STYLE_CHECK=OFF -DNORMLAB_TORCH_DIR="$torch_dir" -DCMAKE_PREFIX_PATH="$deps/usr" \
    -DNORMLAB_CUDA_CRT_INCLUDE="$deps/crt/nvidia/cu13/include" -DCMAKE_CXX_FLAGS="-isystem $deps/usr/include" >/dev/null
  cmake --build build/gpu -j"$(nproc)" --target normlab-cli normlab_core_tests
}
export torch_dir deps
export -f build
build_limit=300  # 16 cores there; the dry run here builds on 2
$cpu_only && build_limit=3600
stage build "$build_limit" build
export cli=build/gpu/app/normlab-cli runs=build/gpu-runs
[ -x "$cli" ] || { echo "no normlab-cli: the build failed, nothing to check"; exit 1; }
export NORMLAB_CACHE_DIR=$root/.dev/cache

export device=cuda full="--scale full" bench_steps="--bench-steps 50 --bench-warmup 10"
if $cpu_only; then  # the dry run: every stage, a few steps each
  device=cpu
  full="--scale full --steps 20 --eval-interval 10"
  bench_steps="--bench-steps 2 --bench-warmup 1"
else
  export NORMLAB_REQUIRE_CUDA=1  # a CUDA test that skips there is a failure
fi

tests() {
  (cd build/gpu && ctest -j8 --output-on-failure -R 'Cuda|Trainer|Dataset|Learner|Model|AdamW|Bench|TextSamples|Predictions|Stack|LayerStat')
  build/gpu/tests/core/normlab_core_tests --gtest_filter='Cuda*'
}
export -f tests
stage tests 50 tests

# A run's training wall time is the wall_s its file gives its last step: from the first
# step, process and tokenizer start left out.
train_seconds() {  # $1 = folder: every run file's name and training wall time
  python3 - "$1" <<'PY'
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    run = json.loads(path.read_text())
    if "steps" not in run:
        continue
    print(f"{path.stem:<40} {run['steps']['wall_s'][-1]:8.2f} s  held-out {run['evals']['val_loss'][-1]:.4f}")
PY
}
one_run() {
  # shellcheck disable=SC2086
  rm -rf "$runs/one" && "$cli" train $full --device "$device" --norm pre --lr 1e-3 --warmup 30 --out "$runs/one"
  train_seconds "$runs/one"
}
export -f train_seconds one_run
stage one-run 35 one_run
course() {
  local start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  rm -rf "$runs/course" && "$cli" train --preset workshop $full --device "$device" --out "$runs/course" |
    grep -E 'done|diverged|stopped|failed'
  echo "course side by side, whole process: $(awk "BEGIN { print $EPOCHREALTIME - $start }") s"
  train_seconds "$runs/course"
  # The device tool brings back a few files of at most 16 MiB: run files only, no weights.
  tar -czf "$out/course-runs.tar.gz" --exclude='*.weights' --exclude='*.ckpt' -C "$runs/course" .
}
export -f course
stage course 70 course
# Against eager PyTorch next: one of the GPU issue's targets, and a minute.
stage compare 40 python3 bench/compare_pytorch.py --device "$device" --rounds 2 --steps 50 --cli "$cli"
# The same course on the bookshelf corpus (docs/corpora.md), whose build needs Debian
# packages that machine lacks: --prepare packs the text, its tokenizer and its token ids.
bookshelf() {
  [ -f .dev/bookshelf.tar.xz ] || { echo "no .dev/bookshelf.tar.xz: run --prepare after scripts/normlab.sh bookshelf"; exit 1; }
  tar -xJf .dev/bookshelf.tar.xz -C "$NORMLAB_CACHE_DIR"
  local start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  rm -rf "$runs/bookshelf" && "$cli" train --preset workshop $full --corpus bookshelf --device "$device" \
    --out "$runs/bookshelf" | grep -E 'done|diverged|stopped|failed'
  echo "bookshelf course side by side, whole process: $(awk "BEGIN { print $EPOCHREALTIME - $start }") s"
  train_seconds "$runs/bookshelf"
  tar -czf "$out/bookshelf-runs.tar.gz" --exclude='*.weights' --exclude='*.ckpt' -C "$runs/bookshelf" .
}
export -f bookshelf
stage bookshelf 120 bookshelf
# Stacked runs (docs/gpu.md): a stack's step against its runs' single steps, then the
# course with --stack off, to set beside the course stage's (--stack auto stacks on CUDA).
stacks() {
  for runs_in_stack in 2 3 5; do
    # shellcheck disable=SC2086
    "$cli" bench --device "$device" $bench_steps --stack "$runs_in_stack" --json | tee -a "$out/stack-bench.jsonl"
  done
  local start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  rm -rf "$runs/unstacked" && "$cli" train --preset workshop $full --stack off --device "$device" \
    --out "$runs/unstacked" | grep -E 'done|diverged|stopped|failed'
  echo "course side by side, unstacked, whole process: $(awk "BEGIN { print $EPOCHREALTIME - $start }") s"
  train_seconds "$runs/unstacked"
}
export -f stacks
stage stacks 90 stacks
profile() {
  # shellcheck disable=SC2086
  "$cli" bench --device "$device" $bench_steps --profile 5 --layer-stats-every 0 --text-every 0
}
export -f profile
stage profile 25 profile
bench() {
  for setting in "--tf32 off" "--tf32 auto --cuda-graph off" "--tf32 auto" "--tf32 auto --autocast bf16"; do
    echo "-- $setting"
    # shellcheck disable=SC2086
    "$cli" bench --device "$device" $bench_steps $setting --json | tee -a "$out/bench.jsonl"
  done
}
export -f bench
stage bench 35 bench
# The CPU's course table is fp32 (results.md): the same five runs here without TF32.
course_cpu_fp32() {
  rm -rf "$runs/course-cpu" &&
    "$cli" train --preset workshop --scale cpu --device "$device" --tf32 off --out "$runs/course-cpu" |
    grep -E 'done|diverged|stopped|failed'
  train_seconds "$runs/course-cpu"
}
export -f course_cpu_fp32
stage course-cpu-fp32 35 course_cpu_fp32
compiled() {  # $1 = torch.compile's mode; reduce-overhead's CUDA graphs mean nothing on a CPU
  local mode=$1
  [ "$device" = cpu ] && [ "$mode" = reduce-overhead ] && mode=default
  python3 bench/compare_pytorch.py --device "$device" --rounds 1 --steps 50 --compile --compile-mode "$mode" --cli "$cli"
}
export -f compiled
stage compiled 90 compiled reduce-overhead
# Last: max-autotune's tuning ran past 500 s on the H200 the first time.
stage autotuned 240 compiled max-autotune
say "done: figures and runs in $out"
cat "$out/stages.txt"
