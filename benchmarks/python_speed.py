"""Speed from Python, one script: streamboost's River-style loop and its Arrow batch path
beside River's ARF-10 and AdaBoost over 10 trees, and beside the command line's replay.

    pip install ./python river          # a release build of the package
    cargo build --release               # the command line, for the replay beside it
    STREAMBOOST_BIN=target/release/streamboost python benchmarks/python_speed.py [SETS...]

Every contender sees the same rows in file order, test-then-train: River's loop
(``predict_one`` then ``learn_one``, one dict a row), streamboost's loop (the same calls),
streamboost's batch path (``score``: the rows as one Arrow table, predicted then learnt as
``replay`` does) and ``streamboost replay`` on the file (its report's rows/s: the replay alone,
without reading the file or starting the process). Rows per second are wall-clock on one
machine in one run; the ratios are what to read. Data sets come from STREAMBOOST_DATASETS
(default ../shared/datasets); the bundled car is always there.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import pyarrow.csv as pv
from river import ensemble, forest, tree

import streamboost as sb

REPO = pathlib.Path(__file__).resolve().parents[1]
DATASETS = pathlib.Path(os.environ.get("STREAMBOOST_DATASETS", REPO.parent / "shared" / "datasets"))
CLI = os.environ.get("STREAMBOOST_BIN", str(REPO / "target" / "release" / "streamboost"))


def path_of(name: str) -> pathlib.Path:
    return REPO / "data" / "car.csv" if name == "car" else DATASETS / name / "data.csv"


def loop(model, rows) -> tuple[float, float]:
    """Rows/s and accuracy of River's protocol over `rows`."""
    correct = 0
    start = time.perf_counter()
    for x, y in rows:
        correct += model.predict_one(x) == y
        model.learn_one(x, y)
    seconds = time.perf_counter() - start
    return len(rows) / seconds, correct / len(rows)


def batch(model, table) -> tuple[float, float]:
    """Rows/s and accuracy of `score` over the whole table."""
    start = time.perf_counter()
    scored = model.score(table, label="label")
    seconds = time.perf_counter() - start
    truth = table.column("label").to_pylist()
    predicted = scored.column("predicted_label").to_pylist()
    return table.num_rows / seconds, sum(map(str.__eq__, map(str, truth), map(str, predicted))) / len(truth)


def replay(path, algo_flags) -> tuple[float, float]:
    """Rows/s (the report's) and accuracy of `streamboost replay` on the file."""
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "report.json"
        subprocess.run(
            [CLI, "replay", "-q", "--input", str(path), *algo_flags, "--report", str(report)],
            check=True,
            capture_output=True,
        )
        r = json.loads(report.read_text())
    return r["throughput"]["rows_per_second"], r["cumulative"]["accuracy"]


def main(names):
    print(f"streamboost {sb.__version__}, python {sys.version.split()[0]}")
    header = "| set | rows | contender | rows/s | accuracy | ÷ River ARF-10 rows/s |"
    print(header)
    print("|" + "---|" * 6)
    for name in names:
        path = path_of(name)
        if not path.exists():
            print(f"| {name} | skipped: {path} not found |")
            continue
        table = pv.read_csv(path)
        X = table.drop_columns(["label"])
        labels = [str(v) for v in table.column("label").to_pylist()]
        rows = list(zip(X.to_pylist(), labels))
        n = len(rows)
        results = []
        arf = loop(forest.ARFClassifier(n_models=10, seed=1), rows)
        results.append(("River ARFClassifier(n_models=10), loop", arf))
        results.append((
            "River AdaBoostClassifier(10 Hoeffding trees), loop",
            loop(ensemble.AdaBoostClassifier(tree.HoeffdingTreeClassifier(), n_models=10, seed=1), rows),
        ))
        for label, make, flags in [
            ("streamboost Ova() (the default)", sb.Ova, []),
            ("streamboost Oza(n_learners=10)", lambda: sb.Oza(n_learners=10), ["--algo", "oza", "--learners", "10"]),
        ]:
            results.append((f"{label}, loop", loop(make(), rows)))
            results.append((f"{label}, score(table)", batch(make(), table)))
            results.append((f"streamboost replay {' '.join(flags) or '(default)'}", replay(path, flags)))
        for contender, (rate, accuracy) in results:
            print(f"| {name} | {n} | {contender} | {rate:,.0f} | {accuracy:.4f} | {rate / arf[0]:.1f}× |")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:] or ["car", "nursery", "pendigits"])
