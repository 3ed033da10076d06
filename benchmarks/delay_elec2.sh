#!/usr/bin/env bash
# Prequential accuracy under label delays on elec2 (45,312 rows in time order): streamboost's
# Oza with 10 default trees and Adaboost.OLM with 100 (its defaults), `replay --label-delay
# N`, beside River's AdaBoostClassifier(HoeffdingTreeClassifier(), n_models=10) under
# `progressive_val_score(delay=N)` on the same rows, in one script; and streamboost's
# throughput under each delay against the same model without one. River goes into a
# throwaway virtual environment.
#
#   cargo build --release --features sql
#   benchmarks/delay_elec2.sh [DELAYS="0 10 100 1000 10000"]
set -euo pipefail
DELAYS=${1:-0 10 100 1000 10000}
BIN=${STREAMBOOST:-target/release/streamboost}
DATA=${STREAMBOOST_DATASETS:-../shared/datasets}/elec2/data.csv
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q river
field() { python3 -c "import json; r=json.load(open('$1')); print($2)"; }
echo "| model | delay | accuracy | rows/s | against no delay | rows expired or unmatched |"
echo "|---|---|---|---|---|---|"
for model in "oza --learners 10 --preset default" "ada-olm --learners 100"; do
  # shellcheck disable=SC2086
  "$BIN" replay -q --algo $model --input "$DATA" --report "$WORK/none.json" >/dev/null 2>&1
  base=$(field "$WORK/none.json" "r['throughput']['rows_per_second']")
  echo "| streamboost $model | none | $(field "$WORK/none.json" "round(r['cumulative']['accuracy'], 4)") | $(printf %.0f "$base") | 1.00 | |"
  for d in $DELAYS; do
    # shellcheck disable=SC2086
    "$BIN" replay -q --algo $model --input "$DATA" --label-delay "$d" \
      --report "$WORK/d.json" >/dev/null 2>&1
    rate=$(field "$WORK/d.json" "r['throughput']['rows_per_second']")
    lost=$(field "$WORK/d.json" "(lambda d: d['expired'] + d['evicted'] + d['unmatched_labels'])(r['delay']) if r.get('delay') else 0")
    echo "| streamboost $model | $d | $(field "$WORK/d.json" "round(r['cumulative']['accuracy'], 4)") | $(printf %.0f "$rate") | $(python3 -c "print(f'{$rate / $base:.2f}')") | $lost |"
  done
done
"$WORK/venv/bin/python" - "$DATA" $DELAYS <<'PY'
import csv, sys, time
from river import ensemble, evaluate, metrics, tree
path, delays = sys.argv[1], [int(d) for d in sys.argv[2:]]
with open(path) as f:
    rows = list(csv.DictReader(f))
stream = [({k: float(v) for k, v in r.items() if k != "label"}, r["label"]) for r in rows]
for d in delays:
    model = ensemble.AdaBoostClassifier(tree.HoeffdingTreeClassifier(), n_models=10, seed=1)
    start = time.perf_counter()
    acc = evaluate.progressive_val_score(stream, model, metrics.Accuracy(), delay=d or None)
    secs = time.perf_counter() - start
    print(f"| River AdaBoostClassifier(HoeffdingTreeClassifier(), n_models=10) | {d} | {acc.get():.4f} | {len(stream) / secs:.0f} | | |")
PY
