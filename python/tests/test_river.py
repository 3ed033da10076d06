"""River's own conventions, checked by River's ``check_estimator``, for every class."""

from __future__ import annotations

import random

import pytest

import streamboost as sb

from conftest import read_csv, shared

river_checks = pytest.importorskip("river.checks")
pytest.importorskip("sklearn")  # River's checks draw some of their data through it

# Every check River has for a classifier runs; none is skipped (``_unit_test_skips`` is
# River's empty default).


CLASSIFIERS = sorted(a for a, c in sb.ALGORITHMS.items() if issubclass(c, sb.Model))
RANKERS = sorted(a for a, c in sb.ALGORITHMS.items() if issubclass(c, sb.Ranker))


@pytest.mark.parametrize("algorithm", CLASSIFIERS)
def test_check_estimator(algorithm):
    model = sb.ALGORITHMS[algorithm]()
    assert not model._unit_test_skips()
    river_checks.check_estimator(model)


def music_rows():
    """River's multi-label data set, Music, is the MULAN emotions set, which River downloads
    at its first use (this machine's network reaches package registries only). Its rows come
    from the shared copy of emotions where there is one, else from a seeded stand-in of the
    same shape (numeric features, six labels that depend on them)."""
    try:
        table = read_csv(shared("emotions").parent / "train.csv")
        names = [c for c in table.column_names if c.startswith("label_")]
        X = table.drop_columns(names).to_pylist()
        Y = [{n[len("label_"):]: bool(v) for n, v in row.items()} for row in table.select(names).to_pylist()]
        return list(zip(X, Y))
    except pytest.skip.Exception:
        rng = random.Random(0)
        rows = []
        for _ in range(600):
            x = {f"f{j}": rng.gauss(0, 1) for j in range(12)}
            y = {f"l{k}": x[f"f{k}"] + 0.3 * rng.gauss(0, 1) > 0.3 for k in range(6)}
            rows.append((x, y))
        return rows


@pytest.mark.parametrize("algorithm", RANKERS)
def test_check_estimator_of_the_rankers(algorithm, monkeypatch):
    """River's own checks of a multi-label classifier, on River's Music data (see
    `music_rows`): River's `_yield_datasets` is given the rows it would have downloaded."""
    rows = music_rows()
    monkeypatch.setattr(
        river_checks, "_yield_datasets", lambda model, scale=1: [rows[: 50 * scale]]
    )
    model = sb.ALGORITHMS[algorithm]()
    assert not model._unit_test_skips()
    river_checks.check_estimator(model)
    # And it ranks: trained on the rows, its predicted sets get more labels right (one minus
    # the Hamming loss) than predicting no label does.
    for x, y in rows[:300]:
        model.learn_one(x, y)
    right = sum(model.predict_one(x)[k] == v for x, y in rows[300:] for k, v in y.items())
    none = sum(not v for _, y in rows[300:] for v in y.values())
    assert right > none, (right, none)


def test_every_online_classifier_of_the_catalogue_has_a_class():
    assert {"ova", "ada-olm", "mbbm", "oza", "oza-bag", "osboost", "hoeffding"} <= set(
        sb.ALGORITHMS
    )
    assert sb.Ova is sb.ALGORITHMS["ova"] and sb.AdaOlm is sb.ALGORITHMS["ada-olm"]


def test_parameters_are_the_configs_fields_with_its_defaults():
    model = sb.AdaOlm()
    assert model.config["n_learners"] == model.n_learners
    other = sb.AdaOlm(n_learners=7, loss="exponential", seed=3)
    assert other.config["n_learners"] == 7 and other.config["loss"] == "exponential"
    assert repr(other) == repr(other.clone())
    # A Python keyword as a field name takes a trailing underscore.
    assert "lambda_" in sb.Oza().__class__.__init__.__signature__.parameters or all(
        "lambda" not in c._defaults for c in sb.ALGORITHMS.values()
    )


def test_a_nested_config_takes_the_fields_that_differ():
    model = sb.AdaOlm(n_learners=3, weak={"learner": "naive-bayes"})
    assert model.config["weak"]["learner"] == "naive-bayes"
    with pytest.raises(ValueError, match="n_learners"):
        sb.AdaOlm(n_learners=0)
    with pytest.raises(TypeError):
        sb.AdaOlm(no_such_field=1)
