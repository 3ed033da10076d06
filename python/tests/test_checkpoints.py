"""Checkpoints between Python and Rust, and pickling through them."""

from __future__ import annotations

import csv
import json
import pickle
import subprocess

import pyarrow as pa
import pytest

import streamboost as sb


def rust_predictions(cli, checkpoint, X: pa.Table, tmp_path):
    """Rust's predictions and probabilities of the rows of `X` by the model at `checkpoint`,
    scored without learning (SQL's `boost_predict` and `boost_predict_proba`)."""
    import pyarrow.csv as pv
    import pyarrow.parquet as pq

    rows, out = tmp_path / "rows.csv", tmp_path / "scored.parquet"
    pv.write_csv(X, rows)
    args = ", ".join(X.column_names)
    query = (
        f"SELECT boost_predict('m', {args}) AS predicted, "
        f"boost_predict_proba('m', {args}) AS proba FROM t"
    )
    run = [cli, "sql", "--table", f"t={rows}", "--model", f"m={checkpoint}", "--output", out, query]
    subprocess.run([str(a) for a in run], check=True, capture_output=True)
    scored = pq.read_table(out)
    return scored.column("predicted").to_pylist(), scored.column("proba").to_pylist()


def same_predictions(model, X, rust):
    predicted, proba = rust
    assert model.predict_many(X) == predicted
    ours = model.predict_proba_many(X)
    for r, row in enumerate(proba):
        for c, name in enumerate(ours.column_names):
            assert ours.column(name)[r].as_py() == pytest.approx(row[c], abs=1e-12)


def test_a_pickle_round_trip_predicts_as_the_model(car):
    X = car.drop_columns(["label"])
    y = car.column("label").to_pylist()
    model = sb.Ova(binary={"n_learners": 10})
    model.learn_many(X.slice(0, 1000), y[:1000])
    again = pickle.loads(pickle.dumps(model))
    rest = X.slice(1000)
    assert again.predict_many(rest) == model.predict_many(rest)
    assert repr(again) == repr(model)
    # Both go on learning alike.
    for m in (model, again):
        m.learn_many(rest, y[1000:])
    assert pickle.dumps(again) == pickle.dumps(model)


def test_a_fresh_model_pickles_and_a_corrupt_pickle_is_refused():
    fresh = pickle.loads(pickle.dumps(sb.AdaOlm(n_learners=4, seed=9)))
    assert fresh.n_learners == 4 and fresh.seed == 9 and fresh.rows_learnt == 0
    model = sb.Hoeffding()
    model.learn_one({"x": 1.0}, "a")
    state = model.__getstate__()
    state["checkpoint"] = state["checkpoint"][: len(state["checkpoint"]) // 2]
    with pytest.raises(ValueError, match="truncated|corrupt|Parquet|footer"):
        sb.Hoeffding().__setstate__(state)


def test_a_checkpoint_written_by_rust_predicts_in_python_as_in_rust(car, cli, tmp_path):
    import pyarrow.csv as pv

    first = tmp_path / "first.csv"
    pv.write_csv(car.slice(0, 1000), first)
    checkpoint = tmp_path / "model.parquet"
    subprocess.run(
        [str(cli), "replay", "-q", "--input", str(first), "--algo", "ada-olm", "--save", str(checkpoint)],
        check=True,
        capture_output=True,
    )
    model = sb.load(checkpoint)
    assert isinstance(model, sb.AdaOlm) and model.rows_learnt == 1000
    X = car.slice(1000).drop_columns(["label"])
    same_predictions(model, X, rust_predictions(cli, checkpoint, X, tmp_path))


def test_a_checkpoint_saved_from_python_predicts_in_rust_as_in_python(car, cli, tmp_path):
    X = car.drop_columns(["label"])
    model = sb.Ova(binary={"n_learners": 10})
    model.learn_many(X.slice(0, 1000), car.column("label").to_pylist()[:1000])
    checkpoint = tmp_path / "from-python.parquet"
    model.save(checkpoint)
    rest = X.slice(1000)
    same_predictions(model, rest, rust_predictions(cli, checkpoint, rest, tmp_path))


def test_score_goes_on_from_a_rust_checkpoint_as_replay_does(car, cli, tmp_path):
    """`score` is test-then-train as `replay --load` is: from the same checkpoint, over the
    same rows, the same predictions, sampled experts and all."""
    import pyarrow.csv as pv

    first, rest = tmp_path / "first.csv", tmp_path / "rest.csv"
    pv.write_csv(car.slice(0, 800), first)
    pv.write_csv(car.slice(800), rest)
    checkpoint, predictions = tmp_path / "model.parquet", tmp_path / "predictions.csv"
    subprocess.run(
        [str(cli), "replay", "-q", "--input", str(first), "--algo", "ada-olm", "--save", str(checkpoint)],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [str(cli), "replay", "-q", "--load", str(checkpoint), "--input", str(rest), "--predictions", str(predictions)],
        check=True,
        capture_output=True,
    )
    with open(predictions) as f:
        expected = list(csv.DictReader(f))
    model = sb.load(checkpoint)
    scored = model.score(car.slice(800), label="label")
    assert scored.column("predicted_label").to_pylist() == [r["prediction"] for r in expected]
    names = json.loads(scored.schema.field("predicted_label_probs").metadata[b"streamboost.classes"])
    for row, probs in zip(expected, scored.column("predicted_label_probs").to_pylist()):
        for name, p in zip(names, probs):
            assert p == pytest.approx(float(row[f"p_{name}"]), abs=1e-12)
    assert model.rows_learnt == car.num_rows
