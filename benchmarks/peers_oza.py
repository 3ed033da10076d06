#!/usr/bin/env python3
"""Oza boosting with 10 Hoeffding trees, side by side on the same machine, data and row order:
streamboost (`--algo oza`), River's `AdaBoostClassifier(HoeffdingTreeClassifier(),
n_models=10)` and CapyMOA's `OzaBoost` (MOA, 10 `HoeffdingTree`s). With `--models tree`
(or `--models oza tree`), also one Hoeffding tree: streamboost's `--algo hoeffding` against
River's `HoeffdingTreeClassifier()` and CapyMOA's `HoeffdingTree`. With `--models ada-olm`,
streamboost's `--algo ada-olm` at its defaults (100 trees) beside the same two OzaBoosts:
the boosters a user would reach for in each library, not the same model.

The script installs River and CapyMOA from PyPI into a throwaway virtual environment
(`--venv`, created on first use; CapyMOA needs a Java runtime), shuffles each data set once
with a seed and writes the shuffled copy, then every tool replays that copy prequentially
(predict, then learn, each row). Trees use each library's defaults (grace 200, delta 1e-7,
tau 0.05, naive-Bayes-adaptive leaves; streamboost's `--preset default` is the same
parameter set, and `--preset moa` adds MOA's unbiased variance and naive Bayes likelihoods
under degenerate Gaussians). streamboost runs River's variant against River and MOA's
against CapyMOA.

Speed is rows per CPU-second of the predict+learn loop only: streamboost's own report
(parsing excluded), `time.process_time()` around River's loop (rows pre-built as dicts), and
CapyMOA's `cpu_time()` of its Java evaluation loop. streamboost runs on one thread
(`RAYON_NUM_THREADS=1`), so its rows per second are per CPU-second too.

    cargo build --release
    python3 benchmarks/peers_oza.py [--datasets DIR] [--sets car nursery pendigits] [--preset moa]
        [--models oza tree ada-olm]
"""
import csv, json, os, random, subprocess, sys, tempfile, time

from bench_common import arguments

PEERS = ["river==0.26.1", "capymoa==0.15.1"]


def ensure_venv(venv):
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q"] + PEERS, check=True)
    return py


def shuffled_copy(src, dst, seed):
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    random.Random(seed).shuffle(body)
    with open(dst, "w", newline="") as f:
        csv.writer(f).writerows([header] + body)
    return header, body


def is_number(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def write_arff(header, body, label, path):
    """ARFF for MOA: nominal attributes where any value is not a number (as streamboost's
    type inference decides), the class last."""
    cols = [c for c in header if c != label] + [label]
    idx = [header.index(c) for c in cols]
    with open(path, "w") as f:
        f.write("@relation data\n")
        for c, i in zip(cols, idx):
            values = sorted({r[i] for r in body if r[i] != ""})
            if c == label or not all(is_number(v) for v in values):
                f.write(f"@attribute {c} {{{','.join(values)}}}\n")
            else:
                f.write(f"@attribute {c} numeric\n")
        f.write("@data\n")
        for r in body:
            f.write(",".join(r[i] if r[i] != "" else "?" for i in idx) + "\n")


# River's prequential loop over a CSV; `{model}` is the model expression (imports:
# `ensemble`, `forest`, `tree`).
RIVER_LOOP = r"""
import csv, json, sys, time
from river import ensemble, forest, tree
path, label = sys.argv[1], sys.argv[2]
with open(path, newline="") as f:
    rows = list(csv.DictReader(f))
def number(v):
    try:
        float(v)
        return True
    except ValueError:
        return False
# A column is numeric only if all its values are numbers (the ARFF and streamboost rule).
numeric = {k for k in rows[0] if k != label and all(number(r[k]) for r in rows if r[k] != "")}
data = [({k: float(v) if k in numeric else v for k, v in r.items() if k != label and v != ""},
         r[label]) for r in rows]
model = MODEL
n = len(data); final = int(n * 0.8); right = right_final = 0
start = time.process_time()
for i, (x, y) in enumerate(data):
    hit = model.predict_one(x) == y
    right += hit
    right_final += hit and i >= final
    model.learn_one(x, y)
cpu = time.process_time() - start
print(json.dumps({"whole": right / n, "final": right_final / (n - final), "rows_per_second": n / cpu}))
"""

RIVER = {
    "oza": RIVER_LOOP.replace(
        "MODEL",
        "ensemble.AdaBoostClassifier(model=tree.HoeffdingTreeClassifier(), n_models=10, seed=1)"),
    "tree": RIVER_LOOP.replace("MODEL", "tree.HoeffdingTreeClassifier()"),
}

# CapyMOA's prequential evaluation over an ARFF file of `n` rows; `LEARNER` is the learner
# expression (names: `classifier`, `schema`).
CAPYMOA_LOOP = r"""
import json, sys
from capymoa import classifier
from capymoa.stream import ARFFStream
from capymoa.evaluation import prequential_evaluation
path, n = sys.argv[1], int(sys.argv[2])
stream = ARFFStream(path)
schema = stream.get_schema()
learner = LEARNER
res = prequential_evaluation(stream, learner, window_size=max(1, n - int(n * 0.8)),
                             store_predictions=True, store_y=True)
pred, y = res.predictions(), res.ground_truth_y()
final = int(n * 0.8)
hits = [p == t for p, t in zip(pred, y)]
print(json.dumps({"whole": sum(hits) / n, "final": sum(hits[final:]) / (n - final),
                  "rows_per_second": n / res.cpu_time()}))
"""

CAPYMOA = {
    "oza": CAPYMOA_LOOP.replace(
        "LEARNER", "classifier.OzaBoost(schema=schema, random_seed=1, boosting_iterations=10)"),
    "tree": CAPYMOA_LOOP.replace("LEARNER", "classifier.HoeffdingTree(schema=schema)"),
}

RIVER["ada-olm"], CAPYMOA["ada-olm"] = RIVER["oza"], CAPYMOA["oza"]

# What each peer's model is called in the table.
PEER_NAMES = {
    "ada-olm": ("River AdaBoostClassifier", "CapyMOA OzaBoost"),
    "oza": ("River AdaBoostClassifier", "CapyMOA OzaBoost"),
    "tree": ("River HoeffdingTreeClassifier", "CapyMOA HoeffdingTree"),
}


def streamboost(binary, path, model, variant, preset):
    """streamboost's replay of `path`: Oza (River's or MOA's `variant`) over 10 trees, or one
    tree; `preset` is the trees' preset, MOA's own for the tree beside CapyMOA's."""
    if model == "ada-olm":
        flags = ["--algo", "ada-olm"]
    elif model == "oza":
        flags = ["--algo", "oza", "--oza-variant", variant, "--learners", "10",
                 "--preset", preset]
    else:
        flags = ["--algo", "hoeffding", "--preset", "moa" if variant == "moa" else preset]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        subprocess.run([binary, "replay", "--input", path, *flags, "--seed", "1",
                        "-q", "--report", report], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env={**os.environ, "RAYON_NUM_THREADS": "1"})
        r = json.load(open(report))
    return {"whole": r["cumulative"]["accuracy"], "final": r["final_fraction"]["accuracy"],
            "rows_per_second": r["throughput"]["rows_per_second"]}


def speed_ratio(ours, theirs):
    """streamboost's rows/s over the peer's, to two figures below 10."""
    ratio = ours["rows_per_second"] / theirs["rows_per_second"]
    return f"{ratio:.2f}×" if ratio < 10 else f"{ratio:,.0f}×"


def peer(py, script, *args):
    out = subprocess.run([py, "-c", script, *map(str, args)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = arguments()
    ap.add_argument("--venv", default=os.path.join(tempfile.gettempdir(), "streamboost-peers-venv"))
    ap.add_argument("--sets", nargs="*", default=["car", "nursery", "pendigits"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--preset", default="default",
                    help="streamboost's tree preset (default: River's defaults; moa: MOA's)")
    ap.add_argument("--models", nargs="*", default=["oza"], choices=["oza", "tree", "ada-olm"],
                    help="Oza over 10 trees, one tree, Adaboost.OLM at its defaults")
    args = ap.parse_args()
    py = ensure_venv(args.venv)
    tmp = tempfile.mkdtemp()
    print("| data | rows | system | final 20% | whole stream | rows/s | streamboost ÷ peer (speed) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.sets:
        csv_path = os.path.join(tmp, f"{name}.csv")
        header, body = shuffled_copy(os.path.join(args.datasets, name, "data.csv"), csv_path,
                                     args.seed)
        arff_path = os.path.join(tmp, f"{name}.arff")
        write_arff(header, body, "label", arff_path)
        n = len(body)
        for model in args.models:
            river_name, moa_name = PEER_NAMES[model]
            pairs = [(river_name, "river", peer(py, RIVER[model], csv_path, "label")),
                     (moa_name, "moa", peer(py, CAPYMOA[model], arff_path, n))]
            for label, variant, theirs in pairs:
                ours = streamboost(args.binary, csv_path, model, variant, args.preset)
                ours_name = {"oza": "oza", "tree": "hoeffding"}.get(model, model)
                ours_label = ours_name if model == "ada-olm" else f"{ours_name} ({variant})"
                for system, r, ratio in [(f"streamboost {ours_label}", ours,
                                          speed_ratio(ours, theirs)),
                                         (label, theirs, "")]:
                    print(f"| {name} | {n} | {system} | {r['final']:.4f} | {r['whole']:.4f} | "
                          f"{r['rows_per_second']:,.0f} | {ratio} |")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
