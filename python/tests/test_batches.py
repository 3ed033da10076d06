"""Arrow batches: ``learn_many`` leaves the model a ``learn_one`` loop leaves, and every kind
of frame reads the same."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

import streamboost as sb

from conftest import read_csv, shared


def split(table: pa.Table, label: str):
    X = table.drop_columns([label])
    return X, table.column(label).to_pylist()


def same_models(make, table: pa.Table, label: str, batch_rows: int):
    """A model fed `table` row by row, and one fed it in batches: their predictions on
    every row, and pickled states, are equal."""
    X, y = split(table, label)
    one, many = make(), make()
    for x, yi in zip(X.to_pylist(), y):
        one.learn_one(x, yi)
    for start in range(0, X.num_rows, batch_rows):
        many.learn_many(X.slice(start, batch_rows), y[start : start + batch_rows])
    assert one.rows_learnt == many.rows_learnt == X.num_rows
    rows = X.to_pylist()
    assert [one.predict_proba_one(x) for x in rows] == [many.predict_proba_one(x) for x in rows]
    assert one.predict_many(X) == many.predict_many(X) == [one.predict_one(x) for x in rows]
    return one, many


@pytest.mark.parametrize("algorithm", ["ova", "ada-olm", "mbbm", "oza-bag", "hat"])
def test_learn_many_is_the_learn_one_loop_on_car(car, algorithm):
    same_models(lambda: sb.ALGORITHMS[algorithm](), car, "label", batch_rows=500)


def test_learn_many_is_the_learn_one_loop_on_pendigits():
    table = read_csv(shared("pendigits"))
    one, _ = same_models(lambda: sb.AdaOlm(seed=5), table, "label", batch_rows=2048)
    assert [n for n, _ in one.features] == sorted(table.drop_columns(["label"]).column_names)


def test_pyarrow_polars_and_pandas_frames_read_the_same(car):
    pl = pytest.importorskip("polars")
    pytest.importorskip("pandas")
    X, y = split(car, "label")
    frames = {
        "table": X,
        "batch": X.combine_chunks().to_batches()[0],
        "polars": pl.from_arrow(X),
        "pandas": X.to_pandas(),
    }
    predictions = {}
    for kind, frame in frames.items():
        model = sb.Ova(binary={"n_learners": 5})
        model.learn_many(frame, y)
        predictions[kind] = list(model.predict_many(frame))
        proba = model.predict_proba_many(frame)
        assert proba.shape[0] == len(y) if kind == "pandas" else proba.num_rows == len(y)
    assert len({tuple(p) for p in predictions.values()}) == 1


def test_features_that_come_and_go():
    model = sb.Hoeffding()
    model.learn_one({"a": 1.0, "b": "x"}, "yes")
    model.learn_one({"a": 2.0}, "no")  # b missing
    model.learn_one({"a": 3.0, "b": "y", "c": 7}, "no")  # c is not learnt: counted
    assert model.features == [("a", "numeric"), ("b", "nominal")]
    assert model.ignored_values == 1
    assert set(model.predict_proba_one({"c": 1})) == {"yes", "no"}
    # A batch with a column the model lacks, and without one it has.
    model.learn_many(pa.table({"a": [1.0, 2.0], "z": [1, 2]}), ["yes", "no"])
    assert model.ignored_values == 3 and model.rows_learnt == 5


def test_new_labels_mid_stream_are_learnt_from_their_first_row():
    model = sb.AdaOlm(n_learners=5)
    for i in range(50):
        model.learn_one({"x": float(i % 3)}, ["a", "b"][i % 2])
    assert set(model.predict_proba_one({"x": 0.0})) == {"a", "b"}
    model.learn_many(pa.table({"x": [2.0, 2.0]}), ["c", "c"])
    proba = model.predict_proba_one({"x": 2.0})
    assert set(proba) == {"a", "b", "c"} and abs(sum(proba.values()) - 1) < 1e-12


def test_labels_keep_their_python_type():
    model = sb.Hoeffding()
    for i in range(20):
        model.learn_one({"x": float(i)}, i % 2 == 0)
    assert set(model.predict_proba_one({"x": 1.0})) == {True, False}
    assert model.predict_many(pa.table({"x": [1.0]}))[0] in (True, False)


def test_score_appends_the_prediction_and_learns_the_labelled_rows(car):
    model = sb.Ova(binary={"n_learners": 5})
    scored = model.score(car.slice(0, 600), label="label")
    assert scored.column_names == car.column_names + ["predicted_label", "predicted_label_probs"]
    assert model.rows_learnt == 600
    # Without the label column, rows are only scored (by the online protocol's prediction:
    # Adaboost.OLM draws its expert, so the labels may differ from `predict_many`'s).
    unlabelled = car.slice(600, 100).drop_columns(["label"])
    scored = model.score(unlabelled, label="label")
    assert model.rows_learnt == 600
    assert set(scored.column("predicted_label").to_pylist()) <= {"acc", "good", "unacc", "vgood"}
    probs = scored.column("predicted_label_probs").to_pylist()
    assert all(abs(sum(p) - 1) < 1e-12 for p in probs)
    # A model whose prediction is its most probable label scores as `predict_many`.
    tree = sb.Hoeffding()
    tree.learn_many(car.slice(0, 600).drop_columns(["label"]), car.column("label").to_pylist()[:600])
    assert tree.score(unlabelled).column("predicted_label").to_pylist() == tree.predict_many(unlabelled)


def test_score_meets_a_new_label_mid_batch():
    model = sb.AdaOlm(n_learners=5)
    table = pa.table({"x": [float(i % 4) for i in range(40)], "y": ["a", "b"] * 15 + ["c"] * 10})
    scored = model.score(table, label="y")
    probs = scored.column("predicted_y_probs").to_pylist()
    assert len(probs[0]) == 3 and probs[0][2] == 0.0  # c was met after row 0
    assert set(model.predict_proba_one({"x": 1.0})) == {"a", "b", "c"}
    assert scored.column("predicted_y").to_pylist()[0] == "a"


def test_labels_that_come_later():
    model = sb.Hoeffding(classes=("a", "b"))
    assert model.event("e1", {"x": 1.0}) == "a"  # uniform: the first declared label
    model.event("e2", {"x": 2.0})
    assert model.rows_learnt == 0
    assert [model.label("e1", "a"), model.label("nope", "b"), model.label("e2", "c")] == [
        "learnt",
        "unmatched",
        "learnt",
    ]
    stats = model.delay_stats
    assert (stats["events"], stats["learnt"], stats["unmatched_labels"], stats["pending"]) == (2, 2, 1, 0)
    assert model.rows_learnt == 2 and set(model.predict_proba_one({"x": 1.0})) == {"a", "b", "c"}
    # Waiting events are part of the model: a pickle keeps them.
    model.event("e3", {"x": 3.0})
    again = pickle.loads(pickle.dumps(model))
    assert again.label("e3", "b") == "learnt" and again.delay_stats["pending"] == 0


def test_pending_events_are_bounded_and_times_do_not_go_back():
    model = sb.Hoeffding(classes=("a", "b"))
    model.pending(max_events=2, ttl=10.0)
    for i in range(3):
        model.event(i, {"x": float(i)}, time=float(i))
    assert model.delay_stats["evicted"] == 1 and model.delay_stats["pending"] == 2
    assert model.label(0, "a", time=3.0) == "unmatched"  # evicted
    with pytest.raises(ValueError, match="goes back"):
        model.event(9, {"x": 1.0}, time=1.0)
    model.event(10, {"x": 1.0}, time=20.0)
    assert model.label(1, "a", time=20.0) == "unmatched"  # its time to live passed
    with pytest.raises(ValueError, match="met no label"):
        sb.Hoeffding().event(1, {"x": 1.0})


@pytest.mark.parametrize("algorithm", ["Bmr", "AdaOlmr"])
def test_a_rankers_learn_many_is_its_learn_one_loop(algorithm):
    """On emotions (or its seeded stand-in), label sets as a table of boolean columns, as
    pandas and as dicts: the scores afterwards are the `learn_one` loop's, bit for bit."""
    import pandas as pd

    from test_river import music_rows

    rows = music_rows()[:300]
    X = pa.Table.from_pylist([x for x, _ in rows])
    Y = pa.Table.from_pylist([y for _, y in rows])
    looped = getattr(sb, algorithm)()
    for x, y in rows:
        looped.learn_one(x, y)
    expected = [looped.predict_scores_one(x) for x, _ in rows[:50]]
    for labels in (Y, Y.to_pandas(), [y for _, y in rows]):
        batched = getattr(sb, algorithm)()
        for start in range(0, len(rows), 128):
            part = labels[start : start + 128] if isinstance(labels, list) else labels.slice(start, 128) if hasattr(labels, "slice") else labels.iloc[start : start + 128]
            batched.learn_many(X.slice(start, 128), part)
        assert batched.rows_learnt == len(rows)
        assert batched.predict_scores_many(X.slice(0, 50)) == expected
        assert batched.predict_many(X.slice(0, 50)) == [looped.predict_one(x) for x, _ in rows[:50]]
    frame = batched.predict_scores_many(X.slice(0, 50).to_pandas())
    assert isinstance(frame, pd.DataFrame) and frame.to_dict("records") == expected


def test_a_rankers_refused_batch_changes_nothing():
    model = sb.Bmr()
    X = pa.table({"a": [0.1, 0.2], "b": [1.0, 2.0]})
    model.learn_many(X, [{"x": True, "y": False}, {"x": False, "y": True}])
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="not one the ranker ranks"):
        model.learn_many(X, [{"x": True}, {"z": True}])
    with pytest.raises(ValueError, match="2 rows but 1 label sets"):
        model.learn_many(X, [{"x": True}])
    assert pickle.dumps(model) == before
