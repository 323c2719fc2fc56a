"""The backtest report: a self-contained report.html, metrics.json with every figure shown, warnings for few trades."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from actors.env.batch import BarHistory
from actors.env.account_walk import EvaluationRecord
from actors.env.report import ReportInput, ReportTrade, ThoughtUsed, TradeDecision, entries_sentence, write_backtest_report
from actors.env.statistics import MIN_TRADES, compute_statistics
from actors.env.trading import Trade

START_NS = int(pd.Timestamp("2024-03-04 14:30", tz="UTC").value)
MINUTE_NS = 60 * 10**9


def make_trade(trade_id: int, entry_bar: int, exit_bar: int, pnl: float, side: int = 1) -> Trade:
    return Trade(
        trade_id=trade_id, side=side, contracts=1, entry_bar=entry_bar, exit_bar=exit_bar,
        entry_ns=START_NS + entry_bar * MINUTE_NS, exit_ns=START_NS + exit_bar * MINUTE_NS, entry_price=100.0 + entry_bar * 0.1,
        exit_price=100.0 + exit_bar * 0.1, pnl_usd=pnl, commission_usd=5.0, bars_held=exit_bar - entry_bar,
        exit_reason="target" if pnl > 0 else "stop", mae_points=1.0, mfe_points=2.0,
    )


def decision(step: int, reason: str, veto: str = "") -> TradeDecision:
    thought = ThoughtUsed(action="BUY", confidence=0.7, staleness_steps=1, reason=reason, query_id=f"q-{step}")
    return TradeDecision(step=step, rl_action="BUY", rl_confidence=0.61, thought=thought, fusion_method="rules", fusion_rule="agreement",
                         rl_trust=0.6, llm_trust=0.4, final_action="BUY", veto_reason=veto)


def report_input(n_trades: int = 3, n_bars: int = 600) -> ReportInput:
    times = START_NS + np.arange(n_bars, dtype=np.int64) * MINUTE_NS
    close = 100.0 + np.cumsum(np.random.default_rng(0).normal(0, 0.5, n_bars))
    trades = [make_trade(index, 20 * index + 5, 20 * index + 15, 50.0 if index % 2 else -30.0) for index in range(n_trades)]
    position = np.zeros(n_bars, dtype=np.int64)
    for item in trades:
        position[item.entry_bar:item.exit_bar] = item.side
    equity = 50_000.0 + np.cumsum(np.random.default_rng(1).normal(0, 20, n_bars))
    halts = np.array([""] * n_bars, dtype=object)
    halts[300:360] = "daily_loss"
    stats = compute_statistics(times, equity, position, trades)
    evaluations = [EvaluationRecord(index=0, start_ns=int(times[0]), end_ns=int(times[-1]), outcome="open", reason="data_end", trading_days=1, net_pnl_usd=float(equity[-1] - equity[0]))]
    return ReportInput(
        title="Backtest", bars=BarHistory(times_ns=times, close=close, high=close + 0.5, low=close - 0.5, equity=equity, position=position,
                                          evaluation=np.zeros(n_bars, dtype=np.int64)), halts=halts,
        trades=[ReportTrade(trade=item, entry=decision(item.entry_bar, f"momentum up <{item.trade_id}>"), exit=decision(item.exit_bar, "target near", veto="")) for item in trades],
        evaluations=evaluations, metrics={**stats.metrics, "halted_bars_daily_loss": 60.0, "evaluations": 1.0, "open": 1.0, "pass_rate": float("nan")},
        metric_warnings=stats.warnings, notes=["bars.csv: a note"],
        entries_funnel={"flat_bars": 500.0, "masked": 100.0, "policy_hold": 380.0, "proposed": 20.0, "fusion_hold": 5.0, "vetoed_daily_loss": 12.0, "refused_by_env": 0.0, "executed": 3.0},
        context="NQ, split test",
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    data = report_input()
    write_backtest_report(out, data)
    return out, data


def test_report_html_is_self_contained(written):
    out, _ = written
    page = (out / "report.html").read_text()
    assert "http://" not in page and "https://" not in page and 'src="/' not in page and "<link" not in page
    images = re.findall(r'<img[^>]*src="([^"]+)"', page)
    assert len(images) == 3 and all(src.startswith("data:image/png;base64,") for src in images)


def test_report_html_has_the_trades_table_with_the_thought_of_each_entry(written):
    out, data = written
    page = (out / "report.html").read_text()
    assert "<h2>Trades (3)</h2>" in page
    for item in data.trades:
        assert f"momentum up &lt;{item.trade.trade_id}&gt;" in page  # escaped, one per entry
        assert item.entry.thought.query_id in page
    assert "fusion rules/agreement" in page and "Evaluation accounts" in page and "Where entries went" in page


def test_metrics_json_has_every_figure_shown(written):
    out, data = written
    document = json.loads((out / "metrics.json").read_text())
    for key, value in data.metrics.items():
        assert key in document
        assert document[key] is None if np.isnan(value) else document[key] == pytest.approx(value)
    assert document["entries_funnel"]["vetoed_daily_loss"] == 12.0 and document["halted_bars"] == {"daily_loss": 60}
    assert document["evaluation_accounts"][0]["outcome"] == "open"
    assert len(document["trade_list"]) == 3 and document["trade_list"][0]["entry_decision"]["thought"]["reason"] == "momentum up <0>"
    assert document["warnings"]["metrics"]["win_rate"].startswith("only 3 trade(s)")


def test_few_trades_put_the_warning_and_where_entries_went_in_markdown_and_html(written):
    out, _ = written
    markdown, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    warning = f"Only 3 trade(s): fewer than {MIN_TRADES}"
    assert warning in markdown and warning in page
    assert "Where entries went: of 500 decisions taken flat" in markdown and "risk vetoed 12 (daily_loss 12)" in markdown
    assert "⚠ only 3 trade(s)" in markdown  # beside the trade figures in the metrics table
    for name in ("price.png", "equity.png", "sessions.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_enough_trades_carry_no_trade_warning(tmp_path):
    data = report_input(n_trades=MIN_TRADES, n_bars=20 * MIN_TRADES + 20)
    write_backtest_report(tmp_path, data)
    assert "trade(s): fewer than" not in (tmp_path / "report.md").read_text()


def test_entries_sentence_names_every_stage():
    sentence = entries_sentence({"flat_bars": 10, "masked": 2, "policy_hold": 5, "proposed": 3, "fusion_hold": 1, "vetoed_win_rate": 1, "executed": 1})
    assert "policy chose HOLD at 5" in sentence and "risk vetoed 1 (win_rate 1)" in sentence and "1 were executed" in sentence


def test_a_zero_trade_backtest_names_where_the_entries_went():
    from actors.env.report import entries_sentence

    funnel = {"flat_bars": 390.0, "masked": 30.0, "policy_hold": 60.0, "proposed": 300.0, "fusion_hold": 0.0,
              "vetoed_win_rate": 250.0, "vetoed_account_guard": 50.0, "refused_by_env": 0.0, "executed": 0.0}

    sentence = entries_sentence(funnel)

    assert "the policy chose HOLD at 60" in sentence and "proposed an entry at 300" in sentence
    assert "risk vetoed 300 (win_rate 250, account_guard 50)" in sentence and "0 were executed" in sentence
