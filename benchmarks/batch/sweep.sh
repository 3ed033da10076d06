#!/usr/bin/env bash
# [MS] §5's comparison on the shared sets: test error after ROUNDS rounds of AdaBoost.MM and
# AdaBoost.M1 (SAMME) over greedy trees of 2, 3, 5, 10 and 20 leaves, and of AdaBoost.MH over
# stumps; every run's report (with each round's test error) in OUT_DIR, then the tables.
#
#   cargo build --release --features sql
#   benchmarks/batch/sweep.sh OUT_DIR [ROUNDS=500]
set -euo pipefail
OUT=$1
ROUNDS=${2:-500}
BIN=${STREAMBOOST:-target/release/streamboost}
HERE=$(dirname "$0")
mkdir -p "$OUT"
python3 "$HERE/splits.py" "$OUT/splits"
for set in car nursery optdigits satimage pendigits adult; do
  data=$OUT/splits/$set
  run() { # algo leaves
    "$BIN" train -q --algo "$1" --rounds "$ROUNDS" --max-leaves "$2" \
      --input "$data/train.csv" --test "$data/test.csv" \
      --report "$OUT/$set-$1-$2.json" >/dev/null
  }
  for leaves in 2 3 5 10 20; do
    run adaboost-mm "$leaves"
    run adaboost-m1 "$leaves"
  done
  run adaboost-mh 2
  echo "$set done" >&2
done
python3 "$HERE/table.py" "$OUT"
