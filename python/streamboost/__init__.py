"""Online boosting from Rust, as River-compatible models.

One class per online algorithm of streamboost's catalogue (``Ova``, the command line's
default, ``AdaOlm``, ``Mbbm``, ``Oza``, ``Osboost``, ``Hoeffding``, ... and the rankers
``Bmr`` and ``AdaOlmr``; ``ALGORITHMS`` maps each algorithm name to its class). A class's
keyword arguments are its config's fields, with the defaults of the command line's ``--algo
NAME``; a nested field (a weak learner's config) is ``None`` for its default or a dict of the
fields that differ (``weak={"learner": "naive-bayes"}``). ``seed`` seeds the model's random
choices, ``classes`` declares labels up front (optional: a label is learnt from the first row
that has it).

Why a class per algorithm rather than one class taking the algorithm's name: River's
conventions (``clone``, ``_get_params``, ``check_estimator``) read a model's parameters
from its constructor's signature, and each algorithm has its own fields and defaults.

Rows are dicts (``learn_one``, ``predict_one``, ``predict_proba_one``) or Arrow data
(``learn_many``, ``predict_many``, ``predict_proba_many``, ``score``: a pyarrow Table or
RecordBatch, a Polars or pandas DataFrame, anything with ``__arrow_c_stream__``), read
through the Arrow PyCapsule interface. A batch learns what its rows would one by one. The
first row learnt fixes the features (its keys, numeric or, for string values, nominal); later
rows may lack some (missing values) or bring others (not learnt, counted in
``ignored_values``).

A model pickles as its Parquet checkpoint; ``load(path)`` reads a checkpoint the command line
wrote, and ``model.save(path)`` writes one it reads. ``LiveModel`` is the command line's live
model; ``progressive_val_score`` is ``replay``; ``streamboost.datafusion`` puts the SQL
functions into datafusion-python. docs/python.md has the whole of it.
"""

from __future__ import annotations

import inspect
import json
import keyword
import threading
import typing

from . import _streamboost
from ._streamboost import version as _version

__version__ = _version()

try:  # River's base classes when River is installed, so River's tools take the models.
    from river import base as _river_base

    _Base = _river_base.MiniBatchClassifier
    _MultiLabelBase = _river_base.MultiLabelClassifier
except ImportError:  # pragma: no cover - exercised by the tests without River
    _river_base = None

    class _Base:  # type: ignore[no-redef]
        """The part of River's ``Estimator`` the models rely on, without River."""

        def _get_params(self) -> dict[str, typing.Any]:
            return {
                name: getattr(self, name)
                for name in inspect.signature(self.__class__).parameters
            }

        def clone(self, new_params: dict | None = None, include_attributes: bool = False):
            params = {**self._get_params(), **(new_params or {})}
            return self.__class__(**params)

        def __repr__(self) -> str:
            args = ", ".join(f"{k}={v!r}" for k, v in self._get_params().items())
            return f"{self.__class__.__name__}({args})"

        def predict_one(self, x: dict, **kwargs):
            proba = self.predict_proba_one(x, **kwargs)
            return max(proba, key=proba.get) if proba else None

    class _MultiLabelBase(_Base):  # type: ignore[no-redef]
        """River's ``MultiLabelClassifier``, without River."""


class _Configured:
    """What every streamboost model's class has: its config's fields as parameters, its
    core, its labels' Python values, its checkpoint (pickles, ``save``)."""

    _algorithm: str = ""
    _binary: bool = False
    _defaults: dict[str, typing.Any] = {}
    #: The config field of each parameter whose name differs (a Python keyword gets a
    #: trailing underscore: ``lambda_`` sets ``lambda``).
    _fields: dict[str, str] = {}

    def __init__(self, **params):
        for name, value in params.items():
            setattr(self, name, value)
        self._lock = threading.Lock()
        self._core = _streamboost.Core(self._config_json(), self.seed, self._class_names())
        self._labels: dict[str, typing.Any] = {
            str(c): c for c in (getattr(self, "classes", None) or ())
        }

    @property
    def _is_stochastic(self) -> bool:
        return True

    @property
    def _raw_memory_usage(self) -> int:
        return self._core.heap_bytes()

    @classmethod
    def _unit_test_params(cls):
        yield {}

    # -- the config ------------------------------------------------------------------------
    def _config_json(self) -> str:
        config: dict[str, typing.Any] = {"algorithm": self._algorithm}
        for name in self._defaults:
            value = getattr(self, name)
            if value is None:
                continue  # the algorithm's default
            field = self._fields.get(name, name)
            config[field] = list(value) if isinstance(value, tuple) else value
        return json.dumps(config)

    def _class_names(self) -> list[str] | None:
        if getattr(self, "classes", None) is None:
            return None
        return [self._name_of(c, {}) for c in self.classes]

    @property
    def config(self) -> dict:
        """The model's full config, as the command line and checkpoints write it."""
        return json.loads(self._core.config())

    # -- labels --------------------------------------------------------------------------
    @staticmethod
    def _name_of(label, known: dict) -> str:
        name = str(label)
        other = known.get(name, label)
        if other != label:
            raise ValueError(
                f"labels {other!r} and {label!r} have the same name {name!r}: "
                "labels must differ as strings"
            )
        return name

    def _names(self, labels: list) -> tuple[list, dict]:
        """The names of ``labels`` (None stays None), and the labels met with them, the
        model's first: checked, and kept only once the core has learnt them (``_learnt``)."""
        met = dict(self._labels)
        names = [None if v is None else self._name_of(v, met) for v in labels]
        for name, v in zip(names, labels):
            if name is not None:
                met.setdefault(name, v)
        return names, met

    def _learnt(self, names: dict) -> None:
        """Keeps the Python values of labels the model has learnt."""
        for name, label in names.items():
            self._labels.setdefault(name, label)

    def _label(self, name: str):
        return self._labels.get(name, name)

    # -- state -----------------------------------------------------------------------------
    @property
    def rows_learnt(self) -> int:
        """Rows learnt so far."""
        return self._core.rows_learnt()

    @property
    def ignored_values(self) -> int:
        """Values of features outside the model's (not learnt) met so far."""
        return self._core.ignored_values()

    @property
    def features(self) -> list[tuple[str, str]]:
        """The features the model reads, in order: (name, "numeric" or "nominal")."""
        return [(n, "nominal" if nom else "numeric") for n, nom in self._core.features()]

    def save(self, path) -> None:
        """Writes the model's checkpoint to ``path`` atomically (the command line's
        ``--load`` reads it)."""
        self._core.save(str(path))

    def __getstate__(self):
        params = {name: getattr(self, name) for name in self._defaults}
        params["seed"] = self.seed
        if hasattr(self, "classes"):  # a ranker's labels are its first row's
            params["classes"] = self.classes
        return {
            "params": params,
            "checkpoint": self._core.to_bytes(),
            "labels": list(self._labels.items()),
            "clock": getattr(self, "_clock", 0.0),
        }

    def __setstate__(self, state):
        for name, value in state["params"].items():
            setattr(self, name, value)
        self._lock = threading.Lock()
        if state["checkpoint"] is None:
            self._core = _streamboost.Core(self._config_json(), self.seed, self._class_names())
        else:
            self._core = _streamboost.Core.from_bytes(state["checkpoint"])
        self._labels = dict(state["labels"])
        self._clock = state.get("clock", 0.0)


class Model(_Configured, _Base):
    """A streamboost classifier: the base of every classifying algorithm's class (see the
    module's docs)."""

    # -- what River reads ----------------------------------------------------------------
    @property
    def _multiclass(self) -> bool:
        return not self._binary

    # -- one row ---------------------------------------------------------------------------
    def learn_one(self, x: dict, y, w: float = 1.0) -> None:
        """Learns row ``x`` with label ``y`` and importance weight ``w``."""
        with self._lock:
            name = self._name_of(y, self._labels)
            self._core.learn_one(x, name, float(w))
            self._learnt({name: y})

    def predict_proba_one(self, x: dict) -> dict:
        """The probability of each label learnt so far ({} before any)."""
        return {self._label(n): p for n, p in self._core.predict_proba_one(x)}

    def predict_one(self, x: dict):
        """The most probable label (the first learnt on a tie), or None before any."""
        best = None
        for name, p in self._core.predict_proba_one(x):
            if best is None or p > best[1]:
                best = (name, p)
        return None if best is None else self._label(best[0])

    # -- labels that come later --------------------------------------------------------------
    def event(self, id, x: dict, time: float | None = None):
        """Scores event ``id`` (row ``x``) now and keeps it until its label comes
        (``label``); returns the label predicted. ``time`` orders events and labels apart
        (each must not go back; default: the count of calls so far); an event waits at
        most as ``pending`` says. The model must know a label (learnt or declared)."""
        with self._lock:
            _, predicted = self._core.event(str(id), x, self._time(time))
        return None if predicted is None else self._label(predicted)

    def label(self, id, y, time: float | None = None) -> str:
        """Label ``y`` of event ``id``: the event is learnt if it waits (``"learnt"``);
        otherwise the label is held for it where early labels are (``"held"``), or counted
        (``"unmatched"``)."""
        with self._lock:
            name = self._name_of(y, self._labels)
            outcome = self._core.label(str(id), name, self._time(time))
            self._learnt({name: y})
        return outcome

    def pending(self, max_events: int = 1_000_000, max_bytes: int = 1 << 30,
                ttl: float | None = None, early_label_tolerance: float = 0.0) -> None:
        """How many events may wait for their labels (the oldest are evicted beyond either
        bound), how long (``ttl``, in ``time``'s units; None: until evicted), and how long a
        label that comes before its event is held for it (0: not held)."""
        self._core.set_pending(max_events, max_bytes, ttl, float(early_label_tolerance))

    @property
    def delay_stats(self) -> dict | None:
        """Events scored, learnt, expired, evicted; labels unmatched; events pending."""
        stats = self._core.delay_stats()
        return None if stats is None else json.loads(stats)

    def _time(self, time) -> float:
        self._clock = getattr(self, "_clock", 0.0) + 1.0
        return self._clock if time is None else float(time)

    # -- Arrow batches ---------------------------------------------------------------------
    def learn_many(self, X, y, w: float = 1.0) -> None:
        """Learns the rows of ``X`` (Arrow data or a pandas DataFrame) in order, row ``i``
        with label ``y[i]`` (None: not learnt): as ``learn_one`` on each row."""
        with self._lock:
            names, met = self._names(_values(y))
            self._core.learn_many(_arrow(X), names, float(w))
            self._learnt(met)

    def predict_proba_many(self, X):
        """The probability of each label learnt so far for each row of ``X``: a pandas
        DataFrame (one column per label) when ``X`` is one, else a pyarrow Table."""
        names, flat = self._core.predict_proba_many(_arrow(X))
        k = len(names)
        n = len(flat) // k if k else _num_rows(X)
        columns = {self._label(name): flat[i::k] if k else [] for i, name in enumerate(names)}
        if _is_pandas(X):
            import pandas as pd

            return pd.DataFrame(columns, index=X.index, columns=list(columns) or None)
        import pyarrow as pa

        return pa.table({str(c): v for c, v in columns.items()}) if k else pa.table({})

    def predict_many(self, X):
        """The most probable label of each row of ``X``: a pandas Series when ``X`` is a
        DataFrame, else a list."""
        names, flat = self._core.predict_proba_many(_arrow(X))
        k = len(names)
        labels = []
        for r in range(len(flat) // k if k else _num_rows(X)):
            row = flat[r * k : (r + 1) * k]
            labels.append(self._label(names[max(range(k), key=row.__getitem__)]) if k else None)
        if _is_pandas(X):
            import pandas as pd

            return pd.Series(labels, index=X.index, dtype=object)
        return labels

    def score(self, X, label: str | None = None, w: float = 1.0):
        """Scores the rows of ``X`` test-then-train, as ``streamboost replay`` and the SQL
        operator do: each row is predicted, then learnt from its label in column ``label``
        (a row without one is only scored). Returns ``X`` as a pyarrow Table with two columns
        appended: ``predicted_<label>``, the label predicted, and ``predicted_<label>_probs``,
        the probability of each label (their names, as JSON, in the field's metadata under
        ``streamboost.classes``, as the operator writes them)."""
        import pyarrow as pa

        table = pa.Table.from_pandas(X, preserve_index=False) if _is_pandas(X) else pa.table(X)
        has_label = label is not None and label in table.column_names
        features = table.drop_columns([label]) if has_label else table
        labels = table.column(label).to_pylist() if has_label else [None] * table.num_rows
        with self._lock:
            names, met = self._names(labels)
            classes, predicted, flat = self._core.score(features, names, float(w))
            self._learnt(met)
        column = label or "label"
        values = pa.array([None if c is None else self._label(classes[c]) for c in predicted])
        k = len(classes)
        probs = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float64()), k) if k else (
            pa.nulls(table.num_rows, pa.list_(pa.float64(), 0))
        )
        names_json = json.dumps([str(self._label(c)) for c in classes])
        probs_field = pa.field(
            f"predicted_{column}_probs", probs.type, metadata={_streamboost.CLASSES_KEY: names_json}
        )
        table = table.append_column(f"predicted_{column}", values)
        return table.append_column(probs_field, probs)


class Ranker(_Configured, _MultiLabelBase):
    """A streamboost ranker (OnlineBMR, Ada.OLMR): a River multi-label classifier. A row's
    labels are a dict of label -> relevant (bool); the first row learnt names the labels the
    ranker ranks (a later row naming another is refused; one it lacks is not relevant).
    ``predict_one`` gives the predicted set (the labels scoring above the mean score, as the
    crate's multi-label reports predict), ``predict_scores_one`` the scores, higher meaning
    more relevant. Scores are not probabilities: ``predict_proba_one`` is not offered."""

    def learn_one(self, x: dict, y: dict, w: float = 1.0) -> None:
        """Learns row ``x`` with its label set ``y`` (label -> relevant) and weight ``w``."""
        with self._lock:
            names, met = self._names(list(y))
            pairs = [(name, bool(relevant)) for name, relevant in zip(names, y.values())]
            self._core.learn_labels_one(x, pairs, float(w))
            self._learnt(met)

    def predict_scores_one(self, x: dict) -> dict:
        """Each label's score for row ``x`` ({} before the first row)."""
        return {self._label(n): score for n, score, _ in self._core.predict_scores_one(x)}

    def predict_one(self, x: dict) -> dict:
        """Each label, and whether it is in the predicted set ({} before the first row)."""
        return {self._label(n): bool(is_in) for n, _, is_in in self._core.predict_scores_one(x)}

    def learn_many(self, X, Y, w: float = 1.0) -> None:
        """Learns the rows of ``X`` (Arrow data or a pandas DataFrame) in order, row ``i``
        with the label set of row ``i`` of ``Y``: a table of one column per label (pyarrow,
        pandas, Polars; true where relevant, null where the row does not name it) or a list
        of dicts, as ``learn_one`` on each row."""
        with self._lock:
            sets = _label_sets(Y)
            labels = list(dict.fromkeys(label for row in sets for label in row))
            names, met = self._names(labels)
            name_of = dict(zip(labels, names))
            pairs = [[(name_of[label], bool(r)) for label, r in row.items()] for row in sets]
            self._core.learn_labels_many(_arrow(X), pairs, float(w))
            self._learnt(met)

    def predict_scores_many(self, X):
        """Each label's score for each row of ``X``: a pandas DataFrame (one column per
        label) when ``X`` is one, else a list of dicts."""
        return self._many(X, scores=True)

    def predict_many(self, X):
        """Each label, and whether it is in each row's predicted set: a pandas DataFrame
        when ``X`` is one, else a list of dicts."""
        return self._many(X, scores=False)

    def _many(self, X, scores: bool):
        names, flat_scores, flat_sets = self._core.predict_scores_many(_arrow(X))
        labels, k = [self._label(n) for n in names], len(names)
        flat = flat_scores if scores else [bool(v) for v in flat_sets]
        rows = [dict(zip(labels, flat[r * k : (r + 1) * k])) for r in range(len(flat) // k)] if k else []
        if not k:
            rows = [{} for _ in range(_num_rows(X))]
        if _is_pandas(X):
            import pandas as pd

            return pd.DataFrame(rows, index=X.index, columns=labels)
        return rows


def _is_pandas(X) -> bool:
    return type(X).__module__.startswith("pandas")


def _num_rows(X) -> int:
    return len(X) if hasattr(X, "__len__") else X.num_rows


def _arrow(X):
    """Arrow data as the core reads it: anything with the Arrow PyCapsule interface."""
    if _is_pandas(X):
        import pyarrow as pa

        # pandas' own export keeps the index as a column: read the columns alone.
        return pa.Table.from_pandas(X, preserve_index=False)
    return X


def _label_sets(Y) -> list:
    """Label sets as dicts label -> relevant, from a list of dicts or a table of one column
    per label (pyarrow, pandas, Polars); a null names no label."""
    if hasattr(Y, "to_dict") and _is_pandas(Y):
        rows = Y.to_dict("records")
    elif hasattr(Y, "to_dicts"):
        rows = Y.to_dicts()
    elif hasattr(Y, "to_pylist"):
        rows = Y.to_pylist()
    else:
        rows = list(Y)
    return [{label: r for label, r in row.items() if r is not None and r == r} for row in rows]


def _values(y) -> list:
    """Labels as a list, from a list, a pandas Series, a pyarrow or Polars array."""
    if hasattr(y, "to_pylist"):
        return y.to_pylist()
    if hasattr(y, "tolist"):
        return y.tolist()
    if hasattr(y, "to_list"):
        return y.to_list()
    return list(y)


def _class_name(algorithm: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in algorithm.split("-"))


def _default(value):
    """A config field's default as a constructor default: scalars as they are, lists as
    tuples, nested configs as None (their default)."""
    if isinstance(value, list):
        return tuple(_default(v) for v in value) if all(
            not isinstance(v, (dict, list)) for v in value
        ) else None
    if isinstance(value, dict):
        return None
    return value


def _parameter(field: str) -> str:
    """The constructor parameter of a config field: its name, or with a trailing underscore
    where it is a Python keyword."""
    return field + "_" if keyword.iskeyword(field) else field


def _model_class(algorithm: str, about: str, learns: str, config_json: str) -> type:
    """The class of ``algorithm``: a ``Model`` (a classifier) or, for a ranker, a
    ``Ranker``, whose parameters are its config's fields, ``seed`` and (not for a ranker,
    whose labels its first row names) ``classes``."""
    config = json.loads(config_json)
    fields = {_parameter(f): f for f in config if f != "algorithm"}
    defaults = {name: _default(config[field]) for name, field in fields.items()}
    binary, ranker = learns == "binary", learns == "ranking"
    parameters = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
        for name, default in defaults.items()
    ] + [inspect.Parameter("seed", inspect.Parameter.KEYWORD_ONLY, default=1)]
    if not ranker:
        # A binary booster's labels are River's binary ones unless declared otherwise.
        parameters.append(
            inspect.Parameter(
                "classes", inspect.Parameter.KEYWORD_ONLY, default=(False, True) if binary else None
            )
        )
    signature = inspect.Signature(parameters)
    base = Ranker if ranker else Model

    def __init__(self, **params):
        bound = signature.bind(**params)
        bound.apply_defaults()
        _Configured.__init__(self, **bound.arguments)

    __init__.__signature__ = signature.replace(
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *parameters]
    )
    extra = "``seed``" if ranker else "``seed`` and ``classes``"
    doc = (
        f"{about}\n\n``--algo {algorithm}`` of the command line. Parameters: the config's "
        f"fields ({', '.join(defaults) or 'none'}), then {extra}."
    )
    return type(
        _class_name(algorithm),
        (base,),
        {
            "__init__": __init__,
            "__doc__": doc,
            "__module__": __name__,
            "__qualname__": _class_name(algorithm),
            "_algorithm": algorithm,
            "_binary": binary,
            "_defaults": defaults,
            "_fields": {p: f for p, f in fields.items() if p != f},
        },
    )


#: Every online algorithm of the catalogue (classifiers and rankers) by its name.
ALGORITHMS: dict[str, type] = {}
for _row in _streamboost.algorithms():
    _cls = _model_class(*_row)
    ALGORITHMS[_row[0]] = _cls
    globals()[_cls.__name__] = _cls
del _row, _cls


class LiveModel:
    """A model bound to a checkpoint and a commit policy, as ``streamboost run`` keeps its
    own: made from the checkpoint at ``path`` when it exists, else fresh from ``model``'s
    config, seed and classes at the first batch (its classes, if not declared, are the first
    batch's labels, sorted; a later label outside them is counted, its row scored, not
    learnt); committed every ``every`` rows and every ``interval`` seconds, between batches,
    and by ``commit`` and ``close``.

    - ``process(data)`` scores each row of an Arrow batch and learns the labelled ones
      (column ``label``), returning the rows with ``predicted_<label>`` and
      ``predicted_<label>_probs`` appended: what ``run`` writes.
    - ``key``: one model per value of that column; ``path`` is then a directory, and keys
      beyond ``memory_budget`` bytes are spilled to it and read back when they reappear.
    - ``id`` and ``time``: labels that come apart from their events; ``labels(data)`` learns a
      batch of them (the id, label and time columns), one outcome row each. ``pending``
      bounds the events waiting: ``(max_events, max_bytes, ttl, early_label_tolerance)``.
    - ``learn_once_by``: an ordering column; a row at or before the last one learnt is scored
      and not learnt again (a stream replayed after a crash).

    What a restart sees: the last commit; what was learnt after it is learnt again from the
    rows given again. One process holds a checkpoint at a time: another's live model on it is
    refused, naming the holder. Use it as a context manager: a block that ends normally
    commits and closes; one that raises closes without committing.
    """

    def __init__(self, path, model: Model | None = None, *, label: str = "label",
                 every: int | None = None, interval: float | None = 60.0,
                 learn_once_by: str | None = None, key: str | None = None,
                 memory_budget: int | None = None, id: str | None = None,
                 time: str | None = None,
                 pending: tuple = (1_000_000, 1 << 30, None, 0.0),
                 passthrough: tuple = ()):
        model = model if model is not None else Ova()
        classes = model._class_names()
        self._live = _streamboost.Live(
            str(path), model._config_json(), model.seed, label, classes, every, interval,
            learn_once_by, key, memory_budget, id, time, tuple(pending), list(passthrough),
        )

    def process(self, data):
        """The rows of ``data`` scored (and learnt where labelled), as a pyarrow Table."""
        import pyarrow as pa

        return pa.Table.from_batches(self._live.process(_arrow(data)))

    def labels(self, data):
        """Labels that come after their events: one outcome row per label row."""
        import pyarrow as pa

        return pa.Table.from_batches(self._live.labels(_arrow(data)))

    def commit(self) -> None:
        """Commits now; returns once the commit is in place."""
        self._live.commit()

    def close(self) -> None:
        """Commits, then lets the checkpoint go (another process may then open it)."""
        self._live.close()

    @property
    def stats(self) -> dict:
        """Rows seen and learnt, unknown labels, commits and their seconds and bytes."""
        return json.loads(self._live.stats())

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.close()
        else:
            self._live = None  # dropped: nothing committed, the lock let go


def run(input_dir, output_dir, path, model: Model | None = None, *, label: str = "label",
        every: int | None = None, interval: float | None = 60.0, key: str | None = None,
        passthrough: tuple = (), labels_dir=None, id: str | None = None,
        time: str | None = None, pending: tuple = (1_000_000, 1 << 30, None, 0.0)) -> dict:
    """``streamboost run --once``: every complete file of ``input_dir`` not taken yet (CSV or
    Parquet, in name order; with ``labels_dir``, ``id`` and ``time``, label files too) is
    scored into ``output_dir``, one Parquet file per input file, exactly once across crashes
    and restarts, by the live model at ``path`` (as ``LiveModel`` makes one, committed by its
    policy), and what was taken is returned: files, rows, files rejected (moved to
    ``rejected/`` with their reason), commits. Watching the directory for more files is the
    command line's."""
    model = model if model is not None else Ova()
    stats = _streamboost.run_once(
        str(input_dir), str(output_dir), str(path), model._config_json(), model.seed, label,
        model._class_names(), every, interval, key, list(passthrough),
        None if labels_dir is None else str(labels_dir), id, time, tuple(pending),
    )
    return json.loads(stats)


def progressive_val_score(data, model: Model, *, label: str, final_fraction: float = 0.2,
                          window: int | None = None, plot=None, name: str = "data") -> dict:
    """Replays ``data`` (Arrow data or a pandas DataFrame, labelled by column ``label``)
    through the fresh ``model`` test-then-train, as ``streamboost replay --input FILE
    --label LABEL`` replays a file with the same model flags and seed: the same driver, so
    the same report (the ``report`` object of ``replay --report``: accuracy and kappa overall
    and on the final fraction, per class, the confusion matrix, the learning curve every
    ``window`` rows (a hundredth of the stream by default), throughput).

    With ``plot`` (a ``.svg`` or ``.png`` path), ``replay --plot``'s chart of the learning
    curve, titled after ``name``.

    The model has then learnt the rows; its labels are the label column's values as strings
    (the class names of the report)."""
    plot = None if plot is None else str(plot)
    with model._lock:
        report = model._core.evaluate(_arrow(data), label, float(final_fraction), window, plot, name)
        model._labels = {name: name for name in model._core.labels()}
    return json.loads(report)


def load(path) -> Model | Ranker:
    """The model of the checkpoint at ``path`` (written by ``streamboost replay --save``,
    ``run``, or ``Model.save``), ready to go on; its labels are the checkpoint's class names."""
    core = _streamboost.Core.load(str(path))
    config = json.loads(core.config())
    cls = ALGORITHMS[config["algorithm"]] if config["algorithm"] in ALGORITHMS else None
    if cls is None:
        raise ValueError(f"{config['algorithm']} models do not learn online: not loaded here")
    model = cls.__new__(cls)
    for name, default in cls._defaults.items():
        value = config.get(cls._fields.get(name, name), default)
        setattr(model, name, _default(value) if isinstance(value, (dict, list)) else value)
    model.seed = core.seed
    if not issubclass(cls, Ranker):
        model.classes = None
    model._lock = threading.Lock()
    model._core = core
    model._labels = {name: name for name in core.labels()}
    return model


__all__ = ["ALGORITHMS", "LiveModel", "Model", "Ranker", "load", "progressive_val_score", "run", *(c.__name__ for c in ALGORITHMS.values())]
