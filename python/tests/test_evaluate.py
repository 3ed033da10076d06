"""The progressive evaluation from Python is ``streamboost replay``'s."""

from __future__ import annotations

import json
import subprocess

import pytest

import streamboost as sb

from conftest import REPO


def test_the_report_and_chart_are_replays_on_the_bundled_car(car, cli, tmp_path):
    report, chart = tmp_path / "report.json", tmp_path / "replay.svg"
    subprocess.run(
        [str(cli), "replay", "-q", "--input", str(REPO / "data" / "car.csv"), "--report", str(report), "--plot", str(chart)],
        check=True,
        capture_output=True,
    )
    expected = json.loads(report.read_text())
    model = sb.Ova()  # the command line's default model
    ours = tmp_path / "python.svg"
    got = sb.progressive_val_score(car, model, label="label", plot=ours, name="car.csv")
    assert ours.read_text() == chart.read_text()
    assert set(got) - {"throughput"} <= set(expected)
    for key in got:
        if key != "throughput":
            assert got[key] == expected[key], key
    assert model.rows_learnt == car.num_rows
    assert model.predict_one(car.drop_columns(["label"]).to_pylist()[0]) in got["classes"]


def test_an_evaluation_starts_from_a_fresh_model(car):
    model = sb.Hoeffding()
    model.learn_one({"buying": "low"}, "acc")
    with pytest.raises(ValueError, match="fresh"):
        sb.progressive_val_score(car, model, label="label")
    with pytest.raises(ValueError, match="no column `nope`"):
        sb.progressive_val_score(car, sb.Hoeffding(), label="nope")
    with pytest.raises(ValueError, match="svg"):
        sb.progressive_val_score(car, sb.Hoeffding(), label="label", plot="chart.gif")
