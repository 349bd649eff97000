#!/usr/bin/env bash
# The course experiment, or the learning-rate sweep, one run after another against side by
# side, at the CPU scale: wall times, their ratio, and each run's final held-out loss.
#
#   bench/side-by-side.sh [course|lr-sweep] [cores] [steps] [build-dir]
#       defaults: course, every core here, the CPU scale's 600 steps, build/release
#
# `cores` restricts the process to the first N cores (taskset) and gives LibTorch that many
# threads: one after another each run takes them all; side by side two runs share them
# (cores / 2 threads each, at least one). The lr sweep is pre and post over 3e-4 to 1e-2.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-course}
cores=${2:-$(nproc)}
steps=${3:-600}
cli=$(realpath "${4:-build/release}/app/normlab-cli")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

case $what in
  course) command=(train --preset workshop) ;;
  lr-sweep) command=(sweep --preset learning-rate --placements pre,post) ;;
  *) echo "side-by-side.sh: say course or lr-sweep, not '$what'" >&2; exit 2 ;;
esac
seconds() {  # wall time of the command; its output goes to $out/<name>.log
  local name=$1 start=$EPOCHREALTIME
  shift
  OMP_NUM_THREADS=$cores taskset -c "0-$((cores - 1))" "$@" >"$out/$name.log"
  awk "BEGIN { print $EPOCHREALTIME - $start }"
}
run() {  # $1 = runs at once
  seconds "at-once-$1" "$cli" "${command[@]}" --scale cpu --device cpu --steps "$steps" --side-by-side "$1" \
    --out "$out/at-once-$1"
}

echo "$what at the CPU scale, $steps steps a run, $cores core(s) of $(nproc)"
serial=$(run 1)
together=$(run 2)
printf 'one after another %8.1f s\nside by side      %8.1f s  (%.2f of one after another)\n' \
  "$serial" "$together" "$(awk "BEGIN { print $together / $serial }")"
echo "final held-out loss per run (one after another / side by side):"
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def final(path):
    run = json.loads(path.read_text())
    return f"{run['evals']['val_loss'][-1]:.4f} ({run['environment']['threads']} thread(s))"
for serial in sorted((out / "at-once-1").glob("*.json")):
    if serial.name.endswith(".sweep.json"):
        continue
    print(f"  {serial.stem:<45} {final(serial)} / {final(out / 'at-once-2' / serial.name)}")
PY
