#!/usr/bin/env python3
"""The drift response on stationary streams: each algorithm with `--drift-detector none` and
with a detector, on the shared multiclass sets, final-20% accuracy, mean over seeded shuffles
(`--shuffle s --seed s`), the difference and its standard error over the shuffles (paired).
A default may take the drift response only where no stationary set loses more than one
standard error.

    cargo build --release
    python3 benchmarks/drift_stationary.py [--shuffles 5] [--algos oza-bag ada-olm]
        [--sets car balance_scale ...] [--detector adwin | --detector hat]

`--detector hat` compares each algorithm's default members with Hoeffding adaptive trees
(`--weak hat`, no detector around them) instead.
"""
import json, os, statistics, subprocess, tempfile

from bench_common import arguments, run_cached
from reproduce_jgt17 import ORDINAL

SETS = ["balance_scale", "car", "mice_protein", "mushroom", "nursery", "satimage", "pendigits",
        "optdigits", "movement_partial"]


def main():
    ap = arguments(shuffles=5, jobs=True, cache="/tmp/drift_stationary.jsonl")
    ap.add_argument("--algos", nargs="+", default=["oza-bag", "ada-olm"])
    ap.add_argument("--sets", nargs="+", default=SETS)
    ap.add_argument("--detector", default="adwin")
    args = ap.parse_args()

    def run(algo, data, detector, s):
        flags = [f for level in ORDINAL.get(data, []) for f in ("--ordinal", level)]
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "r.json")
            cmd = [args.binary, "replay", "-q", "--input",
                   os.path.join(args.datasets, data, "data.csv"), "--shuffle", str(s),
                   "--seed", str(s), "--report", report, *flags]
            cmd += (["--drift-detector", "none", "--weak", "hat"] if detector == "hat"
                    else ["--drift-detector", detector])
            if algo != "default":
                cmd += ["--algo", algo]
            subprocess.run(cmd, check=True, capture_output=True)
            r = json.load(open(report))
        return {"final": r["final_fraction"]["accuracy"],
                "replaced": r.get("drift", {}).get("replaced", 0)}

    tasks = {(a, d, det, s): (a, d, det, s) for a in args.algos for d in args.sets
             for det in ("none", args.detector) for s in range(1, args.shuffles + 1)}
    done = run_cached(args.cache, args.jobs, ["algo", "data", "detector", "shuffle"], tasks, run)
    print(f"| algorithm | data | none | {args.detector} | difference ± SE | "
          f"learners replaced (mean) | within one SE |")
    print("|---|---|---|---|---|---|---|")
    for a in args.algos:
        for d in args.sets:
            shuffles = range(1, args.shuffles + 1)
            off = [done[(a, d, "none", s)]["final"] for s in shuffles]
            on = [done[(a, d, args.detector, s)]["final"] for s in shuffles]
            diff = [y - x for x, y in zip(off, on)]
            se = statistics.stdev(diff) / len(diff) ** 0.5 if len(diff) > 1 else 0.0
            mean = statistics.mean(diff)
            replaced = statistics.mean(done[(a, d, args.detector, s)]["replaced"]
                                       for s in shuffles)
            ok = "yes" if mean >= -max(se, 1e-12) else "**no**"
            print(f"| {a} | {d} | {statistics.mean(off):.4f} | {statistics.mean(on):.4f} | "
                  f"{mean:+.4f} ± {se:.4f} | {replaced:.1f} | {ok} |")


if __name__ == "__main__":
    main()
