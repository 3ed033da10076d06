"""streamboost's SQL functions inside datafusion-python: the same rows as `streamboost sql`."""

from __future__ import annotations

import json
import subprocess

import pyarrow.parquet as pq
import pytest

datafusion = pytest.importorskip("datafusion")

import streamboost as sb  # noqa: E402
import streamboost.datafusion as sdf  # noqa: E402

from conftest import REPO  # noqa: E402

CAR = REPO / "data" / "car.csv"
FEATURES = "buying, maint, doors, persons, lug_boot, safety"
CLASSES = ["acc", "good", "unacc", "vgood"]


def cli_rows(cli, tmp_path, query, *models):
    out = tmp_path / "out.parquet"
    args = [str(cli), "sql", "--table", f"car={CAR}", *models, "--output", str(out), query]
    subprocess.run(args, check=True, capture_output=True)
    return pq.read_table(out)


def python_rows(query, models):
    ctx = datafusion.SessionContext()
    ctx.register_csv("car", str(CAR))
    sdf.register(ctx, models)
    return ctx.sql(query).to_arrow_table()


def same(a, b):
    assert a.num_rows == b.num_rows
    for x, y in zip(a.columns, b.columns):
        assert x.to_pylist() == y.to_pylist()


def test_boost_predict_gives_the_rows_streamboost_sql_gives(cli, tmp_path):
    checkpoint = tmp_path / "m.parquet"
    subprocess.run(
        [str(cli), "replay", "-q", "--input", str(CAR), "--algo", "ada-olm", "--learners", "10", "--save", str(checkpoint)],
        check=True,
        capture_output=True,
    )
    query = (
        f"SELECT label, boost_predict('m', {FEATURES}) AS p, "
        f"boost_predict_proba('m', {FEATURES}) AS proba FROM car"
    )
    same(python_rows(query, {"m": checkpoint}), cli_rows(cli, tmp_path, query, "--model", f"m={checkpoint}"))


def test_boost_prequential_gives_the_rows_streamboost_sql_gives(cli, tmp_path):
    fresh = tmp_path / "fresh.json"
    config = {"algorithm": "ada-olm", "n_learners": 10}
    fresh.write_text(json.dumps({"config": config, "classes": CLASSES, "seed": 1}))
    query = (
        f"SELECT ts, label, boost_prequential('f', label, {FEATURES}) OVER (ORDER BY ts) AS p "
        "FROM (SELECT row_number() OVER () AS ts, * FROM car) ORDER BY ts"
    )
    model = sb.AdaOlm(n_learners=10, classes=tuple(CLASSES), seed=1)
    ours = python_rows(query, {"f": model})
    same(ours, cli_rows(cli, tmp_path, query, "--model", f"f={fresh}"))
    accuracy = sum(a == b for a, b in zip(ours.column("label").to_pylist(), ours.column("p").to_pylist()))
    assert accuracy / ours.num_rows > 0.8


def test_a_python_model_and_a_live_model_are_registered_too(car, tmp_path):
    model = sb.Ova(binary={"n_learners": 5})
    model.learn_many(car.drop_columns(["label"]), car.column("label").to_pylist())
    path = tmp_path / "live.parquet"
    with sb.LiveModel(path, sb.AdaOlm(n_learners=5, classes=tuple(CLASSES))) as live:
        live.process(car)
    query = f"SELECT boost_predict('m', {FEATURES}) AS a, boost_predict('l', {FEATURES}) AS b FROM car"
    rows = python_rows(query, {"m": model, "l": sdf.live(path)})
    assert rows.column("a").to_pylist() == model.predict_many(car.drop_columns(["label"]))
    assert rows.column("b").to_pylist() == sb.load(path).predict_many(car.drop_columns(["label"]))
    with pytest.raises(ValueError, match="declares no classes"):
        python_rows(query, {"m": sb.AdaOlm(), "l": sdf.live(path)})


def test_another_datafusion_major_is_refused_naming_both():
    sdf.check_version(f"{sdf.DATAFUSION_MAJOR}.0.0")
    with pytest.raises(ImportError, match=rf"DataFusion {sdf.DATAFUSION_MAJOR}.*54\.1\.0"):
        sdf.check_version("54.1.0")
    with pytest.raises(ImportError, match="56.0.0"):
        sdf.check_version("56.0.0")
    assert datafusion.__version__.split(".")[0] == str(sdf.DATAFUSION_MAJOR)


def test_boost_score_as_a_table_gives_the_rows_streamboost_sql_gives(car, cli, tmp_path):
    import pyarrow as pa

    fresh = tmp_path / "fresh.json"
    fresh.write_text(json.dumps({"config": {"algorithm": "ada-olm", "n_learners": 10}, "classes": CLASSES, "seed": 1}))
    columns = "ts, label, predicted_label, predicted_label_probs"
    expected = cli_rows(
        cli,
        tmp_path,
        f"SELECT {columns} FROM boost_score('f', (SELECT row_number() OVER () AS ts, * FROM car), "
        "'label', 'ts') ORDER BY ts",
        "--model",
        f"f={fresh}",
    )
    ctx = datafusion.SessionContext()
    registry = sdf.register(ctx, {"f": sb.AdaOlm(n_learners=10, classes=tuple(CLASSES), seed=1)})
    rows = car.append_column("ts", pa.array(range(1, car.num_rows + 1), pa.uint64()))
    sdf.register_scored(ctx, registry, "scored", rows.to_pandas(), model="f")
    ours = ctx.sql(f"SELECT {columns} FROM scored ORDER BY ts").to_arrow_table()
    same(ours, expected)
    # Each query scores the rows again, from the fresh model.
    same(ctx.sql(f"SELECT {columns} FROM scored ORDER BY ts").to_arrow_table(), expected)
    with pytest.raises(ValueError, match="no column `when`"):
        sdf.register_scored(ctx, registry, "bad", rows, model="f", ts="when")
