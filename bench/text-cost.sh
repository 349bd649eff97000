#!/usr/bin/env bash
# What recording a run's text costs: the same run with text as often as the scale records
# it (or at every Nth evaluation, `text-every`) and without (--text-every 0), PAIRS times, the
# ratio taken pair by pair so that a machine whose speed drifts moves both alike. Two
# figures a run: its training wall time, the wall_s its run file gives its last step (the
# process's and the tokenizer's start left out), and the CPU time of its process (start
# included), which other work on a busy machine moves far less than the wall time. Context
# use, frequency mismatch and the unigram's loss are computed at every evaluation either
# way: they read the evaluation's own logits.
#
#   bench/text-cost.sh [cpu|full] [steps] [pairs] [device] [build-dir] [text-every]
#       defaults: cpu, 200 steps, 3 pairs, cpu, build/release, the scale's
#
# Evaluations come at the scale's own interval (50 steps at cpu, 100 at full); at full,
# give steps a multiple of 100 and at least 200. One thread on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-cpu}
steps=${2:-200}
pairs=${3:-3}
device=${4:-cpu}
cli=$(realpath "${5:-build/release}/app/normlab-cli")
text_every=(${6:+--text-every "$6"})
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

train() {  # $1 = name, then --text-every and its value or nothing; prints the training wall and process CPU seconds
  python3 - "$out/$1" "$cli" train --scale "$scale" --device "$device" --threads 1 --norm pre --lr 6e-3 \
    --warmup 30 --steps "$steps" --final-weights drop --name "$1" --out "$out" "${@:2}" <<'PY'
import json, resource, subprocess, sys
run, command = sys.argv[1], sys.argv[2:]
with open(run + ".log", "w") as log:
    subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=True)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.load(open(run + ".json"))["steps"]["wall_s"][-1], used.ru_utime + used.ru_stime)
PY
}

echo "text cost: --scale $scale, $steps steps, device $device, $pairs pairs, $(date -u +%F), $(git rev-parse --short HEAD)"
pairs_seen=()
for pair in $(seq "$pairs"); do
  # Odd pairs start with text, even pairs without: a machine's first run (cold caches) or a
  # drift within a pair then weighs on both sides alike.
  if ((pair % 2)); then
    read -r with_wall with_cpu < <(train "with-$pair" "${text_every[@]}")
    read -r without_wall without_cpu < <(train "without-$pair" --text-every 0)
  else
    read -r without_wall without_cpu < <(train "without-$pair" --text-every 0)
    read -r with_wall with_cpu < <(train "with-$pair" "${text_every[@]}")
  fi
  pairs_seen+=("$with_wall,$without_wall,$with_cpu,$without_cpu")
  printf 'pair %d: training wall %7.2f s with text, %7.2f s without; process CPU %7.2f s with, %7.2f s without\n' \
    "$pair" "$with_wall" "$without_wall" "$with_cpu" "$without_cpu"
done
python3 - "$out/with-1.json" "${pairs_seen[@]}" <<'PY'
import json, statistics, sys
run = json.load(open(sys.argv[1]))
pairs = [[float(x) for x in p.split(",")] for p in sys.argv[2:]]
print(f"evaluations with text: {len(run['text']['samples'])} of {len(run['evals']['step'])}")
for name, a, b in (("training wall", 0, 1), ("process CPU", 2, 3)):
    ratios = sorted(p[a] / p[b] for p in pairs)
    print(f"{name} time with/without text: median {statistics.median(ratios):.4f} "
          f"(min {ratios[0]:.4f}, max {ratios[-1]:.4f})")
PY
