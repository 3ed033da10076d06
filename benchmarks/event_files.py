#!/usr/bin/env python3
"""Writes a data set repeated `--repeat` times as `--files` CSV files `events-NNN.csv` in
OUT, each row prefixed with the given id columns (its 0-based position in the repeated
stream: `id`, and `ts` too with `--columns id ts`), for the `run` job's benchmarks. With
`--keys N`, a last column `key` = `k<id mod N>`, for one model per key.

    python3 benchmarks/event_files.py SRC OUT [--files 20] [--repeat 10] [--columns id ts] [--keys N]
"""
import argparse, os

ap = argparse.ArgumentParser()
ap.add_argument("src")
ap.add_argument("out")
ap.add_argument("--files", type=int, default=20)
ap.add_argument("--repeat", type=int, default=10)
ap.add_argument("--columns", nargs="*", default=["id"], help="id columns (none: plain rows)")
ap.add_argument("--keys", type=int, default=0, help="add a key column of this many keys")
args = ap.parse_args()
os.makedirs(args.out)
lines = open(args.src).read().splitlines()
header, rows = lines[0], lines[1:] * args.repeat
per = len(rows) // args.files
prefix = "".join(f"{c}," for c in args.columns)
for f in range(args.files):
    end = len(rows) if f == args.files - 1 else (f + 1) * per
    with open(os.path.join(args.out, f"events-{f:03d}.csv"), "w") as w:
        w.write(f"{prefix}{header}" + (",key" if args.keys else "") + "\n")
        for i in range(f * per, end):
            key = f",k{i % args.keys}" if args.keys else ""
            w.write("".join(f"{i}," for _ in args.columns) + rows[i] + key + "\n")
