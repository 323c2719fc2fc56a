"""Metrics arithmetic, the report files (and the env actor's backtest report), instruments and config validation."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from actors.env.account import APEX_ACCOUNTS, apex_account
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import DataConfig, EnvConfig
from actors.common.instruments import resolve_instrument
from actors.common.statistics import PROFIT_FACTOR_CAP
from actors.env.metrics import BARS_PER_YEAR, RunMetrics, equity_metrics, trade_metrics
from actors.env.random_verdicts import random_legal_actions
from actors.env.report import format_metrics_table, write_report
from bus.messages import Done, EnvObs, FusionDecision, LlmThought, RiskVerdict
from runtime.testing import actor_harness


def trade(pnl: float, bars: int = 3, reason: str = "target", trade_id: int = 0):
    return SimpleNamespace(pnl_usd=pnl, bars_held=bars, exit_reason=reason, trade_id=trade_id, side=1, entry_price=100.0, exit_price=101.0)


def test_trade_metrics_count_wins_profit_factor_and_holding_time():
    metrics = trade_metrics([trade(300, 2), trade(-100, 4), trade(-50, 6, "forced_flat"), trade(150, 8)])
    assert metrics["trades"] == 4 and metrics["win_rate"] == 0.5
    assert metrics["profit_factor"] == pytest.approx(450 / 150)
    assert metrics["avg_bars_held"] == 5 and metrics["avg_trade_usd"] == 75
    assert metrics["forced_flat_exits"] == 1


def test_profit_factor_is_capped_without_losses_and_zero_without_profit():
    assert trade_metrics([trade(10)])["profit_factor"] == PROFIT_FACTOR_CAP
    assert trade_metrics([trade(-10)])["profit_factor"] == 0.0
    assert trade_metrics([])["trades"] == 0


def test_equity_metrics_give_drawdown_and_annualised_sharpe():
    curve = [100.0, 110.0, 99.0, 121.0, 100.0]
    metrics = equity_metrics(curve)
    assert metrics["max_drawdown_usd"] == 21.0
    assert metrics["max_drawdown_pct"] == pytest.approx(21 / 121 * 100)
    returns = np.diff(curve) / np.array(curve[:-1])
    assert metrics["sharpe"] == pytest.approx(returns.mean() / returns.std() * np.sqrt(BARS_PER_YEAR))
    assert metrics["sortino"] > metrics["sharpe"]  # the downside deviation is smaller than the full one here
    assert equity_metrics([100.0, 100.0, 100.0])["sharpe"] == 0.0


def test_run_metrics_chain_episodes_into_one_equity_curve():
    run = RunMetrics(1000.0)
    run.add_episode([1000.0, 1010.0, 1020.0], [trade(20)], 0, 0.2)
    run.add_episode([1000.0, 990.0], [trade(-10)], 1, -10.1)
    assert list(run.equity_curve) == [1000.0, 1010.0, 1020.0, 1010.0]
    summary = run.summary()
    assert summary["episodes"] == 2 and summary["apex_violations"] == 1 and summary["net_pnl_usd"] == 10.0


def test_write_report_writes_metrics_markdown_and_a_png(tmp_path):
    curve = list(50_000 + np.cumsum(np.random.default_rng(0).normal(0, 50, 400)))
    metrics = {"net_pnl_usd": curve[-1] - 50_000, "trades": 2.0, "win_rate": 0.5, "custom_figure": 1.25}
    returned = write_report(tmp_path / "out", curve, [trade(100.0, trade_id=1), trade(-40.0, trade_id=2)], metrics, "Test run", "a note")
    assert returned == {key: float(value) for key, value in metrics.items()}
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["trades"] == 2.0
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "# Test run" in markdown and "| Win rate | 0.5000 |" in markdown and "custom_figure" in markdown
    assert (tmp_path / "out" / "equity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_metrics_table_lists_known_metrics_first():
    table = format_metrics_table({"zeta": 1.0, "trades": 3.0, "net_pnl_usd": -12.5})
    lines = table.splitlines()
    assert lines[2].startswith("| Net P&L") and lines[3].startswith("| Trades") and lines[4].startswith("| zeta")


def test_built_in_instruments_have_the_design_specs():
    nq, es, ym, rty, mnq = (resolve_instrument(InstrumentConfig(symbol=s)) for s in ("NQ", "ES", "YM", "RTY", "mnq"))
    assert (nq.multiplier, nq.tick_size, nq.tick_value, nq.commission_per_side, nq.slippage_ticks) == (20.0, 0.25, 5.0, 2.5, 1.0)
    assert (es.multiplier, ym.multiplier, ym.tick_size, rty.multiplier, rty.tick_size, mnq.multiplier) == (50.0, 5.0, 1.0, 50.0, 0.10, 2.0)
    for symbol in ("MES", "M2K", "MYM"):
        assert resolve_instrument(InstrumentConfig(symbol=symbol)).multiplier > 0


def test_an_unknown_instrument_needs_tick_size_and_multiplier():
    with pytest.raises(ValueError, match="instrument.symbol"):
        resolve_instrument(InstrumentConfig(symbol="CL"))
    crude = resolve_instrument(InstrumentConfig(symbol="CL", tick_size=0.01, multiplier=1000.0, commission_per_side=2.0))
    assert (crude.tick_value, crude.commission_per_side, crude.slippage_ticks) == (10.0, 2.0, 1.0)


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="env.mode"):
        EnvConfig(mode="live")
    with pytest.raises(ValueError, match="account.flat_time_et"):
        AccountConfig(flat_time_et="4:59pm")
    with pytest.raises(ValueError, match="data.path"):
        DataConfig(source="file")
    with pytest.raises(ValueError, match="data.validation_fraction"):
        DataConfig(train_fraction=0.9, validation_fraction=0.2)


def test_apex_presets_give_other_account_sizes():
    assert set(APEX_ACCOUNTS) >= {"apex_25k", "apex_50k", "apex_100k", "apex_150k"}
    account = apex_account("apex_100k")
    assert (account.start_balance, account.trailing_drawdown, account.max_contracts, account.drawdown_lock_balance) == (100_000.0, 3_000.0, 14, 100_100.0)


# ---------------------------------------------------------------------- the env actor's backtest report

HALT_RULE = "cooldown"


def fused_messages(obs, rng) -> tuple[list, FusionDecision, RiskVerdict]:
    """What reasoner, fusion and risk would send for one env.obs: RL and the thought agree on a random legal action;
    risk halts env 0's entries on even steps."""
    n = len(obs.env_ids)
    actions = random_legal_actions(obs.masks, rng)
    query_ids = [f"q-{obs.step}-{env_id}" for env_id in obs.env_ids]
    thoughts = [LlmThought(env_id=env_id, episode_id=0, step_seen=obs.step, query_id=query_id, action=int(action), confidence=0.8,
                           mode="four_step", reason=f"reason of {query_id}") for env_id, query_id, action in zip(obs.env_ids, query_ids, actions)]
    decision = FusionDecision(
        env_ids=list(obs.env_ids), step=obs.step, actions=actions, method="rules", rules=["agreement"] * n, rl_actions=actions,
        rl_confidences=np.full(n, 0.6), llm_actions=actions, llm_confidences=np.full(n, 0.8), llm_staleness=np.ones(n, dtype=np.int64),
        llm_query_ids=query_ids, rl_trust=np.full(n, 0.7), llm_trust=np.full(n, 0.3),
    )
    halts = [HALT_RULE if env_id == 0 and obs.step % 2 == 0 else "" for env_id in obs.env_ids]
    final = np.array([0 if halt and action in (1, 2) else action for halt, action in zip(halts, actions.tolist())], dtype=np.int64)
    vetoed = [bool(final[row] != actions[row]) for row in range(n)]
    verdict = RiskVerdict(env_ids=list(obs.env_ids), step=obs.step, actions=final, vetoed=vetoed, reasons=[HALT_RULE if flag else "" for flag in vetoed],
                          degraded=[False] * n, llm_query_ids=query_ids, halts=halts)
    return thoughts, decision, verdict


async def test_a_backtest_report_explains_each_trade_counts_halted_bars_and_where_entries_went(tmp_path):
    overrides = {"data.synthetic_days": 6, "env.n_envs": 2, "env.mode": "backtest", "env.split": "test", "env.verdict_deadline_ms": 2000}
    rng = np.random.default_rng(0)
    async with actor_harness("env", overrides, run_dir=tmp_path) as h:
        while not isinstance(obs := await h.recv((EnvObs, Done), timeout_secs=30), Done):
            thoughts, decision, verdict = fused_messages(obs, rng)
            for message in (*thoughts, decision, verdict):
                await h.deliver(message)
        summary = obs.summary
    report = tmp_path / "backtest"
    document = json.loads((report / "metrics.json").read_text())
    assert summary["halted_bars_cooldown"] > 0 and document["halted_bars_cooldown"] == summary["halted_bars_cooldown"]
    assert summary["entries_vetoed_cooldown"] > 0 and summary["entries_executed"] > 0
    assert summary["entries_proposed"] == summary["entries_executed"] + summary["entries_vetoed_cooldown"]
    assert document["trade_list"] and len(document["trade_list"]) == summary["trades"]
    page = (report / "report.html").read_text()
    for row in document["trade_list"]:
        entry = row["entry_decision"]
        assert entry["thought"]["reason"] == f"reason of {entry['thought']['query_id']}" and entry["thought"]["reason"] in page
        assert entry["fusion_method"] == "rules" and entry["final_action"] == row["side"].replace("long", "BUY").replace("short", "SELL")
    assert "Sharpe and Sortino come from daily (session) returns" in (report / "report.md").read_text()


def test_the_human_table_names_every_loop_figure_and_shows_a_staleness_without_thoughts_as_not_available():
    from actors.env.report import format_metrics_table, participation_rows

    metrics = {"trades": 3.0, "decision_latency_p50_us": 1804.0, "loop_steps": 3509.0, "llm_staleness_steps": 0.0,
               "llm_staleness_max_steps": -1.0, "query_rate": 0.0}

    table = format_metrics_table(metrics)

    assert "decision_latency_p50_us" not in table and "loop_steps" not in table
    assert "Decision latency obs -> verdict, p50 (µs)" in table and "| Loop steps | 3,509 |" in table
    assert "| -1 |" not in table and "n/a (no thought used)" in table
    assert dict(participation_rows(metrics))["Thought staleness, mean (steps)"] == "n/a (no thought used)"


def test_an_rl_only_backtest_shows_the_thought_figures_as_not_available_and_a_run_with_thoughts_shows_its_zeros():
    from actors.env.report import format_metrics_table

    rl_only = {"trades": 3.0, "query_rate": 0.0, "agreement_rate": 0.0, "llm_confidence": 0.0, "llm_trust": 0.0,
               "lag_query_rate": 0.0, "rl_trust": 1.0}
    with_thoughts = {**rl_only, "query_rate": 0.5}

    rl_only_table, thoughts_table = format_metrics_table(rl_only), format_metrics_table(with_thoughts)

    for label in ("RL/LLM agreement rate", "LLM confidence (mean)", "Fusion LLM trust (mean)", "Decisions with a thought at most K steps old"):
        assert f"| {label} | n/a (no thought used) |" in rl_only_table
        assert f"| {label} | 0 |" in thoughts_table
    assert "| Fusion RL trust (mean) | 1 |" in rl_only_table and "| LLM query rate | 0 |" in rl_only_table
