"""The README's Python code runs as written (its ```python blocks, in order, in one
namespace), from a directory holding the bundled data as the README's commands do."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from conftest import REPO


def test_the_readmes_python_blocks_run(tmp_path, capsys):
    pytest.importorskip("river")
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert blocks, "README.md has no ```python block"
    shutil.copytree(REPO / "data", tmp_path / "data")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        namespace: dict = {}
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)
    finally:
        os.chdir(here)
    printed = capsys.readouterr().out
    assert "0.9335" in printed, printed
