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

def model(base):
    """The node rows and state of a checkpoint's chain: its base, then its deltas applied
    in order (each replaces the rows it holds and sets every tree's node count)."""
    meta = pq.read_metadata(base).metadata
    rows = {(r["tree"], r["node"]): r for r in pq.read_table(base).to_pylist()}
    chain = json.loads(meta.get(b"streamboost.chain", b"null"))
    seq = 1
    while chain and os.path.exists(delta := f"{base}.deltas/{seq:06d}.parquet"):
        m = pq.read_metadata(delta).metadata
        link = json.loads(m[b"streamboost.chain"])
        if link["id"] != chain["id"]:
            break
        rows.update({(r["tree"], r["node"]): r for r in pq.read_table(delta).to_pylist()})
        counts = link["tree_nodes"]
        rows = {k: v for k, v in rows.items() if k[0] < len(counts) and k[1] < counts[k[0]]}
        meta, seq = m, seq + 1
    return rows, meta[b"streamboost.state"], seq - 1


(nodes_a, state_a, deltas_a), (nodes_b, state_b, deltas_b) = (
    model(f"{work}/{m}.parquet") for m in ("whole", "killed"))
print(f"final checkpoints ({deltas_a} and {deltas_b} deltas on their bases): "
      f"nodes equal {nodes_a == nodes_b}, state equal {state_a == state_b}")
EOF
