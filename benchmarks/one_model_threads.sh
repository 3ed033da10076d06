#!/usr/bin/env bash
# One model on one thread against rayon's two, alternately, REPEAT times per data set
# (`--shuffle 1 --seed 1`): rows/s of each run (the report's loop time) and whether the two
# runs' predictions (class and probabilities) are the same, byte for byte. The model is the
# default (`replay` with no `--algo`: OvA, whose per-class boosters run side by side), or the
# one FLAGS name (`FLAGS="--algo ada-olm"`: Adaboost.OLM, whose learners are pipelined).
#
#   cargo build --release
#   [FLAGS="--algo ada-olm"] benchmarks/one_model_threads.sh [REPEAT=3] [SETS...]
set -euo pipefail
REPEAT=${1:-3}
shift || true
SETS=${*:-car nursery satimage pendigits optdigits}
BIN=${STREAMBOOST:-target/release/streamboost}
DATA=${STREAMBOOST_DATASETS:-../shared/datasets}
read -r -a MODEL <<< "${FLAGS:-}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

rate() {
  python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['throughput']['rows_per_second']))" "$1"
}

echo "| data | 1 thread (rows/s) | 2 threads (rows/s) | speed-up per pair | predictions |"
echo "|---|---|---|---|---|"
for set in $SETS; do
  one="" two="" ratios="" same=yes
  for i in $(seq 1 "$REPEAT"); do
    for t in 1 2; do
      RAYON_NUM_THREADS=$t "$BIN" replay --input "$DATA/$set/data.csv" ${MODEL[@]+"${MODEL[@]}"} --shuffle 1 --seed 1 -q \
        --report "$WORK/r$t.json" --predictions "$WORK/p$t.csv" >/dev/null 2>&1
    done
    a=$(rate "$WORK/r1.json") b=$(rate "$WORK/r2.json")
    one="$one${one:+, }$a" two="$two${two:+, }$b"
    ratios="$ratios${ratios:+, }$(python3 -c "print(f'{$b/$a:.2f}×')")"
    cmp -s "$WORK/p1.csv" "$WORK/p2.csv" || same=no
  done
  echo "| $set | $one | $two | $ratios | $([ $same = yes ] && echo same || echo DIFFER) |"
done
