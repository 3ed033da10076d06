#!/usr/bin/env python3
"""The fixed train/test splits of the [MS] comparison, as CSV files both streamboost and
scikit-learn read: optdigits (UCI's 3,823 training rows, then its 1,797 test rows),
satimage (4,435 / 2,000), adult (its own train.csv / test.csv), and car, nursery and
pendigits with a seeded 70/30 split (Python's random.Random(0); both parts keep file order).

    benchmarks/batch/splits.py OUT_DIR    # writes OUT_DIR/<set>/train.csv, test.csv
"""
import csv
import os
import random
import sys

DATASETS = os.environ.get("STREAMBOOST_DATASETS", "../shared/datasets")
FIXED = {"optdigits": 3823, "satimage": 4435}
SEEDED = ["car", "nursery", "pendigits"]


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def write(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def main(out):
    for name, n in FIXED.items():
        header, rows = read(f"{DATASETS}/{name}/data.csv")
        write(f"{out}/{name}/train.csv", header, rows[:n])
        write(f"{out}/{name}/test.csv", header, rows[n:])
    for part in ["train", "test"]:
        header, rows = read(f"{DATASETS}/adult/{part}.csv")
        write(f"{out}/adult/{part}.csv", header, rows)
    for name in SEEDED:
        header, rows = read(f"{DATASETS}/{name}/data.csv")
        # A seeded draw of 30% of the rows (Python's Mersenne Twister, seed 0).
        rng = random.Random(0)
        test = set(rng.sample(range(len(rows)), round(0.3 * len(rows))))
        write(f"{out}/{name}/train.csv", header, [r for i, r in enumerate(rows) if i not in test])
        write(f"{out}/{name}/test.csv", header, [r for i, r in enumerate(rows) if i in test])


if __name__ == "__main__":
    main(sys.argv[1])
