"""River's drift-aware models on the drifting streams `streamboost synth` generates (the rows
`replay --synth` replays, so the tables of `drift_streams.sh` and this one are on the same
data): whole-stream and final-20% accuracy, test-then-train, and rows per CPU-second.

    python3 benchmarks/peers_drift.py [--binary target/release/streamboost] [--models NAME ...] [-- SPEC ...]

Needs River (`pip install river==0.22.0`)."""
import argparse, csv, os, subprocess, tempfile, time

from river import ensemble, forest, tree

from bench_common import accuracies

SPECS = ["sea:rows=100000:drift=abrupt", "hyperplane:rows=100000", "rbf:rows=100000"]
MODELS = {
    "River ARF-10": lambda: forest.ARFClassifier(n_models=10, seed=1),
    "River LeveragingBagging-10": lambda: ensemble.LeveragingBaggingClassifier(
        tree.HoeffdingTreeClassifier(), n_models=10, seed=1),
    "River HoeffdingAdaptiveTree": lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=1),
}


def value(v):
    """A number, or a nominal attribute's category as written (agrawal's elevel, car and
    zipcode), which River's trees split on as categorical."""
    try:
        return float(v)
    except ValueError:
        return v


def rows(path):
    with open(path) as f:
        for r in csv.DictReader(f):
            y = r.pop("label")
            yield {k: value(v) for k, v in r.items()}, y


def prequential(make, data):
    """Test-then-train: whether each row was predicted right, and the CPU seconds."""
    model, hits = make(), []
    start = time.process_time()
    for x, y in data:
        hits.append(model.predict_one(x) == y)
        model.learn_one(x, y)
    return hits, time.process_time() - start



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/streamboost")
    ap.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS),
                    help="the River models to run (all by default); end the list with `--`")
    ap.add_argument("specs", nargs="*", default=SPECS)
    args = ap.parse_args()
    print("| stream | model | whole stream | final 20% | CPU s | rows / CPU s |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs:
            path = os.path.join(tmp, "stream.csv")
            subprocess.run([args.binary, "synth", spec, "-o", path], check=True)
            data = list(rows(path))
            for name in args.models:
                hits, cpu = prequential(MODELS[name], data)
                whole, final = accuracies(hits)
                print(f"| `{spec}` | {name} | {whole:.4f} | {final:.4f} | {cpu:.1f} | "
                      f"{len(data) / cpu:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
