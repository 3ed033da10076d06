#!/usr/bin/env bash
# Throughput of `streamboost run` (a live model with commits) against the same work without
# checkpoints: `replay` of the same rows with `--predictions` (scored rows written as
# Parquet), same model and seed. nursery x10 (129,600 rows) as 20 CSV files; Adaboost.OLM
# over 100 trees. Also the time and size of one checkpoint of those 100 trees.
#
#   cargo build --release
#   benchmarks/run_throughput.sh [REPEATS=3]
set -euo pipefail
REPEATS=${1:-3}
BIN=${STREAMBOOST:-target/release/streamboost}
DATA=${STREAMBOOST_DATASETS:-../shared/datasets}/nursery/data.csv
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The job's files carry an event id (passed through); the replay's the same rows without.
python3 "$(dirname "$0")/event_files.py" "$DATA" "$WORK/in" --columns id
python3 "$(dirname "$0")/event_files.py" "$DATA" "$WORK/in_plain" --columns
MODEL=(--algo ada-olm --learners 100 --seed 1)
# The job declares the classes (a fresh model takes those of its first file otherwise).
CLASSES=(--classes not_recom,priority,recommend,spec_prior,very_recom)
# Seconds `$@` takes; its stdout is dropped and its stderr goes to $LOG.
seconds() {
  local s e; s=$(date +%s.%N); "$@" >/dev/null 2>"$LOG"; e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.2f}')"
}

echo "| run | replay --predictions (no checkpoint) | run, default policy (every 60 s and when drained) | run, --checkpoint-every 10000 |"
echo "|---|---|---|---|"
for r in $(seq "$REPEATS"); do
  rm -rf "$WORK/out" "$WORK"/*.parquet && mkdir -p "$WORK/out"
  inputs=()
  for f in "$WORK"/in_plain/*.csv; do inputs+=(--input "$f"); done
  LOG=/dev/null
  a=$(seconds "$BIN" replay -q "${inputs[@]}" "${MODEL[@]}" \
      --predictions "$WORK/replay.parquet")
  LOG=$WORK/b.log
  b=$(seconds "$BIN" run --once --progress-every 1000 --input-dir "$WORK/in" \
      --output-dir "$WORK/out" --model "$WORK/default.parquet" --passthrough id "${CLASSES[@]}" "${MODEL[@]}")
  LOG=/dev/null
  rm -rf "$WORK/out" && mkdir -p "$WORK/out"
  c=$(seconds "$BIN" run --once -q --input-dir "$WORK/in" --output-dir "$WORK/out" \
      --model "$WORK/every.parquet" --passthrough id --checkpoint-every 10000 "${CLASSES[@]}" "${MODEL[@]}")
  echo "| $r | $a s | $b s ($(python3 -c "print(f'{$a / $b:.0%}')") of replay's rate) | $c s ($(python3 -c "print(f'{$a / $c:.0%}')")) |"
done
size=$(stat -c %s "$WORK/default.parquet")
echo
echo "checkpoint of 100 trees after 129,600 rows: $((size / 1024)) KiB"
"$BIN" inspect "$WORK/default.parquet" | grep -E "^trees" || true
# The last commit's time, from the progress line of the default-policy run.
grep -o "commits=[0-9]* last_commit_s=[0-9.]*" "$WORK/b.log" | tail -1
