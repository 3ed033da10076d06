#!/usr/bin/env bash
# Scoring on a Ballista cluster on this machine: a scheduler and two executors as separate
# processes (examples/ballista_cluster.rs, one task slot each) run two `boost_score` queries
# through `streamboost sql --ballista`, beside the same queries on one machine (`streamboost
# sql`, two partitions): one model per key, and one model (ts = the event id; Adaboost.OLM
# over 10 trees) over a Parquet log of ROWS events of KEYS keys (benchmarks/keyed_stream.rs,
# Zipf 1.1). Prints the wall time of each, where the keyed tasks ran, where the one model
# runs (EXPLAIN), and how many predictions differ; then stops the cluster.
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

benchmarks/make_keyed_stream.sh "$WORK/in" "$ROWS" "$KEYS" 1 ballista
LOG=$WORK/in/events-0000.parquet
echo '{"config": {"algorithm": "ada-olm", "n_learners": 10}, "classes": ["low", "mid", "high"], "seed": 1}' >"$WORK/m10.json"
KEYED="SELECT id, key, predicted_label, predicted_label_probs FROM boost_score('m', (SELECT * FROM t), 'label', 'id', 'key')"
# Without the key column: it is not a feature of one model (50,000 categories would be).
ONE_MODEL="SELECT id, predicted_label, predicted_label_probs FROM boost_score('m', (SELECT * EXCLUDE (key) FROM t), 'label', 'id')"

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

# Seconds `streamboost sql` takes on query $1, with the flags that follow.
seconds() {
  local query=$1 s e
  shift
  s=$(date +%s.%N)
  "$BIN" sql --partitions 2 --table "t=$LOG" --model "m=$WORK/m10.json" "$@" "$query" >/dev/null
  e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.2f}')"
}

# How many of the predictions in $1 and $2 (Parquet results joined on the event id) differ.
differ() {
  "$BIN" sql "SELECT count(*) AS rows,
      sum(CASE WHEN a.predicted_label = b.predicted_label
               AND a.predicted_label_probs = b.predicted_label_probs THEN 0 ELSE 1 END) AS differ
    FROM a JOIN b ON a.id = b.id" --table "a=$1" --table "b=$2"
}

CLUSTER_URL="df://localhost:$PORT"
echo "$ROWS events of $KEYS keys; Adaboost.OLM over 10 trees; $(nproc) cores"
echo
echo "| query | one machine, 2 partitions | Ballista: scheduler + 2 executors |"
echo "|---|---|---|"
echo "| one model per key | $(seconds "$KEYED" --output "$WORK/one.parquet") s | $(seconds "$KEYED" --ballista "$CLUSTER_URL" --output "$WORK/cluster.parquet") s |"
# Where the keyed tasks ran: each task writes its output under WORK_DIR/JOB/STAGE/PARTITION.
ran=()
for i in 1 2; do
  ran+=("executor $i: $(cd "$WORK/executor$i" && find . -name 'data*.arrow' | awk -F/ '{printf "stage %s partition %s; ", $3, $4}')")
done
echo "| one model | $(seconds "$ONE_MODEL" --output "$WORK/one_model.parquet") s | $(seconds "$ONE_MODEL" --ballista "$CLUSTER_URL" --output "$WORK/cluster_model.parquet") s |"
echo
echo "The keyed query's tasks: ${ran[*]}"
echo "The one model's place in the cluster's plan:"
"$BIN" sql --ballista "$CLUSTER_URL" --partitions 2 --table "t=$LOG" --model "m=$WORK/m10.json" \
  "EXPLAIN $ONE_MODEL" | grep -o "BoostScoreExec: [^|]*" | sed 's/ *$//'
echo "One model per key, one machine against the cluster:"
differ "$WORK/one.parquet" "$WORK/cluster.parquet"
echo "One model, one machine against the cluster:"
differ "$WORK/one_model.parquet" "$WORK/cluster_model.parquet"
