#!/usr/bin/env python3
"""The default model (`streamboost replay` with no `--algo`) beside the strongest peers on
the same machine, data and row orders: CapyMOA's StreamingRandomPatches and
AdaptiveRandomForest with 10 members (MOA's defaults otherwise) and River's ARFClassifier
with 10 members. Each shuffle `s` shuffles the data set with seed `s` and writes the copy
every tool replays prequentially (predict, then learn, each row); accuracy on the final 20%
and on the whole stream, and rows per CPU-second of each tool's own loop (as in
`peers_oza.py`, whose helpers and throwaway virtual environment this reuses).

    cargo build --release
    python3 benchmarks/peers_default.py [--shuffles 5] [--sets car nursery ...] [--no-peers]

`--no-peers` runs streamboost's column alone (the peers' numbers do not change when ours do),
`--no-streamboost` the peers' alone.
"""
import json, os, statistics, subprocess, sys, tempfile

from bench_common import arguments

from peers_oza import CAPYMOA_LOOP, RIVER_LOOP, ensure_venv, peer, shuffled_copy, write_arff

RIVER_ARF = RIVER_LOOP.replace("MODEL", "forest.ARFClassifier(n_models=10, seed=1)")

CAPYMOA_SRP = CAPYMOA_LOOP.replace(
    "LEARNER", "classifier.StreamingRandomPatches(schema=schema, random_seed=1, ensemble_size=10)")
CAPYMOA_ARF = CAPYMOA_LOOP.replace(
    "LEARNER",
    "classifier.AdaptiveRandomForestClassifier(schema=schema, random_seed=1, ensemble_size=10)")

SETS = ["optdigits", "pendigits", "satimage", "movement_partial", "nursery", "car",
        "balance_scale", "mice_protein"]


def streamboost(binary, path):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        subprocess.run([binary, "replay", "--input", path, "--seed", "1", "-q", "--report",
                        report], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        r = json.load(open(report))
    return {"whole": r["cumulative"]["accuracy"], "final": r["final_fraction"]["accuracy"],
            "rows_per_second": r["throughput"]["rows_per_second"]}


def main():
    ap = arguments()
    ap.add_argument("--venv", default=os.path.join(tempfile.gettempdir(), "streamboost-peers-venv"))
    ap.add_argument("--sets", nargs="*", default=SETS)
    ap.add_argument("--shuffles", type=int, default=5)
    ap.add_argument("--no-peers", action="store_true", help="streamboost's column only")
    ap.add_argument("--no-streamboost", action="store_true", help="the peers' columns only")
    args = ap.parse_args()
    py = None if args.no_peers else ensure_venv(args.venv)
    tmp = tempfile.mkdtemp()
    systems = ["streamboost default (ova)", "CapyMOA SRP-10", "CapyMOA ARF-10",
               "River ARF-10"]
    print("final 20% (whole stream) and rows/s, mean over shuffles 1.." + str(args.shuffles))
    print()
    print("| data | " + " | ".join(systems) + " |")
    print("|---" * (len(systems) + 1) + "|")
    for name in args.sets:
        runs = {s: [] for s in systems}
        for seed in range(1, args.shuffles + 1):
            csv_path = os.path.join(tmp, f"{name}.csv")
            header, body = shuffled_copy(os.path.join(args.datasets, name, "data.csv"),
                                         csv_path, seed)
            if not args.no_streamboost:
                runs[systems[0]].append(streamboost(args.binary, csv_path))
            if args.no_peers:
                continue
            arff_path = os.path.join(tmp, f"{name}.arff")
            write_arff(header, body, "label", arff_path)
            n = len(body)
            runs[systems[1]].append(peer(py, CAPYMOA_SRP, arff_path, n))
            runs[systems[2]].append(peer(py, CAPYMOA_ARF, arff_path, n))
            runs[systems[3]].append(peer(py, RIVER_ARF, csv_path, "label"))
        cells = []
        for s in systems:
            if not runs[s]:
                cells.append("–")
                continue
            m = lambda key: statistics.mean(r[key] for r in runs[s])
            cells.append(f"{m('final'):.3f} ({m('whole'):.3f}), {m('rows_per_second'):,.0f}/s")
        print(f"| {name} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
