#!/usr/bin/env bash
# Peak memory (max RSS) of `streamboost replay --predictions` on a synthetic stream of
# 100,000 and 1,000,000 rows (two numeric features, one nominal of 8 categories, two
# classes), for each binary given, in the same script, so that they meet the same files.
# Usage: benchmarks/peak_memory.sh BINARY...   (e.g. an old and a new release build)
set -euo pipefail
work=${WORK:-$(mktemp -d)}
cd "$work"
if [ ! -f m1.csv ]; then
  python3 - <<'PY'
import random
random.seed(7)
with open('m1.csv', 'w') as f:
    f.write('x1,x2,c,label\n')
    for i in range(1_000_000):
        x1, x2, c = random.gauss(0, 1), random.gauss(0, 1), random.choice('abcdefgh')
        s = x1 + 0.5 * x2 + (0.3 if c in 'abc' else -0.3) + random.gauss(0, 0.5)
        f.write(f'{x1:.5f},{x2:.5f},{c},{"yes" if s > 0 else "no"}\n')
PY
  head -n 100001 m1.csv > m100k.csv
fi
echo "| binary | model | rows | peak RSS | wall |"
echo "|---|---|---|---|---|"
for bin in "$@"; do
  for algo in naive-bayes hoeffding; do
    for f in m100k m1; do
      /usr/bin/time -f "%M %e" "$bin" replay --input $f.csv --algo $algo -q \
        --predictions pred.csv >/dev/null 2>time.txt
      read -r kb wall < <(tail -n 1 time.txt)
      rows=$([ $f = m1 ] && echo 1,000,000 || echo 100,000)
      echo "| $(basename "$bin") | $algo | $rows | $(awk -v k="$kb" 'BEGIN {printf "%.1f MB", k / 1024}') | ${wall} s |"
    done
  done
done
