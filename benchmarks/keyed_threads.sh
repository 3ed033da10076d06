#!/usr/bin/env bash
# `streamboost run --key` on one thread against several: the same synthetic keyed stream
# (benchmarks/keyed_stream.rs: ROWS events of KEYS keys, Zipf s = 1.1), Adaboost.OLM over
# 10 trees, `--threads 1` and `--threads N` alternately, REPEAT times each; wall time, and
# whether the two runs' outputs agree (compared by `streamboost sql`, joined on the id).
#
#   cargo build --release --features sql
#   benchmarks/keyed_threads.sh ROWS KEYS [N=2] [REPEAT=2] [FILES=8]
set -euo pipefail
ROWS=$1 KEYS=$2 N=${3:-2} REPEAT=${4:-2} FILES=${5:-8}
BIN=${STREAMBOOST:-target/release/streamboost}
WORK=${WORK:-$(mktemp -d)}
echo "work directory: $WORK (removed at the end)"
trap 'rm -rf "$WORK"' EXIT

# GENERATOR: see benchmarks/make_keyed_stream.sh.
benchmarks/make_keyed_stream.sh "$WORK/in" "$ROWS" "$KEYS" "$FILES"
echo "stream: $ROWS rows of $KEYS keys (Zipf 1.1) in $FILES Parquet files"

job() {
  local threads=$1 name=$2
  rm -rf "$WORK/$name-out.parquet" "$WORK/$name.keys"
  mkdir -p "$WORK/$name-out.parquet"
  local start end
  start=$(date +%s.%N)
  "$BIN" run --once -q --input-dir "$WORK/in" --output-dir "$WORK/$name-out.parquet" \
    --model "$WORK/$name.keys" --key key --passthrough id --label label \
    --algo ada-olm --learners 10 --threads "$threads"
  end=$(date +%s.%N)
  echo "threads $threads: $(echo "$end - $start" | bc) s"
}

for i in $(seq 1 "$REPEAT"); do
  job 1 one
  job "$N" many
done
"$BIN" sql "SELECT count(*) AS rows,
    sum(CASE WHEN a.predicted_label = b.predicted_label
             AND a.predicted_label_probs = b.predicted_label_probs THEN 0 ELSE 1 END) AS differ
  FROM a JOIN b ON a.id = b.id" \
  --table "a=$WORK/one-out.parquet" --table "b=$WORK/many-out.parquet"
