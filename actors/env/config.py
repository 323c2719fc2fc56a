"""The [instrument], [account], [data] and [env] config sections (owned by the env package).

The risk actor reads [account] too, so its keys describe the account, not the env.
"""

from __future__ import annotations

import re

import msgspec

from config.checks import require as _require

STRUCT_OPTIONS = dict(frozen=True, kw_only=True, forbid_unknown_fields=True)

DATA_SOURCES = ("synthetic", "file")
ENV_MODES = ("train", "backtest")
SPLITS = ("train", "validation", "test", "all")
EPISODE_STARTS = ("random", "session_open")
DAYFIRST_CHOICES = ("auto", "yes", "no")




class InstrumentConfig(msgspec.Struct, **STRUCT_OPTIONS):
    symbol: str = "NQ"
    """NQ | ES | YM | RTY | MNQ | MES | M2K | MYM built in; any other symbol needs tick_size and multiplier."""
    tick_size: float = 0.0
    """Price increment in points; 0 = from the built-in table."""
    multiplier: float = 0.0
    """Dollars per point per contract; 0 = from the built-in table."""
    commission_per_side: float = -1.0
    """Dollars per contract per side; -1 = from the built-in table."""
    slippage_ticks: float = -1.0
    """Ticks lost on every market or stop fill; -1 = from the built-in table."""

    def __post_init__(self) -> None:
        _require(bool(self.symbol.strip()), "instrument.symbol", "must not be empty")
        _require(self.tick_size >= 0, "instrument.tick_size", f"must be >= 0, got {self.tick_size}")
        _require(self.multiplier >= 0, "instrument.multiplier", f"must be >= 0, got {self.multiplier}")
        _require(self.commission_per_side >= 0 or self.commission_per_side == -1, "instrument.commission_per_side", "must be >= 0 (or -1 for the table)")
        _require(self.slippage_ticks >= 0 or self.slippage_ticks == -1, "instrument.slippage_ticks", "must be >= 0 (or -1 for the table)")


class AccountConfig(msgspec.Struct, **STRUCT_OPTIONS):
    name: str = "apex_50k"
    """Label for reports; the numbers below are what count (other Apex sizes: see actors/env/account.py APEX_ACCOUNTS)."""
    start_balance: float = 50_000.0
    """Account balance at the start of every episode, dollars."""
    trailing_drawdown: float = 2_500.0
    """Equity may fall at most this far below its peak; crossing it ends the episode (Apex rule)."""
    drawdown_lock_balance: float = 50_100.0
    """The drawdown threshold stops trailing once it reaches this balance (Apex: start + 100); 0 = trails forever."""
    max_contracts: int = 10
    """Most contracts open at once."""
    flat_time_et: str = "16:59"
    """All positions are closed by this US/Eastern time every day (HH:MM)."""
    daily_loss_limit: float = 0.0
    losing_streak_resets_daily: bool = True
    """Start every session with a losing streak of 0, so the risk stage's streak veto pauses entries for the
    rest of a bad day instead of for the rest of a multi-day backtest."""
    """Daily loss (dollars) after which no new entries are allowed that day; 0 = no limit (Apex evaluation has none)."""

    def __post_init__(self) -> None:
        _require(self.start_balance > 0, "account.start_balance", f"must be > 0, got {self.start_balance}")
        _require(self.trailing_drawdown > 0, "account.trailing_drawdown", f"must be > 0, got {self.trailing_drawdown}")
        _require(self.drawdown_lock_balance >= 0, "account.drawdown_lock_balance", "must be >= 0")
        _require(self.max_contracts >= 1, "account.max_contracts", f"must be >= 1, got {self.max_contracts}")
        _require(self.daily_loss_limit >= 0, "account.daily_loss_limit", "must be >= 0")
        _require(
            re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", self.flat_time_et) is not None,
            "account.flat_time_et",
            f"must be HH:MM (24 h), got {self.flat_time_et!r}",
        )

    @property
    def flat_minute_of_day(self) -> int:
        hours, minutes = self.flat_time_et.split(":")
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
    synthetic_days: int = 60
    """Trading days of synthetic data (390 one-minute bars each)."""
    synthetic_start_price: float = 18_000.0
    """First price of the synthetic series, points."""
    synthetic_start_date: str = "2024-01-02"
    """First session date of the synthetic series (weekends are skipped)."""
    seed: int = -1
    """Seed of the synthetic generator; -1 = run.seed."""
    train_fraction: float = 0.7
    """Share of the bars (cut at session boundaries) for training; the oldest bars."""
    validation_fraction: float = 0.15
    """Share after the training bars for validation; the newest rest is the test split."""

    def __post_init__(self) -> None:
        _require(self.source in DATA_SOURCES, "data.source", f"must be one of {DATA_SOURCES}, got {self.source!r}")
        _require(self.source != "file" or bool(self.path), "data.path", "is required when data.source = 'file'")
        _require(self.dayfirst in DAYFIRST_CHOICES, "data.dayfirst", f"must be one of {DAYFIRST_CHOICES}, got {self.dayfirst!r}")
        _require(self.synthetic_days >= 2, "data.synthetic_days", f"must be >= 2, got {self.synthetic_days}")
        _require(self.synthetic_start_price > 0, "data.synthetic_start_price", "must be > 0")
        _require(0 < self.train_fraction < 1, "data.train_fraction", f"must be in (0, 1), got {self.train_fraction}")
        _require(0 <= self.validation_fraction < 1, "data.validation_fraction", "must be in [0, 1)")
        _require(
            self.train_fraction + self.validation_fraction < 1,
            "data.validation_fraction",
            "train_fraction + validation_fraction must leave a test split (< 1)",
        )


class EnvConfig(msgspec.Struct, **STRUCT_OPTIONS):
    n_envs: int = 4
    """Environments the env actor hosts; one batched env.obs per step covers them all."""
    mode: str = "train"
    """train: random episodes from the split forever | backtest: one sequential pass over the split, then done."""
    split: str = "train"
    """train | validation | test | all: which part of the data the actor's environments use."""
    episode_bars: int = 390
    """Bars per training episode (390 = one RTH session); the episode is truncated after them."""
    episode_start: str = "random"
    """random (any bar) | session_open (the first bar of a session) for training episodes."""
    contracts_per_trade: int = 1
    """Contracts per entry (capped by account.max_contracts)."""
    stop_loss_atr: float = 2.0
    """Stop-loss distance at entry in ATR(14) units (the source run's 1.5 stopped out too early)."""
    take_profit_atr: float = 4.0
    """Take-profit distance at entry in ATR(14) units."""
    trail_atr: float = 1.5
    """Trailing stop distance in ATR(14) units when the trail is on."""
    reward_scale_usd: float = 100.0
    """Reward = change in equity (dollars) / this; see actors/env/rewards.py."""
    drawdown_penalty: float = 10.0
    """Subtracted from the reward on the step the trailing drawdown is breached."""
    verdict_deadline_ms: float = 5_000.0
    """Without a risk.verdict for the current step by then, every env holds (counted, timed_out)."""
    max_steps: int = 0
    """Loop steps after which the actor reports done; 0 = unlimited (train) / the pass (backtest)."""
    step_interval_ms: float = 0.0
    """Pace: at least this long between observations (1000 = a live-like decision per second, where
    the LLM's thoughts are fresh); 0 = as fast as the loop answers."""
    progress_interval_secs: float = 1.0
    """How often the actor publishes sys.progress."""
    report_dir: str = "backtest"
    """Sub-directory of the run directory for the backtest report."""

    def __post_init__(self) -> None:
        _require(self.n_envs >= 1, "env.n_envs", f"must be >= 1, got {self.n_envs}")
        _require(self.mode in ENV_MODES, "env.mode", f"must be one of {ENV_MODES}, got {self.mode!r}")
        _require(self.split in SPLITS, "env.split", f"must be one of {SPLITS}, got {self.split!r}")
        _require(self.episode_bars >= 20, "env.episode_bars", f"must be >= 20, got {self.episode_bars}")
        _require(self.episode_start in EPISODE_STARTS, "env.episode_start", f"must be one of {EPISODE_STARTS}")
        _require(self.contracts_per_trade >= 1, "env.contracts_per_trade", "must be >= 1")
        _require(self.stop_loss_atr > 0, "env.stop_loss_atr", "must be > 0")
        _require(self.take_profit_atr > 0, "env.take_profit_atr", "must be > 0")
        _require(self.trail_atr > 0, "env.trail_atr", "must be > 0")
        _require(self.reward_scale_usd > 0, "env.reward_scale_usd", "must be > 0")
        _require(self.drawdown_penalty >= 0, "env.drawdown_penalty", "must be >= 0")
        _require(self.verdict_deadline_ms > 0, "env.verdict_deadline_ms", "must be > 0")
        _require(self.max_steps >= 0, "env.max_steps", "must be >= 0")
        _require(self.step_interval_ms >= 0, "env.step_interval_ms", "must be >= 0")
        _require(self.progress_interval_secs > 0, "env.progress_interval_secs", "must be > 0")
