#!/usr/bin/env python3
"""Adaboost.OLM against JGT17 Table 1 on the shared data sets.

Runs `streamboost replay` (release build) over 5 seeded shuffles per data set and prints a
Markdown table of mean accuracy on the final 20% and on the whole stream, next to the
paper's numbers, plus the mean throughput. Usage:

    cargo build --release
    python3 benchmarks/reproduce_jgt17.py [--shuffles 5] [--datasets DIR]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

PAPER = {  # JGT17 Table 1, Adaboost.OLM: final 20% (whole stream)
    "balance_scale": (0.754, 0.698), "car": (0.930, 0.865),
    "nursery": (0.966, 0.928), "mushroom": (1.000, 0.995),
    "mice_protein": (0.561, 0.454),
}
FILES = {"mice_protein": "mice_protein/data_missing0.csv"}
RUNS = [
    ("Adaboost.OLM, 100 jgt-paper trees, weight scale 1 (paper's weights)",
     ["--algo", "ada-olm", "--learners", "100", "--preset", "jgt-paper"]),
    ("Adaboost.OLM, 100 jgt-paper trees, weight scale U[5,200] (authors' experiments)",
     ["--algo", "ada-olm", "--learners", "100", "--preset", "jgt-paper", "--weight-scale", "5:200"]),
    ("single Hoeffding tree, default preset",
     ["--algo", "hoeffding", "--preset", "default"]),
    ("single Hoeffding tree, jgt-paper preset (random parameters)",
     ["--algo", "hoeffding", "--preset", "jgt-paper"]),
]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shuffles", type=int, default=5)
    ap.add_argument("--datasets", default=os.environ.get("STREAMBOOST_DATASETS", "../shared/datasets"))
    ap.add_argument("--binary", default="target/release/streamboost")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    names = args.only or ["balance_scale", "car", "nursery", "mushroom", "mice_protein"]
    tmp = tempfile.mkdtemp()
    for title, flags in RUNS:
        print(f"\n#### {title}\n")
        print("| data | final 20% (paper) | whole stream (paper) | rows/s |")
        print("|---|---|---|---|")
        for name in names:
            path = os.path.join(args.datasets, FILES.get(name, f"{name}/data.csv"))
            final, whole, speed = [], [], []
            for s in range(1, args.shuffles + 1):
                report = os.path.join(tmp, "r.json")
                subprocess.run([args.binary, "replay", "--input", path, "--shuffle", str(s),
                                "--seed", str(s), "-q", "--report", report] + flags,
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                r = json.load(open(report))
                final.append(r["final_fraction"]["accuracy"])
                whole.append(r["cumulative"]["accuracy"])
                speed.append(r["throughput"]["rows_per_second"])
            pf, pw = PAPER.get(name, (None, None))
            sd = statistics.stdev(final) if len(final) > 1 else 0.0
            print(f"| {name} | {statistics.mean(final):.3f} ± {sd:.3f} ({pf}) | "
                  f"{statistics.mean(whole):.3f} ({pw}) | {statistics.mean(speed):,.0f} |")
            sys.stdout.flush()

if __name__ == "__main__":
    main()
