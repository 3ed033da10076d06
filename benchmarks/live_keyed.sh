#!/usr/bin/env bash
# Live models beyond `run` over one model: a live model in SQL (`boost_score` committing to
# its checkpoint) against the same query over a fresh model that commits nothing, and a
# keyed live model of 1,000 keys x 10 trees (`run --key`, and SQL with a key): time of the
# work, time and size of one commit of every key, of an incremental commit, and of loading.
# nursery x10 (129,600 rows with `id`, `ts` and `key` = k<id mod 1000>).
#
#   cargo build --release --features sql
#   benchmarks/live_keyed.sh [REPEATS=2]
set -euo pipefail
REPEATS=${1:-2}
BIN=${STREAMBOOST:-target/release/streamboost}
DATA=${STREAMBOOST_DATASETS:-../shared/datasets}/nursery/data.csv
HERE=$(dirname "$0")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 "$HERE/event_files.py" "$DATA" "$WORK/in" --columns id ts --keys 1000
python3 "$HERE/event_files.py" "$DATA" "$WORK/one" --files 1 --columns id ts --keys 1000
STREAM=$WORK/one/events-000.csv
CLASSES=not_recom,priority,recommend,spec_prior,very_recom
# Seconds `$@` takes; its stdout goes to $OUT, its stderr to $LOG.
OUT=/dev/null
LOG=/dev/null
seconds() {
  local s e; s=$(date +%s.%N); "$@" >"$OUT" 2>"$LOG"; e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.2f}')"
}
ratio() { python3 -c "print(f'{$1 / $2:.0%}')"; }
model_file() { # learners -> a fresh model's registration file
  python3 -c "import json,sys; print(json.dumps({'config': {'algorithm': 'ada-olm', 'n_learners': $1}, 'classes': '$CLASSES'.split(','), 'seed': 1}))"
}
model_file 100 >"$WORK/m100.json"
model_file 10 >"$WORK/m10.json"
# The id is no feature; nor is the key, which the unkeyed queries leave out.
SCORE="SELECT count(*) AS rows, sum(CASE WHEN predicted_label = label THEN 1 ELSE 0 END) AS correct FROM boost_score('m', "
ONE="(SELECT * EXCLUDE (id, key) FROM t), 'label', 'ts')"
KEYED="(SELECT * EXCLUDE (id) FROM t), 'label', 'ts', 'key')"

echo "## boost_score over 129,600 rows: a live model (default policy: every 60 s and at the end) against a fresh model"
echo
echo "| repeat | 100 trees, fresh (no checkpoint) | 100 trees, live | 1,000 keys x 10 trees, fresh | 1,000 keys x 10 trees, live |"
echo "|---|---|---|---|---|"
for r in $(seq "$REPEATS"); do
  rm -rf "$WORK"/live*.parquet "$WORK"/live.keys
  a=$(seconds "$BIN" sql --table "t=$STREAM" --model "m=$WORK/m100.json" "$SCORE$ONE")
  b=$(seconds "$BIN" sql --table "t=$STREAM" --live "m=$WORK/live.parquet,config=$WORK/m100.json" "$SCORE$ONE")
  c=$(seconds "$BIN" sql --table "t=$STREAM" --model "m=$WORK/m10.json" "$SCORE$KEYED")
  d=$(seconds "$BIN" sql --table "t=$STREAM" --live "m=$WORK/live.keys,config=$WORK/m10.json" "$SCORE$KEYED")
  echo "| $r | $a s | $b s ($(ratio "$a" "$b") of fresh's rate) | $c s | $d s ($(ratio "$c" "$d")) |"
  sums=$(python3 -c "s='${sums:-0 0 0 0}'.split(); print(' '.join(str(float(x) + y) for x, y in zip(s, [$a, $b, $c, $d])))")
done
read -r A B C D <<<"$sums"
echo "| mean | $(python3 -c "print(f'{$A / $REPEATS:.2f}')") s | $(python3 -c "print(f'{$B / $REPEATS:.2f}')") s ($(ratio "$A" "$B")) | $(python3 -c "print(f'{$C / $REPEATS:.2f}')") s | $(python3 -c "print(f'{$D / $REPEATS:.2f}')") s ($(ratio "$C" "$D")) |"
echo
echo "SQL keyed checkpoint: $(ls "$WORK/live.keys" | wc -l) files, $(du -sk "$WORK/live.keys" | cut -f1) KiB"
echo
echo "## run --key key: 1,000 keys x 10 trees, 20 files"
echo
echo "| repeat | run --key, default policy | commits | last commit (every key) |"
echo "|---|---|---|---|"
for r in $(seq "$REPEATS"); do
  rm -rf "$WORK/out" "$WORK/m.keys" && mkdir -p "$WORK/out"
  LOG=$WORK/run.log
  a=$(seconds "$BIN" run --once --progress-every 1000 --input-dir "$WORK/in" --output-dir "$WORK/out" \
      --model "$WORK/m.keys" --key key --passthrough id --passthrough ts --classes "$CLASSES" \
      --algo ada-olm --learners 10 --seed 1)
  LOG=/dev/null
  last=$(grep -o "commits=[0-9]* last_commit_s=[0-9.]*" "$WORK/run.log" | tail -1)
  echo "| $r | $a s | ${last%% *} | ${last##*=} s |"
done
echo
echo "keyed checkpoint of 1,000 keys: $(ls "$WORK/m.keys" | wc -l) files, $(du -sk "$WORK/m.keys" | cut -f1) KiB"
"$BIN" inspect "$WORK/m.keys" --keys 3
# A 21st file of 100 rows touches 100 keys: the commit writes those only. The job loads a
# key's checkpoint when the key first appears, so it also measures loading 100 keys.
head -1 "$STREAM" >"$WORK/in/events-999.csv"
sed -n '2,101p' "$STREAM" >>"$WORK/in/events-999.csv"
LOG=$WORK/small.log
t=$(seconds "$BIN" run --once --progress-every 1000 --input-dir "$WORK/in" --output-dir "$WORK/out" \
    --model "$WORK/m.keys" --key key --passthrough id --passthrough ts)
echo
echo "a 100-row file touching 100 keys, from the checkpoint: $t s in all (start, load 100 keys, score, commit), $(grep -o "commits=[0-9]* last_commit_s=[0-9.]*" "$WORK/small.log" | tail -1)"
# One model of 10 trees, for the per-file cost of a key's checkpoint.
"$BIN" inspect "$WORK/m.keys" --json | python3 -c "
import json, os, sys
m = json.load(sys.stdin)
sizes = [os.path.getsize(os.path.join('$WORK/m.keys', k['file'])) for k in m['keys']]
print(f'key files: {len(sizes)}, mean {sum(sizes) / len(sizes) / 1024:.1f} KiB, largest {max(sizes) / 1024:.1f} KiB')"
