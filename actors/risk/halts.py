"""Halts that end: every entry veto that reads account state says when it stops.

A rule's condition (RiskRules.entry_conditions: the account guard's entry check, the daily
loss limit, the original design's vetoes) starts a halt only while the env is flat and the rule is
armed; the halt then holds entries until its ending, whatever the condition does meanwhile:

  account_guard       end of the trading day; re-arms when a new trade closes
  daily_loss_limit    end of the trading day (the day's P&L starts again at 0)
  consecutive_losses  risk.consecutive_losses_cooldown_bars steps; re-arms on a new loss (a new
                      trade that leaves the streak at or above the limit)
  drawdown_buffer     end of the trading day; re-arms when a new trade closes
  win_rate            risk.win_rate_cooldown_bars steps; re-arms when a new trade closes

Without the re-arming, a condition that cannot change while flat (a thin buffer, a poor win
rate, a losing streak) would start the same halt again at once and lock the account out for the
rest of a backtest. A new episode (a fresh evaluation account) clears every halt. The trading
day comes from the context's ``session_id``; where it is unknown (-1) a day-long halt lasts
risk.session_halt_fallback_bars steps instead. Plain state, no bus, no clock: fed one step
at a time with the step index, the env's context and its closed-trade count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from actors.risk.config import RiskConfig
from actors.risk.rules import RiskContext, RiskRules

SESSION_RULES = ("account_guard", "daily_loss_limit", "drawdown_buffer")
"""Halts that end with the trading day."""
REARM_ON_TRADE = ("account_guard", "consecutive_losses", "drawdown_buffer", "win_rate")
"""Halts whose rule stays disarmed after they end until a new trade closes."""


@dataclass(slots=True)
class ActiveHalt:
    rule: str
    started_step: int
    started_session: int
    until_step: int
    """The first step no longer halted; -1 = ends with the trading day."""


@dataclass(slots=True)
class EnvHalts:
    """One env's halt state within one episode."""

    episode_id: int
    active: ActiveHalt | None = None
    disarmed: dict[str, int] = field(default_factory=dict)
    """rule -> the env's closed-trade count when its halt ended; armed again once the count grows."""


@dataclass(frozen=True, slots=True)
class HaltSpell:
    """A finished (or running) halt, for reports and tests."""

    env_id: int
    rule: str
    start_step: int
    end_step: int
    """The first step no longer halted (-1 while running)."""
    start_session: int
    end_session: int


class Halts:
    def __init__(self, config: RiskConfig, rules: RiskRules) -> None:
        self.config = config
        self.rules = rules
        self._envs: dict[int, EnvHalts] = {}
        self.spells: list[HaltSpell] = []
        """Every halt that ended, in order (bounded by risk.max_halt_spells_kept)."""

    def reset(self) -> None:
        self._envs.clear()

    def update(self, env_id: int, step: int, context: RiskContext, episode_id: int = 0, trades: int | None = None) -> str:
        """The entry-veto rule in force for ``env_id`` at ``step`` ('' when none). ``trades``: trades the env closed
        this episode (None = unknown: rules that re-arm on a new trade then re-arm at the next trading day)."""
        state = self._envs.get(env_id)
        if state is None or state.episode_id != episode_id:
            state = self._envs[env_id] = EnvHalts(episode_id)
        session = int(getattr(context, "session_id", -1))
        count = trades if trades is not None else session
        self._end_if_due(env_id, state, step, session, count)
        for rule in [rule for rule, at in state.disarmed.items() if count > at]:
            del state.disarmed[rule]
        if state.active is not None:
            return state.active.rule
        if context.position != 0:
            return ""  # entries are impossible in a position; a halt starts when the env is flat
        for rule in self.rules.entry_conditions(context, trades):
            if rule not in state.disarmed:
                state.active = ActiveHalt(rule, step, session, self._until_step(rule, step, session))
                return rule
        return ""

    def _until_step(self, rule: str, step: int, session: int) -> int:
        if rule == "consecutive_losses":
            return step + self.config.consecutive_losses_cooldown_bars
        if rule == "win_rate":
            return step + self.config.win_rate_cooldown_bars
        return -1 if session >= 0 else step + self.config.session_halt_fallback_bars

    def _end_if_due(self, env_id: int, state: EnvHalts, step: int, session: int, count: int) -> None:
        active = state.active
        if active is None:
            return
        due = step >= active.until_step if active.until_step >= 0 else session != active.started_session
        if not due:
            return
        state.active = None
        if active.rule in REARM_ON_TRADE:
            state.disarmed[active.rule] = count
        self.spells.append(HaltSpell(env_id, active.rule, active.started_step, step, active.started_session, session))
        del self.spells[: max(0, len(self.spells) - self.config.max_halt_spells_kept)]

    def active(self, env_id: int) -> ActiveHalt | None:
        state = self._envs.get(env_id)
        return None if state is None else state.active
