"""Bad input gets a clear error and leaves the model as it was."""

from __future__ import annotations

import math
import pickle

import pyarrow as pa
import pytest

import streamboost as sb


def learnt(model):
    return pickle.dumps(model)


def test_bad_rows_are_refused_with_what_was_wrong():
    model = sb.Hoeffding()
    model.learn_one({"n": 1.0, "c": "x"}, "a")
    before = learnt(model)
    with pytest.raises(TypeError, match="feature `n` is numeric"):
        model.learn_one({"n": "text"}, "a")
    with pytest.raises(TypeError, match="feature `n`"):
        model.learn_one({"n": [1, 2]}, "a")
    with pytest.raises(ValueError, match="weight"):
        model.learn_one({"n": 1.0}, "a", w=-1.0)
    with pytest.raises(ValueError, match="weight"):
        model.learn_one({"n": 1.0}, "a", w=math.nan)
    with pytest.raises(ValueError, match="empty string"):
        model.learn_one({"n": 1.0}, "")
    with pytest.raises(TypeError, match="Arrow"):
        model.learn_many([{"n": 1.0}], ["a"])
    with pytest.raises(ValueError, match="2 rows but 1 labels"):
        model.learn_many(pa.table({"n": [1.0, 2.0]}), ["a"])
    with pytest.raises(TypeError, match="column `n` has type"):
        model.learn_many(pa.table({"n": [[1.0]]}), ["a"])
    assert learnt(model) == before


def test_missing_values_nan_none_and_null_are_missing_alike():
    model = sb.NaiveBayes()
    model.learn_one({"n": 1.0, "c": "x"}, "a")
    model.learn_one({"n": 2.0, "c": "y"}, "b")
    p_none = model.predict_proba_one({"n": None, "c": None})
    p_nan = model.predict_proba_one({"n": math.nan, "c": ""})
    p_absent = model.predict_proba_one({})
    p_null = model.predict_proba_many(pa.table({"n": pa.nulls(1, pa.float64()), "c": pa.nulls(1, pa.string())}))
    assert p_none == p_nan == p_absent
    assert [p_null.column(k)[0].as_py() for k in ("a", "b")] == [p_none["a"], p_none["b"]]


def test_a_binary_booster_takes_two_labels():
    model = sb.Osboost()
    assert model.classes == (False, True)
    assert set(model.predict_proba_one({"x": 1.0})) == {False, True}
    model.learn_one({"x": 1.0}, True)
    with pytest.raises(ValueError, match="cannot learn it"):
        model.learn_one({"x": 1.0}, "third")
    named = sb.Osboost(classes=("ham", "spam"))
    named.learn_one({"x": 1.0}, "spam")
    assert set(named.predict_proba_one({"x": 1.0})) == {"ham", "spam"}


def test_labels_that_print_alike_are_refused():
    model = sb.Hoeffding()
    model.learn_one({"x": 1.0}, 1)
    with pytest.raises(ValueError, match="same name"):
        model.learn_one({"x": 1.0}, "1")


def test_a_batch_algorithm_is_not_built_fresh():
    with pytest.raises(ValueError, match="trained in batch"):
        sb._streamboost.Core('{"algorithm": "adaboost-mm"}', 1, None)
