#!/usr/bin/env python3
"""Multi-label ranking side by side on JT18's splits: streamboost's Ada.OLMR and OnlineBMR
against River's binary relevance (one Hoeffding tree per label) and classifier chain.

Protocol ([JT], ALGORITHMS.md §13): original train/test split in file order; every row is
scored, then learnt; the rank loss (ties ½) is averaged over the test rows. River's score of
a label is its model's probability that the label is relevant. Speed is rows per CPU-second
of the score+learn loop: streamboost's own report (parsing excluded) and
`time.process_time()` around River's loop (rows pre-built as dicts). River is installed
from PyPI into a throwaway virtual environment (`--venv`, created on first use).

    cargo build --release
    python3 benchmarks/peers_multilabel.py [--datasets DIR] [--sets emotions scene yeast]
"""
import argparse, csv, json, os, subprocess, sys, tempfile

RIVER = "river==0.26.1"

RIVER_LOOP = r'''
import csv, json, sys, time
from river import tree, multioutput

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
if kind == "br":
    models = {l: tree.HoeffdingTreeClassifier() for l in labels}
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


def streamboost(binary, folder, algo, extra):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        subprocess.run([binary, "replay", "--input", os.path.join(folder, "train.csv"), "--test",
                        os.path.join(folder, "test.csv"), "--algo", algo, "--learners", "100",
                        "--seed", "1", "-q", "--report", report] + extra,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = json.load(open(report))
    return {"test_rank_loss": r["test"]["rank_loss"],
            "rows_per_second": r["throughput"]["rows_per_second"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=os.environ.get("STREAMBOOST_DATASETS", "../shared/datasets"))
    ap.add_argument("--binary", default="target/release/streamboost")
    ap.add_argument("--venv", default="/tmp/peers-venv")
    ap.add_argument("--sets", nargs="*", default=["emotions", "scene", "yeast", "mediamill_reduced"])
    ap.add_argument("--river", nargs="*", default=["br"], help="br and/or cc (classifier chain)")
    args = ap.parse_args()
    py = ensure_venv(args.venv)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(RIVER_LOOP)
        loop = f.name
    print("| data | Ada.OLMR | OnlineBMR γ=0.1 | " + " | ".join(
        f"River {k.upper()} HT" for k in args.river) + " | Ada.OLMR rows/s ÷ best River rows/s |")
    print("|---|---|---|" + "---|" * len(args.river) + "---|")
    for d in args.sets:
        folder = os.path.join(args.datasets, d)
        ours = {
            "ada": streamboost(args.binary, folder, "ada-olmr", ["--weight-scale", "3:10"]),
            "bmr": streamboost(args.binary, folder, "bmr", ["--weight-scale", "3:10"]),
        }
        peers = {}
        for kind in args.river:
            out = subprocess.run([py, loop, os.path.join(folder, "train.csv"),
                                  os.path.join(folder, "test.csv"), kind],
                                 capture_output=True, text=True)
            peers[kind] = json.loads(out.stdout) if out.returncode == 0 else None
        cell = lambda r: "failed" if r is None else \
            f"{r['test_rank_loss']:.4f} ({r['rows_per_second']:,.0f} rows/s)"
        fastest = max((p["rows_per_second"] for p in peers.values() if p), default=None)
        ratio = f"{ours['ada']['rows_per_second'] / fastest:.1f}" if fastest else "–"
        print(f"| {d} | {cell(ours['ada'])} | {cell(ours['bmr'])} | "
              + " | ".join(cell(peers[k]) for k in args.river) + f" | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
