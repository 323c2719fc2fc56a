"""The [risk] config section and RiskSettings (what the risk actor reads). The account's own limits (trailing
drawdown, daily loss limit) are read from [account], the shared vocabulary's."""

from __future__ import annotations

import msgspec

from actors.common.events import IMPORTANCES
from actors.common.loop_settings import LoopShape
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.common.news_sized_words import SIZE_NAMES
from config.checks import ConfigSection, Count, Fraction, NonNegative, Positive, PositiveCount
from runtime.settings import RuntimeSettings

KEYWORD_GATE_KEYS = ("high:modest", "high:large", "high:shock", "medium:large", "medium:shock", "low:shock")
"""risk.keyword_gate_keys' default (see there)."""


class RiskConfig(ConfigSection, kw_only=True):
    veto_enabled: bool = True
    """Apply the original design's veto rules (consecutive losses, drawdown buffer, win rate); false for the ablation."""
    vetoes_while_training: bool = False
    """Apply those vetoes when env.mode = "train" too. Off by default: a veto replaces the policy's entry with HOLD,
    hiding what the entry would have earned, so the policy learns from a market it will not meet. Measured in
    process (300 synthetic days, 300k steps, 60 held-out days): trained with the vetoes, -$179 a day out of
    sample without them and -$11 with them; trained without, +$80 and +$44. The account guard and the daily loss
    limit stay on in training; backtests and paper trading always apply every rule."""
    max_consecutive_losses: PositiveCount = 3
    """Entries are vetoed once this many trades in a row were lost ..."""
    consecutive_losses_cooldown_bars: PositiveCount = 30
    """... for this many steps; then the rule re-arms only on a new loss (actors/risk/halts.py)."""
    min_drawdown_buffer_fraction: Fraction = 0.2
    """Entries are vetoed when the drawdown buffer is below this share of the trailing limit, until the end of
    the trading day; then the rule re-arms only when a new trade closes."""
    min_win_rate: Fraction = 0.3
    """Entries are vetoed while the win rate of the last 10 trades is below this (the original design's 0.4; see the cooldown) ..."""
    min_trades_for_win_rate: Count = 5
    """... once the episode has closed at least this many trades (0 = always, as the original design; with fewer
    trades one early loss would halt the rest of the episode) ..."""
    win_rate_halt_needs_net_loss: bool = True
    """... and only while those 10 trades lost money in sum: a trend follower wins fewer than 40 % of its trades
    and still earns (without this, the original rule halted the momentum rules on 80-96 % of bars and the
    regime oracle, 70 % winners, on 8 %) ..."""
    win_rate_cooldown_bars: PositiveCount = 60
    """... for this many steps; then the rule re-arms only when a new trade closes (while flat the win rate cannot
    change, so without this the halt would never end). 60 bars and 30 %, not a session and 40 %: measured on 50
    regimes days, a session at 40 % halted the momentum rules on 78-84 % of bars ($25-34 a day);
    60 bars at 30 % halts them on 31-37 % ($295-361 a day, $272-330 with no vetoes at all) and still stops random
    trading (93 % of bars halted, -$71 a day; -$417 and 8 breaches with no vetoes)."""
    session_halt_fallback_bars: PositiveCount = 390
    """Halts that end with the trading day last this many steps when the context has no session id."""
    max_halt_spells_kept: Count = 10_000
    """Finished halts remembered for reports (the oldest are dropped)."""
    account_guard_enabled: bool = True
    """Flatten (the closing action; else tighten the stop) and halt entries before an Apex breach is possible on the
    next bar; the entry halt ends with the trading day and re-arms when a new trade closes."""
    guard_bar_move_atr: NonNegative = 2.0
    """The adverse move, in ATRs, the guard assumes one bar can make."""
    fusion_deadline_ms: Positive = 250.0
    """Without a fusion.decision this long after env.obs, risk decides from the RL proposal (or HOLD): degraded."""
    news_blackout_enabled: bool = False
    """The prop-firm news rule (actors/risk/news.py): no new entries around a high-importance release read from md.event.
    Off by default: some firms require it, Apex does not. Its cost is counted: veto_news_blackout (and veto_news_flat)
    in sys.stats, their rates in the gauges, each blocked entry logged news_entry_blocked."""
    news_blackout_before_mins: NonNegative = 2.0
    """news_blackout_enabled: entries are blocked from this many minutes before the release (the feed must announce it
    earlier: feed.event_schedule_ahead_mins) ..."""
    news_blackout_after_mins: NonNegative = 2.0
    """... to this many minutes after it."""
    news_flat_before: bool = False
    """news_blackout_enabled: also close any position in the minutes before the release (the closing action, where the
    env's mask allows it)."""
    thought_risk_gate: str = "off"
    """off | stand_aside | flatten: act on the reasoner's risk read (reasoner.risk_read; actors/risk/thought_gate.py):
    for the minutes a read at or above thought_risk_min_level names, veto entries (stand_aside) and also close a
    position (flatten). Counted veto_thought_risk / veto_thought_risk_flat in sys.stats."""
    thought_risk_min_level: str = "EXTREME"
    """ELEVATED | EXTREME: the lowest read that gates."""
    keyword_gate_enabled: bool = False
    """A floor for the LLM's gate (actors/risk/event_gates.py): stand aside for event_gate_minutes after an event whose
    md.event words the project's keyword risk rule (actors/common/news_risk.py keyword_key) reads as one of
    keyword_gate_keys. No model. Counted veto_keyword_risk and keyword_risk_windows in sys.stats."""
    keyword_gate_keys: list[str] = msgspec.field(default_factory=lambda: list(KEYWORD_GATE_KEYS))
    """The "tier:size" readings that are dangerous (tier: low | medium | high; size: in_line | modest | large | shock).
    The default: the keys whose hindsight level (the next 15 bars' range in ATR, actors/common/news_risk.py) was
    ELEVATED or more on the training half of 250 ``news`` days, seed 0; evaluate --gate-walk refits them on its fold's
    training days."""
    oracle_gate_enabled: bool = False
    """Backtest only (bin/run run refuses it): stand aside for event_gate_minutes after an event listed in
    oracle_gate_event_ids, the events whose TRUE tier and surprise size (the market's event record, which a live run
    cannot know) the hindsight table names ELEVATED or more. Counted veto_oracle_risk and oracle_risk_windows."""
    oracle_gate_event_ids: list[str] = msgspec.field(default_factory=list)
    """oracle_gate_enabled: the md.event ids to stand aside after; evaluate --gate-walk writes them from the market's
    event record (tier and true surprise size, looked up in the hindsight table fitted on the fold's training days)."""
    event_gate_minutes: PositiveCount = 15
    """keyword / oracle gate: minutes (bars) entries stay vetoed from the event's time: the horizon of the hindsight
    level they are fitted to (news_risk.RISK_HORIZON_BARS, the minutes the risk read's label names)."""
    max_pending_steps: PositiveCount = 64
    """Steps kept while waiting for their messages; older ones are dropped (counted)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.thought_risk_gate not in ("off", "stand_aside", "flatten"):
            raise ValueError(f"risk.thought_risk_gate must be one of off, stand_aside, flatten; got {self.thought_risk_gate!r}")
        if self.thought_risk_min_level not in ("ELEVATED", "EXTREME"):
            raise ValueError(f"risk.thought_risk_min_level must be ELEVATED or EXTREME; got {self.thought_risk_min_level!r}")

        for key in self.keyword_gate_keys:
            tier, _, size = key.partition(":")
            if tier not in IMPORTANCES or size not in SIZE_NAMES:
                raise ValueError(f"risk.keyword_gate_keys takes tier:size keys (tier one of {', '.join(IMPORTANCES)}; size "
                                 f"one of {', '.join(SIZE_NAMES)}); got {key!r}")

    def for_env_mode(self, env_mode: str) -> "RiskConfig":
        """The rules in force for an env in ``env_mode``: training leaves the vetoes out unless vetoes_while_training."""
        if env_mode == "train" and not self.vetoes_while_training and self.veto_enabled:
            return msgspec.structs.replace(self, veto_enabled=False)
        return self


class RiskSettings(RuntimeSettings, kw_only=True):
    """What the risk actor reads: the runtime's sections, [risk], the shared [instrument] and [account], and
    of [env] its mode (no vetoes in training) and trade size."""

    instrument: InstrumentConfig = msgspec.field(default_factory=InstrumentConfig)
    account: AccountConfig = msgspec.field(default_factory=AccountConfig)
    env: LoopShape = LoopShape()  # a view of [env]: a frozen value
    risk: RiskConfig = msgspec.field(default_factory=RiskConfig)


def live_refusal(risk: RiskConfig) -> str:
    """Why a live run (bin/run run, paper) must not start with these settings ('' when it may)."""
    if risk.oracle_gate_enabled:
        return ("risk.oracle_gate_enabled: the oracle gate knows each event's true surprise size, which only a backtest's "
                "market record holds; a live run cannot (use risk.keyword_gate_enabled or risk.thought_risk_gate)")
    return ""
