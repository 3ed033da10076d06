#!/usr/bin/env python3
"""Online BBM (`--algo bbm`) on the shared binary sets: its weight scales against each other,
beside OnlineMBBM at k = 2 (the same weights from the exact potential engine), the other
binary boosters at their defaults and one default tree; and under [CLL]'s protocol with
perceptrons and naive Bayes (min-max scaling, Poisson copies), beside OSBoost. Error over the whole stream and on its final
20%, mean over seeded shuffles `s = 1..S` (`--shuffle s --seed s`); rows/s.

    cargo build --release
    python3 benchmarks/bbm_table.py [--shuffles 5] [--jobs 2] [--datasets DIR] [--binary PATH]
"""
import concurrent.futures as cf, json, os, statistics, subprocess, tempfile

from bench_common import arguments

from cll_table import SETS

CLL12 = ["--scale", "min-max", "--resample", "poisson"]
RUNS = {
    "tree (default)": ["--algo", "hoeffding"],
    "bbm (default: nba trees, unit-mean)": ["--algo", "bbm"],
    "bbm, scale 1": ["--algo", "bbm", "--weight-scale", "1"],
    "bbm, scale 0.5:20": ["--algo", "bbm", "--weight-scale", "0.5:20"],
    "bbm, jgt-paper trees": ["--algo", "bbm", "--preset", "jgt-paper"],
    "mbbm (default)": ["--algo", "mbbm"],
    "osboost (default)": ["--algo", "osboost"],
    "ogboost (default)": ["--algo", "ogboost"],
    # [CLL]'s protocol spelled out for bbm (it is not one of the paper's algorithms).
    "bbm, cll12 P": ["--algo", "bbm", "--weak", "perceptron", *CLL12],
    "osboost, cll12 P": ["--algo", "osboost", "--weak", "perceptron", "--protocol", "cll12"],
    "bbm, cll12 NB": ["--algo", "bbm", "--weak", "naive-bayes", *CLL12],
    "osboost, cll12 NB": ["--algo", "osboost", "--weak", "naive-bayes", "--protocol", "cll12"],
}


def replay(binary, inputs, flags, shuffle):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        subprocess.run([binary, "replay", *inputs, "--shuffle", str(shuffle), "--seed",
                        str(shuffle), "-q", "--report", report, *flags],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        r = json.load(open(report))
    return {"whole": r["cumulative"]["accuracy"], "final": r["final_fraction"]["accuracy"],
            "rows_per_second": r["throughput"]["rows_per_second"]}


def main():
    ap = arguments(shuffles=5, jobs=True)
    args = ap.parse_args()
    jobs = {}
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        for d, files in SETS.items():
            inputs = [x for f in files for x in ("--input", os.path.join(args.datasets, f))]
            for name, flags in RUNS.items():
                for s in range(1, args.shuffles + 1):
                    jobs[pool.submit(replay, args.binary, inputs, flags, s)] = (d, name, s)
        done = {jobs[f]: f.result() for f in cf.as_completed(jobs)}

    def mean(d, name, key):
        return statistics.mean(done[(d, name, s)][key] for s in range(1, args.shuffles + 1))

    print("Error, whole stream (final 20%), mean of", args.shuffles, "shuffles\n")
    print("| run | " + " | ".join(SETS) + " |")
    print("|---|" + "---|" * len(SETS))
    for name in RUNS:
        cells = [f"{1 - mean(d, name, 'whole'):.4f} ({1 - mean(d, name, 'final'):.4f})"
                 for d in SETS]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nRows per second\n")
    print("| run | " + " | ".join(SETS) + " |")
    print("|---|" + "---|" * len(SETS))
    for name in RUNS:
        print(f"| {name} | " + " | ".join(f"{mean(d, name, 'rows_per_second'):,.0f}"
                                          for d in SETS) + " |")


if __name__ == "__main__":
    main()
