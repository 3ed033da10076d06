#!/usr/bin/env bash
# The pending store's memory under a long stream: 2 million synthetic rows (5 numeric
# features, 3 classes), a tenth of whose labels never arrive and the rest 100 rows late,
# rows waiting at most 1,000 rows (--pending-ttl). Peak resident memory of `replay
# --label-delay-by` over the first 0.5, 1 and 2 million rows, against the same replay
# without a delay (the same model, grown on the same rows): the difference is the store's.
#
#   cargo build --release --features sql
#   benchmarks/delay_memory.sh
set -euo pipefail
BIN=${STREAMBOOST:-target/release/streamboost}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 - "$WORK/events.csv" "$WORK/plain.csv" <<'PY'
import random, sys
rng = random.Random(7)
with open(sys.argv[1], "w") as f, open(sys.argv[2], "w") as g:
    f.write("x0,x1,x2,x3,x4,label,label_delay\n")
    g.write("x0,x1,x2,x3,x4,label\n")
    for i in range(2_000_000):
        x = [rng.random() for _ in range(5)]
        y = int(x[0] + x[1] > 1.0) + int(x[2] > 0.7)
        delay = "" if rng.random() < 0.1 else "100"
        row = ",".join(f"{v:.5f}" for v in x) + f",c{y}"
        f.write(f"{row},{delay}\n")
        g.write(f"{row}\n")
PY
peak() { # command... -> peak resident MB
  /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", $1 / 1024}'
}
echo "| rows | peak MB, no delay | peak MB, delayed | store's share (MB) | rows learnt | expired |"
echo "|---|---|---|---|---|---|"
for rows in 500000 1000000 2000000; do
  head -n $((rows + 1)) "$WORK/events.csv" >"$WORK/part.csv"
  head -n $((rows + 1)) "$WORK/plain.csv" >"$WORK/plain_part.csv"
  plain=$(peak "$BIN" replay -q --algo oza --learners 10 --preset default \
    --input "$WORK/plain_part.csv")
  delayed=$(peak "$BIN" replay -q --algo oza --learners 10 --preset default \
    --input "$WORK/part.csv" --label-delay-by label_delay --pending-ttl 1000 \
    --report "$WORK/r.json")
  stats=$(python3 -c "import json; d=json.load(open('$WORK/r.json'))['delay']; print(d['learnt'], '|', d['expired'])")
  echo "| $rows | $plain | $delayed | $((delayed - plain)) | $stats |"
done
