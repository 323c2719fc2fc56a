"""evaluate --gate-walk's figures: the account's daily P&L from a backtest report, the worst 5 % day, the drawdown of
the cumulative days, the paired differences of two arms on the same days, and the arms a user may name."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.statistics import bootstrap_indices
from actors.jobs.common import JobError
from actors.jobs.evaluation.lockstep_walk import (check_gates, compare, daily_pnl, gate_counts, gate_walk,
                                                  max_drawdown, walk_gates, walk_lines, worst_day)


def _report(pnl_by_day: dict[str, list[float]], failed: int = 0) -> dict:
    """A backtest report's metrics.json, as much of it as the walk reads."""
    return {"session_pnl": [{"date": day, "pnl_usd": 999.0} for day in pnl_by_day],  # equity-based: restarts per evaluation
            "trade_list": [{"exit_time_et": f"{day} 10:15", "pnl_usd": pnl} for day, trades in pnl_by_day.items() for pnl in trades],
            "evaluations": failed + 1.0, "passed": 0.0, "failed": float(failed), "open": 1.0, "halted_bars": {"news_blackout": 4}}


def test_the_daily_pnl_is_the_trades_closed_each_session_and_zero_without_one():
    days, daily = daily_pnl(_report({"2024-01-03": [100.0, -30.0], "2024-01-02": [], "2024-01-04": [-50.0]}))
    assert days == ["2024-01-02", "2024-01-03", "2024-01-04"]
    assert daily.tolist() == [0.0, 70.0, -50.0]


def test_the_drawdown_runs_over_days_from_the_start_and_the_worst_day_is_the_fifth_percentile():
    assert max_drawdown(np.array([-100.0, 300.0, -250.0, -100.0, 50.0])) == 350.0
    assert max_drawdown(np.array([10.0, 20.0])) == 0.0 and max_drawdown(np.array([-100.0, 50.0])) == 100.0  # the start is a peak
    days = np.arange(100, dtype=float) - 50.0  # -50 .. 49
    assert worst_day(days) == pytest.approx(np.percentile(days, 5))


def test_paired_differences_resample_the_same_days_for_both_arms():
    rng = np.random.default_rng(0)
    a = rng.normal(0, 100, 60)
    resamples = bootstrap_indices(60, 500, 1, block_length=5, blocks="moving")
    assert resamples.shape == (500, 60) and resamples.max() < 60
    same = compare(a, a.copy(), resamples)
    assert all(figure["value"] == figure["low"] == figure["high"] == 0.0 for figure in same.values())  # paired: no spread
    better = compare(a + 20.0, a, resamples)
    assert better["mean_day_usd"]["value"] == pytest.approx(20.0) and better["mean_day_usd"]["low"] == pytest.approx(20.0)
    with pytest.raises(ValueError, match="different days"):
        compare(a, a[:-1], resamples)


def test_the_walk_pairs_the_llm_gate_with_the_blackout_and_prints_each_arm():
    days = [f"2024-01-{d:02d}" for d in range(2, 22)]
    base = {day: [(-1) ** i * 100.0] for i, day in enumerate(days)}
    gated = {day: [pnl[0] * 0.5] for day, pnl in base.items()}
    walk = gate_walk({"none": (_report(base, failed=2), "n", {}, 1.0), "blackout": (_report(base, failed=2), "b", {}, 1.0),
                      "llm": (_report(gated, failed=1), "l", {"thought_age_mean": 3.0}, 9.0)}, 100, "ckpt")
    assert walk.test_days == 20 and set(walk.pairs) == {"llm-blackout", "llm-none", "blackout-none"}
    assert walk.pairs["llm-blackout"]["max_drawdown_usd"]["value"] == pytest.approx(-50.0)
    text = "\n".join(walk_lines(walk))
    assert "| llm minus blackout |" in text and "-1 |" in text and "news_blackout 4" in text
    assert walk.to_json()["arms"]["llm"]["thought_ages"] == {"thought_age_mean": 3.0}


def test_an_unknown_arm_or_a_market_without_events_is_refused_by_name():
    assert check_gates(["llm", "none"]) == ["none", "llm"]
    with pytest.raises(ValueError, match="got bogus"):
        check_gates(["bogus"])
    assert walk_gates([], True, "news") == ["none", "blackout", "keyword", "oracle", "llm"]
    with pytest.raises(JobError, match="needs a market with events"):
        walk_gates([], False, "regimes")
    with pytest.raises(JobError, match="among none, blackout, keyword, oracle, llm; got sentiment"):
        walk_gates(["oracle", "sentiment"], True, "news_null")


def test_the_gate_counts_read_the_risk_actors_last_counters_and_the_models_own_reads(tmp_path):
    import json

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "risk.jsonl").write_text("\n".join(json.dumps(e) for e in (
        {"event": "stats", "veto_thought_risk": 1}, {"event": "actor_stopped", "veto_thought_risk": 7, "thought_risk_reads": 2})) + "\nnot json\n")
    (logs / "reasoner.jsonl").write_text("\n".join(json.dumps(e) for e in (
        {"event": "thought", "risk": 2, "cached": False}, {"event": "thought", "risk": 2, "cached": True},  # carried: not a read
        {"event": "thought", "risk": 1, "cached": False}, {"event": "thought", "risk": -1, "cached": False})))
    counts = gate_counts(tmp_path)
    assert counts["veto_thought_risk"] == 7 and counts["thought_risk_reads"] == 2 and counts["news_releases"] == 0
    assert (counts["reads_EXTREME"], counts["reads_ELEVATED"], counts["reads_CALM"], counts["reads_none"]) == (1, 1, 0, 1)
    assert gate_counts(tmp_path / "absent") == {}


def test_another_llm_setting_from_a_run_on_the_same_days_is_paired_with_the_floors():
    days = {f"2024-01-{d:02d}": [float(d)] for d in range(2, 12)}
    walk = gate_walk({"none": (_report(days), "n", {}, 1.0), "blackout": (_report(days), "b", {}, 1.0),
                      "llm@ELEVATED": (_report({day: [0.0] for day in days}), "e", {}, 1.0)}, 5, "ckpt")
    assert {"llm@ELEVATED-blackout", "llm@ELEVATED-none", "blackout-none"} == set(walk.pairs)
    assert walk.pairs["llm@ELEVATED-none"]["net_pnl_usd"]["value"] == -sum(range(2, 12))
    assert "| llm@ELEVATED minus blackout |" in "\n".join(walk_lines(walk))


def test_evaluate_refuses_a_gate_walk_on_a_market_without_events_in_one_line_before_any_work(tmp_path, capsys):
    from actors.jobs.cli import main

    assert main(["evaluate", "--market", "regimes", "--gate-walk", "--run-dir", str(tmp_path / "r")]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "--gate-walk needs a market with events" in err[0]
    assert not (tmp_path / "r").exists()
