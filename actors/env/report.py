"""Backtest / ablation report: metrics.json, report.md (a metrics table) and equity.png."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# Display order and labels; other metrics follow alphabetically.
_LABELS: dict[str, str] = {
    "net_pnl_usd": "Net P&L ($)",
    "return_pct": "Return (%)",
    "sharpe": "Sharpe (per-bar, x sqrt(98,280))",
    "sortino": "Sortino (per-bar, x sqrt(98,280))",
    "max_drawdown_usd": "Max drawdown ($)",
    "max_drawdown_pct": "Max drawdown (%)",
    "trades": "Trades",
    "win_rate": "Win rate",
    "profit_factor": "Profit factor",
    "avg_trade_usd": "Average trade ($)",
    "avg_bars_held": "Average bars held",
    "apex_violations": "Apex violations",
    "forced_flat_exits": "Forced-flat exits",
    "agreement_rate": "RL/LLM agreement rate",
    "veto_rate": "Risk veto rate",
    "query_rate": "LLM query rate",
    "llm_confidence": "LLM confidence (mean)",
    "rl_trust": "Fusion RL trust (mean)",
    "llm_trust": "Fusion LLM trust (mean)",
}


def _format_value(value: float) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e12:
        return f"{int(value):,}"
    return f"{value:,.4f}" if abs(value) < 10 else f"{value:,.2f}"


def format_metrics_table(metrics: dict[str, float]) -> str:
    """A Markdown table of the metrics, known ones first in a fixed order."""
    keys = [key for key in _LABELS if key in metrics] + sorted(key for key in metrics if key not in _LABELS)
    rows = ["| metric | value |", "| --- | ---: |"]
    rows += [f"| {_LABELS.get(key, key)} | {_format_value(float(metrics[key]))} |" for key in keys]
    return "\n".join(rows)


def _plot_equity(path: Path, equity_curve: Sequence[float], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    equity = np.asarray(equity_curve, dtype=np.float64)
    drawdown = np.maximum.accumulate(equity) - equity if len(equity) else equity
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True, gridspec_kw={"height_ratios": (3, 1)})
    top.plot(equity, color="tab:blue", linewidth=1.0)
    top.set_ylabel("equity ($)")
    top.set_title(title)
    top.grid(alpha=0.3)
    bottom.fill_between(np.arange(len(drawdown)), -drawdown, 0.0, color="tab:red", alpha=0.5, linewidth=0)
    bottom.set_ylabel("drawdown ($)")
    bottom.set_xlabel("bar")
    bottom.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _trade_rows(trades: Sequence, limit: int = 20) -> list[str]:
    if not trades:
        return ["No closed trades."]
    rows = ["| trade | side | entry | exit | P&L ($) | bars | exit reason |", "| ---: | :---: | ---: | ---: | ---: | ---: | --- |"]
    for trade in list(trades)[-limit:]:
        side = "long" if trade.side > 0 else "short"
        rows.append(f"| {trade.trade_id} | {side} | {trade.entry_price:,.2f} | {trade.exit_price:,.2f} | {trade.pnl_usd:,.2f} | {trade.bars_held} | {trade.exit_reason} |")
    return rows


def write_report(out_dir: str | Path, equity_curve: Sequence[float], trades: Sequence, metrics: dict[str, float], title: str = "Backtest", notes: str = "") -> dict[str, float]:
    """Write metrics.json, report.md and equity.png into ``out_dir``; returns the metrics."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = {key: float(value) for key, value in metrics.items()}
    (out / "metrics.json").write_text(json.dumps(clean, indent=2, sort_keys=True) + "\n")
    _plot_equity(out / "equity.png", equity_curve, title)
    lines = [f"# {title}", ""]
    if notes:
        lines += [notes, ""]
    lines += ["## Metrics", "", format_metrics_table(clean), "", "![equity curve and drawdown](equity.png)", ""]
    lines += [f"## Last trades (of {len(trades)})", "", *_trade_rows(trades), ""]
    (out / "report.md").write_text("\n".join(lines))
    return clean
