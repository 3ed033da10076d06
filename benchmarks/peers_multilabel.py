#!/usr/bin/env python3
"""Multi-label ranking side by side on JT18's splits: streamboost's Ada.OLMR and OnlineBMR
(100 jgt-paper trees, seed 1) against River's multi-label options over Hoeffding trees:
binary relevance (one model per label: a Hoeffding tree, an adaptive random forest of 10, or
AdaBoost over 10 trees) and a classifier chain.

Protocol ([JT], ALGORITHMS.md §13): the original train/test split; every row is scored, then
learnt; the rank loss (ties ½) is averaged over the test rows. `--orders file shuf0` runs the
files in their order and with train and test each shuffled (Python's `random.Random(0)`; the
shuffled copies are fed to both libraries, so both see the same rows in the same order).
River's score of a label is its model's probability that the label is relevant. Speed is
rows per second of the score+learn loop: streamboost's own report (wall clock, parsing
excluded) and `time.process_time()` around River's loop (CPU, rows pre-built as dicts), so
a loaded machine favours River. River is installed from PyPI into a throwaway virtual
environment (`--venv`, created on first use); a River run longer than `--timeout` is given
up and reported as such.

    cargo build --release
    python3 benchmarks/peers_multilabel.py [--datasets DIR] [--sets emotions scene] [--orders file]
"""
import csv, json, os, random, subprocess, sys, tempfile

from bench_common import arguments

RIVER = "river==0.26.1"

RIVER_LOOP = r'''
import csv, json, sys, time
from river import ensemble, forest, multioutput, tree

path_train, path_test, kind = sys.argv[1], sys.argv[2], sys.argv[3]

def load(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    feats = [i for i, c in enumerate(header) if not c.startswith("label_")]
    labs = [i for i, c in enumerate(header) if c.startswith("label_")]
    out = []
    for r in rows[1:]:
        x = {header[i]: float(r[i]) for i in feats if r[i] != ""}
        y = {header[i]: r[i] == "1" for i in labs}
        out.append((x, y))
    return out, [header[i] for i in labs]

train, labels = load(path_train)
test, _ = load(path_test)
# One binary model per label (binary relevance), or a classifier chain in label order.
BINARY = {
    "br-ht": lambda: tree.HoeffdingTreeClassifier(),
    "br-arf10": lambda: forest.ARFClassifier(n_models=10, seed=1),
    "br-oza10": lambda: ensemble.AdaBoostClassifier(tree.HoeffdingTreeClassifier(), n_models=10, seed=1),
}
if kind in BINARY:
    models = {l: BINARY[kind]() for l in labels}
    def score(x):
        return {l: m.predict_proba_one(x).get(True, 0.0) for l, m in models.items()}
    def learn(x, y):
        for l, m in models.items():
            m.learn_one(x, y[l])
else:
    chain = multioutput.ClassifierChain(tree.HoeffdingTreeClassifier(), order=labels)
    def score(x):
        p = chain.predict_proba_one(x)
        return {l: (p.get(l) or {}).get(True, 0.0) for l in labels}
    def learn(x, y):
        chain.learn_one(x, y)

def rank_loss(s, y):
    rel = [l for l in labels if y[l]]
    irr = [l for l in labels if not y[l]]
    if not rel or not irr:
        return 0.0
    bad = sum(1.0 if s[r] > s[l] else 0.5 if s[r] == s[l] else 0.0 for l in rel for r in irr)
    return bad / (len(rel) * len(irr))

start = time.process_time()
for x, y in train:
    score(x)
    learn(x, y)
losses = []
for x, y in test:
    losses.append(rank_loss(score(x), y))
    learn(x, y)
seconds = time.process_time() - start
n = len(train) + len(test)
print(json.dumps({"test_rank_loss": sum(losses) / len(losses), "rows_per_second": n / seconds}))
'''


def ensure_venv(venv):
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    ok = subprocess.run([py, "-c", "import river"], capture_output=True).returncode == 0
    if not ok:
        subprocess.run([py, "-m", "pip", "install", "-q", RIVER], check=True)
    return py


# OnlineBMR's best hinge γ and weight scale per set in the JT18 table (jt18_table.py).
BMR_BEST = {
    "emotions": ["--gamma", "0.001", "--weight-scale", "3:10"],
    "scene": ["--gamma", "0.1", "--weight-scale", "6:20"],
    "yeast": ["--gamma", "0.001", "--weight-scale", "3:10"],
    "mediamill_reduced": ["--gamma", "0.001", "--weight-scale", "6:20"],
}
RIVER_NAMES = {"br-ht": "River BR HT", "cc-ht": "River CC HT", "br-arf10": "River BR ARF-10",
               "br-oza10": "River BR AdaBoost HT-10"}


def streamboost(binary, train, test, flags):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        subprocess.run([binary, "replay", "--input", train, "--test", test, "--learners", "100",
                        "--preset", "jgt-paper", "--seed", "1", "-q", "--report", report] + flags,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = json.load(open(report))
    return {"test_rank_loss": r["test"]["rank_loss"],
            "rows_per_second": r["throughput"]["rows_per_second"]}


def shuffled_copy(path, out, seed):
    """`path` with its data rows shuffled by Python's `random.Random(seed)`."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    body = rows[1:]
    random.Random(seed).shuffle(body)
    with open(out, "w", newline="") as f:
        csv.writer(f).writerows([rows[0]] + body)
    return out


def main():
    ap = arguments()
    ap.add_argument("--venv", default="/tmp/peers-venv")
    ap.add_argument("--sets", nargs="*", default=["emotions", "scene", "yeast", "mediamill_reduced"])
    ap.add_argument("--orders", nargs="*", default=["file", "shuf0"],
                    help="file order, and/or shufS: train and test each shuffled with seed S")
    ap.add_argument("--river", nargs="*", default=list(RIVER_NAMES), choices=list(RIVER_NAMES))
    ap.add_argument("--timeout", type=float, default=900,
                    help="seconds before a River run is given up (reported as such)")
    args = ap.parse_args()
    py = ensure_venv(args.venv)
    tmp = tempfile.mkdtemp()
    loop = os.path.join(tmp, "river_loop.py")
    with open(loop, "w") as f:
        f.write(RIVER_LOOP)
    print("| data | order | Ada.OLMR | best OnlineBMR | " +
          " | ".join(RIVER_NAMES[k] for k in args.river) +
          " | best River | Ada.OLMR rows/s ÷ best River's |")
    print("|---|---|---|---|" + "---|" * len(args.river) + "---|---|")
    for d in args.sets:
        for order in args.orders:
            train = os.path.join(args.datasets, d, "train.csv")
            test = os.path.join(args.datasets, d, "test.csv")
            if order != "file":
                seed = int(order.removeprefix("shuf"))
                train = shuffled_copy(train, os.path.join(tmp, f"{d}-train-{order}.csv"), seed)
                test = shuffled_copy(test, os.path.join(tmp, f"{d}-test-{order}.csv"), seed)
            ada = streamboost(args.binary, train, test, ["--algo", "ada-olmr", "--weight-scale", "3:10"])
            bmr = streamboost(args.binary, train, test, ["--algo", "bmr", "--loss", "hinge"] + BMR_BEST[d])
            peers = {}
            for kind in args.river:
                try:
                    out = subprocess.run([py, loop, train, test, kind], capture_output=True,
                                         text=True, timeout=args.timeout)
                    peers[kind] = json.loads(out.stdout) if out.returncode == 0 else "failed"
                except subprocess.TimeoutExpired:
                    peers[kind] = f"> {args.timeout:.0f} s"
            cell = lambda r: r if isinstance(r, str) else \
                f"{r['test_rank_loss']:.4f} ({r['rows_per_second']:,.0f} rows/s)"
            done = {k: p for k, p in peers.items() if not isinstance(p, str)}
            best = min(done, key=lambda k: done[k]["test_rank_loss"], default=None)
            best_cell = f"{RIVER_NAMES[best]} {done[best]['test_rank_loss']:.4f}" if best else "–"
            ratio = f"{ada['rows_per_second'] / done[best]['rows_per_second']:.1f}" if best else "–"
            print(f"| {d} | {order} | {cell(ada)} | {cell(bmr)} | "
                  + " | ".join(cell(peers[k]) for k in args.river)
                  + f" | {best_cell} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
