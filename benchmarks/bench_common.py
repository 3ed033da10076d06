"""What the benchmark scripts share: their command-line arguments and a cache of runs."""
import argparse, concurrent.futures as cf, json, os


def arguments(shuffles=None, jobs=False, cache=None):
    """A parser with `--datasets` (default `$STREAMBOOST_DATASETS` or `../shared/datasets`)
    and `--binary` (the release build); with `shuffles`, `--shuffles` of that default; with
    `jobs`, `--jobs 2`; with `cache`, `--cache` of that default path."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=os.environ.get("STREAMBOOST_DATASETS", "../shared/datasets"))
    ap.add_argument("--binary", default="target/release/streamboost")
    if shuffles is not None:
        ap.add_argument("--shuffles", type=int, default=shuffles)
    if jobs:
        ap.add_argument("--jobs", type=int, default=2)
    if cache is not None:
        ap.add_argument("--cache", default=cache)
    return ap


def run_cached(path, jobs, fields, tasks, run):
    """Every result of `tasks` (key → arguments of `run`, a key being the values of `fields`):
    those in the JSON-lines cache at `path`, and the others run `jobs` at a time and added to
    it as they end."""
    done = {}
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            done[tuple(r.get(f) for f in fields)] = r
    with cf.ThreadPoolExecutor(jobs) as pool, open(path, "a") as cache:
        futures = {pool.submit(run, *a): key for key, a in tasks.items() if key not in done}
        for fut in cf.as_completed(futures):
            key = futures[fut]
            done[key] = {**dict(zip(fields, key)), **fut.result()}
            cache.write(json.dumps(done[key]) + "\n")
            cache.flush()
    return done


def accuracies(hits):
    """Accuracy over the whole stream and over its final 20%, from whether each row (in
    order) was predicted right."""
    final_from = int(len(hits) * 0.8)
    return sum(hits) / len(hits), sum(hits[final_from:]) / (len(hits) - final_from)
