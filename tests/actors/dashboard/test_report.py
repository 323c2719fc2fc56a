"""A finished run's report file as the dashboard reads it (actors/dashboard/report.py): what it refuses to read."""

from __future__ import annotations

import json

import pytest

from actors.dashboard.report import read_json_object, read_report


@pytest.mark.parametrize("case,text", [
    ("half written", '{"trade_list": ['),
    ("a list, not an object", "[1, 2]"),
    ("a number", "7"),
    ("empty", ""),
])
def test_a_report_that_is_not_a_json_object_reads_as_none_not_as_a_crash(tmp_path, case, text):
    path = tmp_path / "metrics.json"
    path.write_text(text)
    assert read_json_object(path) is None and read_report(path) is None


def test_a_missing_report_reads_as_none(tmp_path):
    assert read_report(tmp_path / "metrics.json") is None


def test_a_report_object_reads_its_figures(tmp_path):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"net_pnl_usd": 12.5, "trades": 0, "trade_list": []}))
    report = read_report(path)
    assert report is not None and report.figures["net_pnl_usd"] == 12.5 and report.trades == []
