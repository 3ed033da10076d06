"""Where the tests find their data and the command-line tool.

* The bundled sample, ``data/car.csv`` of the repository, is always there.
* The shared data sets are under ``STREAMBOOST_DATASETS`` (default: ``../shared/datasets``
  beside the checkout); a test that needs one skips, saying so, where it is absent.
* The ``streamboost`` command (for checkpoints written by Rust and reports of ``replay``) is
  ``STREAMBOOST_BIN``, else ``$CARGO_TARGET_DIR/debug/streamboost``, else the repository's
  ``target/debug/streamboost``; tests that need it skip where none is built.
"""

from __future__ import annotations

import os
import pathlib

import pyarrow.csv as pv
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def read_csv(path) -> "pyarrow.Table":
    """A CSV as the command line reads it: every column named in the header; empty cells
    are nulls (missing)."""
    return pv.read_csv(path)


@pytest.fixture(scope="session")
def car():
    return read_csv(REPO / "data" / "car.csv")


def shared(name: str) -> pathlib.Path:
    root = pathlib.Path(os.environ.get("STREAMBOOST_DATASETS", REPO.parent / "shared" / "datasets"))
    path = root / name / "data.csv"
    if not path.exists():
        pytest.skip(f"shared data set {name} not found at {path} (set STREAMBOOST_DATASETS)")
    return path


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    candidates = [os.environ.get("STREAMBOOST_BIN")]
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(pathlib.Path(os.environ["CARGO_TARGET_DIR"]) / "debug" / "streamboost")
    candidates.append(REPO / "target" / "debug" / "streamboost")
    for c in candidates:
        if c and pathlib.Path(c).exists():
            return pathlib.Path(c)
    pytest.skip("no streamboost binary built (cargo build, or set STREAMBOOST_BIN)")
