#!/usr/bin/env python3
"""Tables of `sweep.sh`'s reports: test error after the last round against the trees'
leaves, and test error against rounds at 5 leaves.

    benchmarks/batch/table.py OUT_DIR
"""
import json
import os
import sys

SETS = ["car", "nursery", "optdigits", "satimage", "pendigits", "adult"]
LEAVES = [2, 3, 5, 10, 20]


def report(out, name, algo, leaves):
    path = f"{out}/{name}-{algo}-{leaves}.json"
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def test_error(r, round_=None):
    rounds = r["rounds"]
    row = rounds[-1] if round_ is None else rounds[min(round_, len(rounds)) - 1]
    return row.get("test_error")


def main(out):
    print("Test error after the last round (hypotheses kept in brackets when a round stopped")
    print("the booster early), by the trees' leaves; AdaBoost.MH is over stumps:\n")
    print("| set | algorithm | " + " | ".join(f"{l} leaves" for l in LEAVES) + " |")
    print("|---|---|" + "---|" * len(LEAVES))
    for name in SETS:
        for algo in ["adaboost-mm", "adaboost-m1"]:
            cells = []
            for leaves in LEAVES:
                r = report(out, name, algo, leaves)
                if r is None:
                    cells.append("")
                    continue
                kept = r["hypotheses"]
                note = "" if kept == len(r["rounds"]) and kept == r["config"]["rounds"] else f" ({kept})"
                cells.append(f"{test_error(r):.4f}{note}")
            print(f"| {name} | {algo} | " + " | ".join(cells) + " |")
        r = report(out, name, "adaboost-mh", 2)
        if r is not None:
            print(f"| {name} | adaboost-mh | {test_error(r):.4f} |" + " |" * (len(LEAVES) - 1))
    print("\nTest error against rounds, trees of 5 leaves (MH: stumps):\n")
    marks = [1, 10, 50, 100, 200, 500]
    print("| set | algorithm | " + " | ".join(f"{m}" for m in marks) + " | seconds |")
    print("|---|---|" + "---|" * (len(marks) + 1))
    for name in SETS:
        for algo, leaves in [("adaboost-mm", 5), ("adaboost-m1", 5), ("adaboost-mh", 2)]:
            r = report(out, name, algo, leaves)
            if r is None:
                continue
            cells = [f"{test_error(r, m):.4f}" for m in marks]
            print(f"| {name} | {algo} | " + " | ".join(cells) + f" | {r['seconds']:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
