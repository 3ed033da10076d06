#!/usr/bin/env bash
# Keyed scoring on a Ballista cluster on this machine: a scheduler and two executors as
# separate processes (examples/ballista_cluster.rs, one task slot each), the keyed
# `boost_score` query (Adaboost.OLM over 10 trees, one model per key, ts = the event id) over a
# Parquet log of ROWS events of KEYS keys (benchmarks/keyed_stream.rs, Zipf 1.1) through
# `streamboost sql --ballista`, beside the same query on one machine (`streamboost sql`, two
# partitions). Prints the wall time of each and whether every prediction is the same, then
# stops the cluster.
#
#   cargo build --release --features ballista --example ballista_cluster --bin streamboost
#   benchmarks/ballista_localhost.sh [ROWS=200000] [KEYS=10000] [PORT=50050]
set -euo pipefail
ROWS=${1:-200000} KEYS=${2:-10000} PORT=${3:-50050}
RELEASE=${CARGO_TARGET_DIR:-target}/release
BIN=${STREAMBOOST:-$RELEASE/streamboost}
CLUSTER=${CLUSTER:-$RELEASE/examples/ballista_cluster}
WORK=$(mktemp -d)
pids=()
stop() {
  if [ ${#pids[@]} -gt 0 ]; then kill "${pids[@]}" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  if [ -z "${KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap stop EXIT

cargo bench --quiet --bench keyed_stream --features ballista -- "$WORK/in" "$ROWS" "$KEYS" 1
LOG=$WORK/in/events-0000.parquet
echo '{"config": {"algorithm": "ada-olm", "n_learners": 10}, "classes": ["low", "mid", "high"], "seed": 1}' >"$WORK/m10.json"
QUERY="SELECT id, key, predicted_label, predicted_label_probs FROM boost_score('m', (SELECT * FROM t), 'label', 'id', 'key')"

"$CLUSTER" scheduler --bind 127.0.0.1 --port "$PORT" >"$WORK/scheduler.log" 2>&1 &
pids+=($!)
sleep 1
for i in 1 2; do
  mkdir -p "$WORK/executor$i"
  "$CLUSTER" executor --scheduler-port "$PORT" --port $((PORT + 2 * i - 1)) \
    --grpc-port $((PORT + 2 * i)) --slots 1 --work-dir "$WORK/executor$i" \
    >"$WORK/executor$i.log" 2>&1 &
  pids+=($!)
done
# The executors register with the scheduler as they start.
sleep 3
echo "cluster: scheduler (pid ${pids[0]}) on port $PORT, executors (pids ${pids[1]}, ${pids[2]})"

# Seconds `streamboost sql $@` takes on the keyed query.
seconds() {
  local s e
  s=$(date +%s.%N)
  "$BIN" sql --partitions 2 --table "t=$LOG" --model "m=$WORK/m10.json" "$@" "$QUERY" >/dev/null
  e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.2f}')"
}

echo "$ROWS events of $KEYS keys; Adaboost.OLM over 10 trees per key; $(nproc) cores"
echo
echo "| run | wall time |"
echo "|---|---|"
echo "| one machine, 2 partitions | $(seconds --output "$WORK/one.parquet") s |"
echo "| Ballista: scheduler + 2 executors, 2 partitions | $(seconds --ballista "df://localhost:$PORT" --output "$WORK/cluster.parquet") s |"
echo
# Each task writes its output under WORK_DIR/JOB/STAGE/PARTITION: which executor ran what.
for i in 1 2; do
  ran=$(cd "$WORK/executor$i" && find . -name 'data*.arrow' | awk -F/ '{printf "stage %s partition %s; ", $3, $4}')
  echo "executor $i: ${ran:-no task}"
done
"$BIN" sql "SELECT count(*) AS rows,
    sum(CASE WHEN a.predicted_label = b.predicted_label
             AND a.predicted_label_probs = b.predicted_label_probs THEN 0 ELSE 1 END) AS differ
  FROM a JOIN b ON a.id = b.id" --table "a=$WORK/one.parquet" --table "b=$WORK/cluster.parquet"
