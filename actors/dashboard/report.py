"""A finished run's report as the dashboard shows it: its trades (each with the decisions that opened and closed
it), its evaluation accounts and its key figures, read from the metrics.json the env wrote where the run's settings
say (``RunView``: env.report_dir for a backtest, env.paper_dir for a paper run). Plain functions of a file, no lock."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actors.dashboard.config import RunView
from actors.dashboard.model import Account, Trade

METRICS_FILE = "metrics.json"
PAPER_REPORT_DIR = "report"
"""The paper env writes its backtest-style report in this folder of env.paper_dir (actors/env/paper_actor.py)."""


@dataclass(frozen=True)
class RunReport:
    path: str
    trades: list[Trade]
    """All of the report's trades, every env's, in the report's order."""
    accounts: list[Account]
    """The report's evaluation accounts (every env's, in the order they started)."""
    figures: dict[str, Any]
    """What the report panel shows: the path, net P&L, trades, win rate, Sharpe, max drawdown, the accounts' outcomes."""


def report_files(run_dir: Path, run: RunView) -> tuple[Path, ...]:
    """Where the run's reports are, the backtest's first."""
    return run_dir / run.env.report_dir / METRICS_FILE, run_dir / run.env.paper_dir / PAPER_REPORT_DIR / METRICS_FILE


def report_file(run_dir: Path, run: RunView) -> Path | None:
    return next((path for path in report_files(run_dir, run) if path.is_file()), None)


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when the file is missing, not JSON (still being written) or not an object."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def read_report(path: Path) -> RunReport | None:
    """The report at ``path``; None when it is missing, not JSON (a report still being written) or not an object."""
    document = read_json_object(path)
    if document is None:
        return None
    trades = [_report_trade(t) for t in document.get("trade_list", []) if isinstance(t, dict)]
    items = [a for a in document.get("evaluation_accounts", []) if isinstance(a, dict)]
    accounts = [Account(number, int(a.get("index", number)), -1, -1, 0.0, float(a.get("net_pnl_usd", 0.0)), str(a.get("outcome", "")),
                        f"{a.get('reason', '')} ({a.get('trading_days', '?')} days)") for number, a in enumerate(items)]
    outcomes = [account.outcome for account in accounts]
    figures = {"path": str(path), "net_pnl_usd": document.get("net_pnl_usd"), "trades": document.get("trades"),
               "win_rate": document.get("win_rate"), "sharpe": document.get("sharpe"), "max_drawdown": document.get("max_drawdown"),
               "accounts": " ".join(f"{o}:{outcomes.count(o)}" for o in ("passed", "failed", "open") if o in outcomes) or "-"}
    return RunReport(str(path), trades, accounts, figures)


def _report_decision_text(label: str, d: dict[str, Any]) -> str:
    thought = d.get("thought") or {}
    llm = f"LLM {thought.get('action', '-')} {thought.get('confidence', 0):.2f} '{thought.get('reason', '')}'" if thought else "no thought"
    veto = f" veto {d['veto_reason']}" if d.get("veto_reason") else ""
    return (f"{label} step {d.get('step')}: RL {d.get('rl_action')} {float(d.get('rl_confidence', 0)):.2f}; {llm}; "
            f"fusion {d.get('fusion_method')}/{d.get('fusion_rule')} trust {float(d.get('rl_trust', 0)):.2f} / "
            f"{float(d.get('llm_trust', 0)):.2f}; risk{veto} -> {d.get('final_action')}")


def _report_trade(item: dict[str, Any]) -> Trade:
    """A trade of a report's trade_list; a trade closed by its stop or target has no exit decision: its exit step is
    its entry's plus the bars it was held."""
    entry, exit_ = item.get("entry_decision") or {}, item.get("exit_decision") or {}
    entry_step, bars = int(entry.get("step", -1)), int(item.get("bars_held", 0))
    exit_step = int(exit_["step"]) if "step" in exit_ else (entry_step + bars if entry_step >= 0 else -1)
    return Trade(trade_id=int(item.get("trade_id", 0)), env_id=int(item.get("env_id", 0)), side=str(item.get("side", "")),
                 entry_step=entry_step, entry_price=float(item.get("entry_price", 0.0)), exit_step=exit_step,
                 exit_price=float(item.get("exit_price", 0.0)), pnl_usd=float(item.get("pnl_usd", 0.0)), bars_held=bars,
                 exit_reason=str(item.get("exit_reason", "")), decision_steps=[],
                 chain_text="\n".join(_report_decision_text(label, d) for label, d in (("entry", entry), ("exit", exit_)) if d))

