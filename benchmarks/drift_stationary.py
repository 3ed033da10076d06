#!/usr/bin/env python3
"""The drift response on stationary streams: each algorithm with `--drift-detector none` and
with a detector, on the shared multiclass sets, final-20% accuracy, mean over seeded shuffles
(`--shuffle s --seed s`), the difference and its standard error over the shuffles (paired).
A default may take the drift response only where no stationary set loses more than one
standard error.

    cargo build --release
    python3 benchmarks/drift_stationary.py [--shuffles 5] [--algos oza-bag ada-olm]
        [--sets car balance_scale ...] [--detector adwin | --detector hat]

`--sets binary` and `--sets label-sets` name the binary sets of [CLL] and the label-set sets
of [JT] (1 − rank loss of the final 20% in place of accuracy).

`--detector hat` compares each algorithm's default members with Hoeffding adaptive trees
(`--weak hat`, no detector around them) instead; `--detector lead` compares `--drift-detector
none` with the algorithm's defaults, whose lead tree adapts.
"""
import json, os, statistics, subprocess, tempfile

from bench_common import arguments, run_cached
from reproduce_jgt17 import ORDINAL

SETS = ["balance_scale", "car", "mice_protein", "mushroom", "nursery", "satimage", "pendigits",
        "optdigits", "movement_partial"]
# The binary sets of [CLL] (for the binary boosters) and the label-set sets of [JT] (for the
# rankers), each read as one stream of its files in order; any other set is its data.csv.
BINARY = ["heart", "breast_cancer", "australian", "diabetes", "german_numer", "mushroom", "adult"]
LABEL_SETS = ["emotions", "scene", "yeast", "mediamill_reduced"]
FILES = {"adult": ["train.csv", "test.csv"], **{d: ["train.csv", "test.csv"] for d in LABEL_SETS}}


def main():
    ap = arguments(shuffles=5, jobs=True, cache="/tmp/drift_stationary.jsonl")
    ap.add_argument("--algos", nargs="+", default=["oza-bag", "ada-olm"])
    ap.add_argument("--sets", nargs="+", default=SETS)
    ap.add_argument("--detector", default="adwin")
    args = ap.parse_args()
    args.sets = [d for name in args.sets
                 for d in {"binary": BINARY, "label-sets": LABEL_SETS}.get(name, [name])]

    def run(algo, data, detector, s):
        flags = [f for level in ORDINAL.get(data, []) for f in ("--ordinal", level)]
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "r.json")
            inputs = [x for f in FILES.get(data, ["data.csv"])
                      for x in ("--input", os.path.join(args.datasets, data, f))]
            cmd = [args.binary, "replay", "-q", *inputs, "--shuffle", str(s),
                   "--seed", str(s), "--report", report, *flags]
            cmd += {"hat": ["--drift-detector", "none", "--weak", "hat"],
                    "lead": []}.get(detector, ["--drift-detector", detector])
            if algo != "default":
                cmd += ["--algo", algo]
            subprocess.run(cmd, check=True, capture_output=True)
            r = json.load(open(report))
        # The default ("lead"): the lead's swaps and the members replaced once it woke them.
        drift = r.get("drift", {})
        # A ranker on label sets: 1 − the rank loss of the final 20%, so that higher is better.
        final = (r["final_fraction"]["accuracy"] if isinstance(r["final_fraction"], dict)
                 else 1 - r["last"]["rank_loss"])
        return {"final": final,
                "replaced": drift.get("replaced", 0) + drift.get("subtrees_swapped", 0)}

    fields = ["algo", "data", "detector", "shuffle"]
    shuffles = range(1, args.shuffles + 1)
    # Set by set, so that the small sets of every algorithm come first.
    keys = [(a, d, det, s) for d in args.sets for a in args.algos for s in shuffles
            for det in (args.detector, "none")]
    done = run_cached(args.cache, args.jobs, fields,
                      {k: k for k in keys if k[2] != "none"}, run)

    def identical(a, d, s):
        # An adaptive lead that swapped no subtree predicted as the plain lead does, and woke
        # nothing, row for row (test
        # `an_adaptive_lead_that_swaps_nothing_predicts_as_the_plain_one`): the `none` run
        # would repeat it.
        return args.detector == "lead" and done[(a, d, "lead", s)]["replaced"] == 0

    done.update(run_cached(args.cache, args.jobs, fields,
                           {k: k for k in keys if k[2] == "none" and not identical(*k[:2], k[3])},
                           run))

    def plain(a, d, s):
        return done.get((a, d, "none", s)) or done[(a, d, args.detector, s)]

    print(f"| algorithm | data | none | {args.detector} | difference ± SE | "
          f"{ {'hat': 'subtrees swapped', 'lead': 'subtrees swapped and learners replaced'}.get(args.detector, 'learners replaced')} "
          f"(mean) | within one SE |")
    print("|---|---|---|---|---|---|---|")
    for a in args.algos:
        for d in args.sets:
            off = [plain(a, d, s)["final"] for s in shuffles]
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
