#!/usr/bin/env python3
"""Time per row of OnlineMBBM (exact potentials) against Adaboost.OLM, measured in the same
script on the same shuffles: 100 jgt-paper trees each, the authors' weight scales
(Adaboost.OLM U[5,200], OnlineMBBM 0.1·U[5,200]), gamma = 0.1. The ratio is
`MBBM seconds per row / Adaboost.OLM seconds per row` (the target is <= 3).

    cargo build --release
    python3 benchmarks/mbbm_cost.py [--shuffles 5] [--datasets DIR]
"""
import json, os, statistics, subprocess, tempfile

from bench_common import arguments

CONFIGS = [
    ("Adaboost.OLM", ["--algo", "ada-olm", "--weight-scale", "5:200"]),
    ("OnlineMBBM, expected-cost votes", ["--algo", "mbbm", "--gamma", "0.1", "--weight-scale", "0.5:20",
                                          "--vote", "expected-cost"]),
    ("OnlineMBBM, argmax votes (the default)", ["--algo", "mbbm", "--gamma", "0.1", "--weight-scale",
                                                "0.5:20", "--vote", "argmax"]),
    ("OnlineMBBM, argmax votes, pruned (ε = 1e-9)",
     ["--algo", "mbbm", "--gamma", "0.1", "--weight-scale", "0.5:20", "--vote", "argmax",
      "--epsilon-prune", "1e-9"]),
]
DATASETS = ["nursery", "pendigits"]


def replay(binary, path, flags, shuffle, tmp):
    report = os.path.join(tmp, "r.json")
    subprocess.run([binary, "replay", "--input", path, "--shuffle", str(shuffle), "--seed",
                    str(shuffle), "--learners", "100", "--preset", "jgt-paper", "-q",
                    "--report", report] + flags,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = json.load(open(report))
    return r["cumulative"]["accuracy"], r["final_fraction"]["accuracy"], r["throughput"]["rows_per_second"]


def main():
    ap = arguments(shuffles=5)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    print("| data | algorithm | accuracy | final 20% | rows/s | time per row ÷ Adaboost.OLM's |")
    print("|---|---|---|---|---|---|")
    for name in DATASETS:
        path = os.path.join(args.datasets, name, "data.csv")
        runs = {label: [] for label, _ in CONFIGS}
        for shuffle in range(1, args.shuffles + 1):
            for label, flags in CONFIGS:
                runs[label].append(replay(args.binary, path, flags, shuffle, tmp))
        base = statistics.mean(1 / r[2] for r in runs[CONFIGS[0][0]])
        for label, _ in CONFIGS:
            rs = runs[label]
            per_row = statistics.mean(1 / r[2] for r in rs)
            print(f"| {name} | {label} | {statistics.mean(r[0] for r in rs):.4f} | "
                  f"{statistics.mean(r[1] for r in rs):.4f} | {1 / per_row:,.0f} | {per_row / base:.1f} |")


if __name__ == "__main__":
    main()
