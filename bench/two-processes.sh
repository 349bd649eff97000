#!/usr/bin/env bash
# Two NormLab processes training at once against the same two one after the other: with
# LibTorch's OpenMP threads left spinning they steal each other's cores (core/system/idle_threads.cpp).
# Alternates the two orders over a few rounds and prints each round's times and ratio.
#
#   bench/two-processes.sh [rounds] [steps] [build-dir]     defaults: 3, 60, build/release
#   GOMP_SPINCOUNT=300000 bench/two-processes.sh            libgomp's own default, to compare
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
steps=${2:-60}
cli=${3:-build/release}/app/normlab-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

train() {  # one CPU-scale run with the default thread count, $1 = placement
  "$cli" train --scale cpu --steps "$steps" --eval-interval "$steps" --device cpu --lr 6e-3 --warmup 30 \
    --out "$out" --norm "$1" --name "$1-$RANDOM" >/dev/null
}
seconds() { local start=$EPOCHREALTIME; "$@"; awk "BEGIN { print $EPOCHREALTIME - $start }"; }
serial() { train pre; train post; }
together() { train pre & train post & wait; }

echo "GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-1000, set by NormLab}, $(nproc) cores, $steps steps per run"
printf '%-6s %12s %12s %8s\n' round "serial s" "together s" ratio
for round in $(seq "$rounds"); do
  s=$(seconds serial)
  t=$(seconds together)
  printf '%-6s %12.1f %12.1f %8.2f\n' "$round" "$s" "$t" "$(awk "BEGIN { print $t / $s }")"
done
