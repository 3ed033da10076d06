#!/usr/bin/env python3
"""The binary boosters of CLL12 (OSBoost, .OCP, .EXP), OGBoost, Oza and the single weak
learner, with perceptrons and with naive Bayes: error over the whole stream, mean over seeded
shuffles `s = 1..S`, 100 weak learners, gamma = 0.1, beside the paper's Tables 1-4 as quoted
in PEERS.md. The paper's copies are LIBSVM's, scaled to [-1, 1]; ours are the UCI originals
(nominal columns kept nominal), scaled online with `--scale min-max` (running min and max of
the rows seen before, never looking ahead).

    cargo build --release
    python3 benchmarks/cll_table.py [--shuffles 5] [--jobs 2] [--datasets DIR] [--outputs sign soft]

The OSBoost family and OGBoost run with both weak outputs: `sign` (ALGORITHMS.md §10's
default) and `soft` (p(+) − p(−), a perceptron's clipped margin), since MOA's port of the
authors' OSBoost votes with its members' normalised class probabilities; and `sign+poisson`,
learners fed `K ~ Poisson(w)` unweighted copies of each row (ALGORITHMS.md §1.2) instead of
its weight.
"""
import concurrent.futures as cf, json, os, statistics

from bench_common import arguments, run_cached

from multiclass_table import replay

SETS = {"heart": ["heart/data.csv"], "breast_cancer": ["breast_cancer/data.csv"],
        "australian": ["australian/data.csv"], "diabetes": ["diabetes/data.csv"],
        "german_numer": ["german_numer/data.csv"], "mushroom": ["mushroom/data.csv"],
        "adult": ["adult/train.csv", "adult/test.csv"]}
ALGOS = ["perceptron", "osboost", "osboost-ocp", "osboost-exp", "ogboost", "oza"]
# The boosters that read their learners' outputs as hypotheses (`--weak-output`).
READS_OUTPUT = ["osboost", "osboost-ocp", "osboost-exp", "ogboost"]
WEAK = {"P": "perceptron", "NB": "naive-bayes"}
# CLL12 Tables 1-4 (PEERS.md): error of the single learner, OzaBoost and OSBoost.
PAPER = {
    "heart": {"P": (0.2489, 0.2356, 0.2356), "NB": (0.1904, 0.2570, 0.2059)},
    "breast_cancer": {"P": (0.0592, 0.0501, 0.0466), "NB": (0.0474, 0.0635, 0.0489)},
    "australian": {"P": (0.2099, 0.2012, 0.1872), "NB": (0.1751, 0.2133, 0.1849)},
    "diabetes": {"P": (0.3216, 0.3169, 0.3185), "NB": (0.2664, 0.3091, 0.2622)},
    "german_numer": {"P": (0.3256, 0.3364, 0.3148), "NB": (0.2988, 0.3206, 0.2730)},
    "mushroom": {"P": (0.0148, 0.0080, 0.0060), "NB": (0.0076, 0.0049, 0.0029)},
    "adult": {"P": (0.2093, 0.2045, 0.1994), "NB": (0.2001, 0.1912, 0.1581)},
}


def flags(algo, weak, variant):
    if algo == "perceptron":
        single = "perceptron" if weak == "P" else "naive-bayes"
        return ["--algo", single, "--protocol", "cll12"]
    output, _, resample = variant.partition("+")
    # The protocol's Poisson copies, or the learners' weights as they are (`sign`, `soft`).
    common = ["--algo", algo, "--weak", WEAK[weak], "--protocol", "cll12",
              "--resample", resample or "none"]
    # Only the boosters that have these knobs take them (the command refuses the others).
    gamma = ["--gamma", "0.1"] if algo.startswith("osboost") else []
    reads = ["--weak-output", output] if algo in READS_OUTPUT else []
    return common + gamma + reads


def main():
    ap = arguments(shuffles=5, jobs=True, cache="target/cll_table.jsonl")
    ap.add_argument("--outputs", nargs="*", default=["sign", "soft", "sign+poisson"],
                    help="how the OSBoost family and OGBoost use their learners: weak output "
                         "sign (the spec's default) or soft (p(+) - p(-); a perceptron's "
                         "clipped margin), optionally +poisson (learners fed K ~ Poisson(w) "
                         "unweighted copies of each row instead of its weight w)")
    args = ap.parse_args()
    runs = [(a, o) for o in args.outputs for a in (ALGOS if o == "sign" else READS_OUTPUT)]
    tasks = {}
    for d in SETS:
        inputs = [x for f in SETS[d] for x in ("--input", os.path.join(args.datasets, f))]
        for w in WEAK:
            for a, o in runs:
                for s in range(1, args.shuffles + 1):
                    # `replay` passes its first path with --input; the rest go in the flags.
                    tasks[(d, a, w, o, s)] = (args.binary, inputs[1], inputs[2:] + flags(a, w, o), s)
    done = run_cached(args.cache, args.jobs, ("data", "algo", "weak", "output", "shuffle"),
                      tasks, replay)

    def err(d, a, w, o="sign"):
        o = o if a in READS_OUTPUT else "sign"
        rs = [1 - done[(d, a, w, o, s)]["whole"] for s in range(1, args.shuffles + 1)
              if (d, a, w, o, s) in done]
        return f"{statistics.mean(rs):.4f}" if rs else "–"

    def speed(d, a, w):
        rs = [done[(d, a, w, "sign", s)]["rows_per_second"] for s in range(1, args.shuffles + 1)
              if (d, a, w, "sign", s) in done]
        return f"{statistics.mean(rs):,.0f}" if rs else "–"

    print(f"Error over the whole stream, mean over {args.shuffles} shuffles; paper in brackets "
          "(single learner, OzaBoost, OSBoost)\n")
    for w in WEAK:
        for o in args.outputs:
            print(f"\n#### weak learner: {WEAK[w]}, weak output: {o}\n")
            print("| data | single | OSBoost | OSBoost.OCP | OSBoost.EXP | OGBoost | Oza (MOA) |")
            print("|---|---|---|---|---|---|---|")
            for d in SETS:
                single, oza, osb = PAPER[d][w]
                print(f"| {d} | {err(d, 'perceptron', w)} [{single}] | "
                      f"{err(d, 'osboost', w, o)} [{osb}] | {err(d, 'osboost-ocp', w, o)} | "
                      f"{err(d, 'osboost-exp', w, o)} | {err(d, 'ogboost', w, o)} | "
                      f"{err(d, 'oza', w)} [{oza}] |")
    print("\nMean rows/s (adult: train then test, 48,842 rows):\n")
    print("| data | weak | " + " | ".join(ALGOS) + " |")
    print("|---|---|" + "---|" * len(ALGOS))
    for d in SETS:
        for w in WEAK:
            print(f"| {d} | {w} | " + " | ".join(speed(d, a, w) for a in ALGOS) + " |")


if __name__ == "__main__":
    main()
