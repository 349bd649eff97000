#!/usr/bin/env bash
# The GPU check, prepared to run once on a machine with an NVIDIA GPU (the device tool's
# H200, which has CUDA's torch, CMake and a compiler but no network and no Debian -dev
# packages). In about 10 minutes it builds the headless parts against the torch its python3
# holds, runs the engine's tests (the CUDA ones included), the benchmarks, the comparison
# with eager and compiled PyTorch, and the full-scale course experiment, and writes figures
# and run files to $OUT (default ./gpu-check-out).
#
#   scripts/gpu-check.sh --prepare   here, once: Debian packages and the KJV cache into .dev/
#   scripts/gpu-check.sh             there, with .dev carried: device run, carry [".dev"]
#   scripts/gpu-check.sh --cpu-only  here: the same steps that need no GPU, as a dry run
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }
debs=(libsentencepiece0 libsentencepiece-dev libprotobuf-lite32 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev)

if [ "${1:-}" = --prepare ]; then
  rm -rf .dev/debs .dev/cache && mkdir -p .dev/debs .dev/cache
  (cd .dev/debs && apt-get download "${debs[@]}")
  # The default corpus and its tokenizer, so the GPU machine needs neither `bible` nor
  # the minute of BPE training.
  NORMLAB_CACHE_DIR="$root/.dev/cache" scripts/normlab.sh cli train --steps 1 --eval-batches 1 \
    --device cpu --out "$(mktemp -d)" >/dev/null
  du -sh .dev/debs .dev/cache
  exit 0
fi
cpu_only=false
[ "${1:-}" = --cpu-only ] && cpu_only=true

out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1

say "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || $cpu_only
python3 -c 'import torch; print("python torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'

say "dependencies from .dev/debs, unpacked beside the build (not into /)"
deps=$root/build/gpu-deps
rm -rf "$deps" && mkdir -p "$deps"
for deb in .dev/debs/*.deb; do dpkg-deb -x "$deb" "$deps" 2>/dev/null || dpkg -x "$deb" "$deps"; done
multiarch=$deps/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_PATH=$multiarch/pkgconfig PKG_CONFIG_SYSROOT_DIR=$deps
export LD_LIBRARY_PATH=$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
case $(python3 -c 'import torch; print(torch.__version__)') in
  "$(cat cmake/torch.version)"*) ;;
  *) echo "warning: python3's torch is not the pinned $(cat cmake/torch.version); figures are for that torch" ;;
esac

say "build (headless: engine, command line, tests)"
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
# No gpu install there: its libcurl/libarchive -dev packages are not on that machine, and
# nothing can be fetched from it anyway. No style check: no clang-format 14 there either.
cmake -S . -B build/gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DNORMLAB_GUI=OFF -DNORMLAB_GPU_INSTALL=OFF -DNORMLAB_STYLE_CHECK=OFF \
  -DNORMLAB_TORCH_DIR="$torch_dir" -DCMAKE_PREFIX_PATH="$deps/usr" \
  -DCMAKE_CXX_FLAGS="-isystem $deps/usr/include" >/dev/null
cmake --build build/gpu -j"$(nproc)" --target normlab-cli normlab_core_tests
cli=build/gpu/app/normlab-cli
export NORMLAB_CACHE_DIR=$root/.dev/cache

say "engine tests, CUDA ones included"
(cd build/gpu && ctest -j8 --output-on-failure -R 'Cuda|Trainer|Dataset|Learner|Model|AdamW|Bench' 2>&1 | tail -25)
build/gpu/tests/core/normlab_core_tests --gtest_filter='Cuda*' 2>&1 | tail -12

device=cuda; $cpu_only && device=cpu
say "bench, full scale (32 x 128), $device"
for setting in "--tf32 off" "--tf32 auto" "--tf32 auto --autocast bf16"; do
  echo "-- $setting"
  # shellcheck disable=SC2086
  $cli bench --device "$device" --bench-steps 50 --bench-warmup 10 $setting --json | tee -a "$out/bench.jsonl"
done

say "NormLab against eager and compiled PyTorch on the same GPU"
python3 bench/compare_pytorch.py --device "$device" --rounds 3 --steps 50 --compile \
  --cli "$cli" 2>&1 | tee "$out/compare.txt" || echo "comparison failed"

say "the course experiment at full scale, $device"
steps=(); $cpu_only && steps=(--steps 20)
start=$(date +%s.%N)
runs=build/gpu-runs && rm -rf "$runs"
$cli train --preset workshop --device "$device" "${steps[@]}" --out "$runs" | grep -E 'done|diverged|stopped|failed' | tee "$out/course.txt"
echo "course experiment wall time: $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$out/course.txt"
tar -czf "$out/course-runs.tar.gz" -C "$runs" .  # the device tool brings back 8 files at most
say "done: figures and runs in $out"
