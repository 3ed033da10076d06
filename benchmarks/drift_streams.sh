#!/usr/bin/env bash
# Each algorithm's default (and the crate's default model) on drifting streams generated in
# the crate (`replay --synth`, docs/drift.md): whole-stream and final-20% accuracy, CPU
# seconds (user + system) and rows per CPU-second. One run each; seeded, so the accuracies
# repeat exactly.
#   B=target/release/streamboost benchmarks/drift_streams.sh [SPEC...]
set -euo pipefail
B=${B:-target/release/streamboost}
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  specs=("sea:rows=100000:drift=abrupt" "hyperplane:rows=100000" "rbf:rows=100000")
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "| stream | model | whole stream | final 20% | CPU s | rows / CPU s |"
echo "|---|---|---|---|---|---|"
for spec in "${specs[@]}"; do
  for algo in hoeffding oza-bag ada-olm default; do
    flags=(); [ "$algo" != default ] && flags=(--algo "$algo")
    /usr/bin/time -f "%U %S" -o "$tmp/t" "$B" replay --synth "$spec" "${flags[@]}" --quiet \
      --report "$tmp/r.json" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    python3 - "$spec" "$algo" "$tmp" <<'PY'
import json, sys
spec, algo, tmp = sys.argv[1:]
r = json.load(open(f"{tmp}/r.json"))
user, system = map(float, open(f"{tmp}/t").read().split())
cpu = user + system
print(f"| `{spec}` | {algo} | {r['cumulative']['accuracy']:.4f} | "
      f"{r['final_fraction']['accuracy']:.4f} | {cpu:.1f} | {r['rows'] / cpu:,.0f} |")
PY
  done
done
