"""Live models from Python: the crate's live models (run's), with their commit policy,
restarts, keys, labels that come apart, and one process per checkpoint."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest

import streamboost as sb

from conftest import REPO

CLASSES = ("acc", "good", "unacc", "vgood")


def model():
    return sb.AdaOlm(n_learners=5, classes=CLASSES)


def with_ts(car: pa.Table) -> pa.Table:
    return car.append_column("ts", pa.array(range(car.num_rows), pa.int64()))


def batches(table: pa.Table, size: int):
    return [table.slice(i, size) for i in range(0, table.num_rows, size)]


def test_a_restarted_live_model_scores_as_an_uninterrupted_one(car, tmp_path):
    table = with_ts(car)
    with sb.LiveModel(tmp_path / "one.parquet", model(), every=300, passthrough=("ts",)) as live:
        whole = [live.process(b) for b in batches(table, 200)]
        assert live.stats["commits"] == 4 and live.stats["rows_learnt"] == car.num_rows
    # The same stream in two processes' worth: the second starts from the first's commit.
    path = tmp_path / "two.parquet"
    halves = []
    with sb.LiveModel(path, model(), every=300, passthrough=("ts",)) as live:
        halves += [live.process(b) for b in batches(table.slice(0, 800), 200)]
    with sb.LiveModel(path, passthrough=("ts",)) as live:  # the checkpoint's model
        halves += [live.process(b) for b in batches(table.slice(800), 200)]
        assert live.stats["rows_seen"] == car.num_rows
    assert pa.concat_tables(halves).equals(pa.concat_tables(whole))
    assert sb.load(path).predict_many(car.slice(0, 50).drop_columns(["label"])) == sb.load(
        tmp_path / "one.parquet"
    ).predict_many(car.slice(0, 50).drop_columns(["label"]))


def test_rows_taken_again_are_not_learnt_twice(car, tmp_path):
    table = with_ts(car.slice(0, 600))
    path = tmp_path / "m.parquet"
    with sb.LiveModel(path, model(), learn_once_by="ts") as live:
        live.process(table.slice(0, 400))
    with sb.LiveModel(path, learn_once_by="ts") as live:
        live.process(table)  # rows 0..400 again, then 400..600
        assert live.stats["rows_learnt"] == 600


def test_a_block_that_raises_commits_nothing_after_the_last_commit(car, tmp_path):
    path = tmp_path / "m.parquet"
    try:
        with sb.LiveModel(path, model(), every=1000) as live:
            live.process(car.slice(0, 500))
            live.commit()
            live.process(car.slice(500, 300))
            raise KeyError("the block failed")
    except KeyError:
        pass
    assert sb.load(path).rows_learnt == 500  # the rows after the commit were not committed
    with sb.LiveModel(path) as live:  # and the checkpoint is free again
        live.process(car.slice(500, 300))
    assert sb.load(path).rows_learnt == 800


def test_another_process_cannot_take_a_held_checkpoint(car, tmp_path):
    path = tmp_path / "m.parquet"
    with sb.LiveModel(path, model()) as live:
        live.process(car.slice(0, 100))
        live.commit()
        script = (
            "import streamboost as sb, sys\n"
            "try:\n"
            "    import pyarrow.csv as pv\n"
            f"    live = sb.LiveModel({str(path)!r})\n"
            f"    live.process(pv.read_csv({str(REPO / 'data' / 'car.csv')!r}).slice(0, 10))\n"
            "except Exception as e:\n"
            "    print(type(e).__name__, e); sys.exit(3)\n"
        )
        other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert other.returncode == 3, other.stdout + other.stderr
        assert "lock" in other.stdout.lower() or "held" in other.stdout.lower(), other.stdout
    # Once closed, it can.
    sb.LiveModel(path).close()


def test_one_model_per_key(car, tmp_path):
    path = tmp_path / "keyed"
    with sb.LiveModel(path, model(), key="buying", every=500) as live:
        out = live.process(car)
        assert out.num_rows == car.num_rows
        assert live.stats["keys_in_memory"] == 4
    with sb.LiveModel(path, key="buying") as live:
        live.process(car.slice(0, 10))
        assert live.stats["rows_seen"] == car.num_rows + 10  # over the keys' lives
    assert (path / "manifest.json").exists() or any(path.iterdir())


def test_labels_that_come_apart(car, tmp_path):
    events = car.drop_columns(["label"]).append_column("id", pa.array(range(car.num_rows)))
    events = events.append_column("t", pa.array(range(car.num_rows), pa.float64()))
    labels = pa.table(
        {"id": list(range(car.num_rows)), "label": car.column("label"), "t": [float(i) + 0.5 for i in range(car.num_rows)]}
    )
    with sb.LiveModel(tmp_path / "m.parquet", model(), id="id", time="t") as live:
        scored = live.process(events.slice(0, 300))
        assert scored.num_rows == 300 and live.stats["rows_learnt"] == 0
        outcomes = live.labels(labels.slice(0, 200))
        assert outcomes.num_rows == 200
        assert live.stats["rows_learnt"] == 200


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="both"):
        sb.LiveModel(tmp_path / "m.parquet", model(), id="id")
    with pytest.raises(OSError):
        sb.LiveModel(tmp_path / "no" / "such" / "m.parquet", model())
    with pytest.raises(ValueError, match="every"):
        sb.LiveModel(tmp_path / "m.parquet", model(), every=0)


def test_run_once_writes_what_streamboost_run_writes(car, cli, tmp_path):
    import pyarrow.csv as pv
    import pyarrow.parquet as pq

    inputs = tmp_path / "in"
    inputs.mkdir()
    for i, part in enumerate(batches(car, 600)):
        pv.write_csv(part, inputs / f"{i:03}.csv")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    stats = sb.run(inputs, ours, tmp_path / "ours.parquet", model(), every=500)
    assert (stats["files"], stats["rows"], stats["rejected"]) == (3, car.num_rows, 0)
    subprocess.run(
        [
            str(cli), "run", "--once", "--input-dir", str(inputs), "--output-dir", str(theirs),
            "--model", str(tmp_path / "theirs.parquet"), "--algo", "ada-olm", "--learners", "5",
            "--classes", ",".join(CLASSES), "--checkpoint-every", "500",
        ],
        check=True,
        capture_output=True,
    )
    for i in range(3):
        assert pq.read_table(ours / f"{i:03}.parquet").equals(pq.read_table(theirs / f"{i:03}.parquet"))
    # Once taken, a file is not taken again.
    assert sb.run(inputs, ours, tmp_path / "ours.parquet", model())["files"] == 0
