#!/usr/bin/env python3
"""Throughput of Adaboost.OLM (100 jgt-paper trees) on nursery, against a baseline measured
in the same script: one jgt-paper tree on the same shuffles. The ratio
`100 × (single-tree time per row) / (booster time per row)` is the share of the booster's
time that 100 independent trees would need anyway: 1.0 means boosting costs nothing beyond
its trees. Runs are interleaved so that machine noise hits every configuration alike.

    cargo build --release
    python3 benchmarks/throughput_nursery.py [--shuffles 5] [--datasets DIR]
"""
import json, os, statistics, subprocess, tempfile

from bench_common import arguments

import reproduce_jgt17 as jgt

CONFIGS = [
    ("weight scale 1, nominal coding", "nursery", []),
    ("weight scale U[5,200], nominal coding", "nursery", ["--weight-scale", "5:200"]),
    ("weight scale 1, ordinal coding", "nursery+ordinal", []),
    ("weight scale U[5,200], ordinal coding", "nursery+ordinal", ["--weight-scale", "5:200"]),
]
BOOSTER = ["--algo", "ada-olm", "--learners", "100", "--preset", "jgt-paper"]
BASELINE = ["--algo", "hoeffding", "--preset", "jgt-paper"]


def replay(binary, path, flags, shuffle, tmp):
    report = os.path.join(tmp, "r.json")
    subprocess.run([binary, "replay", "--input", path, "--shuffle", str(shuffle),
                    "--seed", str(shuffle), "-q", "--report", report] + flags,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = json.load(open(report))
    return r["final_fraction"]["accuracy"], r["throughput"]["rows_per_second"]


def main():
    ap = arguments(shuffles=5)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    rows = {title: ([], [], []) for title, _, _ in CONFIGS}
    for s in range(1, args.shuffles + 1):
        for title, name, flags in CONFIGS:
            file, coding, _ = jgt.variant(name)
            path = os.path.join(args.datasets, file)
            acc, booster = replay(args.binary, path, BOOSTER + flags + coding, s, tmp)
            _, single = replay(args.binary, path, BASELINE + coding, s, tmp)
            rows[title][0].append(acc)
            rows[title][1].append(booster)
            rows[title][2].append(100 * booster / single)
    print("| Adaboost.OLM, 100 jgt-paper trees | final 20% | rows/s | ratio to 100 single trees |")
    print("|---|---|---|---|")
    for title, (acc, speed, ratio) in rows.items():
        print(f"| {title} | {statistics.mean(acc):.3f} | {statistics.mean(speed):,.0f} "
              f"(min {min(speed):,.0f}) | {statistics.mean(ratio):.2f} |")


if __name__ == "__main__":
    main()
