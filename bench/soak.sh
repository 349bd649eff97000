#!/usr/bin/env bash
# Soak: a long CLI run of a tiny model, its memory sampled, its files read back, and the
# window's responsiveness measured with it on the chart. Long (minutes), so not in ctest.
#
#   bench/soak.sh [steps] [build-dir]      defaults: 100000, build/release
#
# Writes to build/soak/: rss.tsv (seconds, last reported step, VmRSS kB, every second),
# cli.out, ui-bench.out, and the run's files in runs/. Prints RSS at the start of training,
# half way and at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-100000}
build=${2:-build/release}
cli=$build/app/normlab-cli
bench=$build/tests/ui/normlab-ui-bench
out=build/soak
rm -rf "$out" && mkdir -p "$out"

# A small corpus of the first 200 KB of the default one (the KJV), or of any text given.
corpus=${SOAK_CORPUS:-}
if [[ -z $corpus ]]; then
  { bible gen1:1-rev22:21 2>/dev/null || true; } | head -c 200000 > "$out/corpus.txt"  # bible ends on SIGPIPE
  corpus=$out/corpus.txt
fi

"$cli" train --corpus "$corpus" --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 --context 8 \
  --batch 2 --vocab 256 --steps "$steps" --eval-interval 1000 --eval-batches 2 --name soak \
  --out "$out/runs" > "$out/cli.out" 2>&1 &
pid=$!
start=$(date +%s.%N)
printf 'seconds\tstep\trss_kb\n' > "$out/rss.tsv"
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  step=$(grep -o 'step [0-9]*' "$out/cli.out" | tail -1 | cut -d' ' -f2 || true)
  [[ -n $rss ]] && printf '%.0f\t%s\t%s\n' "$(echo "$(date +%s.%N) - $start" | bc)" "${step:-0}" "$rss" >> "$out/rss.tsv"
  sleep 1
done
wait "$pid"
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
tail -3 "$out/cli.out"

# Start: the first sample once training reported a step; middle: the first at or past
# half way; end: the last sample.
awk -F'\t' -v half=$((steps / 2)) 'NR > 1 && $2 > 0 && !s { s = $0 } NR > 1 && $2 >= half && !m { m = $0 } NR > 1 { e = $0 }
  END { print "RSS (seconds, step, kB):"; print "  start  " s; print "  middle " m; print "  end    " e }' "$out/rss.tsv"
printf 'run took %.0f s; files: %s\n' "$elapsed" "$(ls -l "$out"/runs | tail -n +2 | awk '{print $5, $9}' | tr '\n' ' ')"

# The window with that run on the chart: load time, repaint cost and event-loop latency.
if [[ -x $bench ]]; then
  "$bench" --with-run "$out/runs/soak.json" --seconds 20 | tee "$out/ui-bench.out"
fi
