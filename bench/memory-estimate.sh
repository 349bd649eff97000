#!/usr/bin/env bash
# The memory estimate train prints before it starts (core/runs/run_cost.h, estimate_memory)
# against the peak resident memory GNU time measures, at shapes given as
# "layers d_model heads batch context" (default: the course's full-scale shape and a wider,
# deeper one). Fails when one is off by more than 25 %. Two steps and one evaluation each:
# the peak comes with the first step or evaluation. Needs /usr/bin/time (Debian's time).
#
#   bench/memory-estimate.sh [build-dir] [shape ...]     default build/release
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/release}/app/normlab-cli
shift || true
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=("8 128 4 32 128" "16 512 8 16 256")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
worst=0
for shape in "${shapes[@]}"; do
  read -r layers width heads batch context <<<"$shape"
  /usr/bin/time -f "%M" -o "$out/kb" "$cli" train --scale full --device cpu --threads 1 --layers "$layers" \
    --d-model "$width" --heads "$heads" --batch "$batch" --context "$context" --steps 2 --eval-interval 2 \
    --eval-batches 1 --final-weights drop --out "$out/runs" >"$out/printed"
  estimate=$(sed -n 's/^Memory: about \([0-9.]*\) GB estimated.*/\1/p' "$out/printed")
  measured=$(awk '{ printf "%.2f", $1 * 1024 / 1e9 }' "$out/kb")
  off=$(awk -v e="$estimate" -v m="$measured" 'BEGIN { printf "%+.0f", 100 * (e / m - 1) }')
  echo "layers $layers, width $width, heads $heads, $batch x $context tokens: estimate $estimate GB, measured peak $measured GB ($off %)"
  worst=$(awk -v w="$worst" -v o="$off" 'BEGIN { o = o < 0 ? -o : o; print (o > w ? o : w) }')
done
awk -v w="$worst" 'BEGIN { exit !(w <= 25) }' || { echo "an estimate is off by more than 25 %" >&2; exit 1; }
