#!/usr/bin/env bash
# Keyed models at scale: `streamboost run --key key` over a synthetic keyed stream
# (benchmarks/keyed_stream.rs: ROWS events of KEYS keys, Zipf s = 1.1, a concept per key),
# Adaboost.OLM over 10 trees, under a memory budget; rows/s, peak RSS, loads, spills. With
# COMPARE=1 the same stream also runs without a budget, and every prediction of the two
# runs is compared (by `streamboost sql`, joined on the event id).
#
#   cargo build --release --features sql
#   benchmarks/keyed_scale.sh ROWS KEYS BUDGET [FILES=20] [COMPARE=0]
#
# EXTRA: more flags for both runs (e.g. `--checkpoint-interval 600`).
set -euo pipefail
ROWS=$1 KEYS=$2 BUDGET=$3 FILES=${4:-20} COMPARE=${5:-0}
BIN=${STREAMBOOST:-target/release/streamboost}
WORK=${WORK:-$(mktemp -d)}
echo "work directory: $WORK (removed at the end)"
trap 'rm -rf "$WORK"' EXIT

# GENERATOR: see benchmarks/make_keyed_stream.sh.
benchmarks/make_keyed_stream.sh "$WORK/in" "$ROWS" "$KEYS" "$FILES"
echo "stream: $ROWS rows of $KEYS keys (Zipf 1.1) in $FILES Parquet files, $(du -sh "$WORK/in" | cut -f1)"

# Runs the job with `$@` as extra flags into $WORK/$name; prints its last progress lines,
# wall time and peak RSS.
job() {
  local name=$1; shift
  mkdir -p "$WORK/$name-out.parquet"
  /usr/bin/time -v "$BIN" run --once --input-dir "$WORK/in" --output-dir "$WORK/$name-out.parquet" \
    --model "$WORK/$name.keys" --key key --passthrough id --label label \
    --algo ada-olm --learners 10 --progress-every 60 ${EXTRA:-} "$@" >"$WORK/$name.log" 2>&1
  echo "### $name ($*)"
  grep -E "INFO (done|keys)" "$WORK/$name.log" | tail -2 | sed 's/^[^ ]* *INFO /    /'
  grep -E "Elapsed|Maximum resident" "$WORK/$name.log" | sed 's/^\s*/    /'
  echo "    checkpoint: $(find "$WORK/$name.keys" -type f | wc -l) files, $(du -sh "$WORK/$name.keys" | cut -f1)"
}

job budget --memory-budget "$BUDGET"
if [ "$COMPARE" = 1 ]; then
  job unbounded
  "$BIN" sql "SELECT count(*) AS rows,
      sum(CASE WHEN a.predicted_label = b.predicted_label
               AND a.predicted_label_probs = b.predicted_label_probs THEN 0 ELSE 1 END) AS differ
    FROM a JOIN b ON a.id = b.id" \
    --table "a=$WORK/budget-out.parquet" --table "b=$WORK/unbounded-out.parquet"
fi
