"""What a paper session does, as files a user can open while it runs (equity.csv and JSON lines): actors/env/live.py's
steps and closed trades written out."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from actors.env.batch import ClosedTrade
from actors.env.live import PaperStep


class PaperRecorder:
    """Appends what a paper session does to files in ``out_dir``, flushed per line so they can be read while it runs:
    equity.csv (one row per bar), positions.jsonl (the open position after each bar), trades.jsonl (closed trades
    with the decisions behind them), decisions.jsonl (every decision of the loop)."""

    EQUITY_COLUMNS = ("time_utc", "start_ns", "open", "high", "low", "close", "equity", "position", "evaluation", "executed_action")

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        equity_path = self.out_dir / "equity.csv"
        new = not equity_path.exists()
        self._equity_file = equity_path.open("a", newline="")
        self._equity = csv.writer(self._equity_file)
        if new:
            self._equity.writerow(self.EQUITY_COLUMNS)
            self._equity_file.flush()
        self._jsonl = {name: (self.out_dir / f"{name}.jsonl").open("a") for name in ("positions", "trades", "decisions")}

    def bar(self, step: PaperStep, evaluation_index: int, action_name: str, position: dict[str, Any]) -> None:
        bar = step.bar
        time_utc = pd.Timestamp(bar.start_ns, tz="UTC").isoformat()
        self._equity.writerow((time_utc, bar.start_ns, bar.open, bar.high, bar.low, bar.close, round(step.equity, 2), step.position, evaluation_index, action_name))
        self._equity_file.flush()
        self._line("positions", {"time_utc": time_utc, "start_ns": bar.start_ns, "position": step.position, **position})

    def trade(self, row: dict[str, Any]) -> None:
        self._line("trades", row)

    def decision(self, row: dict[str, Any]) -> None:
        self._line("decisions", row)

    def _line(self, name: str, row: dict[str, Any]) -> None:
        handle = self._jsonl[name]
        handle.write(json.dumps(row, default=_json_default) + "\n")
        handle.flush()

    def close(self) -> None:
        self._equity_file.close()
        for handle in self._jsonl.values():
            handle.close()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    if isinstance(value, msgspec.Struct):
        return msgspec.structs.asdict(value)
    return str(value)


def trade_row(closed: ClosedTrade) -> dict[str, Any]:
    """A closed trade as one JSON line (times in UTC ISO and ns)."""
    trade = closed.trade
    return {
        "trade_id": trade.trade_id, "evaluation": closed.episode_id, "side": "long" if trade.side > 0 else "short",
        "contracts": trade.contracts, "entry_time_utc": pd.Timestamp(trade.entry_ns, tz="UTC").isoformat(),
        "exit_time_utc": pd.Timestamp(trade.exit_ns, tz="UTC").isoformat(), "entry_price": trade.entry_price,
        "exit_price": trade.exit_price, "pnl_usd": round(trade.pnl_usd, 2), "commission_usd": trade.commission_usd,
        "bars_held": trade.bars_held, "exit_reason": trade.exit_reason, "decision_steps": closed.decision_steps,
        "llm_query_ids": closed.llm_query_ids,
    }
