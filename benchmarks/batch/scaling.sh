#!/usr/bin/env bash
# The batch boosters' cost as rows grow: adult's training table (32,561 rows) repeated 1, 4
# and 16 times, ROUNDS rounds of AdaBoost.MM over trees of LEAVES leaves, each size twice in
# turn; seconds per round against the 1x table's (linear growth is 4x and 16x), and peak
# memory. Then 500 rounds on the 1x table at the default tree size (the largest shared set's
# training time).
#
#   cargo build --release --features sql
#   benchmarks/batch/scaling.sh [ROUNDS=20] [LEAVES=20]
set -euo pipefail
ROUNDS=${1:-20}
LEAVES=${2:-20}
BIN=${STREAMBOOST:-target/release/streamboost}
DATA=${STREAMBOOST_DATASETS:-../shared/datasets}/adult
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for times in 1 4 16; do
  head -1 "$DATA/train.csv" >"$WORK/x$times.csv"
  for _ in $(seq "$times"); do tail -n +2 "$DATA/train.csv" >>"$WORK/x$times.csv"; done
done
field() { python3 -c "import json,sys; r=json.load(open('$1')); print($2)"; }
echo "| rows | seconds per round (two runs) | against 1x | peak resident MB | columnar table MB |"
echo "|---|---|---|---|---|"
base=""
for times in 1 4 16; do
  per=()
  for run in 1 2; do
    "$BIN" train -q --algo adaboost-mm --rounds "$ROUNDS" --max-leaves "$LEAVES" \
      --input "$WORK/x$times.csv" --report "$WORK/r.json" >/dev/null 2>&1
    per+=("$(field "$WORK/r.json" "r['seconds'] / len(r['rounds'])")")
  done
  best=$(python3 -c "print(min(${per[0]}, ${per[1]}))")
  base=${base:-$best}
  rows=$(field "$WORK/r.json" "r['train']['rows']")
  rss=$(field "$WORK/r.json" "r['memory']['peak_rss_bytes'] / 1e6")
  table=$(field "$WORK/r.json" "r['memory']['table_bytes'] / 1e6")
  printf "| %s | %.4f, %.4f | %.2fx | %.0f | %.1f |\n" "$rows" "${per[0]}" "${per[1]}" \
    "$(python3 -c "print($best / $base)")" "$rss" "$table"
done
"$BIN" train -q --algo adaboost-mm --input "$DATA/train.csv" --test "$DATA/test.csv" \
  --report "$WORK/r.json" >/dev/null 2>&1
echo
echo "adult, defaults ($(field "$WORK/r.json" "r['config']['rounds']") rounds, $(field "$WORK/r.json" "r['config']['max_leaves']") leaves): $(field "$WORK/r.json" "round(r['seconds'], 2)") s, test accuracy $(field "$WORK/r.json" "round(r['test']['accuracy'], 4)")"
