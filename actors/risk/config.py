"""The [risk] config section. The account's own limits (trailing drawdown, daily loss
limit) are read from [account], owned by the env package."""

from __future__ import annotations

from functools import partial

import msgspec

from config.checks import require

_require = partial(require, section="risk")


class RiskConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    veto_enabled: bool = True
    """Apply seed 002's veto rules (consecutive losses, drawdown buffer, win rate); false for the ablation."""
    max_consecutive_losses: int = 3
    """Entries are vetoed once this many trades in a row were lost."""
    min_drawdown_buffer_fraction: float = 0.2
    """Entries are vetoed while the drawdown buffer is below this share of the trailing limit."""
    min_win_rate: float = 0.4
    """Entries are vetoed while the win rate of the last 10 trades is below this ..."""
    min_trades_for_win_rate: int = 5
    """... once the episode has closed at least this many trades (0 = always, as seed 002; with fewer
    trades one early loss would halt the rest of the episode)."""
    account_guard_enabled: bool = True
    """Flatten (the closing action; else tighten the stop) and halt entries before an Apex breach is possible on the next bar."""
    guard_bar_move_atr: float = 2.0
    """The adverse move, in ATRs, the guard assumes one bar can make."""
    fusion_deadline_ms: float = 250.0
    """Without a fusion.decision this long after env.obs, risk decides from the RL proposal (or HOLD): degraded."""
    max_pending_steps: int = 64
    """Steps kept while waiting for their messages; older ones are dropped (counted)."""

    def __post_init__(self) -> None:
        _require(self.max_consecutive_losses >= 1, "max_consecutive_losses", "must be >= 1")
        _require(0.0 <= self.min_drawdown_buffer_fraction <= 1.0, "min_drawdown_buffer_fraction", "must be within [0, 1]")
        _require(0.0 <= self.min_win_rate <= 1.0, "min_win_rate", "must be within [0, 1]")
        _require(self.min_trades_for_win_rate >= 0, "min_trades_for_win_rate", "must be >= 0")
        _require(self.guard_bar_move_atr >= 0.0, "guard_bar_move_atr", "must be >= 0")
        _require(self.fusion_deadline_ms > 0.0, "fusion_deadline_ms", "must be > 0")
        _require(self.max_pending_steps >= 1, "max_pending_steps", "must be >= 1")
