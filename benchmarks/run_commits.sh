#!/usr/bin/env bash
# What commits cost a live job with the default model: `streamboost run` over nursery x2
# (25,920 rows) as 10 CSV files with a commit every 2,000 rows, against `replay
# --predictions` of the same rows (scored rows written as Parquet, no checkpoint), same
# model and seed, in the same repeat. With BASELINE set to another build's binary, each
# repeat runs it too (first), so the two builds' ratios come from one run of the script.
# Reports both rates, the commits' count, seconds and bytes written (from the job's last
# progress line; a build that does not log them shows `?`), and the checkpoint's size.
#
#   cargo build --release
#   [BASELINE=/path/to/old/streamboost] [EVERY=2000] benchmarks/run_commits.sh [REPEATS=3] [-- run flags]
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
EVERY=${EVERY:-2000}
CLASSES=(--classes not_recom,priority,recommend,spec_prior,very_recom)
inputs=()
for f in "$WORK"/in_plain/*.csv; do inputs+=(--input "$f"); done
seconds() {
  local s e; s=$(date +%s.%N); "$@" >/dev/null 2>"$LOG"; e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.2f}')"
}

echo "| repeat | build | replay --predictions | run --checkpoint-every $EVERY | run ÷ replay (rate) | commits | seconds in commits | bytes written by commits | checkpoint at the end (bytes, base and deltas) |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in $(seq "$REPEATS"); do
  builds=()
  [[ -n "${BASELINE:-}" ]] && builds+=("$BASELINE")
  builds+=("$BIN")
  for bin in "${builds[@]}"; do
    rm -rf "$WORK/out" "$WORK"/*.parquet* && mkdir -p "$WORK/out"
    extra=()
    # The job's own flags go to the build under test only.
    [[ "$bin" == "$BIN" ]] && extra=("${EXTRA[@]}")
    LOG=/dev/null
    a=$(seconds "$bin" replay -q "${inputs[@]}" --seed 1 --predictions "$WORK/replay.parquet")
    LOG=$WORK/run.log
    b=$(seconds "$bin" run --once --progress-every 1 --input-dir "$WORK/in" --output-dir "$WORK/out" \
        --model "$WORK/model.parquet" --passthrough id --checkpoint-every "$EVERY" "${CLASSES[@]}" \
        --seed 1 "${extra[@]}")
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
    name=$([[ "$bin" == "$BIN" ]] && echo "this build" || echo "baseline")
    echo "| $r | $name | $a s ($(python3 -c "print(f'{$ROWS / $a:,.0f}')") rows/s) | $b s ($(python3 -c "print(f'{$ROWS / $b:,.0f}')") rows/s) | $(python3 -c "print(f'{$a / $b:.0%}')") | $commits | $commit_s | $written | $size |"
  done
done
"$BIN" inspect "$WORK/model.parquet" | grep -E "^(format|trees|chain)" || true
