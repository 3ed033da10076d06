"""The Flight SQL server's tests, with real clients: pyarrow's Flight client and the ADBC
Flight SQL driver (both from PyPI).

* ``STREAMBOOST_BIN`` is the ``streamboost`` command built with ``--features serve`` (else
  ``$CARGO_TARGET_DIR/debug/streamboost``, else the repository's ``target/debug``); a test
  skips, saying so, where none is built, and fails where the one built has no server.
* The shared data sets are under ``STREAMBOOST_DATASETS`` (default ``../shared/datasets``
  beside the checkout); a test that needs one skips, saying so, where it is absent.

Every server listens on loopback, on a port the system picks.
"""

from __future__ import annotations

import os
import pathlib
import secrets
import signal
import subprocess
import time

import pyarrow.flight as flight
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


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
    pytest.skip("no streamboost binary built (cargo build --features serve, or set STREAMBOOST_BIN)")


class Server:
    """A ``streamboost serve`` process, its address, and the token of its one client."""

    def __init__(self, cli, models, *args, token: str | None = None, log=None):
        self.token = token
        self.models = pathlib.Path(models)
        self.log = pathlib.Path(log or self.models.parent / "serve.log")
        command = [str(cli), "serve", "--listen", "127.0.0.1:0", "--models", str(models), *map(str, args)]
        if token is not None:
            tokens = self.models.parent / "tokens"
            tokens.write_text(f"# clients\ntests {token}\n")
            command += ["--token-file", str(tokens)]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=open(self.log, "ab"), text=True, cwd=REPO
        )
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            self.process.wait(timeout=30)
            raise AssertionError(f"serve did not start: {line!r}\n{self.log.read_text()}")
        self.address = line.split()[-1]
        self.location = f"grpc://{self.address}"

    def options(self, token: str | None = None) -> flight.FlightCallOptions:
        token = self.token if token is None else token
        headers = [] if token is None else [(b"authorization", f"Bearer {token}".encode())]
        return flight.FlightCallOptions(headers=headers, timeout=120)

    def client(self) -> flight.FlightClient:
        return flight.FlightClient(self.location)

    def stop(self, sig=signal.SIGTERM, timeout=120) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        self.process.stdout.close()
        return code


@pytest.fixture
def serve(cli, tmp_path):
    """Starts servers over ``tmp_path``; stops those still running at the end."""
    started = []

    def start(models, *args, token: str | None = "", **kw):
        token = secrets.token_hex(16) if token == "" else token
        server = Server(cli, models, *args, token=token, **kw)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process.poll() is None:
            server.stop(signal.SIGKILL)


def wait_until(condition, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False
