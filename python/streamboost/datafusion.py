"""streamboost's SQL functions inside datafusion-python.

    import datafusion, streamboost.datafusion
    ctx = datafusion.SessionContext()
    streamboost.datafusion.register(ctx, {"m": "model.parquet"})
    ctx.sql("SELECT boost_predict('m', buying, maint, doors, persons, lug_boot, safety) FROM car")

``register`` adds ``boost_predict``, ``boost_predict_proba`` (scalar functions: a frozen model
scores each row) and ``boost_prequential`` (a window function: test-then-train over
``ORDER BY``, one model per ``PARTITION BY``) to a datafusion-python ``SessionContext``, over
the models given: a checkpoint's path, a streamboost model (fresh: its config, classes and
seed; trained: its checkpoint), or ``live(path, model)`` for a live model. They are the
crate's own functions, handed over through DataFusion's FFI, whose structs hold within a
DataFusion major only: this module refuses, at import, a datafusion-python of another major
than the one the package was built with, naming both, rather than crash. ``boost_score`` is a
plan node, which the FFI does not carry: ``register_scored`` registers it as a table over
Arrow data instead.
"""

from __future__ import annotations

import os
import tempfile

from . import _Configured, _streamboost

#: The DataFusion major the package's functions are built for.
DATAFUSION_MAJOR: int = _streamboost.DATAFUSION_MAJOR


def check_version(version: str) -> None:
    """Refuses a datafusion-python whose major is not ``DATAFUSION_MAJOR``: DataFusion's FFI
    structs change between majors, and a mismatch would crash the process."""
    major = version.split(".")[0]
    if not major.isdigit() or int(major) != DATAFUSION_MAJOR:
        raise ImportError(
            f"streamboost's SQL functions are built for DataFusion {DATAFUSION_MAJOR}, but "
            f"datafusion-python {version} is installed: "
            f"pip install 'datafusion=={DATAFUSION_MAJOR}.*'"
        )


import datafusion as _datafusion  # noqa: E402 - after check_version, which names the fix

check_version(_datafusion.__version__)


class live:  # noqa: N801 - reads as a function in a models dict
    """A live model for ``register``: the checkpoint at ``path``, fresh from ``model`` (its
    config, classes and seed) while it does not exist; ``boost_predict`` scores with its
    last commit."""

    def __init__(self, path, model: _Configured | None = None):
        self.path, self.model = str(path), model


def register(ctx, models: dict) -> "_streamboost.Registry":
    """Adds the streamboost SQL functions over ``models`` (name -> a checkpoint path, a
    streamboost model, or ``live(...)``) to datafusion-python's ``ctx``. Returns the
    registry, which holds the models."""
    registry = _streamboost.Registry()
    for name, source in models.items():
        if isinstance(source, live):
            m = source.model
            if m is None:
                registry.register_live(name, source.path)
            else:
                registry.register_live(name, source.path, m._config_json(), m._class_names() or [], m.seed)
        elif isinstance(source, _Configured):
            if source.rows_learnt == 0 and source.classes is not None:
                registry.register_config(name, source._config_json(), source._class_names(), source.seed)
            elif source.rows_learnt == 0:
                raise ValueError(
                    f"model {name!r} has learnt nothing and declares no classes: "
                    "give it classes=(...) or train it first"
                )
            else:
                # A trained model is registered as its checkpoint, written where the registry
                # reads it and removed once read.
                with tempfile.TemporaryDirectory() as tmp:
                    path = os.path.join(tmp, f"{name}.parquet")
                    source.save(path)
                    registry.load_checkpoint(name, path)
        else:
            registry.load_checkpoint(name, os.fspath(source))
    scalars, windows = registry.functions()
    for f in scalars:
        ctx.register_udf(_datafusion.ScalarUDF.from_pycapsule(f))
    for f in windows:
        ctx.register_udwf(_datafusion.WindowUDF.from_pycapsule(f))
    return registry


def register_scored(ctx, registry, name: str, data, *, model: str, label: str = "label",
                    ts: str = "ts") -> None:
    """Registers table ``name`` in ``ctx``: ``boost_score`` over ``data`` (Arrow data or a
    pandas DataFrame), the rows scored and learnt by ``model`` of ``registry`` (what
    ``register`` returned) in the order of column ``ts``, as ``SELECT * FROM
    boost_score('model', (data), 'label', 'ts')`` gives them in ``streamboost sql``. Each query
    of the table scores the rows again, by the model's rules (a fresh model anew, a live
    model from its last commit)."""
    from . import _arrow

    ctx.register_table(name, registry.scored_table(_arrow(data), model, label, ts))
