#!/usr/bin/env bash
# Delayed labels through the three live surfaces on elec2 (45,312 rows in time order), Oza
# with 10 default trees: the stream split into an events table (id, ts, the features) and a
# labels table (id, label, ts when it arrives), run through
#   * SQL: `boost_score_delayed('m', (SELECT * FROM events), (SELECT * FROM labels), …)`,
#     labels arriving N rows after their events, against `replay --label-delay N`;
#   * `run --labels DIR`: event files of N rows, each followed by the file of its labels,
#     against `replay --label-delay-by` with the same arrival order;
# counting the rows whose predicted class differs from the replay's (0 is what is claimed),
# and the rows/s of each surface. Also the outcomes' accuracy against the replay report's.
#
#   cargo build --release --features sql
#   benchmarks/delay_sql_run.sh [DELAYS="10 100 1000"]
set -euo pipefail
DELAYS=${1:-10 100 1000}
BIN=${STREAMBOOST:-target/release/streamboost}
DATA=${STREAMBOOST_DATASETS:-../shared/datasets}/elec2/data.csv
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MODEL=(--algo oza --learners 10 --preset default --seed 1)
field() { python3 -c "import json; r=json.load(open('$1')); print($2)"; }
# The config a replay runs, for the SQL model file.
"$BIN" replay -q "${MODEL[@]}" --input "$DATA" --report "$WORK/r0.json" >/dev/null
python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
r = json.load(open(f"{work}/r0.json"))
json.dump({"config": r["config"], "classes": r["classes"], "seed": 1}, open(f"{work}/model.json", "w"))
PY
# Rows whose predicted class differs between two scored CSVs, matched by `id` (a replay's
# predictions: by `row`, which is the id).
differing() { python3 - "$1" "$2" <<'PY'
import csv, sys
def classes(path):
    rows = list(csv.DictReader(open(path)))
    key, col = ("id", "predicted_label") if "id" in rows[0] else ("row", "prediction")
    return {int(r[key]): r[col] for r in rows}
a, b = classes(sys.argv[1]), classes(sys.argv[2])
assert len(a) == len(b) == 45312, (len(a), len(b))
print(sum(a[i] != b[i] for i in a))
PY
}
echo "| surface | delay (rows) | rows differing from replay | accuracy (outcomes) | accuracy (replay) | rows/s | replay rows/s |"
echo "|---|---|---|---|---|---|---|"
for d in $DELAYS; do
  python3 - "$DATA" "$WORK" "$d" <<'PY'
import csv, os, sys
path, work, d = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = list(csv.reader(open(path)))
header, body = rows[0], rows[1:]
y = header.index("label")
feat = [c for j, c in enumerate(header) if j != y]
x = lambda r: [c for j, c in enumerate(r) if j != y]
with open(f"{work}/events.csv", "w") as e, open(f"{work}/labels.csv", "w") as l:
    e.write("id,ts," + ",".join(feat) + "\n"); l.write("id,label,ts\n")
    for i, r in enumerate(body):
        e.write(f"{i},{i}," + ",".join(x(r)) + "\n")
        l.write(f"{i},{r[y]},{i + max(d, 1)}\n")
# The job's files: events in chunks of d rows, each chunk's labels in the next name slot;
# the replay's per-row delay puts every label of a chunk at the next chunk's first row.
for sub in ("ev", "lab", "out"):
    os.makedirs(f"{work}/{sub}", exist_ok=True)
    for f in os.listdir(f"{work}/{sub}"):
        p = f"{work}/{sub}/{f}"
        if os.path.isfile(p): os.remove(p)
with open(f"{work}/chunked.csv", "w") as c:
    c.write(",".join(header) + ",delay\n")
    for k in range(0, len(body), d):
        n = k // d
        with open(f"{work}/ev/part-{n:06}.csv", "w") as e, open(f"{work}/lab/part-{n + 1:06}.csv", "w") as l:
            e.write("id,ts," + ",".join(feat) + "\n"); l.write("id,label,ts\n")
            for i in range(k, min(k + d, len(body))):
                r = body[i]
                e.write(f"{i},{i}," + ",".join(x(r)) + "\n")
                l.write(f"{i},{r[y]},{k + d}\n")
                c.write(",".join(r) + f",{k + d - i}\n")
PY
  # SQL against replay --label-delay d.
  "$BIN" replay -q "${MODEL[@]}" --input "$DATA" --label-delay "$d" \
    --report "$WORK/rd.json" --predictions "$WORK/rd.csv" >/dev/null
  start=$(date +%s.%N)
  "$BIN" sql --table events="$WORK/events.csv" --table labels="$WORK/labels.csv" \
    --model m="$WORK/model.json" --output "$WORK/sql.csv" \
    "SELECT id, predicted_label FROM boost_score_delayed('m', (SELECT * FROM events), (SELECT * FROM labels), 'label', 'id', 'ts')" >/dev/null
  secs=$(python3 -c "print($(date +%s.%N) - $start)")
  "$BIN" sql --table events="$WORK/events.csv" --table labels="$WORK/labels.csv" \
    --model m="$WORK/model.json" --output "$WORK/outcomes.csv" \
    "SELECT correct FROM boost_score_delayed('m', (SELECT * FROM events), (SELECT * FROM labels), 'label', 'id', 'ts', 'outcomes')" >/dev/null
  diff=$(differing "$WORK/rd.csv" "$WORK/sql.csv")
  acc=$(python3 -c "import csv; r=list(csv.DictReader(open('$WORK/outcomes.csv'))); print(round(sum(x['correct']=='true' for x in r)/len(r), 4))")
  echo "| SQL boost_score_delayed | $d | $diff | $acc | $(field "$WORK/rd.json" "round(r['cumulative']['accuracy'], 4)") | $(python3 -c "print(round(45312/$secs))") | $(field "$WORK/rd.json" "round(r['throughput']['rows_per_second'])") |"
  # run --labels against replay --label-delay-by.
  "$BIN" replay -q "${MODEL[@]}" --input "$WORK/chunked.csv" --label-delay-by delay \
    --report "$WORK/rc.json" --predictions "$WORK/rc.csv" >/dev/null
  classes=$(python3 -c "import json; print(','.join(json.load(open('$WORK/rc.json'))['classes']))")
  start=$(date +%s.%N)
  "$BIN" run --once -q "${MODEL[@]}" --classes "$classes" --id id --time ts \
    --input-dir "$WORK/ev" --labels "$WORK/lab" --output-dir "$WORK/out" --model "$WORK/m.parquet"
  secs=$(python3 -c "print($(date +%s.%N) - $start)")
  rm -rf "$WORK/outcomes" && mv "$WORK/out/labels" "$WORK/outcomes" && rm -f "$WORK/m.parquet"
  "$BIN" sql --table o="$WORK/out/*.parquet" --output "$WORK/run.csv" "SELECT id, predicted_label FROM o" >/dev/null
  "$BIN" sql --table o="$WORK/outcomes/*.parquet" --output "$WORK/run_outcomes.csv" \
    "SELECT avg(CASE WHEN correct THEN 1.0 ELSE 0.0 END) AS a FROM o" >/dev/null
  diff=$(differing "$WORK/rc.csv" "$WORK/run.csv")
  acc=$(tail -1 "$WORK/run_outcomes.csv")
  echo "| run --labels | $d | $diff | $(printf %.4f "$acc") | $(field "$WORK/rc.json" "round(r['cumulative']['accuracy'], 4)") | $(python3 -c "print(round(45312/$secs))") | $(field "$WORK/rc.json" "round(r['throughput']['rows_per_second'])") |"
done
