#!/usr/bin/env bash
# Keyed scoring on all cores: the same keyed `boost_score` query (Adaboost.OLM over 10
# trees, one model per key, ts = the event id) on 1 and on 2 partitions (`streamboost sql
# --partitions N`: DataFusion hashes the key over them, one operator and one thread each),
# over ROWS events of KEYS keys (benchmarks/keyed_stream.rs, Zipf 1.1, one Parquet file);
# wall time of each, median of REPEATS, and whether every prediction is the same.
#
#   cargo build --release --features sql
#   benchmarks/keyed_partitions.sh [ROWS=400000] [KEYS=20000] [REPEATS=3]
set -euo pipefail
ROWS=${1:-400000} KEYS=${2:-20000} REPEATS=${3:-3}
BIN=${STREAMBOOST:-target/release/streamboost}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

benchmarks/make_keyed_stream.sh "$WORK/in" "$ROWS" "$KEYS" 1
echo '{"config": {"algorithm": "ada-olm", "n_learners": 10}, "classes": ["low", "mid", "high"], "seed": 1}' >"$WORK/m10.json"
QUERY="SELECT id, predicted_label, predicted_label_probs FROM boost_score('m', (SELECT * FROM t), 'label', 'id', 'key')"

# Seconds the query takes on $1 partitions; its result goes to $WORK/p$1.parquet.
seconds() {
  local s e
  s=$(date +%s.%N)
  "$BIN" sql --partitions "$1" --table "t=$WORK/in/events-0000.parquet" --model "m=$WORK/m10.json" \
    --output "$WORK/p$1.parquet" "$QUERY" >/dev/null
  e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.2f}')"
}
median() { python3 -c "import statistics, sys; print(f'{statistics.median(float(x) for x in sys.argv[1:]):.2f}')" "$@"; }

echo "$ROWS events of $KEYS keys; Adaboost.OLM over 10 trees per key; $(nproc) cores"
echo
echo "| repeat | 1 partition | 2 partitions | speed-up |"
echo "|---|---|---|---|"
ones=() twos=()
for r in $(seq "$REPEATS"); do
  one=$(seconds 1) two=$(seconds 2)
  ones+=("$one") twos+=("$two")
  echo "| $r | $one s | $two s | $(python3 -c "print(f'{$one / $two:.2f}')")x |"
done
one=$(median "${ones[@]}") two=$(median "${twos[@]}")
echo "| median | $one s | $two s | $(python3 -c "print(f'{$one / $two:.2f}')")x |"
echo
"$BIN" sql "SELECT count(*) AS rows,
    sum(CASE WHEN a.predicted_label = b.predicted_label
             AND a.predicted_label_probs = b.predicted_label_probs THEN 0 ELSE 1 END) AS differ
  FROM a JOIN b ON a.id = b.id" --table "a=$WORK/p1.parquet" --table "b=$WORK/p2.parquet"
