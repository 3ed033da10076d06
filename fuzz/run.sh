#!/usr/bin/env bash
# Runs one fuzz target for a given time: `fuzz/run.sh TARGET SECONDS` (targets: checkpoint,
# input, operator). Installs cargo-fuzz and a nightly toolchain if they are missing, seeds
# the corpus from the bundled data set, and prints libFuzzer's final statistics. A crash
# leaves its input under fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?target: checkpoint, input or operator}
seconds=${2:-600}

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

corpus=corpus/$target
mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ] && [ "$target" != operator ]; then
  seeds=$(mktemp -d)
  head -n 41 ../data/car.csv > "$seeds/car.csv"
  (cd .. && cargo run --quiet --features cli -- replay --input "$seeds/car.csv" --learners 3 \
    --save "$seeds/car.ck.parquet" --predictions "$seeds/car.predictions.parquet" >/dev/null)
  if [ "$target" = checkpoint ]; then
    cp "$seeds/car.ck.parquet" "$corpus/"
    cp ../tests/fixtures/checkpoint_v1_*.parquet "$corpus/"
  else
    # The input target reads its first byte as the format: even for CSV, odd for Parquet.
    { printf '\0'; cat "$seeds/car.csv"; } > "$corpus/car.csv"
    { printf '\1'; cat "$seeds/car.predictions.parquet"; } > "$corpus/car.parquet"
  fi
  rm -r "$seeds"
fi

cargo +nightly fuzz run "$target" "$corpus" -O -- \
  -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 -print_final_stats=1
