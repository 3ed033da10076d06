#!/usr/bin/env python3
"""Recovery after each abrupt change of a drifting stream: rows from the change until the
accuracy of the rows since it (the last 1,000 of them, at least 100) is back within 0.01 of
the accuracy of the 1,000 rows before it; and whole-stream and final-20% accuracy. streamboost's models (`replay --synth SPEC
--predictions`) and, where River is installed, its drift-aware models on the same rows
(`peers_drift.py`'s), test-then-train in file order.

    python3 benchmarks/drift_recovery.py [--binary target/release/streamboost] [--river] \
        agrawal:rows=100000 --changes 33333,66666 [--models "oza-bag, lead wakes" ...]
"""
import argparse, csv, os, subprocess, tempfile

from bench_common import accuracies

WINDOW, LEAST, TOLERANCE = 1000, 100, 0.01
MODELS = {
    "oza-bag": ["--algo", "oza-bag", "--drift-detector", "none"],
    "oza-bag, adwin": ["--algo", "oza-bag", "--drift-detector", "adwin"],
    "ada-olm": ["--algo", "ada-olm", "--drift-detector", "none"],
    "ada-olm, adwin": ["--algo", "ada-olm", "--drift-detector", "adwin"],
    # The algorithms' defaults: an adaptive lead that wakes the members' response (the
    # lead alone, measured with builds before the wake, is in RESULTS.md's history).
    "oza-bag, lead wakes": ["--algo", "oza-bag"],
    "ada-olm, lead wakes": ["--algo", "ada-olm"],
    "default": [],
    "default, adwin": ["--drift-detector", "adwin"],
}


def recovery(hits, change, end):
    """Rows after `change` (before `end`) until the recovered accuracy, or None."""
    before = hits[max(0, change - WINDOW):change]
    level = sum(before) / len(before)
    right = 0
    for r in range(change, end):
        right += hits[r]
        if r - WINDOW >= change:
            right -= hits[r - WINDOW]
        n = min(r - change + 1, WINDOW)
        if n >= LEAST and right / n >= level - TOLERANCE:
            return r - change + 1
    return None


def ours(binary, spec, flags, tmp):
    path = os.path.join(tmp, "p.csv")
    subprocess.run([binary, "replay", "-q", "--synth", spec, *flags, "--predictions", path],
                   check=True, capture_output=True)
    with open(path) as f:
        return [r["label"] == r["prediction"] for r in csv.DictReader(f)]


def river_hits(binary, spec, tmp):
    from peers_drift import MODELS as RIVER, prequential, rows
    path = os.path.join(tmp, "stream.csv")
    subprocess.run([binary, "synth", spec, "-o", path], check=True)
    data = list(rows(path))
    for name, make in RIVER.items():
        yield name, prequential(make, data)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/streamboost")
    ap.add_argument("--river", action="store_true")
    ap.add_argument("--changes", required=True, help="rows of the abrupt changes, e.g. 33333,66666")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("spec")
    args = ap.parse_args()
    changes = [int(c) for c in args.changes.split(",")]
    print("| stream | model | whole stream | final 20% | "
          + " | ".join(f"rows to recover after {c:,}" for c in changes) + " |")
    print("|---|---|---|---|" + "---|" * len(changes))
    with tempfile.TemporaryDirectory() as tmp:
        runs = ((name, ours(args.binary, args.spec, flags, tmp)) for name, flags in MODELS.items()
                if name in args.models)
        if args.river:
            import itertools
            runs = itertools.chain(runs, river_hits(args.binary, args.spec, tmp))
        for name, hits in runs:
            ends = changes[1:] + [len(hits)]
            cells = [recovery(hits, c, e) for c, e in zip(changes, ends)]
            cells = [f"{r:,}" if r is not None else "not before the next" for r in cells]
            whole, final = accuracies(hits)
            print(f"| `{args.spec}` | {name} | {whole:.4f} | {final:.4f} | " + " | ".join(cells)
                  + " |", flush=True)


if __name__ == "__main__":
    main()
