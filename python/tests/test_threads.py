"""A model shared between Python threads: calls are serialised on the model, never torn, and
the model's work runs without the GIL."""

from __future__ import annotations

import threading
import time

import pyarrow as pa

import streamboost as sb


def rows(n, offset=0):
    return [({"a": float((i * 7) % 13), "b": ["x", "y", "z"][i % 3]}, ["p", "q"][(i * 5) % 7 > 3]) for i in range(offset, offset + n)]


def test_threads_learning_one_model_lose_no_row():
    model = sb.AdaOlm(n_learners=10)
    errors = []

    def learn(offset):
        try:
            for x, y in rows(300, offset):
                model.learn_one(x, y)
                model.predict_proba_one(x)
        except Exception as e:  # pragma: no cover - a failure is reported below
            errors.append(e)

    threads = [threading.Thread(target=learn, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert model.rows_learnt == 1200
    proba = model.predict_proba_one({"a": 1.0, "b": "x"})
    assert abs(sum(proba.values()) - 1) < 1e-12


def test_a_long_call_lets_other_threads_run():
    data = rows(30000)
    X = pa.Table.from_pylist([x for x, _ in data])
    y = [y for _, y in data]
    model = sb.AdaOlm(n_learners=30)
    done = threading.Event()
    spent = []

    def learn():
        start = time.perf_counter()
        model.learn_many(X, y)
        spent.append(time.perf_counter() - start)
        done.set()

    worker = threading.Thread(target=learn)
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
    worker.join()
    # Had the call held the GIL, this thread could not have counted while it ran.
    assert spent[0] > 0.05
    assert ticks > 10_000, (ticks, spent)
