"""The main job's success table: evaluate's table (figure, value, 95 % interval, target, verdict, note) for phase 3's one
backtest, so the two jobs' verdicts read alike (``success_lines`` in actors/jobs/evaluate.py prints both).

One backtest is one sample: the win rate and the daily Sharpe carry the backtest's own intervals, the oracle share has
none (``bin/run evaluate`` gives one over folds and seeds), the deflated Sharpe counts the trials ledger's trials on the
market (actors/jobs/main_ledger.py), and the fusion and LLM rows are measured in lockstep (phase 4's table), not here.
"""

from __future__ import annotations

import math
from actors.jobs.evaluation.evidence import (
    DSR_TARGET, ORACLE_SHARE_TARGET, Row, dsr_verdict, too_few_note, band_side, verdict_at_least, verdict_between,
)
from actors.jobs.evaluation.summary import Deflation

WIN_RATE_BAND = (0.58, 0.62)
SHARPE_TARGET = 3.0
NOT_HERE = "measured in lockstep: phase 4's table below, and bin/run evaluate --lockstep-decisions N"


def _figure(metrics: dict[str, float], key: str) -> tuple[float, float, float]:
    nan = float("nan")
    return float(metrics.get(key, nan)), float(metrics.get(f"{key}_ci_low", nan)), float(metrics.get(f"{key}_ci_high", nan))


def oracle_share(policy_net: float, oracle_net: float | None) -> float:
    """The policy's net over the oracle's; NaN without an oracle (real data) or when the oracle has no edge (null)."""
    return policy_net / oracle_net if oracle_net is not None and oracle_net > 0 else float("nan")


def phase3_success_rows(metrics: dict[str, float], oracle_net: float | None, deflation: Deflation) -> list[Row]:
    """The seeds' targets for the backtest (``metrics``: its figures; ``oracle_net``: the oracle's net on the same bars;
    ``deflation``: ``record_phase3``'s deflated Sharpe)."""
    nan = float("nan")
    win, win_low, win_high = _figure(metrics, "win_rate")
    sharpe, sharpe_low, sharpe_high = _figure(metrics, "sharpe")
    share = oracle_share(float(metrics.get("net_pnl_usd", 0.0)), oracle_net)
    dsr, record = deflation.dsr, deflation.track_record
    return [
        Row("win rate (RL + risk, OOS trades)", win, win_low, win_high, "0.58-0.62",
            verdict_between(win, win_low, win_high, *WIN_RATE_BAND), band_side(win_low, win_high, *WIN_RATE_BAND)),
        Row("daily Sharpe (annualised, OOS)", sharpe, sharpe_low, sharpe_high, f">= {SHARPE_TARGET:g}",
            verdict_at_least(sharpe, sharpe_low, sharpe_high, SHARPE_TARGET)),
        Row("oracle share (net P&L / oracle's)", share, nan, nan, f">= {ORACLE_SHARE_TARGET:.2f}",
            verdict_at_least(share, nan, nan, ORACLE_SHARE_TARGET),
            "one backtest: no interval (bin/run evaluate gives one over folds and seeds)" if math.isfinite(share)
            else "no oracle (real data), or the oracle has no edge here (null)"),
        Row("deflated-Sharpe probability", dsr, dsr, dsr, f">= {DSR_TARGET}", dsr_verdict(dsr, record),
            f"{deflation.dsr_trials} trials on this market in the ledger ({deflation.dsr_trials_this_run} this run)"
            + too_few_note(record)),
        Row("fusion accuracy", nan, nan, nan, "0.85-0.90", "not evidence", NOT_HERE),
        Row("LLM accuracy before -> after", nan, nan, nan, "0.60 -> 0.75", "not evidence", NOT_HERE),
        Row("RL/LLM agreement", nan, nan, nan, "0.65-0.75", "not evidence", NOT_HERE),
    ]


def success_summary(rows: list[Row]) -> list[Row]:
    """The rows evaluate's ``success_lines`` prints."""
    return rows
