#!/usr/bin/env bash
# What a commit costs a live job with the default model: `streamboost run` over nursery x2
# (25,920 rows) as 10 CSV files with a commit every 2,000 rows, against `replay
# --predictions` of the same rows (scored rows written as Parquet, no checkpoint), same
# model and seed. Reports both rates, the commits' count and seconds, and the bytes the
# job's commits wrote (every checkpoint file written, summed from the job's progress lines).
#
#   cargo build --release
#   benchmarks/run_commits.sh [REPEATS=3] [-- extra model flags]
set -euo pipefail
REPEATS=${1:-3}
shift || true
[[ "${1:-}" == "--" ]] && shift
EXTRA=("$@")
BIN=${STREAMBOOST:-target/release/streamboost}
DATA=${STREAMBOOST_DATASETS:-../shared/datasets}/nursery/data.csv
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 "$(dirname "$0")/event_files.py" "$DATA" "$WORK/in" --columns id --files 10 --repeat 2
python3 "$(dirname "$0")/event_files.py" "$DATA" "$WORK/in_plain" --columns --files 10 --repeat 2
ROWS=25920
MODEL=(--seed 1 "${EXTRA[@]}")
CLASSES=(--classes not_recom,priority,recommend,spec_prior,very_recom)
seconds() {
  local s e; s=$(date +%s.%N); "$@" >/dev/null 2>"$LOG"; e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.2f}')"
}

echo "| repeat | replay --predictions | run --checkpoint-every 2000 | run ÷ replay (rate) | commits | seconds in commits | bytes written by commits | checkpoint at the end |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq "$REPEATS"); do
  rm -rf "$WORK/out" "$WORK"/*.parquet* && mkdir -p "$WORK/out"
  inputs=()
  for f in "$WORK"/in_plain/*.csv; do inputs+=(--input "$f"); done
  LOG=/dev/null
  a=$(seconds "$BIN" replay -q "${inputs[@]}" "${MODEL[@]}" --predictions "$WORK/replay.parquet")
  LOG=$WORK/run.log
  b=$(seconds "$BIN" run --once --progress-every 1 --input-dir "$WORK/in" --output-dir "$WORK/out" \
      --model "$WORK/model.parquet" --passthrough id --checkpoint-every 2000 "${CLASSES[@]}" "${MODEL[@]}")
  read -r commits commit_s written < <(python3 - "$WORK/run.log" <<'EOF'
import re, sys
last = {}
for line in open(sys.argv[1]):
    for k, v in re.findall(r"(\w+)=([0-9.]+)", line):
        last[k] = v
print(last.get("commits", "?"), last.get("commit_s", "?"), last.get("commit_bytes", "?"))
EOF
)
  size=$(du -sb "$WORK/model.parquet"* | awk '{s += $1} END {print s}')
  echo "| $r | $a s ($(python3 -c "print(f'{$ROWS / $a:,.0f}')") rows/s) | $b s ($(python3 -c "print(f'{$ROWS / $b:,.0f}')") rows/s) | $(python3 -c "print(f'{$a / $b:.0%}')") | $commits | $commit_s s | $written | $size bytes |"
done
"$BIN" inspect "$WORK/model.parquet" | head -20
