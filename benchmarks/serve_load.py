"""Load on `streamboost serve`: concurrent DoExchange clients on loopback, bounded in count
and time, and what they got checked.

    cargo build --release --features serve
    python benchmarks/serve_load.py --bin target/release/streamboost [--seconds 60] [--clients 16]

Three runs, each against a fresh server over a fresh models directory (nursery, the default
model unless `--config` says otherwise):

* **one model**: every client a producer on one live model, batches of `--batch` rows;
* **a model each**: client `c` on model `k<c>`;
* **kill**: as *one model*, the server SIGKILLed after `--kill-after` seconds and restarted;
  each client reconnects and resends from the last `committed_id` it got, then goes on.

For each: rows/s over the run, p50/p99 of a batch's round trip (write to scored batch back),
the server's peak RSS (VmHWM), and checks: every row sent came back scored once (its id);
each model learnt every row once (`rows_learnt`); and, for the runs without a kill, each
model's predictions equal a `replay` of the rows in the order the server learnt them (the
acknowledgements' `sequence`), which holds only if the final model is the one that replay
builds. The summary is printed as Markdown and written as JSON (`--out`).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pyarrow as pa
import pyarrow.csv as pv
import pyarrow.flight as flight

REPO = pathlib.Path(__file__).resolve().parents[1]
DATASETS = pathlib.Path(os.environ.get("STREAMBOOST_DATASETS", REPO.parent / "shared" / "datasets"))


class Server:
    def __init__(self, binary, models, *flags):
        self.log = open(models.parent / "serve.log", "ab")
        command = [str(binary), "serve", "--listen", "127.0.0.1:0", "--models", str(models), *flags]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit(f"serve did not start: {line!r}")
        self.location = "grpc://" + line.split()[-1]

    def peak_rss_mb(self) -> float:
        status = pathlib.Path(f"/proc/{self.process.pid}/status").read_text()
        kib = next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmHWM:"))
        return kib / 1024

    def sql(self, query: str) -> pa.Table:
        url = b"type.googleapis.com/arrow.flight.protocol.sql.CommandStatementQuery"
        command = _field(1, url) + _field(2, _field(1, query.encode()))
        client = flight.FlightClient(self.location)
        info = client.get_flight_info(flight.FlightDescriptor.for_command(command))
        return pa.concat_tables(client.do_get(e.ticket).read_all() for e in info.endpoints)

    def stop(self, sig=signal.SIGTERM) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=600)


def _field(number: int, payload: bytes) -> bytes:
    length, size = b"", len(payload)
    while True:
        byte, size = size & 0x7F, size >> 7
        length += bytes([byte | (0x80 if size else 0)])
        if not size:
            break
    return bytes([number << 3 | 2]) + length + payload


class Client(threading.Thread):
    """A producer streaming batches of `rows` (cycled, each with its own id) until `stop`."""

    def __init__(self, server, model, producer, rows: pa.Table, batch, stop: threading.Event, start_id=0):
        super().__init__()
        self.server, self.model, self.producer = server, model, producer
        self.rows, self.batch, self.stop_event = rows, batch, stop
        self.next_id = start_id
        self.latencies, self.scored, self.acks, self.error = [], [], [], None

    def batches(self):
        n = self.rows.num_rows
        while True:
            start = self.next_id % n
            part = self.rows.slice(start, min(self.batch, n - start))
            ids = pa.array(range(self.next_id, self.next_id + part.num_rows), pa.int64())
            yield part.append_column("id", ids)

    def run(self):
        command = json.dumps({"model": self.model, "learn_once_by": "id", "producer": self.producer})
        try:
            writer, reader = flight.FlightClient(self.server.location).do_exchange(
                flight.FlightDescriptor.for_command(command)
            )
            batches = self.batches()
            first = next(batches)
            writer.begin(first.schema)
            batch = first
            while not self.stop_event.is_set():
                sent = time.perf_counter()
                writer.write_table(batch)
                chunk = reader.read_chunk()
                self.latencies.append(time.perf_counter() - sent)
                self.scored.append(chunk.data.select(["id", "predicted_label"]))
                self.acks.append(json.loads(chunk.app_metadata.to_pybytes()))
                self.next_id += batch.num_rows
                batch = next(batches)
            writer.done_writing()
            for _ in reader:
                pass
        except Exception as e:  # noqa: BLE001: reported by the run that started it
            self.error = e


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def replay_check(binary, work, config, classes, rows, clients, model_of):
    """Each model's predictions against `replay` of its rows in the server's order: the
    rows that differ, and the replays' rate (rows per second of wall time, one after the
    other, the baseline of the same model on the same rows without a server)."""
    mismatches, replayed_rows, replay_seconds = 0, 0, 0.0
    for model in sorted({model_of(c) for c in range(len(clients))}):
        pieces = []
        for c, client in enumerate(clients):
            if model_of(c) != model:
                continue
            for ack, scored in zip(client.acks, client.scored):
                pieces.append((ack["sequence"], scored))
        pieces.sort(key=lambda p: p[0])
        order = pa.Table.from_batches([p[1] for p in pieces])
        n = rows.num_rows
        features = rows.take(pa.array([i % n for i in order.column("id").to_pylist()]))
        stream = work / f"{model}.csv"
        pv.write_csv(features, stream)
        predictions = work / f"{model}.predictions.csv"
        started = time.perf_counter()
        subprocess.run(
            [str(binary), "replay", "--input", str(stream), "--config", str(config), "-q",
             "--classes", ",".join(classes), "--predictions", str(predictions)],
            check=True, stdout=subprocess.DEVNULL,
        )
        replay_seconds += time.perf_counter() - started
        replayed_rows += features.num_rows
        replayed = pv.read_csv(predictions).column("prediction").to_pylist()
        served = order.column("predicted_label").to_pylist()
        mismatches += sum(a != b for a, b in zip(replayed, served)) + abs(len(replayed) - len(served))
    return mismatches, replayed_rows / replay_seconds


def run(args, name, models_of, kill_after=None):
    # One chunk: a slice of it is one record batch, so each write is one batch and one reply.
    rows = pv.read_csv(DATASETS / args.dataset / "data.csv").combine_chunks()
    classes = sorted(set(rows.column("label").to_pylist()))
    work = pathlib.Path(tempfile.mkdtemp(prefix="serve-load-"))
    models = work / "models"
    models.mkdir()
    config = json.loads(args.config)
    for model in {models_of(c) for c in range(args.clients)}:
        (models / f"{model}.json").write_text(json.dumps({"config": config, "classes": classes, "seed": 1}))
    (work / "config.json").write_text(json.dumps(config))
    flags = ["--checkpoint-every", str(args.checkpoint_every), "--max-calls", str(args.clients + 8)]
    server = Server(args.bin, models, *flags)
    stop = threading.Event()
    offset = rows.num_rows // args.clients
    first_id = [c * offset for c in range(args.clients)]
    clients = [Client(server, models_of(c), f"c{c}", rows, args.batch, stop, start_id=first_id[c])
               for c in range(args.clients)]
    started = time.perf_counter()
    for c in clients:
        c.start()
    rss, errors, last = 0.0, [], clients
    if kill_after is None:
        time.sleep(args.seconds)
        stop.set()
    else:
        time.sleep(kill_after)
        rss = server.peak_rss_mb()
        server.stop(signal.SIGKILL)
        for c in clients:
            c.join()  # each ends on its broken stream
        server = Server(args.bin, models, *flags)
        last = []
        for i, c in enumerate(clients):
            # Resend from the last committed id this client was told of.
            committed = next((a["committed_id"] for a in reversed(c.acks) if a["committed_id"] is not None), None)
            start_id = first_id[i] if committed is None else committed + 1
            last.append(Client(server, c.model, c.producer, rows, args.batch, stop, start_id=start_id))
        for c in last:
            c.start()
        time.sleep(max(1.0, args.seconds - kill_after))
        stop.set()
    for c in last:
        c.join()
    elapsed = time.perf_counter() - started
    errors = [repr(c.error) for c in last if c.error]
    rss = max(rss, server.peak_rss_mb())
    deadline = time.time() + 120
    while time.time() < deadline and any(server.sql("SELECT clients FROM boost_models()").column(0).to_pylist()):
        time.sleep(0.1)
    code = server.stop()
    server = Server(args.bin, models, *flags)
    learnt = dict(zip(*server.sql("SELECT name, rows_learnt FROM boost_models()").to_pydict().values()))
    server.stop()
    everyone = clients if kill_after is None else clients + last
    # Every row sent came back once, in order: each client's ids run on from its first.
    ids_once = True
    for c in everyone:
        ids = [i for t in c.scored for i in t.column("id").to_pylist()]
        ids_once &= not ids or ids == list(range(ids[0], ids[0] + len(ids)))
    # Each model learnt each of its producers' ids once, from the first to the last sent.
    expected = {}
    for i, c in enumerate(last):
        expected[c.model] = expected.get(c.model, 0) + (c.next_id - first_id[i])
    scored = sum(t.num_rows for c in everyone for t in c.scored)
    mismatches, replay_rate = None, None
    if kill_after is None:
        mismatches, replay_rate = replay_check(
            args.bin, work, work / "config.json", classes, rows, clients, models_of
        )
    latencies = [l for c in everyone for l in c.latencies]
    return {
        "run": name, "clients": args.clients, "models": len(expected), "seconds": round(elapsed, 1),
        "rows_scored": scored, "rows_per_s": round(scored / elapsed),
        "replay_rows_per_s": replay_rate and round(replay_rate),
        "p50_ms": round(1000 * percentile(latencies, 0.5), 1),
        "p99_ms": round(1000 * percentile(latencies, 0.99), 1),
        "peak_rss_mb": round(rss, 1), "exit_code": code, "errors": errors, "ids_once": ids_once,
        "learnt_once": all(learnt.get(m) == n for m, n in expected.items()),
        "learnt": sum(learnt.values()), "expected": sum(expected.values()),
        "replay_mismatches": mismatches,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--dataset", default="nursery")
    parser.add_argument("--config", default='{"algorithm": "ova"}', help="the model's JSON config")
    parser.add_argument("--checkpoint-every", type=int, default=20000)
    parser.add_argument("--kill-after", type=float, default=20)
    parser.add_argument("--runs", default="one,each,kill")
    parser.add_argument("--out", default="serve_load.json")
    args = parser.parse_args()
    results = []
    for name in args.runs.split(","):
        if name == "one":
            results.append(run(args, "one model", lambda c: "m"))
        elif name == "each":
            results.append(run(args, "a model each", lambda c: f"k{c:02}"))
        elif name == "kill":
            results.append(run(args, "one model, SIGKILL", lambda c: "m", kill_after=args.kill_after))
        print(json.dumps(results[-1]), file=sys.stderr)
    pathlib.Path(args.out).write_text(json.dumps(results, indent=1))
    print("| run | clients | models | s | rows scored | rows/s | replay rows/s | p50 ms | p99 ms | peak RSS MB | ids once | learnt once | replay ≠ |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        replay = f"{r['replay_rows_per_s']:,}" if r["replay_rows_per_s"] else "–"
        print(f"| {r['run']} | {r['clients']} | {r['models']} | {r['seconds']} | {r['rows_scored']:,} | {r['rows_per_s']:,} | {replay} "
              f"| {r['p50_ms']} | {r['p99_ms']} | {r['peak_rss_mb']} | {r['ids_once']} | {r['learnt_once']} "
              f"({r['learnt']:,}/{r['expected']:,}) | {r['replay_mismatches']} |")


if __name__ == "__main__":
    main()
