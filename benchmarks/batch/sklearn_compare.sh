#!/usr/bin/env bash
# AdaBoost.MM (streamboost train) beside scikit-learn's AdaBoostClassifier (SAMME over
# DecisionTreeClassifier(max_leaf_nodes=L)) and HistGradientBoostingClassifier at its
# defaults, on the splits of splits.py: test error and training time (reading excluded),
# each run in turn on the same machine. scikit-learn goes into a throwaway virtual
# environment.
#
#   cargo build --release --features sql
#   [SETS="car adult"] benchmarks/batch/sklearn_compare.sh [ROUNDS=500] [LEAVES="5 20"]
set -euo pipefail
ROUNDS=${1:-500}
LEAVES=${2:-5 20}
export STREAMBOOST=${STREAMBOOST:-$PWD/target/release/streamboost}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q scikit-learn pandas
python3 "$HERE/splits.py" "$WORK/splits"
"$WORK/venv/bin/python" "$HERE/sklearn_compare.py" "$WORK/splits" "$ROUNDS" $LEAVES
