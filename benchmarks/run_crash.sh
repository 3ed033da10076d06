#!/usr/bin/env bash
# `streamboost run` under SIGKILL: nursery x10 (129,600 rows with an `id` and a `ts`) as 20
# files, scored once uninterrupted and once killed at KILLS random points (restarted after
# each), then compared: one output row per input row (by id), every output file equal to
# the uninterrupted run's, the final checkpoints' model and state equal.
#
#   cargo build --release
#   benchmarks/run_crash.sh [KILLS=100] [SEED=1]
set -euo pipefail
python3 -c "import pyarrow" 2>/dev/null || pip install -q pyarrow
KILLS=${1:-100}
SEED=${2:-1}
BIN=${STREAMBOOST:-target/release/streamboost}
DATA=${STREAMBOOST_DATASETS:-../shared/datasets}/nursery/data.csv
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 "$(dirname "$0")/event_files.py" "$DATA" "$WORK/in" --columns id ts

# Commits every 2,000 rows, so that runs killed a second or two after they start
# still make progress: the 100 kills land before the stream is done.
ARGS=(--once -q --passthrough id --passthrough ts --algo ada-olm --learners 100
      --checkpoint-every 2000)
mkdir -p "$WORK/whole" "$WORK/killed"
start=$(date +%s.%N)
"$BIN" run --input-dir "$WORK/in" --output-dir "$WORK/whole" --model "$WORK/whole.parquet" "${ARGS[@]}"
end=$(date +%s.%N)
whole=$(python3 -c "print($end - $start)")
echo "uninterrupted run: ${whole} s"

killed=0
python3 -c "
import random; random.seed($SEED)
print('\n'.join(str(random.uniform(0.3, 2.0)) for _ in range($KILLS)))
" > "$WORK/delays"
while read -r delay; do
  "$BIN" run --input-dir "$WORK/in" --output-dir "$WORK/killed" --model "$WORK/killed.parquet" \
    "${ARGS[@]}" &
  pid=$!
  sleep "$delay"
  if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
  wait "$pid" 2>/dev/null || true
done < "$WORK/delays"
"$BIN" run --input-dir "$WORK/in" --output-dir "$WORK/killed" --model "$WORK/killed.parquet" "${ARGS[@]}"
echo "killed $killed of $KILLS runs before they ended"

python3 - "$WORK" <<'EOF'
import json, subprocess, sys, os
work = sys.argv[1]
import pyarrow.parquet as pq
ids, same = [], True
names = sorted(n for n in os.listdir(f"{work}/whole") if n.endswith(".parquet"))
assert names == sorted(n for n in os.listdir(f"{work}/killed") if n.endswith(".parquet"))
for n in names:
    a, b = pq.read_table(f"{work}/whole/{n}"), pq.read_table(f"{work}/killed/{n}")
    same &= a.equals(b)
    ids += b.column("id").to_pylist()
print(f"output rows {len(ids)}, distinct ids {len(set(ids))}, ids 0..{len(ids) - 1} in order: "
      f"{ids == list(range(len(ids)))}")
print(f"every output file equal to the uninterrupted run's: {same}")
meta = [pq.read_metadata(f"{work}/{m}.parquet").metadata for m in ("whole", "killed")]
digest = [m[b"streamboost.digest"] for m in meta]
state = [m[b"streamboost.state"] for m in meta]
print(f"final checkpoints: digest equal {digest[0] == digest[1]}, state equal {state[0] == state[1]}")
EOF
