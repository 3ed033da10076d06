#!/usr/bin/env bash
# The bad-input matrix: every bad input and fault of the bad-input report, run through the
# `streamboost` binary, printed as a Markdown table of the command, its exit code and the
# last line it wrote to stderr. Kills and a full disk are benchmarks/faults.sh's.
# Usage: benchmarks/bad_input_matrix.sh   (needs ../shared/datasets for pendigits)
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --locked --quiet --features sql || exit 1
bin=$(realpath "${CARGO_TARGET_DIR:-target}/debug/streamboost")
data=$(realpath "${STREAMBOOST_DATASETS:-../shared/datasets}")
car=$PWD/data/car.csv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "| case | command | exit | stderr (last line) |"
echo "|---|---|---|---|"
# row CASE COMMAND...: runs the command here, prints its row.
row() {
  local name=$1; shift
  "$@" >/dev/null 2>err.txt
  local status=$?
  local shown="${*//$bin/streamboost}"
  shown="${shown//$work\//}"
  shown="${shown//$data\//\$DATA/}"
  shown="${shown//$car/data/car.csv}"
  local message
  message=$(grep -v '^\(model\|seed\|input\|stream\|resumed\|saved\|progress\|rows\|accuracy\|final\|throughput\|class\) ' err.txt | tail -1)
  message=${message//$work\//}
  message=${message//|/\\|}
  echo "| $name | \`${shown//|/\\|}\` | $status | ${message:-(none)} |"
}
flip() { # flip FILE OFFSET: xor one byte with 0x01
  python3 -c "import sys; p,o=sys.argv[1],int(sys.argv[2]); b=bytearray(open(p,'rb').read()); o=o%len(b); b[o]^=1; open(p,'wb').write(b)" "$@"
}

sed '1s/safety/buying/' "$car" > dup_feature.csv
row "duplicate feature name" "$bin" replay -q --input dup_feature.csv
sed '1s/safety/label/' "$car" > dup_label.csv
row "second \`label\` column" "$bin" replay -q --input dup_label.csv
head -n 6001 "$data/pendigits/data.csv" > pen.csv
awk -F, -v OFS=, 'NR == 5002 {$1 = "oops"} {print}' pen.csv > stray.csv
row "a word in a numeric column" "$bin" replay -q --input stray.csv
row "... read as categories on purpose" "$bin" replay -q --input stray.csv --nominal x1
awk -F, -v OFS=, 'NR == 5002 {$1 = "1e308*10"} {print}' pen.csv > expr.csv
row "\`1e308*10\` in a numeric column" "$bin" replay -q --input expr.csv
awk -F, -v OFS=, 'NR % 7 == 0 {$1 = "NaN"} NR % 11 == 0 {$2 = ""} {print}' pen.csv > nan.csv
row "NaN and empty numeric cells" "$bin" replay --input nan.csv
awk -F, -v OFS=, 'NR == 300 {$3 = "inf"} NR == 400 {$4 = "-inf"} {print}' pen.csv > inf.csv
row "±inf in a numeric column" "$bin" replay --input inf.csv
: > empty.csv
row "empty file" "$bin" replay -q --input empty.csv
head -n 1 "$car" > header.csv
row "header only" "$bin" replay -q --input header.csv
head -c 20000 "$car" > truncated.csv
row "truncated mid-row" "$bin" replay -q --input truncated.csv
sed '1s/lug_boot/boot/' "$car" > renamed.csv
row "schema drift between inputs" "$bin" replay -q --input "$car" --input renamed.csv
awk -F, -v OFS=, 'NR == 1 || NR < 200' "$car" > few.csv
"$bin" replay -q --input few.csv --predictions input.parquet >/dev/null 2>&1
# sweep FILE STEP COMMAND...: one bit flipped at every STEP-th byte of FILE in turn (the
# copy is `damaged.parquet`); prints how many runs exited 0, 1 and otherwise (a panic: 101).
sweep() {
  local file=$1 step=$2; shift 2
  local size ok=0 refused=0 other=0
  size=$(stat -c %s "$file")
  for ((o = 0; o < size; o += step)); do
    cp "$file" damaged.parquet; flip damaged.parquet $o
    "$@" >/dev/null 2>&1
    case $? in 0) ok=$((ok + 1)) ;; 1) refused=$((refused + 1)) ;; *) other=$((other + 1)) ;; esac
  done
  echo "$((ok + refused + other)) flips: exit 0 $ok, exit 1 $refused, other $other"
}
echo "| Parquet input, one bit flipped at every 13th byte | \`streamboost replay -q --input damaged.parquet\` | | $(sweep input.parquet 13 "$bin" replay -q --input damaged.parquet) |"

"$bin" replay -q --input "$car" --learners 5 --save ck.parquet >/dev/null 2>&1
size=$(stat -c %s ck.parquet)
at() { python3 -c "import sys; print(open(sys.argv[1], 'rb').read().index(sys.argv[2].encode()))" "$@"; }
cp ck.parquet schema.parquet; flip schema.parquet $(( $(at ck.parquet ARROW:schema) + 400 ))
row "checkpoint: a bit of the embedded Arrow schema" "$bin" inspect schema.parquet
cp ck.parquet state.parquet; flip state.parquet $(( $(at ck.parquet '"n_learners"') + 15 ))
row "checkpoint: a bit of the model state: inspect" "$bin" inspect state.parquet
row "... replay --load" "$bin" replay -q --load state.parquet
row "... sql --model" "$bin" sql --model m=state.parquet "SELECT * FROM boost_models()"
echo "| checkpoint, one bit flipped at every 997th byte | \`streamboost inspect damaged.parquet\` | | $(sweep ck.parquet 997 "$bin" inspect damaged.parquet) |"
head -c $((size / 2)) ck.parquet > cut.parquet
row "truncated checkpoint" "$bin" inspect cut.parquet
python3 - ck.parquet edited.parquet <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
key = b'streamboost.rows_seen'
i = b.index(key) + len(key)
j = b.index(b'1728', i)
open(sys.argv[2], 'wb').write(b[:j] + b'2728' + b[j + 4:])
PY
row "checkpoint metadata edited (rows_seen)" "$bin" inspect edited.parquet
row "unwritable --save" "$bin" replay -q --save nodir/ck.parquet
{ head -n 1 "$car"; tail -n 20 "$car" | awk -F, -v OFS=, 'NR % 4 == 0 {$7 = "excellent"} {print}'; } > new_label.csv
row "after --load, a label the model has not met" "$bin" replay -q --load ck.parquet --input new_label.csv --save grown.parquet
awk -F, -v OFS=, 'NR == 1 || $7 == "acc" || $7 == "unacc"' "$car" | head -n 400 > two.csv
"$bin" replay -q --input two.csv --algo osboost --save binary.parquet >/dev/null 2>&1
row "binary booster meets a third class" "$bin" replay -q --load binary.parquet --input new_label.csv
"$bin" replay -q --input "$car" --learners 5 --save shared.parquet >/dev/null 2>err1.txt &
"$bin" replay -q --input "$car" --learners 5 --save shared.parquet >/dev/null 2>err2.txt
first=$?; wait $!; second=$?
echo "| two processes saving to one path | \`streamboost replay --save shared.parquet\` ×2 at once | $first, $second | $("$bin" inspect shared.parquet 2>&1 | awk '$1 == "rows"') |"
# Outputs over inputs: each refused before anything is written; `kept` says whether the
# input's bytes are unchanged after the command.
cp "$car" mine.csv
kept() { cmp -s "$car" mine.csv && echo "input kept" || echo "INPUT CHANGED"; }
# guarded CASE COMMAND...: a row whose last column also says whether mine.csv is unchanged.
guarded() {
  local name=$1; shift
  local line
  line=$(row "$name" "$@")
  echo "${line% |}; $(kept) |"
  cp "$car" mine.csv
}
guarded "\`--save\` over the input" "$bin" replay -q --input mine.csv --save mine.csv
guarded "\`--report\` over the input" "$bin" replay -q --input mine.csv --report mine.csv
guarded "\`--curve\` over the input" "$bin" replay -q --input mine.csv --curve mine.csv
guarded "\`--predictions\` over the input" "$bin" replay -q --input mine.csv --predictions mine.csv
ln -s mine.csv link.csv; ln mine.csv hard.csv
guarded "\`--predictions\` over a symbolic link to the input" "$bin" replay -q --input mine.csv --predictions link.csv
guarded "\`--predictions\` over a hard link to the input" "$bin" replay -q --input mine.csv --predictions hard.csv
guarded "\`train --save\` over the input" "$bin" train -q --input mine.csv --save mine.csv
guarded "\`sql --output\` over a \`--table\`" "$bin" sql --table v=mine.csv "SELECT * FROM v" --output mine.csv
guarded "\`sql --output\` over a file the statement reads" "$bin" sql "SELECT * FROM 'mine.csv'" --output mine.csv
mkdir -p jobin; cp "$car" jobin/a.csv
row "\`run\` with the input directory as output directory" "$bin" run --once -q --input-dir jobin --output-dir jobin --model job.parquet
row "\`run --output-dir\` that does not exist (created)" "$bin" run --once -q --input-dir jobin --output-dir made/out --model job.parquet --algo ada-olm --learners 3
echo "| ... what it made | \`ls made/out\` | | $(ls made/out | tr '\n' ' ') |"
row "\`run --model\` existing, other model flags" "$bin" run --once -q --input-dir jobin --output-dir made/out --model job.parquet --algo mbbm --learners 3
row "\`run --model\` existing, its own flags again" "$bin" run --once -q --input-dir jobin --output-dir made/out --model job.parquet --algo ada-olm --learners 3
echo '{"config": {"algorithm": "mbbm"}, "classes": ["acc", "good", "unacc", "vgood"]}' > mbbm.json
row "\`sql --live\` checkpoint with another model's config" "$bin" sql --live m=job.parquet,config=mbbm.json "SELECT * FROM boost_models()"
# Two jobs on one model: the second exits 1 naming the first; the first's outputs are those of
# a job alone.
mkdir -p twoin; for f in 0 1 2 3 4 5; do cp "$car" twoin/p$f.csv; done
"$bin" run --once -q --input-dir twoin --output-dir alone --model alone.parquet --algo ada-olm --learners 3 >/dev/null 2>&1
"$bin" run -q --poll 0.1 --input-dir twoin --output-dir both --model both.parquet --algo ada-olm --learners 3 >/dev/null 2>&1 &
first=$!
until [ -e both/p0.parquet ]; do sleep 0.05; done
row "a second \`run\` on a model a job holds" "$bin" run --once -q --input-dir twoin --output-dir other --model both.parquet --algo ada-olm --learners 3
until [ -e both/p5.parquet ]; do sleep 0.1; done
kill -TERM $first; wait $first; status=$?
same=yes; for f in 0 1 2 3 4 5; do cmp -s alone/p$f.parquet both/p$f.parquet || same=no; done
echo "| ... the first job | SIGTERM after its last file | $status | outputs byte-equal to a job alone: $same |"
mkdir -p classin
awk -F, 'NR == 1 || $7 == "acc" || $7 == "unacc"' "$car" | head -n 301 > classin/a.csv
cp "$car" classin/b.csv; cp "$car" classin/c.csv
"$bin" run --once --input-dir classin --output-dir classout --model class.parquet --algo ada-olm --learners 3 >/dev/null 2>err.txt
echo "| \`run\` whose first file lacks two classes | \`streamboost run --once --input-dir classin …\` | $? | $(grep -c 'WARN.*class=' err.txt) warnings: $(grep -o 'class="[a-z]*"' err.txt | tr '\n' ' ') |"
python3 -c "
import sys
lines = open(sys.argv[1]).read().splitlines()
out = [lines[0]] + [l.rsplit(',', 1)[0] + ',' + 'x' * 65536 if i % 50 == 7 else l for i, l in enumerate(lines[1:])]
open('long.csv', 'w').write('\n'.join(out) + '\n')" "$car"
row "a label of 65,536 characters" "$bin" replay -q --input long.csv --report long.json
STREAMBOOST_MAX_LABEL_BYTES=100000 "$bin" replay -q --input long.csv --learners 3 --report long.json >/dev/null 2>&1
echo "| ... with the bound raised | \`STREAMBOOST_MAX_LABEL_BYTES=100000 streamboost replay …\` | $? | report written: $([ -s long.json ] && echo yes || echo no) |"
row "\`--learners 1000000\`" "$bin" replay -q --learners 1000000
row "\`--learners -1\`" "$bin" replay -q --learners -1
row "\`--seed -1\`" "$bin" replay -q --seed -1
python3 -c "
import random
random.seed(1)
cols = 10000
print(','.join(f'x{j}' for j in range(cols)) + ',label')
for r in range(50):
    print(','.join(f'{random.random():.4f}' for _ in range(cols)) + ',' + 'ab'[r % 2])" > wide.csv
/usr/bin/time -f '%M' -o wide.kb "$bin" replay -q --input wide.csv --algo hoeffding >/dev/null 2>&1
echo "| a 3 MB CSV of 10,000 columns × 50 rows, one tree | \`streamboost replay --input wide.csv --algo hoeffding\` | $? | peak RSS $(( $(cat wide.kb) / 1024 )) MB |"
row "a ragged row" "$bin" replay -q --input truncated.csv
row "sql --output CSV with a list column" "$bin" sql --model m=ck.parquet --table car="$car" --output lists.csv "SELECT boost_predict_proba('m', buying, maint, doors, persons, lug_boot, safety) AS p FROM car LIMIT 2"
echo
echo "lists.csv: $(tail -n 1 lists.csv)"
