"""CapyMOA's (MOA's) drift-aware models on the drifting streams `streamboost synth` generates
(the rows `replay --synth` replays, so `drift_streams.sh`'s tables and this one are on the
same data): whole-stream and final-20% accuracy, test-then-train, rows per CPU-second of
the whole process (the JVM runs inside it), and, for streams with abrupt changes, the rows
each model takes to recover after each change (window 1,000, as `drift_recovery.py`
measures ours).

    python3 benchmarks/peers_drift_moa.py [--binary target/release/streamboost] [SPEC ...]
        [--models ARF-10 LB-10 SRP-10 HAT SGBT]

Needs CapyMOA and a JRE (`pip install capymoa==0.15.1`; `apt-get install
default-jre-headless`). Each model runs at CapyMOA's defaults but for the ensemble size
(10, as the forests of PEERS.md) and the seed (1)."""
import argparse, csv, os, subprocess, tempfile, time

from bench_common import accuracies

SPECS = ["agrawal:rows=100000", "sea:rows=100000:drift=abrupt", "hyperplane:rows=100000",
         "rbf:rows=100000", "led:rows=100000"]


def models():
    from capymoa.classifier import (AdaptiveRandomForestClassifier, HoeffdingAdaptiveTree,
                                    LeveragingBagging, StreamingGradientBoostedTrees,
                                    StreamingRandomPatches)
    return {
        "ARF-10": lambda s: AdaptiveRandomForestClassifier(s, ensemble_size=10, random_seed=1),
        "LB-10": lambda s: LeveragingBagging(s, ensemble_size=10, random_seed=1),
        "SRP-10": lambda s: StreamingRandomPatches(s, ensemble_size=10, random_seed=1),
        "HAT": lambda s: HoeffdingAdaptiveTree(s, random_seed=1),
        "SGBT": lambda s: StreamingGradientBoostedTrees(s, random_seed=1),
    }


def to_arff(csv_path, arff_path):
    """The CSV `synth` writes as ARFF: numeric columns numeric, the others (Agrawal's elevel,
    car and zipcode) nominal, the label last and nominal. Returns the number of rows."""
    with open(csv_path) as f:
        reader = csv.reader(f)
        header = next(reader)
        data = list(reader)
    label = header.index("label")
    order = [i for i in range(len(header)) if i != label] + [label]

    def numeric(i):
        try:
            for r in data:
                float(r[i])
            return True
        except ValueError:
            return False

    with open(arff_path, "w") as out:
        out.write("@relation stream\n")
        for i in order:
            if i != label and numeric(i):
                out.write(f"@attribute {header[i]} numeric\n")
            else:
                values = sorted({r[i] for r in data})
                out.write(f"@attribute {header[i]} {{{','.join(values)}}}\n")
        out.write("@data\n")
        for r in data:
            out.write(",".join(r[i] for i in order) + "\n")
    return len(data)


def changes(spec, n):
    """Rows of the abrupt changes in `spec` (recovery is measured after each), or none."""
    kind = spec.split(":")[0]
    if "drift=gradual" in spec or "drift=recurring" in spec:
        return []
    if kind == "agrawal":
        return [n // 3, 2 * n // 3]
    if kind == "sea":
        return [n // 4, n // 2, 3 * n // 4]
    if kind == "led":
        return [n // 2]
    return []


def recovery(hits, at, window=1000):
    """Rows after the change at `at` until the windowed accuracy is back within 0.01 of
    the window before the change (`None`: never)."""
    if at < window:
        return None
    before = sum(hits[at - window:at]) / window
    for end in range(at + window, len(hits) + 1, 100):
        if sum(hits[end - window:end]) / window >= before - 0.01:
            return end - at
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/streamboost")
    ap.add_argument("--models", nargs="+", default=None)
    ap.add_argument("specs", nargs="*", default=SPECS)
    args = ap.parse_args()
    from capymoa.evaluation import prequential_evaluation
    from capymoa.stream import ARFFStream
    chosen = {k: v for k, v in models().items() if args.models is None or k in args.models}
    print("| stream | model | whole stream | final 20% | CPU s | rows / CPU s | "
          "recovery after each change (rows) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs:
            path = os.path.join(tmp, "stream.csv")
            subprocess.run([args.binary, "synth", spec, "-o", path], check=True)
            arff = os.path.join(tmp, "stream.arff")
            n = to_arff(path, arff)
            for name, make in chosen.items():
                stream = ARFFStream(arff)
                learner = make(stream.get_schema())
                start = time.process_time()
                results = prequential_evaluation(stream, learner, store_predictions=True,
                                                 store_y=True, window_size=1000)
                cpu = time.process_time() - start
                hits = [p == y for p, y in zip(results.predictions(), results.ground_truth_y())]
                assert len(hits) == n, (len(hits), n)
                whole, final = accuracies(hits)
                rec = [recovery(hits, at) for at in changes(spec, n)]
                rec = ", ".join("never" if r is None else f"{r:,}" for r in rec)
                print(f"| `{spec}` | CapyMOA {name} | {whole:.4f} | {final:.4f} | {cpu:.1f} | "
                      f"{n / cpu:,.0f} | {rec} |", flush=True)


if __name__ == "__main__":
    main()
