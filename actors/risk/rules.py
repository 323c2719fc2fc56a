"""What the account may do: the original design's veto rules, the account guard and the daily loss limit.

Every rule reads the env's market context of the step (duck-typed: the bus MarketContext
fits) and is stateless: a condition that persists (a thin drawdown buffer while flat, a
day's loss) keeps vetoing for as long as it holds, which is what "halt" means here.

Order of precedence, first match wins and names the reason:
  masked_action     the proposed action is not allowed by the env's mask -> the nearest legal one
  account_guard     in a position: a breach is possible on the next bar -> flatten (the opposite
                    of the position's side closes it); flat: an entry could breach on the next bar -> HOLD
  daily_loss_limit  the day's P&L is at or below -account.daily_loss_limit -> no entries
  consecutive_losses / drawdown_buffer / win_rate   the original vetoes -> no entries
  news_blackout / news_flat   the prop-firm news rule (actors/risk/news.py), given as the halt in force: no entries;
                    news_flat also closes a position (the closing action, where the mask allows it)
  thought_risk / thought_risk_flat   the reasoner's risk read (actors/risk/thought_gate.py), the same way
A veto turns entries (BUY or SELL while flat, ENABLE_TRAIL) into HOLD; HOLD, MOVE_SL_TO_BE,
DISABLE_TRAIL and exits (the opposite of BUY/SELL while in a position) pass.

The guard flattens with the closing action when the env's mask allows it; when it does
not, it tightens the stop (MOVE_SL_TO_BE, else ENABLE_TRAIL) and blocks everything else.

With halts (actors/risk/halts.py) the entry rules become halts that end: the caller passes
the rule in force (``halt``) and it replaces both the guard's entry check and the vetoes,
which then only say when a halt starts (``entry_conditions``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from actors.common.actions import ENABLE_TRAIL, HOLD, MOVE_SL_TO_BE, closing_action, is_entry, legal_or_hold
from actors.risk.config import RiskConfig
from actors.risk.news import NEWS_FLAT
from actors.risk.thought_gate import THOUGHT_FLAT

TIGHTENING_ACTIONS = (MOVE_SL_TO_BE, ENABLE_TRAIL)


class RiskContext(Protocol):
    """The fields of an env's market context the rules read (bus MarketContext fits)."""

    atr: float
    position: int
    contracts: int
    trail_on: bool
    stop_at_break_even: bool
    consecutive_losses: int
    win_rate: float
    recent_net_pnl: float
    drawdown_buffer: float
    trailing_limit: float
    daily_pnl: float


@dataclass(frozen=True, slots=True)
class AccountLimits:
    """Plain numbers from [account], [instrument] and [env] the guard needs."""

    daily_loss_limit_usd: float
    """0 = no daily limit."""
    multiplier: float
    """Dollars per point per contract."""
    tick_value: float
    commission_per_side: float
    slippage_ticks: float
    entry_contracts: int
    """Contracts a new entry would open."""


@dataclass(frozen=True, slots=True)
class Review:
    action: int
    reason: str
    """'' when the action passes unchanged."""

    @property
    def vetoed(self) -> bool:
        return self.reason != ""


def refused(mask: np.ndarray) -> int:
    """What replaces a vetoed action: HOLD if allowed, else the lowest allowed id (HOLD if none is;
    actors/common/actions.py legal_or_hold is the one rule)."""
    return legal_or_hold(HOLD, mask)


class RiskRules:
    def __init__(self, config: RiskConfig, limits: AccountLimits) -> None:
        self.config = config
        self.limits = limits

    # ------------------------------------------------------------------ figures

    def worst_bar_loss_usd(self, contracts: int, atr: float, sides: int) -> float:
        """What ``contracts`` can lose in one bar: the assumed adverse move plus ``sides`` fills of costs."""
        move = self.config.guard_bar_move_atr * max(atr, 0.0) * self.limits.multiplier
        costs = sides * (self.limits.commission_per_side + self.limits.slippage_ticks * self.limits.tick_value)
        return abs(contracts) * (move + costs)

    def breach_possible_in_position(self, context: RiskContext) -> bool:
        return context.drawdown_buffer <= self.worst_bar_loss_usd(max(abs(context.contracts), 1), context.atr, sides=1)

    def breach_possible_on_entry(self, context: RiskContext) -> bool:
        return context.drawdown_buffer <= self.worst_bar_loss_usd(self.limits.entry_contracts, context.atr, sides=2)

    # ------------------------------------------------------------------ rules

    def entry_veto(self, context: RiskContext, episode_trades: int | None = None) -> str:
        """The first rule that forbids entries now, or ''. ``episode_trades``: trades the env closed this
        episode (None = unknown: the win-rate rule applies from the first trade)."""
        return next(iter(self._veto_conditions(context, episode_trades)), "")

    def entry_conditions(self, context: RiskContext, episode_trades: int | None = None) -> list[str]:
        """Every entry rule whose condition holds now, in precedence order (the guard's entry check first)."""
        guard = ["account_guard"] if self.config.account_guard_enabled and self.breach_possible_on_entry(context) else []
        return guard + self._veto_conditions(context, episode_trades)

    def _veto_conditions(self, context: RiskContext, episode_trades: int | None) -> list[str]:
        reasons = []
        limit = self.limits.daily_loss_limit_usd
        if limit > 0 and context.daily_pnl <= -limit:
            reasons.append("daily_loss_limit")
        if not self.config.veto_enabled:
            return reasons
        if context.consecutive_losses >= self.config.max_consecutive_losses:
            reasons.append("consecutive_losses")
        if context.trailing_limit > 0 and \
                context.drawdown_buffer / context.trailing_limit < self.config.min_drawdown_buffer_fraction:
            reasons.append("drawdown_buffer")
        enough_trades = episode_trades is None or episode_trades >= self.config.min_trades_for_win_rate
        losing = not self.config.win_rate_halt_needs_net_loss or context.recent_net_pnl < 0
        if enough_trades and losing and context.win_rate < self.config.min_win_rate:
            reasons.append("win_rate")
        return reasons

    def _guard(self, action: int, mask: np.ndarray, context: RiskContext, halts_decide_entries: bool = False) -> Review | None:
        if not self.config.account_guard_enabled:
            return None
        if context.position != 0 and self.breach_possible_in_position(context):
            return Review(*self._protect(action, mask, context))
        if halts_decide_entries:
            return None
        if context.position == 0 and is_entry(action, 0) and self.breach_possible_on_entry(context):
            return Review(refused(mask), "account_guard")
        return None

    @staticmethod
    def _protect(action: int, mask: np.ndarray, context: RiskContext) -> tuple[int, str]:
        """Flatten if the mask allows it, else tighten the stop, else HOLD."""
        close = closing_action(context.position)
        if mask[close]:
            return close, "account_guard" if action != close else ""
        if action in TIGHTENING_ACTIONS:
            return action, ""
        already = {MOVE_SL_TO_BE: context.stop_at_break_even, ENABLE_TRAIL: context.trail_on}
        tighten = next((a for a in TIGHTENING_ACTIONS if mask[a] and not already[a]), HOLD)
        tighten = tighten if mask[tighten] else refused(mask)
        return tighten, "account_guard" if tighten != action else ""

    def review(self, action: int, mask: np.ndarray, context: RiskContext, episode_trades: int | None = None,
               halt: str | None = None) -> Review:
        """The action the env may execute, and why it was changed ('' when it was not). ``halt``: the entry
        rule in force from actors/risk/halts.py ('' = none); None = decide entries from the context alone."""
        if not (0 <= action < len(mask)) or not mask[action]:
            return Review(legal_or_hold(action, mask), "masked_action")
        guarded = self._guard(action, mask, context, halts_decide_entries=halt is not None)
        if guarded is not None:
            return guarded
        if halt in (NEWS_FLAT, THOUGHT_FLAT) and context.position != 0:
            close = closing_action(context.position)
            return Review(close, halt if action != close else "") if mask[close] else Review(action, "")
        if is_entry(action, context.position):
            reason = self.entry_veto(context, episode_trades) if halt is None else halt
            if reason:
                return Review(refused(mask), reason)
        return Review(action, "")

    def review_batch(self, actions: np.ndarray, masks: np.ndarray, contexts: list[RiskContext],
                     episode_trades: list[int | None] | None = None, halts: list[str] | None = None) -> list[Review]:
        trades = episode_trades if episode_trades is not None else [None] * len(actions)
        in_force = halts if halts is not None else [None] * len(actions)
        return [self.review(int(a), masks[i], contexts[i], trades[i], in_force[i]) for i, a in enumerate(actions)]


class EpisodeTrades:
    """Closed trades per env in its current episode, counted from env.outcome.

    The env's win rate covers the episode's last 10 trades; this count says how many that is.
    """

    def __init__(self) -> None:
        self._counts: dict[int, tuple[int, int]] = {}

    def record(self, env_id: int, episode_id: int) -> None:
        held_episode, count = self._counts.get(env_id, (episode_id, 0))
        self._counts[env_id] = (episode_id, count + 1 if held_episode == episode_id else 1)

    def count(self, env_id: int, episode_id: int) -> int:
        held_episode, count = self._counts.get(env_id, (episode_id, 0))
        return count if held_episode == episode_id else 0

