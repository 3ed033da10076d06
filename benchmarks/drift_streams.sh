#!/usr/bin/env bash
# Each algorithm's default (and the crate's default model) on drifting streams generated in
# the crate (`replay --synth`, docs/drift.md), without and with the drift response
# (`--drift-detector`): whole-stream and final-20% accuracy, learners replaced, CPU seconds
# (user + system) and rows per CPU-second. One run each; seeded, so the accuracies repeat
# exactly.
#   B=target/release/streamboost benchmarks/drift_streams.sh [SPEC...]
#   MODELS="default:adwin ada-olm:none oza-bag:none:hat hat:none" \
#     benchmarks/drift_streams.sh agrawal:rows=100000
# A SPEC that names a file (elec2's data.csv) is read as it is, in file order.
# A model is algorithm:detector[:weak learner]; `hat` alone is one Hoeffding adaptive tree;
# the detector `default` passes no `--drift-detector` (the algorithm's own response: the led
# boosters' adaptive lead, which wakes the members' response).
set -euo pipefail
B=${B:-target/release/streamboost}
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  specs=("agrawal:rows=100000" "sea:rows=100000:drift=abrupt" "hyperplane:rows=100000"
    "rbf:rows=100000" "led:rows=100000")
fi
read -r -a models <<< "${MODELS:-hoeffding:none oza-bag:none oza-bag:adwin ada-olm:none ada-olm:adwin default:none default:adwin}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "| stream | model | drift detector | whole stream | final 20% | learners replaced | CPU s | rows / CPU s |"
echo "|---|---|---|---|---|---|---|---|"
for spec in "${specs[@]}"; do
  for model in "${models[@]}"; do
    IFS=: read -r algo detector weak <<< "$model"
    flags=(); [ "$algo" != default ] && flags=(--algo "$algo")
    case $algo:$detector in hoeffding:*|hat:*|*:default) ;; *) flags+=(--drift-detector "$detector") ;; esac
    [ -n "$weak" ] && flags+=(--weak "$weak")
    source=(--synth "$spec"); [ -f "$spec" ] && source=(--input "$spec")
    /usr/bin/time -f "%U %S" -o "$tmp/t" "$B" replay "${source[@]}" "${flags[@]}" --quiet \
      --report "$tmp/r.json" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    python3 - "$spec" "$algo${weak:+ --weak $weak}" "$detector" "$tmp" <<'PY'
import json, sys
spec, algo, detector, tmp = sys.argv[1:]
r = json.load(open(f"{tmp}/r.json"))
user, system = map(float, open(f"{tmp}/t").read().split())
cpu = user + system
replaced = r.get("drift", {}).get("replaced", "")
print(f"| `{spec}` | {algo} | {detector} | {r['cumulative']['accuracy']:.4f} | "
      f"{r['final_fraction']['accuracy']:.4f} | {replaced} | {cpu:.1f} | {r['rows'] / cpu:,.0f} |",
      flush=True)
PY
  done
done
