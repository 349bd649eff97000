#!/usr/bin/env bash
# Trains the same tiny run with two normlab-cli binaries and checks that their run files
# agree in everything but wall-clock time: the proof that a change to the trainer moved
# code and nothing else. Per binary: one whole run, and one killed (SIGKILL) after its
# first checkpoint and resumed; layer statistics on, a checkpoint at every save. Each
# binary gets its own tokenizer cache, so both train the tokenizer too.
#
#   scripts/golden-run.sh BEFORE-CLI AFTER-CLI [CORPUS]
#
# CORPUS defaults to the first 300 kB of the King James Bible (the bible-kjv package).
# Compared: the JSON without its wall_s and tokens_per_s fields, the CSV without its
# wall_s column, the printed progress without tok/s and ETA; and, in each binary, the
# resumed run against the whole one. The resumed progress names the checkpoint's step, so
# the kills must land after the same checkpoint. Exits non-zero when anything differs.
set -euo pipefail
(($# >= 2)) || { sed -n '2,/^set /{/^set /!p}' "$0" >&2; exit 2; }
before=$(realpath "$1")
after=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if (($# >= 3)); then
  corpus=$(realpath "$3")
else
  corpus=$work/corpus.txt
  { bible gen1:1-rev22:21 || true; } | head -c 300000 >"$corpus"  # bible ends on SIGPIPE
fi
options=(--corpus "$corpus" --device cpu --threads 1 --layers 2 --d-model 64 --heads 2 --context 32
         --batch 8 --vocab 256 --steps 300 --eval-interval 50 --eval-batches 2 --layer-stats-every 10
         --checkpoint-interval 0 --layers-summary --name golden)

runs_with() {  # $1 = folder, $2 = binary
  local dir=$work/$1 cli=$2 pid
  mkdir -p "$dir"
  export NORMLAB_CACHE_DIR=$dir/cache
  "$cli" train "${options[@]}" --out "$dir/whole" >"$dir/whole.log"
  "$cli" train "${options[@]}" --out "$dir/killed" >"$dir/killed.log" &
  pid=$!
  until [[ -e $dir/killed/golden.ckpt ]]; do  # written atomically: whole once it is there
    kill -0 "$pid" 2>/dev/null || { echo "$1: the run ended before its first checkpoint" >&2; exit 1; }
    sleep 0.002
  done
  { kill -KILL "$pid" && wait "$pid"; } 2>/dev/null || true
  "$cli" train --resume "$dir/killed/golden.json" >"$dir/resumed.log"
}
runs_with before "$before"
runs_with after "$after"

python3 - "$work" <<'EOF'
import csv, json, re, sys
work = sys.argv[1]

def run_json(path):
    def drop(x):
        if isinstance(x, dict):
            return {k: drop(v) for k, v in x.items() if k not in ("wall_s", "tokens_per_s")}
        return [drop(v) for v in x] if isinstance(x, list) else x
    with open(path) as f:
        # Key order kept: the files must match as written, not only as sets.
        return json.dumps(drop(json.load(f)))

def run_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    wall = rows[0].index("wall_s")
    return [row[:wall] + row[wall + 1:] for row in rows]

def progress(path):
    folder = path[: path.rindex("/")]  # the lines name the files they wrote
    with open(path) as f:
        return [re.sub(r"\d+ tok/s|ETA .*", "", line.replace(folder, "DIR")) for line in f]

def size(x):
    return f"{len(x)} lines" if isinstance(x, list) else f"{len(x)} characters"

failed = False
def same(what, read, a, b):
    global failed
    x, y = read(f"{work}/{a}"), read(f"{work}/{b}")
    print(f"{'same' if x == y else 'DIFFERENT':9} {what}: {a} vs {b} ({size(x)})")
    failed |= x != y

for run in ("whole", "killed"):
    same(f"{run} run JSON", run_json, f"before/{run}/golden.json", f"after/{run}/golden.json")
    same(f"{run} run CSV", run_csv, f"before/{run}/golden.csv", f"after/{run}/golden.csv")
for log in ("whole", "resumed"):
    same(f"{log} progress", progress, f"before/{log}.log", f"after/{log}.log")
for side in ("before", "after"):
    same(f"{side}: resumed as whole", run_json, f"{side}/killed/golden.json", f"{side}/whole/golden.json")
    same(f"{side}: resumed as whole", run_csv, f"{side}/killed/golden.csv", f"{side}/whole/golden.csv")
sys.exit(1 if failed else 0)
EOF
