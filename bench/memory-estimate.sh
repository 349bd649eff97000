#!/usr/bin/env bash
# The memory estimate train prints before it starts (core/runs/run_cost.h, estimate_memory)
# against the peak resident memory the kernel measures, at shapes given as
# "layers d_model heads batch context" (default: the course's full-scale shape and a wider,
# deeper one). Fails when one is off by more than 25 %. Two steps and one evaluation each:
# the peak comes with the first step or evaluation. The peak is the kernel's (getrusage's
# ru_maxrss of the finished child, what GNU time prints as %M), read by python3, which
# scripts/normlab.sh installs; no /usr/bin/time needed.
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
# Runs a command with its standard output into $1; prints its peak resident memory in kB.
peak_kb() {
  python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as printed:
    status = subprocess.call(sys.argv[2:], stdout=printed)
if status != 0:
    sys.exit(status)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$@"
}
for shape in "${shapes[@]}"; do
  read -r layers width heads batch context <<<"$shape"
  peak_kb "$out/printed" "$cli" train --scale full --device cpu --threads 1 --layers "$layers" \
    --d-model "$width" --heads "$heads" --batch "$batch" --context "$context" --steps 2 --eval-interval 2 \
    --eval-batches 1 --final-weights drop --out "$out/runs" >"$out/kb"
  estimate=$(sed -n 's/^Memory: about \([0-9.]*\) GB estimated.*/\1/p' "$out/printed")
  measured=$(awk '{ printf "%.2f", $1 * 1024 / 1e9 }' "$out/kb")
  off=$(awk -v e="$estimate" -v m="$measured" 'BEGIN { printf "%+.0f", 100 * (e / m - 1) }')
  echo "layers $layers, width $width, heads $heads, $batch x $context tokens: estimate $estimate GB, measured peak $measured GB ($off %)"
  worst=$(awk -v w="$worst" -v o="$off" 'BEGIN { o = o < 0 ? -o : o; print (o > w ? o : w) }')
done
awk -v w="$worst" 'BEGIN { exit !(w <= 25) }' || { echo "an estimate is off by more than 25 %" >&2; exit 1; }
