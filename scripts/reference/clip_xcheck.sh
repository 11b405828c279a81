#!/bin/bash
# The CLIP cross-check N times in turn (issue 15, target 3): this host's
# speed drifts by ±10% from minute to minute, so one pair of runs is not a
# figure. Each round runs the scoring bench (which writes candle.json) and
# then clip_speed.py right after; prints every round's ratios per batch.
#   scripts/reference/clip_xcheck.sh BENCH_BINARY BENCH_DIR PYTHON [N=4]
# BENCH_BINARY: `cargo bench --features ssr --no-run --bench scoring` prints it.
set -euo pipefail
bin=$1 dir=$2 python=$3 n=${4:-4}
here=$(dirname "$0")
export RAYON_NUM_THREADS=2 HARDNEG_BENCH_DIR=$dir HARDNEG_BENCH_OPS=0
unset HARDNEG_BENCH_REPS HARDNEG_BENCH_BATCHES HARDNEG_BENCH_TOWER
for _ in $(seq "$n"); do
  "$bin" --bench >/dev/null
  "$python" "$here/clip_speed.py" "$dir" --threads 2 | grep -E '^ +(1|8|32) '
done | awk '{ img[$1] = img[$1] " " $4; txt[$1] = txt[$1] " " $7 }
  END { for (b in img) print "batch " b ": images" img[b] " | texts" txt[b] }' | sort -n -k2
