#!/usr/bin/env python3
"""Every multiclass booster against JGT17 Table 1 / Appendix E and the best peer of PEERS.md.

100 jgt-paper trees per booster (random grace period, delta and tau per tree), the authors'
weight scales (ALGORITHMS.md §13: U[5,200] per learner, OnlineMBBM 0.1 x that), prequential
accuracy on the final 20% and on the whole stream, mean over seeded shuffles `s = 1..S`
(`--shuffle s --seed s`). OnlineMBBM runs every gamma of the paper's grid and reports the best
(by final-20% accuracy, as the paper's "best MBBM" column does). car and nursery replay with
their attributes coded by the rank of their documented levels (see RESULTS.md, "car").

    cargo build --release
    python3 benchmarks/multiclass_table.py [--shuffles 5] [--jobs 2] [--datasets DIR]

Results of each replay are cached in `--cache` (JSON lines), so an interrupted run resumes.
"""
import concurrent.futures as cf, json, os, statistics, subprocess, tempfile

from bench_common import arguments, run_cached

from reproduce_jgt17 import ORDINAL

GAMMAS = ["0.3", "0.1", "0.05", "0.01", "0.001"]
ALGOS = {
    "Adaboost.OLM": ["--algo", "ada-olm", "--protocol", "jgt17"],
    "Adaboost.OLM exp": ["--algo", "ada-olm", "--protocol", "jgt17", "--loss", "exp"],
    "Adaboost.OLM square-hinge": ["--algo", "ada-olm", "--protocol", "jgt17", "--loss",
                                  "square-hinge"],
    # The authors' OnlineMBBM (`--protocol jgt17`): raw weights (not divided by k - 1) times
    # 0.1 x U[5,200], with expected-cost votes (their code) or argmax votes.
    **{f"OnlineMBBM g={g}": ["--algo", "mbbm", "--protocol", "jgt17", "--gamma", g]
       for g in GAMMAS},
    **{f"OnlineMBBM argmax g={g}": ["--algo", "mbbm", "--protocol", "jgt17", "--gamma", g,
                                    "--vote", "argmax"] for g in GAMMAS},
    # The library default normalisation w/(k - 1), expected-cost votes.
    **{f"OnlineMBBM k-1 g={g}": ["--algo", "mbbm", "--gamma", g, "--weight-scale", "0.5:20",
                                 "--vote", "expected-cost"] for g in GAMMAS},
    "Oza (MOA)": ["--algo", "oza", "--protocol", "jgt17"],
    "Oza (River)": ["--algo", "oza", "--oza-variant", "river"],
    # MOA's OzaBoost, but models with error 0 or above 1/2 are skipped instead of ending the vote.
    "Oza (MOA) skip": ["--algo", "oza", "--oza-variant", "moa", "--oza-zero-error", "skip"],
    "OvA": ["--algo", "ova", "--protocol", "jgt17"],
    "AdaOVA": ["--algo", "ada-ova", "--protocol", "jgt17"],
}
# The same boosters over the library's default trees (fixed grace 200, delta 1e-7, tau 0.05,
# naive-Bayes-adaptive leaves: River's and MOA's defaults) instead of the paper's random
# majority-class trees. OnlineMBBM at gamma = 0.1 only.
DEFAULT_TREES = ["--preset", "default"]
ALGOS.update({
    "Adaboost.OLM, default trees": ALGOS["Adaboost.OLM"] + DEFAULT_TREES,
    "OnlineMBBM g=0.1, default trees": ALGOS["OnlineMBBM g=0.1"] + DEFAULT_TREES,
    "Oza (MOA), default trees": ALGOS["Oza (MOA)"] + DEFAULT_TREES,
    "Oza (River), default trees": ALGOS["Oza (River)"] + DEFAULT_TREES,
    "Oza (MOA) skip, default trees": ALGOS["Oza (MOA) skip"] + DEFAULT_TREES,
    "OvA, default trees": ALGOS["OvA"] + DEFAULT_TREES,
    "AdaOVA, default trees": ALGOS["AdaOVA"] + DEFAULT_TREES,
})
# Adaboost.OLM at its defaults (weight scale 1), against the papers' U[5, 200] above, and
# at weight scale 1 over the other tree presets: what its defaults should be.
ALGOS["Adaboost.OLM, defaults"] = ["--algo", "ada-olm"]
ALGOS["Adaboost.OLM, moa trees"] = ["--algo", "ada-olm", "--preset", "moa"]
ALGOS["Adaboost.OLM, default-preset trees"] = ["--algo", "ada-olm", "--preset", "default"]
# OnlineMBBM at its defaults (gamma 0.1, argmax votes, weights / (k - 1), weight scale 1)
# and with the authors' raw weights times 0.1 x U[5, 200], argmax votes.
ALGOS["OnlineMBBM, defaults"] = ["--algo", "mbbm"]
ALGOS["OnlineMBBM, raw 0.5:20 argmax"] = ["--algo", "mbbm", "--weight-scale", "0.5:20",
                                          "--weight-norm", "raw", "--vote", "argmax"]
# Each learner's weights divided by their running mean (`--weight-scale unit-mean`): a tree
# under boosting grows at the pace it would alone. Over each tree preset.
for preset in ["jgt-paper", "moa", "default"]:
    suffix = "" if preset == "jgt-paper" else f", {preset} trees"
    ALGOS[f"Adaboost.OLM, unit mean{suffix}"] = ["--algo", "ada-olm", "--preset", preset,
                                                 "--weight-scale", "unit-mean"]
ALGOS["OnlineMBBM, unit mean"] = ["--algo", "mbbm", "--weight-scale", "unit-mean"]
# Oza's bagging (10 trees) over the paper's trees (its former default) and over `moa` trees.
ALGOS["OzaBag, jgt-paper trees"] = ["--algo", "oza-bag", "--preset", "jgt-paper"]
ALGOS["OzaBag, moa trees"] = ["--algo", "oza-bag", "--preset", "moa"]
ALGOS["OvA, defaults"] = ["--algo", "ova", "--weight-scale", "1"]
ALGOS["AdaOVA, defaults"] = ["--algo", "ada-ova", "--weight-scale", "1"]
ALGOS["OvA, unit mean"] = ["--algo", "ova", "--weight-scale", "unit-mean"]
ALGOS["AdaOVA, unit mean"] = ["--algo", "ada-ova", "--weight-scale", "unit-mean"]
# Each ensemble's default, and the same over the paper's trees with naive-Bayes-adaptive
# leaves (`--preset jgt-paper-nba`): whether its members should be those.
DEFAULTS = {
    "ada-olm": "Adaboost.OLM, unit mean", "mbbm": "OnlineMBBM, raw 0.5:20 argmax",
    "oza": "Oza (MOA) skip", "ova": "OvA, unit mean", "ada-ova": "AdaOVA, unit mean",
    "oza-bag": "OzaBag, jgt-paper trees",
}
ALGOS.update({f"{name}, jgt-paper-nba trees": ["--algo", algo, "--preset", "jgt-paper-nba"]
              for algo, name in DEFAULTS.items()})


def with_trees(algo, trees):
    """The `--config-json` of default `algo` at 100 members whose trees differ from its
    default by `trees` (OvA's members are boosters, AdaOVA's weak learner a bundle). A JSON
    config (`--config`) names only what differs from the algorithm's defaults."""
    if algo == "ova":
        config = {"binary": {"n_learners": 100, "weak": trees}}
    elif algo == "ada-ova":
        config = {"n_learners": 100, "weak": {"binary": trees}}
    else:
        config = {"n_learners": 100, "weak": trees}
    return ["--config-json", json.dumps({"algorithm": algo, **config})]


# Each default over jgt-paper-nba trees whose tie threshold is drawn from [0.01, 0.1] instead of
# the paper's [0.01, 0.9]: on few rows, fewer splits that the bound does not support.
NARROW_TIE = {"randomized": {"tie_threshold": [0.01, 0.1]}}
ALGOS.update({f"{name}, tie <= 0.1": with_trees(algo, NARROW_TIE)
              for algo, name in DEFAULTS.items()})
# Adaboost.OLM and OzaBag over jgt-paper-nba trees whose grace period is drawn from [5, 200]
# instead of [5, 20]: some members split at the pace of a lone default tree.
WIDE_GRACE = {"randomized": {"grace_period": [5.0, 200.0]}}
ALGOS.update({f"{name}, grace 5-200": with_trees(algo, WIDE_GRACE)
              for algo, name in DEFAULTS.items() if algo in ("ada-olm", "oza-bag")})
# Each default with its trees' fast numerics (`"numerics": "fast"`): the split search's CDF and
# entropy terms from one table instead of libm (within 1e-9), naive Bayes' Gaussian terms
# from per-leaf reciprocal variances.
ALGOS.update({f"{name}, fast numerics": with_trees(algo, {"numerics": "fast"})
              for algo, name in DEFAULTS.items()})
# OnlineMBBM, Oza and OzaBag (100 members, and OzaBag at its own 10) predicting with the
# prefix of their members that Hedge picks, led by one `moa` tree: "that tree alone" is then
# one of their experts, as in Adaboost.OLM's default.
PREFIXES_LED = ["--expert", "sample", "--lead", "moa"]
ALGOS.update({f"{name}, prefix experts led by a moa tree":
              ALGOS[f"{name}, jgt-paper-nba trees"] + PREFIXES_LED
              for algo, name in DEFAULTS.items() if algo in ("mbbm", "oza", "oza-bag")})
# AdaOVA led by one multiclass `moa` tree (its first weak learner the single tree, not a
# bundle of one-vs-rest trees).
ALGOS["AdaOVA, unit mean, led by a moa tree"] = (
    ALGOS["AdaOVA, unit mean, jgt-paper-nba trees"] + ["--lead", "moa"])
OZABAG_10 = ["--algo", "oza-bag", "--learners", "10", "--preset", "jgt-paper-nba"]
ALGOS["OzaBag (10), all members, no lead"] = OZABAG_10 + ["--expert", "last", "--lead", "none"]
ALGOS["OzaBag (10), prefix experts led by a moa tree"] = OZABAG_10 + PREFIXES_LED
ALGOS["OzaBag (10), best prefix led by a moa tree"] = OZABAG_10 + [
    "--expert", "best", "--lead", "moa"]
# One Hoeffding tree under each preset: what `--algo hoeffding` should default to.
ALGOS.update({
    f"Hoeffding tree, {preset}": ["--algo", "hoeffding", "--preset", preset]
    for preset in ["jgt-paper", "default", "moa"]
})
# Cheaper grids where a replay is long (k = 10 or 152k rows): OnlineMBBM with argmax votes at
# gamma = 0.1 only (expected-cost votes cost 13x more per row on pendigits, see RESULTS.md).
SKIP = {d: {f"OnlineMBBM{v} g={g}" for g in GAMMAS for v in ["", " argmax", " k-1"]
            if (v, g) != (" argmax", "0.1")} | {"OnlineMBBM g=0.1, default trees"}
        for d in ["optdigits", "pendigits", "satimage", "movement_partial"]}
# JGT17 Table 1 and Appendix E as quoted in PEERS.md: final 20% (whole stream).
PAPER = {
    "balance_scale": {"OLB": (0.772, 0.747), "AdaOLM": (0.754, 0.698),
                      "MBBM": (0.821, 0.769), "OvA": (0.786, 0.724)},
    "mice_protein": {"OLB": (0.399, 0.315), "AdaOLM": (0.561, 0.454),
                     "MBBM": (0.695, 0.507), "OvA": (0.742, 0.586)},
    "car": {"OLB": (0.914, 0.839), "AdaOLM": (0.930, 0.865),
            "MBBM": (0.914, 0.842), "OvA": (0.946, 0.881)},
    "mushroom": {"OLB": (1.000, 0.997), "AdaOLM": (1.000, 0.995),
                 "MBBM": (1.000, 0.995), "OvA": (1.000, 0.996)},
    "nursery": {"OLB": (0.941, 0.909), "AdaOLM": (0.966, 0.928),
                "MBBM": (0.969, 0.936), "OvA": (0.974, 0.939)},
}
# Best measured peer per set (PEERS.md, one seeded shuffle, hindsight excluded).
PEER = {
    "balance_scale": ("CapyMOA OzaBoost-HT-10", 0.904, 0.856),
    "mice_protein": ("River OzaBoost 100 rand. HT", 0.944, 0.805),
    "car": ("River OzaBoost 100 rand. HT", 0.945, 0.876),
    "mushroom": ("VW boost-logistic 100", 1.000, 0.995),
    "nursery": ("River OzaBoost 100 rand. HT", 0.989, 0.962),
}
FILES = {"mice_protein": "mice_protein/data_missing0.csv"}
PAPER_SETS = ["balance_scale", "mice_protein", "car", "mushroom", "nursery"]
EXTRA_SETS = ["optdigits", "pendigits", "satimage", "movement_partial"]


def replay(binary, path, flags, shuffle):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        if flags[0] == "--config-json":
            config = os.path.join(tmp, "config.json")
            open(config, "w").write(flags[1])
            flags = ["--config", config] + flags[2:]
            return run_replay(binary, path, flags, shuffle, report)
        # Boosters get 100 jgt-paper trees unless the flags say otherwise; the command refuses
        # flags a single learner has no use for.
        single = flags[flags.index("--algo") + 1] in ("hoeffding", "naive-bayes", "perceptron")
        booster = [] if single else (
            ([] if "--learners" in flags else ["--learners", "100"])
            + ([] if "--preset" in flags else ["--preset", "jgt-paper"]))
        return run_replay(binary, path, flags + booster, shuffle, report)


def run_replay(binary, path, flags, shuffle, report):
    subprocess.run([binary, "replay", "--input", path, "--shuffle", str(shuffle), "--seed",
                    str(shuffle), "-q", "--report", report] + flags,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = json.load(open(report))
    return {"final": r["final_fraction"]["accuracy"], "whole": r["cumulative"]["accuracy"],
            "rows_per_second": r["throughput"]["rows_per_second"]}


def data_flags(name):
    coding = [f for level in ORDINAL.get(name, []) for f in ("--ordinal", level)]
    return FILES.get(name, f"{name}/data.csv"), coding


def main():
    ap = arguments(shuffles=5, jobs=True, cache="target/multiclass_table.jsonl")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--algos", nargs="*", default=None, help="subset of the algorithm names")
    ap.add_argument("--report-only", action="store_true", help="print the cached results")
    args = ap.parse_args()
    sets = args.only or PAPER_SETS + EXTRA_SETS
    algos = {a: f for a, f in ALGOS.items() if not args.algos or a in args.algos}

    tasks = {}
    for d in sets:
        file, coding = data_flags(d)
        path = os.path.join(args.datasets, file)
        for a in algos:
            if a in SKIP.get(d, ()) or args.report_only:
                continue
            for s in range(1, args.shuffles + 1):
                tasks[(d, a, s)] = (args.binary, path, algos[a] + coding, s)
    done = run_cached(args.cache, args.jobs, ("data", "algo", "shuffle"), tasks, replay)

    def mean(d, a, key):
        rs = [done[(d, a, s)][key] for s in range(1, args.shuffles + 1) if (d, a, s) in done]
        return (statistics.mean(rs), len(rs)) if rs else (None, 0)

    def cell(d, a):
        f, n = mean(d, a, "final")
        w, _ = mean(d, a, "whole")
        return "–" if f is None else f"{f:.3f} ({w:.3f})"

    def paper(d, key):
        p = PAPER.get(d, {}).get(key)
        return f"[{p[0]:.3f} ({p[1]:.3f})]" if p else ""

    print(f"final 20% (whole stream); mean over {args.shuffles} shuffles; paper in brackets\n")
    print("| data | Adaboost.OLM | best OnlineMBBM (vote, γ) | Oza (MOA) | Oza (River) | OvA | AdaOVA | best peer |")
    print("|---|---|---|---|---|---|---|---|")
    for d in sets:
        # The authors' OnlineMBBM (raw weights) at its best gamma and vote rule.
        mbbm = [(mean(d, f"OnlineMBBM{v} g={g}", "final")[0], f"OnlineMBBM{v} g={g}",
                 f"{'argmax' if v else 'exp. cost'}, γ={g}")
                for g in GAMMAS for v in ["", " argmax"]]
        mbbm = [m for m in mbbm if m[0] is not None]
        best = max(mbbm) if mbbm else None
        mbbm_cell = f"{cell(d, best[1])} {best[2]}" if best else "–"
        peer = PEER.get(d)
        peer_cell = f"{peer[1]:.3f} ({peer[2]:.3f}) {peer[0]}" if peer else "–"
        print(f"| {d} | {cell(d, 'Adaboost.OLM')} {paper(d, 'AdaOLM')} | {mbbm_cell} "
              f"{paper(d, 'MBBM')} | {cell(d, 'Oza (MOA)')} {paper(d, 'OLB')} | "
              f"{cell(d, 'Oza (River)')} | {cell(d, 'OvA')} {paper(d, 'OvA')} | "
              f"{cell(d, 'AdaOVA')} | {peer_cell} |")
    print("\nAdaboost.OLM's surrogates (ALGORITHMS.md §4), final 20% (whole stream):\n")
    print("| data | logistic | exponential | square hinge |")
    print("|---|---|---|---|")
    for d in sets:
        print(f"| {d} | " + " | ".join(cell(d, a) for a in [
            "Adaboost.OLM", "Adaboost.OLM exp", "Adaboost.OLM square-hinge"]) + " |")
    print("\nThe same boosters over default trees (naive-Bayes-adaptive leaves), final 20% "
          "(whole stream):\n")
    print("| data | Adaboost.OLM | OnlineMBBM γ=0.1 | Oza (MOA) | Oza (River) | OvA | AdaOVA |")
    print("|---|---|---|---|---|---|---|")
    for d in sets:
        print(f"| {d} | " + " | ".join(cell(d, f"{a}, default trees") for a in [
            "Adaboost.OLM", "OnlineMBBM g=0.1", "Oza (MOA)", "Oza (River)", "OvA", "AdaOVA"])
              + " |")
    print("\nOnlineMBBM over the gamma grid, final 20%: the authors' raw weights with expected-"
          "cost votes / with argmax votes / weights divided by k - 1 with expected-cost votes:\n")
    print("| data | " + " | ".join(f"γ={g}" for g in GAMMAS) + " |")
    print("|---|" + "---|" * len(GAMMAS))

    def grid(d, g):
        vals = [mean(d, f"OnlineMBBM{v} g={g}", "final")[0] for v in ["", " argmax", " k-1"]]
        return " / ".join("–" if x is None else f"{x:.3f}" for x in vals)
    for d in sets:
        print(f"| {d} | " + " | ".join(grid(d, g) for g in GAMMAS) + " |")
    print("\nOza with models of error 0 or above 1/2 skipped instead of ending the vote, final 20% "
          "(whole stream):\n")
    print("| data | Oza (MOA) | Oza (MOA) skip | Oza (MOA), default trees | "
          "Oza (MOA) skip, default trees |")
    print("|---|---|---|---|---|")
    for d in sets:
        print(f"| {d} | " + " | ".join(cell(d, a) for a in [
            "Oza (MOA)", "Oza (MOA) skip", "Oza (MOA), default trees",
            "Oza (MOA) skip, default trees"]) + " |")
    print("\nAdaboost.OLM at its defaults (weight scale 1) and with the papers' U[5, 200], "
          "final 20% (whole stream):\n")
    print("| data | weight scale 1 | U[5, 200] | scale 1, moa trees | scale 1, default trees |")
    print("|---|---|---|---|---|")
    for d in sets:
        print(f"| {d} | {cell(d, 'Adaboost.OLM, defaults')} | {cell(d, 'Adaboost.OLM')} | "
              f"{cell(d, 'Adaboost.OLM, moa trees')} | "
              f"{cell(d, 'Adaboost.OLM, default-preset trees')} |")
    print("\nOnlineMBBM at its defaults and with the authors' raw weights (γ = 0.1, argmax "
          "votes), final 20% (whole stream):\n")
    print("| data | defaults | raw weights, 0.1 x U[5, 200] |")
    print("|---|---|---|")
    for d in sets:
        print(f"| {d} | {cell(d, 'OnlineMBBM, defaults')} | "
              f"{cell(d, 'OnlineMBBM, raw 0.5:20 argmax')} |")
    print("\nOne Hoeffding tree under each preset (`--algo hoeffding --preset P`), final 20% "
          "(whole stream):\n")
    print("| data | jgt-paper | default | moa |")
    print("|---|---|---|---|")
    for d in sets:
        print(f"| {d} | " + " | ".join(cell(d, f"Hoeffding tree, {p}")
                                       for p in ["jgt-paper", "default", "moa"]) + " |")
    def pairs(title, left, right):
        """Each default's final-20% mean under the variant named `left(name)` / `right(name)`."""
        print(f"\n{title}, final 20%:\n")
        print("| algorithm | " + " | ".join(sets) + " |")
        print("|---|" + "---|" * len(sets))
        for algo, name in DEFAULTS.items():
            def pair(d):
                ab = (mean(d, left(name), "final")[0], mean(d, right(name), "final")[0])
                return " / ".join("–" if x is None else f"{x:.3f}" for x in ab)
            print(f"| {algo} | " + " | ".join(pair(d) for d in sets) + " |")
    pairs("Each default over jgt-paper trees (majority leaves) / over jgt-paper-nba trees "
          "(naive-Bayes-adaptive leaves)", lambda n: n, lambda n: f"{n}, jgt-paper-nba trees")
    pairs("Each default over jgt-paper-nba trees (tie threshold from [0.01, 0.9]) / with the "
          "tie threshold from [0.01, 0.1]", lambda n: f"{n}, jgt-paper-nba trees",
          lambda n: f"{n}, tie <= 0.1")
    pairs("Each default with exact numerics / with fast numerics",
          lambda n: f"{n}, jgt-paper-nba trees", lambda n: f"{n}, fast numerics")
    print("\nEach algorithm asked for (`--algos`), final 20% (whole stream):\n")
    print("| algorithm | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for a in algos:
        print(f"| {a} | " + " | ".join(cell(d, a) for d in sets) + " |")
    print("\nMean rows/s:\n")
    print("| data | " + " | ".join(algos) + " |")
    print("|---|" + "---|" * len(algos))
    for d in sets:
        print(f"| {d} | " + " | ".join(
            "–" if mean(d, a, "rows_per_second")[0] is None
            else f"{mean(d, a, 'rows_per_second')[0]:,.0f}" for a in algos) + " |")


if __name__ == "__main__":
    main()
