#!/usr/bin/env python3
"""Accuracy against cost: candidate default models on the shared multiclass sets.

Each candidate is replayed on every set over seeded shuffles (`--shuffle s --seed s`), one
process at a time per job; a run records its final-20% and whole-stream accuracy and the
CPU-seconds of its process (user + system, from `wait4`, so a model on two threads is charged
for both). Per set, the most accurate candidate (by mean final-20% accuracy) is the reference;
a candidate is *within one standard error* on a set when its mean is at most one standard
error of the paired per-shuffle differences below the reference's. The rule for the default:
the cheapest candidate (fewest CPU-seconds over all sets) within one standard error on every
set.

    cargo build --release
    python3 benchmarks/default_front.py [--shuffles 5] [--jobs 2] [--candidates NAME ...]
"""
import json, os, statistics, subprocess, tempfile

from bench_common import arguments, run_cached
from reproduce_jgt17 import ORDINAL

SETS = ["balance_scale", "car", "mice_protein", "mushroom", "nursery", "satimage", "pendigits",
        "optdigits", "movement_partial"]
FILES = {"mice_protein": "mice_protein/data_missing0.csv"}
# Name → the flags after `replay` that make the model (none: the build's default model).
CANDIDATES = {
    "default": [],
    "default, fast numerics": ["--numerics", "fast"],
    "ova, 30 learners": ["--learners", "30"],
    "ada-olm": ["--algo", "ada-olm"],
    "ada-olm, fast numerics": ["--algo", "ada-olm", "--numerics", "fast"],
    "oza-bag": ["--algo", "oza-bag"],
    # Each member tree within a memory limit (`--tree-memory-limit`, MOA's maxByteSize).
    "default, 256 KiB trees": ["--tree-memory-limit", "256KiB"],
    "default, 1 MiB trees": ["--tree-memory-limit", "1MiB"],
}


def replay(binary, datasets, data, flags, shuffle):
    coding = [f for level in ORDINAL.get(data, []) for f in ("--ordinal", level)]
    path = os.path.join(datasets, FILES.get(data, f"{data}/data.csv"))
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        child = subprocess.Popen(
            [binary, "replay", "-q", "--input", path, "--shuffle", str(shuffle), "--seed",
             str(shuffle), "--report", report, *coding, *flags],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        if status != 0:
            raise RuntimeError(f"{data} {flags}: {child.stderr.read().decode()}")
        r = json.load(open(report))
    return {"final": r["final_fraction"]["accuracy"], "whole": r["cumulative"]["accuracy"],
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_rss_bytes": usage.ru_maxrss * 1024}


def main():
    ap = arguments(shuffles=5, jobs=True, cache="target/default_front.jsonl")
    ap.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    ap.add_argument("--sets", nargs="+", default=SETS)
    args = ap.parse_args()
    shuffles = range(1, args.shuffles + 1)
    # Set by set, so that the small sets of every candidate come first.
    tasks = {(c, d, s): (args.binary, args.datasets, d, CANDIDATES[c], s)
             for d in args.sets for c in args.candidates for s in shuffles}
    done = run_cached(args.cache, args.jobs, ("candidate", "data", "shuffle"), tasks, replay)

    def runs(c, d, key):
        return [done[(c, d, s)][key] for s in shuffles]

    print(f"final 20%, mean over {args.shuffles} shuffles (± one standard error of the paired "
          "difference to the set's most accurate candidate, * within it); CPU-seconds summed "
          "over the shuffles\n")
    print("| candidate | " + " | ".join(args.sets) + " | CPU-seconds, all sets | "
          "within one SE on every set |")
    print("|---|" + "---|" * (len(args.sets) + 2))
    best = {d: max(args.candidates, key=lambda c: statistics.mean(runs(c, d, "final")))
            for d in args.sets}
    within_all = {}
    for c in args.candidates:
        cells, ok = [], True
        for d in args.sets:
            diff = [x - y for x, y in zip(runs(c, d, "final"), runs(best[d], d, "final"))]
            se = statistics.stdev(diff) / len(diff) ** 0.5 if len(diff) > 1 else 0.0
            within = statistics.mean(diff) >= -se
            ok &= within
            cells.append(f"{statistics.mean(runs(c, d, 'final')):.4f}"
                         f"{'' if c == best[d] else f' ({statistics.mean(diff):+.4f} ± {se:.4f})'}"
                         f"{' *' if within else ''}")
        within_all[c] = ok
        cpu = sum(sum(runs(c, d, "cpu_seconds")) for d in args.sets)
        print(f"| {c} | " + " | ".join(cells) + f" | {cpu:,.0f} | {'yes' if ok else 'no'} |")
    print("\nCPU-seconds per set (sum over the shuffles) and the largest peak RSS (MB):\n")
    print("| candidate | " + " | ".join(args.sets) + " |")
    print("|---|" + "---|" * len(args.sets))
    for c in args.candidates:
        print(f"| {c} | " + " | ".join(
            f"{sum(runs(c, d, 'cpu_seconds')):,.1f} s, {max(runs(c, d, 'peak_rss_bytes')) / 2**20:,.0f} MB"
            for d in args.sets) + " |")
    chosen = [c for c in args.candidates if within_all[c]]
    if chosen:
        cheapest = min(chosen, key=lambda c: sum(sum(runs(c, d, "cpu_seconds"))
                                                 for d in args.sets))
        print(f"\nThe cheapest candidate within one standard error on every set: {cheapest}")


if __name__ == "__main__":
    main()
