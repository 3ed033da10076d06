"""River's own conventions, checked by River's ``check_estimator``, for every class."""

from __future__ import annotations

import pytest

import streamboost as sb

river_checks = pytest.importorskip("river.checks")
pytest.importorskip("sklearn")  # River's checks draw some of their data through it

# Every check River has for a classifier runs; none is skipped (``_unit_test_skips`` is
# River's empty default).


@pytest.mark.parametrize("algorithm", sorted(sb.ALGORITHMS))
def test_check_estimator(algorithm):
    model = sb.ALGORITHMS[algorithm]()
    assert not model._unit_test_skips()
    river_checks.check_estimator(model)


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
