"""The [instrument], [account], [data] and [env] config sections (owned by the env package).

The risk actor reads [account] too, so its keys describe the account, not the env.
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec

from config.checks import Count, NonNegative, Positive, PositiveCount, PositiveSecs, check_bounds
from config.checks import require as _require

STRUCT_OPTIONS = dict(frozen=True, kw_only=True, forbid_unknown_fields=True)

DATA_SOURCES = ("synthetic", "file")
SCENARIO_NAMES = ("regimes", "null")
ENV_MODES = ("train", "backtest", "paper")
SPLITS = ("train", "validation", "test", "all")
EPISODE_STARTS = ("random", "session_open")
RESTART_POSITIONS = ("restore", "flatten")
DAYFIRST_CHOICES = ("auto", "yes", "no")




class InstrumentConfig(msgspec.Struct, **STRUCT_OPTIONS):
    symbol: str = "NQ"
    """NQ | ES | YM | RTY | MNQ | MES | M2K | MYM built in; any other symbol needs tick_size and multiplier."""
    tick_size: NonNegative = 0.0
    """Price increment in points; 0 = from the built-in table."""
    multiplier: NonNegative = 0.0
    """Dollars per point per contract; 0 = from the built-in table."""
    commission_per_side: float = -1.0
    """Dollars per contract per side; -1 = from the built-in table."""
    slippage_ticks: float = -1.0
    """Ticks lost on every market or stop fill; -1 = from the built-in table."""

    def __post_init__(self) -> None:
        _require(bool(self.symbol.strip()), "instrument.symbol", "must not be empty")
        check_bounds(self, "instrument")
        _require(self.commission_per_side >= 0 or self.commission_per_side == -1, "instrument.commission_per_side", "must be >= 0 (or -1 for the table)")
        _require(self.slippage_ticks >= 0 or self.slippage_ticks == -1, "instrument.slippage_ticks", "must be >= 0 (or -1 for the table)")


TRAILING_MODES = ("intraday", "end_of_day", "none")

_HHMM = r"([01]\d|2[0-3]):[0-5]\d"

# Account rule presets. Every value is also an [account] key; a key set in the config overrides its
# preset value ("from the preset" sentinels below). Each preset names its source and the date it follows.
_APEX_50K: dict[str, object] = dict(
    start_balance=50_000.0, trailing_drawdown=2_500.0, drawdown_lock_balance=50_100.0, max_contracts=10,
    flat_time_et="16:59", profit_target=3_000.0, trading_day_reset_et="18:00",
)
"""The figures every Apex 50K evaluation below shares (legacy and 4.0); each preset adds what sets it apart."""

ACCOUNT_PRESETS: dict[str, dict[str, object]] = {
    # The seeds' rules (seeds/, the source system) = Apex's legacy 50K evaluation as sold before the
    # March 2026 change: intraday trailing $2,500 including unrealised profit, threshold locked at
    # start + $100, flat by 16:59 ET, 10 contracts, target $3,000, no daily loss limit.
    "apex_legacy_50k": dict(
        _APEX_50K, name="apex_legacy_50k", trailing="intraday", daily_loss_limit=0.0,
        source="seeds (source system) + Apex help center 'What Are the Rules for Evaluations?' (support.atf.com), "
               "legacy evaluation rules in force until 2026-03-01",
    ),
    # Apex 4.0 intraday-trailing evaluation (new purchases from 2026-03-01): the floor trails the live
    # equity peak, no daily loss limit, $3,000 target on 50K, floor locks at start + $100.
    "apex_intraday_50k": dict(
        _APEX_50K, name="apex_intraday_50k", trailing="intraday", daily_loss_limit=0.0,
        source="Apex 4.0 rulebook of 2026-03-01 as summarised by propfirmescape.com ('Apex Trader Funding Evaluation "
               "Rules 2026: Intraday vs EOD') and puravidaedge.com (verified 2026-05); max contracts: the legacy 50K figure",
    ),
    # Apex 4.0 EOD evaluation (from 2026-03-01): the floor trails the closing balance, updated at the
    # trading-day reset; a daily loss limit pauses the day (soft: no failure). The DLL amount is not
    # stated in the sources found: $1,000 is assumed (verify on apextraderfunding.com).
    "apex_eod_50k": dict(
        _APEX_50K, name="apex_eod_50k", trailing="end_of_day", daily_loss_limit=1_000.0,
        source="Apex 4.0 rulebook of 2026-03-01 as summarised by propfirmescape.com and puravidaedge.com "
               "(verified 2026-05: EOD trailing, soft daily loss limit); DLL amount assumed",
    ),
    # No prop-firm rules (24/7 crypto, own money): no trailing drawdown, no flat time, no target.
    "none": dict(
        name="none", start_balance=50_000.0, trailing="none", trailing_drawdown=0.0,
        drawdown_lock_balance=0.0, max_contracts=1_000, flat_time_et="none", daily_loss_limit=0.0,
        profit_target=0.0, trading_day_reset_et="00:00",
        source="no prop-firm rules (this project, 2026)",
    ),
}

_FROM_PRESET_NUMBER = -1.0
_FROM_PRESET_TEXT = ""


class AccountConfig(msgspec.Struct, **STRUCT_OPTIONS):
    """The account's rules: a preset (ACCOUNT_PRESETS) whose values any key below overrides.

    Keys left at their sentinel (-1, or '' for text) take the preset's value when the struct is built,
    so ``AccountConfig().trailing_drawdown`` is the resolved number.
    """

    preset: str = "apex_legacy_50k"
    """apex_legacy_50k (the seeds) | apex_intraday_50k | apex_eod_50k | none; see ACCOUNT_PRESETS."""
    name: str = _FROM_PRESET_TEXT
    """Label for reports ('' = the preset's name)."""
    source: str = _FROM_PRESET_TEXT
    """Where the rules come from and the date they follow ('' = the preset's)."""
    start_balance: float = _FROM_PRESET_NUMBER
    """Account balance at the start of every evaluation, dollars (-1 = preset)."""
    trailing: str = _FROM_PRESET_TEXT
    """intraday (peak = equity incl. unrealised, at the bar's favourable extreme) | end_of_day (peak = closing
    balance at the trading-day reset) | none ('' = preset)."""
    trailing_drawdown: float = _FROM_PRESET_NUMBER
    """Equity may fall at most this far below its peak; touching the threshold fails the evaluation (-1 = preset, 0 = none)."""
    drawdown_lock_balance: float = _FROM_PRESET_NUMBER
    """The threshold stops trailing once it reaches this balance (Apex: start + 100); 0 = trails forever, -1 = preset."""
    max_contracts: int = -1
    """Most contracts open at once (-1 = preset)."""
    flat_time_et: str = _FROM_PRESET_TEXT
    """All positions are closed by this US/Eastern time every day (HH:MM; 'none' = never; '' = preset)."""
    daily_loss_limit: float = _FROM_PRESET_NUMBER
    """Day's loss (dollars, incl. open P&L) at which the position is closed and entries pause until the next
    trading day; the evaluation does not fail (0 = none, -1 = preset)."""
    profit_target: float = _FROM_PRESET_NUMBER
    """Net profit (dollars) that passes the evaluation, reached flat with no breach (0 = none, -1 = preset)."""
    trading_day_reset_et: str = _FROM_PRESET_TEXT
    """US/Eastern time (HH:MM) at which a trading day ends: daily P&L resets, end-of-day trailing updates ('' = preset)."""
    losing_streak_resets_daily: bool = True
    """Start every trading day with a losing streak of 0, so the risk stage's streak veto pauses entries for the
    rest of a bad day instead of for the rest of a multi-day backtest."""

    def __post_init__(self) -> None:
        _require(self.preset in ACCOUNT_PRESETS, "account.preset", f"must be one of {tuple(ACCOUNT_PRESETS)}, got {self.preset!r}")
        preset = ACCOUNT_PRESETS[self.preset]
        lock_from_preset = self.drawdown_lock_balance == _FROM_PRESET_NUMBER
        for key, value in preset.items():
            current = getattr(self, key)
            if current == _FROM_PRESET_TEXT or (not isinstance(current, str) and current == _FROM_PRESET_NUMBER):
                msgspec.structs.force_setattr(self, key, value)
        if lock_from_preset and self.drawdown_lock_balance > 0:
            # The preset's lock is "start + 100": keep that offset when start_balance is overridden.
            offset = float(preset["drawdown_lock_balance"]) - float(preset["start_balance"])
            msgspec.structs.force_setattr(self, "drawdown_lock_balance", self.start_balance + offset)
        _require(self.start_balance > 0, "account.start_balance", f"must be > 0, got {self.start_balance}")
        _require(self.trailing in TRAILING_MODES, "account.trailing", f"must be one of {TRAILING_MODES}, got {self.trailing!r}")
        _require(self.trailing_drawdown >= 0, "account.trailing_drawdown", f"must be >= 0, got {self.trailing_drawdown}")
        _require(self.trailing == "none" or self.trailing_drawdown > 0, "account.trailing_drawdown", "must be > 0 unless account.trailing = 'none'")
        _require(self.drawdown_lock_balance >= 0, "account.drawdown_lock_balance", "must be >= 0")
        _require(self.max_contracts >= 1, "account.max_contracts", f"must be >= 1, got {self.max_contracts}")
        _require(self.daily_loss_limit >= 0, "account.daily_loss_limit", "must be >= 0")
        _require(self.profit_target >= 0, "account.profit_target", "must be >= 0")
        _require(
            self.flat_time_et == "none" or re.fullmatch(_HHMM, self.flat_time_et) is not None,
            "account.flat_time_et",
            f"must be HH:MM (24 h) or 'none', got {self.flat_time_et!r}",
        )
        _require(
            re.fullmatch(_HHMM, self.trading_day_reset_et) is not None,
            "account.trading_day_reset_et",
            f"must be HH:MM (24 h), got {self.trading_day_reset_et!r}",
        )

    @property
    def has_trailing_drawdown(self) -> bool:
        return self.trailing != "none" and self.trailing_drawdown > 0

    @property
    def flat_minute_of_day(self) -> int | None:
        """Minute of the US/Eastern day of the flat time; None when positions may be held overnight."""
        return None if self.flat_time_et == "none" else _minute_of_day(self.flat_time_et)

    @property
    def reset_minute_of_day(self) -> int:
        return _minute_of_day(self.trading_day_reset_et)


def _minute_of_day(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


class DataConfig(msgspec.Struct, **STRUCT_OPTIONS):
    source: str = "synthetic"
    """synthetic (seeded NQ-like 1-minute RTH bars, the default) | file (CSV or Parquet at path)."""
    path: str = ""
    """CSV or Parquet file of bars when source = file (timestamp and OHLCV columns are auto-detected)."""
    timezone: str = "America/New_York"
    """Time zone of naive timestamps in the file; timestamps with an offset keep their own."""
    dayfirst: str = "auto"
    """auto | yes | no: how to read ambiguous dates like 03/04/2024 (auto: day-first only when the data proves it)."""
    scenario: str = "regimes"
    """synthetic: regimes (planted trends and ranges, the default) | null (the same seed's random walk: nothing to
    learn); effect sizes in actors/common/synthetic.py."""
    trend_drift_sigmas: Annotated[float, msgspec.Meta(ge=0)] = 0.2
    """synthetic, regimes: drift per bar in a trend regime, in units of the bar's sigma (smaller = a harder market)."""
    min_regime_bars: Annotated[int, msgspec.Meta(ge=1)] = 30
    """synthetic: shortest regime in bars."""
    max_regime_bars: Annotated[int, msgspec.Meta(ge=2)] = 300
    """synthetic: regime lengths are uniform in [min_regime_bars, max_regime_bars)."""
    synthetic_days: Annotated[int, msgspec.Meta(ge=2)] = 60
    """Trading days of synthetic data (390 one-minute bars each)."""
    synthetic_start_price: Positive = 18_000.0
    """First price of the synthetic series, points."""
    synthetic_start_date: str = "2024-01-02"
    """First session date of the synthetic series (weekends are skipped)."""
    seed: Annotated[int, msgspec.Meta(ge=-1)] = -1
    """Seed of the synthetic generator; -1 = run.seed."""
    train_fraction: Annotated[float, msgspec.Meta(gt=0, lt=1)] = 0.7
    """Share of the bars (cut at session boundaries) for training; the oldest bars."""
    validation_fraction: Annotated[float, msgspec.Meta(ge=0, lt=1)] = 0.15
    """Share after the training bars for validation; the newest rest is the test split."""

    def __post_init__(self) -> None:
        _require(self.source in DATA_SOURCES, "data.source", f"must be one of {DATA_SOURCES}, got {self.source!r}")
        _require(self.source != "file" or bool(self.path), "data.path", "is required when data.source = 'file'")
        _require(self.scenario in SCENARIO_NAMES, "data.scenario", f"must be one of {SCENARIO_NAMES}, got {self.scenario!r}")
        _require(self.min_regime_bars < self.max_regime_bars, "data.max_regime_bars", "must be > data.min_regime_bars")
        _require(self.dayfirst in DAYFIRST_CHOICES, "data.dayfirst", f"must be one of {DAYFIRST_CHOICES}, got {self.dayfirst!r}")
        check_bounds(self, "data")
        _require(
            self.train_fraction + self.validation_fraction < 1,
            "data.validation_fraction",
            "train_fraction + validation_fraction must leave a test split (< 1)",
        )


class EnvConfig(msgspec.Struct, **STRUCT_OPTIONS):
    n_envs: PositiveCount = 4
    """Environments the env actor hosts; one batched env.obs per step covers them all."""
    mode: str = "train"
    """train: random episodes from the split forever | backtest: one sequential pass over the split, then done |
    paper: bars from md.bar (a feed), one decision per closed bar, until stopped (actors/env/live.py)."""
    split: str = "train"
    """train | validation | test | all: which part of the data the actor's environments use."""
    episode_bars: Annotated[int, msgspec.Meta(ge=20)] = 390
    """Bars per training episode (390 = one RTH session); the episode is truncated after them."""
    episode_start: str = "random"
    """random (any bar) | session_open (the first bar of a session) for training episodes."""
    contracts_per_trade: PositiveCount = 1
    """Contracts per entry (capped by account.max_contracts)."""
    stop_loss_atr: Positive = 2.0
    """Stop-loss distance at entry in ATR(14) units (the source run's 1.5 stopped out too early)."""
    take_profit_atr: Positive = 4.0
    """Take-profit distance at entry in ATR(14) units."""
    trail_atr: Positive = 1.5
    """Trailing stop distance in ATR(14) units when the trail is on."""
    reward_scale_usd: Positive = 100.0
    """Reward = change in equity (dollars) / this; see actors/env/rewards.py."""
    drawdown_penalty: NonNegative = 10.0
    """Subtracted from the reward on the step the trailing drawdown is breached."""
    entry_penalty_usd: NonNegative = 30.0
    """Training-only turnover charge subtracted from the reward (not the account) on each entry; see actors/env/rewards.py."""
    verdict_deadline_ms: Positive = 5_000.0
    """Without a risk.verdict for the current step by then, every env holds (counted, timed_out)."""
    max_steps: Count = 0
    """Loop steps after which the actor reports done; 0 = unlimited (train) / the pass (backtest)."""
    step_interval_ms: NonNegative = 0.0
    """Pace: at least this long between observations (1000 = a live-like decision per second, where
    the LLM's thoughts are fresh); 0 = as fast as the loop answers."""
    thought_lag_steps: Count = 0
    """Bounded thought lag K (actors/env/pacing.py): the observation of step N+1 goes out only once a thought
    that saw each env at step >= N+1-K has arrived (1 = each step uses the previous step's thought; the loop
    runs at the LLM's pace). The wait is for every env of the batch. 0 = free-running, never waits."""
    thought_wait_deadline_ms: Positive = 30_000.0
    """Longest wait for the thoughts of a step (thought_lag_steps >= 1); then the step goes on without them,
    counted as a late step. A reasoner that is down costs one deadline per step, never a hang."""
    progress_interval_secs: PositiveSecs = 1.0
    """How often the actor publishes sys.progress."""
    publish_hindsight: bool = False
    """train/backtest: publish env.hindsight, the triple-barrier outcome of each decision step once its
    lora.hindsight_horizon_bars bars are played (the LoRA trainer's labels). Also on when lora.enabled and
    lora.labels = "trades_hindsight"; off, the loop publishes nothing more."""
    checkpoint_every_steps: Count = 20
    """train/backtest: loop steps between checkpoints of the account state (actors/env/checkpoint.py; also written
    at stop; a restarted env actor resumes from it); 0 = only at stop."""
    restart_position: str = "restore"
    """An open position found in the checkpoint at a restart: restore (keep it) | flatten (close it at the next bar's open)."""
    resend_obs_delay_ms: NonNegative = 100.0
    """A peer restarted (its heartbeat came from a new pid): the pending env.obs goes out again after this long
    (time for the new process's subscriptions to cross the broker) instead of waiting out verdict_deadline_ms."""
    verdict_retry_ms: NonNegative = 1000.0
    """No risk.verdict this long after env.obs: the observation goes out once more (fusion, risk and policy answer a
    step once; a repeat gets the same answer), so a frame lost while the broker restarts costs a second; 0 = never."""
    report_dir: str = "backtest"
    """Sub-directory of the run directory for the backtest report."""
    paper_dir: str = "paper"
    """paper: sub-directory of the run directory for equity.csv, positions/trades/decisions.jsonl and, at stop, the report."""
    paper_history_path: str = ""
    """paper: CSV/Parquet bars (the data loader's formats) that warm the features up before the feed's first bar; '' = warm up on the feed."""
    paper_warmup_bars: Annotated[int, msgspec.Meta(ge=20)] = 210
    """paper: bars known (history + feed) before the first decision (210 = the slowest indicator, SMA200 slope, is defined)."""
    paper_window_bars: Annotated[int, msgspec.Meta(ge=20)] = 600
    """paper: newest bars the env keeps (>= paper_warmup_bars; older bars are dropped); features carry rolling state over every bar seen."""
    feed_silence_warn_secs: PositiveSecs = 180.0
    """paper: no md.bar for this long after the last one -> a feed_silent warning in the env's log (once per silence)."""
    feed_silence_flatten_secs: PositiveSecs = 600.0
    """paper: no md.bar for this long while in a position -> the position is closed at the last close (feed_silent)."""

    def __post_init__(self) -> None:
        check_bounds(self, "env")
        _require(self.mode in ENV_MODES, "env.mode", f"must be one of {ENV_MODES}, got {self.mode!r}")
        _require(self.restart_position in RESTART_POSITIONS, "env.restart_position", f"must be one of {RESTART_POSITIONS}, got {self.restart_position!r}")
        _require(self.paper_window_bars >= self.paper_warmup_bars, "env.paper_window_bars", "must be >= env.paper_warmup_bars")
        _require(self.feed_silence_flatten_secs >= self.feed_silence_warn_secs, "env.feed_silence_flatten_secs", "must be >= env.feed_silence_warn_secs")
        _require(self.split in SPLITS, "env.split", f"must be one of {SPLITS}, got {self.split!r}")
        _require(self.episode_start in EPISODE_STARTS, "env.episode_start", f"must be one of {EPISODE_STARTS}")
