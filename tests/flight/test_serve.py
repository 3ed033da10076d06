"""`streamboost serve` from real clients: pyarrow's Flight client and the ADBC Flight SQL
driver run the same queries as `streamboost sql`; DoExchange streams score as `replay` does;
what is refused is refused with its status and writes nothing; a SIGTERM commits."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import threading
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pv
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from conftest import REPO, shared, wait_until

CAR = REPO / "data" / "car.csv"
CAR_CLASSES = ["acc", "good", "unacc", "vgood"]
OZA = {"config": {"algorithm": "oza", "n_learners": 10}, "classes": CAR_CLASSES, "seed": 1}
SCORE = (
    "SELECT * FROM boost_score('{model}', (SELECT row_number() OVER () AS ts, * FROM car), "
    "'label', 'ts') ORDER BY ts"
)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    length, size = b"", len(payload)
    while True:
        byte, size = size & 0x7F, size >> 7
        length += bytes([byte | (0x80 if size else 0)])
        if not size:
            break
    return bytes([number << 3 | 2]) + length + payload


def statement(sql: str) -> flight.FlightDescriptor:
    """A Flight SQL `CommandStatementQuery` in its `Any`, as a descriptor."""
    command = _field(1, sql.encode())
    url = b"type.googleapis.com/arrow.flight.protocol.sql.CommandStatementQuery"
    return flight.FlightDescriptor.for_command(_field(1, url) + _field(2, command))


def flight_sql(server, sql: str, token=None) -> pa.Table:
    """`sql` through pyarrow's Flight client: GetFlightInfo, then DoGet of each endpoint."""
    client, options = server.client(), server.options(token)
    info = client.get_flight_info(statement(sql), options)
    return pa.concat_tables(client.do_get(e.ticket, options).read_all() for e in info.endpoints)


def adbc_sql(server, sql: str) -> pa.Table:
    """`sql` through the ADBC Flight SQL driver (DB-API)."""
    import adbc_driver_flightsql.dbapi as dbapi
    from adbc_driver_flightsql import DatabaseOptions

    header = {DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {server.token}"}
    with dbapi.connect(server.location, db_kwargs=header) as connection:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetch_arrow_table()


def cli_sql(cli, tmp_path, sql: str, *flags) -> pa.Table:
    out = tmp_path / "cli_result.parquet"
    subprocess.run([cli, "sql", *flags, "--output", out, sql], check=True, cwd=REPO)
    return pq.read_table(out)


def models_dir(tmp_path, **configs) -> "pathlib.Path":
    models = tmp_path / "models"
    models.mkdir()
    for name, config in configs.items():
        (models / f"{name}.json").write_text(json.dumps(config))
    return models


def same_rows(a: pa.Table, b: pa.Table):
    assert a.column_names == b.column_names
    assert a.num_rows == b.num_rows
    assert a.to_pydict() == b.to_pydict()


# The Flight SQL server has no transactions: ADBC's DB-API says so, once per connection.
@pytest.mark.filterwarnings("ignore:Cannot disable autocommit")
def test_boost_score_from_pyarrow_and_adbc_equals_streamboost_sql(cli, serve, tmp_path):
    models = models_dir(tmp_path, a=OZA, b=OZA)
    server = serve(models, "--table", f"car={CAR}")
    by_pyarrow = flight_sql(server, SCORE.format(model="a"))
    by_adbc = adbc_sql(server, SCORE.format(model="b"))
    reference = cli_sql(
        cli, tmp_path, SCORE.format(model="m"),
        "--table", f"car={CAR}", "--live", f"m={tmp_path / 'm.parquet'},config={models / 'a.json'}",
    )
    assert reference.num_rows == 1728
    same_rows(by_pyarrow, reference)
    same_rows(by_adbc, reference)
    # Both live models committed what they learnt, and say so.
    shown = flight_sql(server, "SELECT name, live, rows_learnt, commits, clients FROM boost_models() ORDER BY name")
    assert shown.to_pydict() == {
        "name": ["a", "b"], "live": [True, True], "rows_learnt": [1728, 1728],
        "commits": [1, 1], "clients": [0, 0],
    }
    assert (models / "a.parquet").is_file() and (models / "b.parquet").is_file()
    # boost_predict scores with the commit.
    predicted = adbc_sql(server, "SELECT boost_predict('a', buying, maint, doors, persons, lug_boot, safety) AS p FROM car")
    assert predicted.num_rows == 1728
    assert server.stop() == 0


def exchange(server, model, table: pa.Table, batch_rows=1000, descriptor=None, token=None):
    """Streams `table` to `model` by DoExchange, a batch at a time, each read back before the
    next is sent: the scored batches and their acknowledgements."""
    descriptor = descriptor or flight.FlightDescriptor.for_path(model)
    writer, reader = server.client().do_exchange(descriptor, server.options(token))
    scored, acks = [], []
    with writer:
        writer.begin(table.schema)
        for batch in table.to_batches(max_chunksize=batch_rows):
            writer.write_batch(batch)
            chunk = reader.read_chunk()
            scored.append(chunk.data)
            acks.append(json.loads(chunk.app_metadata.to_pybytes()))
        writer.done_writing()
        while True:
            try:
                reader.read_chunk()
            except StopIteration:
                break
    return pa.Table.from_batches(scored), acks


def test_a_doexchange_stream_of_nursery_predicts_as_replay(cli, serve, tmp_path):
    nursery = shared("nursery")
    models = models_dir(
        tmp_path, nursery={"config": {"algorithm": "oza"}, "classes": {"table": "nursery", "column": "label"}}
    )
    server = serve(models, "--table", f"nursery={nursery}", "--learn-once-by", "id")
    rows = pv.read_csv(nursery)
    rows = rows.append_column("id", pa.array(range(rows.num_rows), pa.int64()))
    scored, acks = exchange(server, "nursery", rows, batch_rows=997)
    assert scored.num_rows == rows.num_rows
    assert scored.column("id").to_pylist() == list(range(rows.num_rows))
    assert [a["rows"] for a in acks] == [b.num_rows for b in rows.to_batches(max_chunksize=997)]
    predictions = tmp_path / "replay.csv"
    subprocess.run(
        [cli, "replay", "--input", nursery, "--algo", "oza", "-q", "--predictions", predictions], check=True, cwd=REPO
    )
    replayed = pv.read_csv(predictions)
    assert scored.column("predicted_label").to_pylist() == replayed.column("prediction").to_pylist()
    assert server.stop() == 0
    # The stream's end committed the model: a second stream of the same rows learns none.
    server = serve(models, "--table", f"nursery={nursery}", "--learn-once-by", "id")
    again, acks = exchange(server, "nursery", rows.slice(0, 2000))
    assert acks[0]["committed_ts"] == rows.num_rows - 1
    learnt = flight_sql(server, "SELECT rows_learnt FROM boost_models()")
    assert learnt.column(0).to_pylist() == [rows.num_rows]
    assert server.stop() == 0


def test_what_is_refused_has_its_status_and_writes_nothing(serve, tmp_path):
    models = models_dir(tmp_path, m=OZA)
    server = serve(models, "--table", f"car={CAR}", "--max-message-bytes", "65536")
    car = pv.read_csv(CAR)
    client = server.client()
    with pytest.raises(flight.FlightUnauthenticatedError):
        client.get_flight_info(statement("SELECT 1"), flight.FlightCallOptions())
    with pytest.raises(flight.FlightUnauthenticatedError):
        flight_sql(server, "SELECT 1", token="0" * 32)
    with pytest.raises(flight.FlightUnauthenticatedError):
        exchange(server, "m", car, token="0" * 32)
    for name in ["../m", "m.parquet", str(models / "m.parquet"), "/etc/passwd"]:
        with pytest.raises(pa.ArrowInvalid, match="not a model name"):
            exchange(server, name, car)
    with pytest.raises(KeyError, match="no model named"):
        exchange(server, "absent", car)
    # A message over --max-message-bytes (a 1,728-row batch of car is ~80 kB).
    with pytest.raises(pa.ArrowException, match="OUT_OF_RANGE.*message length too large"):
        exchange(server, "m", car, batch_rows=1728)
    # Statements reach the registered tables and models only, and change nothing.
    for sql in [
        "SELECT * FROM '/etc/passwd'",
        f"CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{CAR}'",
        f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
        "SET datafusion.execution.batch_size = 1",
    ]:
        with pytest.raises(pa.ArrowException):
            flight_sql(server, sql)
    # The server holds the model's lock while it runs; nothing else is there.
    assert sorted(p.name for p in models.iterdir()) == ["m.json", "m.parquet.lock"]
    assert not (tmp_path / "out.csv").exists()
    assert server.stop() == 0
    assert sorted(p.name for p in models.iterdir()) == ["m.json"]


def test_many_clients_learn_one_model_in_turn_and_sigterm_commits(serve, tmp_path):
    models = models_dir(tmp_path, m=OZA)
    server = serve(models, "--table", f"car={CAR}")
    car = pv.read_csv(CAR)
    parts = [car.slice(i * 432, 432) for i in range(4)]
    results = [None] * 4

    def client(i):
        results[i] = exchange(server, "m", parts[i], batch_rows=50)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (scored, _), part in zip(results, parts):
        assert scored.num_rows == part.num_rows
        assert scored.column("label").to_pylist() == part.column("label").to_pylist()
    shown = flight_sql(server, "SELECT rows_learnt, clients FROM boost_models()")
    assert shown.to_pydict() == {"rows_learnt": [1728], "clients": [0]}
    # A stream left open when SIGTERM comes: it ends, the model is committed, exit 0.
    writer, reader = server.client().do_exchange(flight.FlightDescriptor.for_path("m"), server.options())
    writer.begin(car.schema)
    writer.write_batch(car.to_batches(max_chunksize=100)[0])
    assert reader.read_chunk().data.num_rows == 100
    assert wait_until(lambda: flight_sql(server, "SELECT clients FROM boost_models()").column(0)[0].as_py() == 1)
    # One trainer: a query training the model meanwhile is refused, and so is a stream over
    # other columns.
    with pytest.raises(pa.ArrowException, match="being trained by another query"):
        flight_sql(server, SCORE.format(model="m"))
    with pytest.raises(pa.ArrowException, match="FAILED_PRECONDITION.*other columns"):
        exchange(server, "m", car.drop_columns(["safety"]))
    assert server.stop(signal.SIGTERM) == 0
    with pytest.raises((StopIteration, flight.FlightError, pa.ArrowException)):
        while True:
            reader.read_chunk()
    server = serve(models, "--table", f"car={CAR}")
    shown = flight_sql(server, "SELECT rows_learnt FROM boost_models()")
    assert shown.column(0).to_pylist() == [1828]
    assert server.stop() == 0


def predictions(server, model) -> list:
    sql = f"SELECT boost_predict('{model}', buying, maint, doors, persons, lug_boot, safety) AS p FROM car"
    return flight_sql(server, sql).column("p").to_pylist()


def test_a_killed_server_resumes_from_its_last_commit_and_a_resend_learns_each_row_once(serve, tmp_path):
    models = models_dir(tmp_path, killed=OZA, whole=OZA)
    flags = ("--table", f"car={CAR}", "--learn-once-by", "id", "--checkpoint-every", "300")
    car = pv.read_csv(CAR)
    car = car.append_column("id", pa.array(range(car.num_rows), pa.int64()))
    server = serve(models, *flags)
    exchange(server, "whole", car, batch_rows=100)
    # 1,000 rows scored, commits after 300, 600 and 900: the last acknowledgement says so.
    _, acks = exchange_and_kill(server, "killed", car.slice(0, 1000), batch_rows=100)
    assert acks[-1]["committed_sequence"] == 9 and acks[-1]["committed_ts"] == 899
    server = serve(models, *flags)
    learnt = flight_sql(server, "SELECT name, rows_learnt FROM boost_models() ORDER BY name")
    assert learnt.to_pydict() == {"name": ["killed", "whole"], "rows_learnt": [900, 1728]}
    # The client resends from the last commit on: each row is learnt once, and the model ends
    # as the one that took the stream without a crash.
    _, acks = exchange(server, "killed", car.slice(900), batch_rows=100)
    assert acks[0]["committed_ts"] == 899
    assert server.stop() == 0
    server = serve(models, *flags)
    learnt = flight_sql(server, "SELECT name, rows_learnt FROM boost_models() ORDER BY name")
    assert learnt.to_pydict() == {"name": ["killed", "whole"], "rows_learnt": [1728, 1728]}
    assert predictions(server, "killed") == predictions(server, "whole")
    # A client that disconnects mid-stream: its batches were learnt whole, the model serves on.
    writer, reader = server.client().do_exchange(flight.FlightDescriptor.for_path("whole"), server.options())
    writer.begin(car.schema)
    for batch in car.to_batches(max_chunksize=100)[:3]:
        writer.write_batch(batch)
        reader.read_chunk()
    del writer, reader
    assert wait_until(lambda: flight_sql(server, "SELECT clients FROM boost_models() WHERE name = 'whole'").column(0)[0].as_py() == 0)
    assert len(predictions(server, "whole")) == 1728
    assert server.stop() == 0


def exchange_and_kill(server, model, table, batch_rows):
    """Streams `table` as `exchange` does, then kills the server (SIGKILL) with the stream
    open: the scored batches and acknowledgements it got."""
    writer, reader = server.client().do_exchange(flight.FlightDescriptor.for_path(model), server.options())
    writer.begin(table.schema)
    scored, acks = [], []
    for batch in table.to_batches(max_chunksize=batch_rows):
        writer.write_batch(batch)
        chunk = reader.read_chunk()
        scored.append(chunk.data)
        acks.append(json.loads(chunk.app_metadata.to_pybytes()))
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    return pa.Table.from_batches(scored), acks


def produce(server, model, producer, rows: pa.Table, batch_rows, after=None):
    """Streams `rows` as producer `producer` (learnt once by `id`): its acknowledgements.
    `after(i)` runs after the i-th batch is acknowledged."""
    command = json.dumps({"model": model, "learn_once_by": "id", "producer": producer})
    writer, reader = server.client().do_exchange(flight.FlightDescriptor.for_command(command), server.options())
    writer.begin(rows.schema)
    acks = []
    for i, batch in enumerate(rows.to_batches(max_chunksize=batch_rows)):
        writer.write_batch(batch)
        chunk = reader.read_chunk()
        assert chunk.data.column("id").to_pylist() == batch.column("id").to_pylist()
        assert chunk.data.column("label").to_pylist() == batch.column("label").to_pylist()
        acks.append(json.loads(chunk.app_metadata.to_pybytes()))
        if after:
            after(i)
    return writer, reader, acks


def test_producers_on_one_model_have_each_row_learnt_once_across_a_kill(serve, tmp_path):
    models = models_dir(tmp_path, m=OZA)
    flags = ("--table", f"car={CAR}", "--checkpoint-every", "200")
    car = pv.read_csv(CAR)
    parts = []
    for p in range(4):
        part = car.slice(p * 432, 432)
        parts.append(part.append_column("id", pa.array(range(432), pa.int64())))
    server = serve(models, *flags)
    sent_all = threading.Barrier(5)
    acks = [None] * 4

    def first(p):
        _, _, acks[p] = produce(server, "m", f"p{p}", parts[p].slice(0, 240), 24)
        sent_all.wait()
        sent_all.wait()  # the server is killed meanwhile, the stream still open

    threads = [threading.Thread(target=first, args=(p,)) for p in range(4)]
    for t in threads:
        t.start()
    sent_all.wait()
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    sent_all.wait()
    for t in threads:
        t.join()
    committed = [a[-1]["committed_id"] for a in acks]
    assert all(c is None or 0 <= c < 240 for c in committed)
    # After the restart: two producers resend from their last committed id, two from their
    # first row; each row is learnt once.
    server = serve(models, *flags)
    learnt_at_restart = flight_sql(server, "SELECT rows_learnt FROM boost_models()").column(0)[0].as_py()
    assert learnt_at_restart % 24 == 0 and learnt_at_restart <= 960

    def rest(p):
        start = 0 if p >= 2 or committed[p] is None else committed[p] + 1
        writer, reader, _ = produce(server, "m", f"p{p}", parts[p].slice(start), 24)
        writer.done_writing()
        writer.close()

    threads = [threading.Thread(target=rest, args=(p,)) for p in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wait_until(lambda: flight_sql(server, "SELECT clients FROM boost_models()").column(0)[0].as_py() == 0)
    assert server.stop() == 0
    server = serve(models, *flags)
    shown = flight_sql(server, "SELECT rows_seen, rows_learnt FROM boost_models()")
    assert shown.column("rows_learnt").to_pylist() == [1728]
    assert shown.column("rows_seen").to_pylist()[0] > 1728
    assert server.stop() == 0


def test_tls_serves_a_client_that_trusts_its_certificate_and_no_plaintext(serve, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    models = models_dir(tmp_path, m=OZA)
    server = serve(models, "--table", f"car={CAR}", "--tls-cert", cert, "--tls-key", key)
    port = server.address.rsplit(":", 1)[1]
    client = flight.FlightClient(f"grpc+tls://localhost:{port}", tls_root_certs=cert.read_bytes())
    options = server.options()
    info = client.get_flight_info(statement("SELECT count(*) AS n FROM car"), options)
    assert client.do_get(info.endpoints[0].ticket, options).read_all().column("n")[0].as_py() == 1728
    with pytest.raises(flight.FlightError):
        server.client().get_flight_info(statement("SELECT 1"), options)
    untrusting = flight.FlightClient(f"grpc+tls://localhost:{port}")
    with pytest.raises(flight.FlightError):
        untrusting.get_flight_info(statement("SELECT 1"), options)
    assert server.stop() == 0


def test_a_keyed_doexchange_predicts_as_a_keyed_boost_score(cli, serve, tmp_path):
    models = models_dir(tmp_path, u=OZA)
    server = serve(models, "--table", f"car={CAR}")
    car = pv.read_csv(CAR)
    car = car.add_column(0, "ts", pa.array(range(1, car.num_rows + 1), pa.int64()))
    command = json.dumps({"model": "u", "key": "buying", "pass": ["ts"]})
    scored, _ = exchange(server, "u", car, batch_rows=200, descriptor=flight.FlightDescriptor.for_command(command))
    assert scored.num_rows == 1728
    shown = flight_sql(server, "SELECT keys, rows_learnt FROM boost_models()")
    assert shown.to_pydict() == {"keys": [4], "rows_learnt": [1728]}
    assert server.stop() == 0
    assert (models / "u.parquet").is_dir()
    reference = cli_sql(
        cli, tmp_path,
        "SELECT * FROM boost_score('k', (SELECT row_number() OVER () AS ts, * FROM car), 'label', 'ts', 'buying') ORDER BY ts",
        "--table", f"car={CAR}", "--live", f"k={tmp_path / 'k'},config={models / 'u.json'}",
    )
    assert scored.column("predicted_label").to_pylist() == reference.column("predicted_label").to_pylist()


def test_labels_that_come_later_over_a_second_stream_learn_as_boost_score_delayed(cli, serve, tmp_path):
    """Rows stream without their labels; the labels come two windows later on a stream of
    their own, all of a window at one time just before the window's rows: the order a
    time merge gives, so the predictions are `boost_score_delayed`'s."""
    window, delay = 96, 2
    car = pv.read_csv(CAR)
    n = car.num_rows
    events = car.set_column(car.schema.get_field_index("label"), "label", pa.nulls(n, pa.string()))
    events = events.append_column("id", pa.array([f"e{i}" for i in range(n)]))
    events = events.append_column("time", pa.array(range(10, 10 * n + 10, 10), pa.int64()))
    arrives = [10 * window * (i // window + delay) + 9 for i in range(n)]
    labels = pa.table({"id": events.column("id"), "label": car.column("label"), "time": pa.array(arrives, pa.int64())})
    pq.write_table(events, tmp_path / "events.parquet")
    pq.write_table(labels, tmp_path / "labels.parquet")
    models = models_dir(tmp_path, d=OZA)
    server = serve(models)
    client, options = server.client(), server.options()
    command = json.dumps({"model": "d", "delayed": {"id": "id", "time": "time"}})
    rows_out, rows_in = client.do_exchange(flight.FlightDescriptor.for_command(command), options)
    rows_out.begin(events.schema)
    rows_out.write_batch(events.slice(0, window).to_batches()[0])
    scored = [rows_in.read_chunk().data]
    labels_out, labels_in = client.do_exchange(
        flight.FlightDescriptor.for_command(json.dumps({"model": "d", "labels": True})), options
    )
    labels_out.begin(labels.schema)
    outcomes = []
    for w in range(1, n // window):
        due = labels.filter(pc.equal(labels.column("time"), 10 * window * w + 9))
        if due.num_rows:
            labels_out.write_table(due)
            outcomes.append(labels_in.read_chunk().data)
        rows_out.write_table(events.slice(w * window, window))
        scored.append(rows_in.read_chunk().data)
    for writer in (rows_out, labels_out):
        writer.done_writing()
        writer.close()
    scored = pa.Table.from_batches(scored)
    outcomes = pa.Table.from_batches(outcomes)
    assert set(outcomes.column("outcome").to_pylist()) == {"learnt"}
    assert outcomes.num_rows == n - delay * window
    reference = cli_sql(
        cli, tmp_path,
        "SELECT * FROM boost_score_delayed('d', (SELECT * FROM events), (SELECT * FROM labels), "
        "'label', 'id', 'time') ORDER BY time",
        "--table", f"events={tmp_path / 'events.parquet'}", "--table", f"labels={tmp_path / 'labels.parquet'}",
        "--model", f"d={models / 'd.json'}",
    )
    assert scored.column("predicted_label").to_pylist() == reference.column("predicted_label").to_pylist()
    # A labels stream needs a stream of rows waiting for them.
    with pytest.raises(pa.ArrowException, match="FAILED_PRECONDITION.*waits for labels"):
        exchange(server, "d", labels, descriptor=flight.FlightDescriptor.for_command(json.dumps({"model": "d", "labels": True})))
    assert server.stop() == 0


def test_calls_beyond_the_limits_are_refused_with_their_status(serve, tmp_path):
    models = models_dir(tmp_path, m=OZA)
    server = serve(models, "--table", f"car={CAR}", "--max-calls", "1", "--call-timeout", "1")
    car = pv.read_csv(CAR)
    # A DoExchange holds its call's place while it streams: a second call is refused.
    writer, reader = server.client().do_exchange(flight.FlightDescriptor.for_path("m"), server.options())
    writer.begin(car.schema)
    writer.write_batch(car.to_batches(max_chunksize=10)[0])
    reader.read_chunk()
    with pytest.raises(pa.ArrowException, match="resource exhausted.*--max-calls"):
        flight_sql(server, "SELECT 1")
    writer.done_writing()
    writer.close()
    assert wait_until(lambda: _answers(server))
    # A query longer than --call-timeout ends with DeadlineExceeded, and its work stops.
    with pytest.raises(flight.FlightTimedOutError, match="--call-timeout"):
        flight_sql(server, "SELECT sum(value) AS s FROM generate_series(1, 100000000000)")
    busy = _cpu_seconds(server)
    time.sleep(1)
    assert _cpu_seconds(server) - busy < 0.5
    # A DoExchange that sends nothing is ended at the timeout too.
    writer, reader = server.client().do_exchange(flight.FlightDescriptor.for_path("m"), server.options())
    with pytest.raises(flight.FlightTimedOutError):
        reader.read_chunk()
    assert wait_until(lambda: _answers(server))
    assert server.stop() == 0


def _cpu_seconds(server) -> float:
    fields = pathlib.Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _answers(server) -> bool:
    try:
        return flight_sql(server, "SELECT 1 AS one").column(0)[0].as_py() == 1
    except pa.ArrowException:
        return False
