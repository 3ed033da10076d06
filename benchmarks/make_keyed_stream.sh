#!/usr/bin/env bash
# Writes the synthetic keyed stream of benchmarks/keyed_stream.rs (ROWS events of KEYS keys,
# Zipf s = 1.1) as FILES Parquet files into DIR, the one way the keyed benchmarks make it.
#
#   benchmarks/make_keyed_stream.sh DIR ROWS KEYS FILES [FEATURE=sql]
#
# GENERATOR: an already built keyed_stream binary (target/release/deps/keyed_stream-*), to
# skip building it in the bench profile; otherwise `cargo bench` builds it with FEATURE.
set -euo pipefail
DIR=$1 ROWS=$2 KEYS=$3 FILES=$4 FEATURE=${5:-sql}
if [ -n "${GENERATOR:-}" ]; then
  "$GENERATOR" "$DIR" "$ROWS" "$KEYS" "$FILES"
else
  cargo bench --quiet --bench keyed_stream --features "$FEATURE" -- "$DIR" "$ROWS" "$KEYS" "$FILES"
fi
