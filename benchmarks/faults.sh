#!/usr/bin/env bash
# Fault injection on checkpoints, beyond the short variants in the test suite:
#   1. KILLS replays that save a checkpoint after every row, each killed with SIGKILL at a
#      random moment (seeded); after every kill the checkpoint must load (`inspect`);
#   2. a save into a file system that is full (a small tmpfs, where this machine lets us
#      mount one): the replay fails naming the file, the previous checkpoint still loads
#      unchanged, and no partial file is left.
# Usage: benchmarks/faults.sh [KILLS]   (default 100; about 1 s per kill)
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-100}
cargo build --locked --quiet
bin=${CARGO_TARGET_DIR:-target}/debug/streamboost
work=$(mktemp -d)
cleanup() { mountpoint -q "$work/full" 2>/dev/null && umount "$work/full"; rm -rf "$work"; }
trap cleanup EXIT

echo "== $kills kills during checkpoints (replay of car, 10 learners, --checkpoint-every 1)"
ck=$work/live.parquet
"$bin" replay -q --learners 10 --save "$ck" >/dev/null
unreadable=0 mid_write=0 advanced=0
for i in $(seq 1 "$kills"); do
  "$bin" replay -q --learners 10 --checkpoint-every 1 --save "$ck" >/dev/null 2>&1 &
  pid=$!
  sleep "$(python3 -c "import random; random.seed($i); print(round(random.uniform(0.05, 1.0), 3))")"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  compgen -G "$ck.$pid-*.partial" >/dev/null && mid_write=$((mid_write + 1))
  if "$bin" inspect "$ck" >"$work/inspect.txt" 2>&1; then
    rows=$(awk '$1 == "rows" {print $2}' "$work/inspect.txt")
    [ "$rows" != 1728 ] && advanced=$((advanced + 1))
  else
    unreadable=$((unreadable + 1))
    cp "$ck" "$work/unreadable-$i.parquet"
    cat "$work/inspect.txt"
  fi
done
echo "kills $kills: unreadable checkpoints $unreadable, killed mid-write $mid_write," \
  "checkpoints left mid-stream (not the first full run's) $advanced"

echo "== a save into a full file system"
mkdir "$work/full"
if mount -t tmpfs -o size=256k tmpfs "$work/full" 2>/dev/null; then
  full=$work/full/ck.parquet
  "$bin" replay -q --learners 5 --save "$full" >/dev/null
  before=$(sha256sum <"$full")
  # Fill what is left, so the next save meets ENOSPC part way.
  dd if=/dev/zero of="$work/full/filler" bs=4k 2>/dev/null || true
  rm "$work/full/filler"; dd if=/dev/zero of="$work/full/filler" bs=1k count=$(( $(df -k --output=avail "$work/full" | tail -1) - 8 )) 2>/dev/null
  set +e
  "$bin" replay -q --load "$full" --save "$full" >/dev/null 2>"$work/err.txt"
  status=$?
  set -e
  echo "exit $status: $(tail -1 "$work/err.txt")"
  [ "$(sha256sum <"$full")" = "$before" ] && echo "previous checkpoint unchanged" || echo "PREVIOUS CHECKPOINT CHANGED"
  "$bin" inspect "$full" | awk '$1 == "rows"' | sed 's/^/loads: /'
  echo "partial files left: $(compgen -G "$full.*.partial" | wc -l)"
else
  echo "no tmpfs can be mounted here; the suite's file-size-limit test covers this case"
fi
