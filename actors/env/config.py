"""The [data] and [env] config sections (owned by the env package), and EnvSettings, what every env shell reads.

[instrument] and [account] are shared vocabulary (the env, risk and feed read them): actors/common/market_settings.py.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.common.markets import market_help, market_names
from config.checks import ConfigSection, Count, NonNegative, Positive, PositiveCount, PositiveSecs
from config.checks import require as _require
from runtime.settings import RuntimeSettings

DATA_SOURCES = ("synthetic", "file")
ENV_MODES = ("train", "backtest", "paper")
BACKTEST_WINDOWS = ("all", "events")
SPLITS = ("train", "validation", "test", "all")
EPISODE_STARTS = ("random", "session_open")
RESTART_POSITIONS = ("restore", "flatten")
DAYFIRST_CHOICES = ("auto", "yes", "no")




class DataConfig(ConfigSection, kw_only=True):
    source: str = "synthetic"
    """synthetic (seeded NQ-like 1-minute RTH bars, the default) | file (CSV or Parquet at path)."""
    path: str = ""
    """CSV or Parquet file of bars when source = file (timestamp and OHLCV columns are auto-detected)."""
    timezone: str = "America/New_York"
    """Time zone of naive timestamps in the file; timestamps with an offset keep their own."""
    dayfirst: str = "auto"
    """auto | yes | no: how to read ambiguous dates like 03/04/2024 (auto: day-first only when the data proves it)."""
    scenario: str = "regimes"
    """synthetic: the market, one of those registered in actors/common/markets.py (the default regimes: planted trends
    and ranges; each has a null twin with nothing to learn); their effect sizes are in the module that registers them."""
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
    """First session date of the synthetic series; its sessions are the CME calendar's (weekends and holidays skipped)."""
    seed: Annotated[int, msgspec.Meta(ge=-1)] = -1
    """Seed of the synthetic generator; -1 = run.seed."""
    train_fraction: Annotated[float, msgspec.Meta(gt=0, lt=1)] = 0.7
    """Share of the bars (cut at session boundaries) for training; the oldest bars."""
    validation_fraction: Annotated[float, msgspec.Meta(ge=0, lt=1)] = 0.15
    """Share after the training bars for validation; the newest rest is the test split."""
    regime_model_path: str = ""
    """A saved regime HMM (regime_model.json, actors/env/regime_model.py) to read market_regime and the trend word with,
    instead of fitting one on this data's training split: the belief a policy was trained on (evaluate's lockstep run
    reads its fold's, whose training days end before its own split). '' = fit on the training split."""

    def __post_init__(self) -> None:
        _require(self.source in DATA_SOURCES, "data.source", f"must be one of {DATA_SOURCES}, got {self.source!r}")
        _require(self.source != "file" or bool(self.path), "data.path", "is required when data.source = 'file'")
        _require(self.scenario in market_names(), "data.scenario", f"must be one of {market_names()}, got {self.scenario!r}")
        _require(self.min_regime_bars < self.max_regime_bars, "data.max_regime_bars", "must be > data.min_regime_bars")
        _require(self.dayfirst in DAYFIRST_CHOICES, "data.dayfirst", f"must be one of {DAYFIRST_CHOICES}, got {self.dayfirst!r}")
        super().__post_init__()
        _require(
            self.train_fraction + self.validation_fraction < 1,
            "data.validation_fraction",
            "train_fraction + validation_fraction must leave a test split (< 1)",
        )

    @classmethod
    def choices(cls) -> dict[str, dict[str, str]]:
        """Keys whose values a registry holds: key -> {value: what it is} (docs/reference.py lists them)."""
        return {"scenario": market_help()}


class EnvConfig(ConfigSection, kw_only=True):
    n_envs: PositiveCount = 4
    """Environments the env actor hosts; one batched env.obs per step covers them all."""
    mode: str = "train"
    """train: random episodes from the split forever | backtest: one sequential pass over the split, then done |
    paper: bars from md.bar (a feed), one decision per closed bar, until stopped (actors/env/live.py)."""
    split: str = "train"
    """train | validation | test | all: which part of the data the actor's environments use."""
    backtest_window: str = "all"
    """backtest: all (the split's bars, one chunk an env) | events (only the bars from event_window_before_bars before
    each bar that makes an event public to event_window_after_bars after it, dealt out to the envs; each window a
    fresh account: bin/run evaluate --lockstep-window events, actors/env/batch.py event_windows)."""
    event_window_before_bars: Count = 5
    """backtest_window = events: bars played before an event's bar."""
    event_window_after_bars: PositiveCount = 30
    """backtest_window = events: bars played from an event's bar on (its bar included)."""
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
    management_actions: bool = True
    """Allow MOVE_SL_TO_BE, ENABLE_TRAIL and DISABLE_TRAIL in a position; false masks them, so a position ends only by
    the opposite signal, its stop or target, or a forced exit (the entry/exit design of the policy sweeps, docs/experiments/README.md)."""
    reward_scale_usd: Positive = 100.0
    """Reward = change in equity (dollars) / this; see actors/env/rewards.py."""
    drawdown_penalty: NonNegative = 10.0
    """Subtracted from the reward on the step the trailing drawdown is breached."""
    entry_penalty_usd: NonNegative = 0.0
    """Training-only turnover charge subtracted from the reward (not the account) on each entry; see actors/env/rewards.py.
    0 with the policy's default features_seen (a $30 charge taught that policy never to trade: $0 a day out of
    sample, $10 gave +$101, none +$513); with all 261 features, $30 held back churn (docs/experiments/README.md)."""
    decision_every_bars: PositiveCount = 1
    """Decision cadence: the policy acts only on the close of a bar whose next ET minute is a multiple of this (30 =
    the 9:59, 10:29, ..., 15:29 closes); on the other bars every action but HOLD is masked and the env holds the
    position (its stop, target, drawdown, daily loss limit and forced flat still act on every bar). 1 = every bar.
    Fewer decisions, fewer trades paying costs; bin/run evaluate chooses it per fold on validation days
    (actors/env/cadence.py, actors/jobs/evaluation/cadence.py). Off by default: the main job's policies were tuned
    on every bar."""
    min_hold_bars: Count = 0
    """Minimum holding time: a position held fewer bars than this may not be closed or reversed by the policy (the
    opposite signal is masked; the env's stop, target, drawdown, daily loss limit and forced flat still close it).
    0 = no minimum (the default); chosen per fold by bin/run evaluate like decision_every_bars."""
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
    max_fusion_decision_wait_ms: NonNegative = 500.0
    """Where the env reads fusion.decision (reports, lockstep figures): on direct lanes risk's verdict can come before
    the fusion decision it was made from; the verdict is held this long for it, then executed anyway (counted as
    fusion_decisions_missing). Through the broker the decision always comes first."""
    max_late_verdict_wait_ms: NonNegative = 500.0
    """Paper: a bar that comes while the previous bar's risk.verdict is still out waits this long for it before it is
    played (counted bars_waited_for_verdict, verdict_waits_expired), and a stop waits as long for a verdict on its way.
    On direct lanes the verdict can arrive after a bar sent later: an agent-paced feed sends the next bar as soon as
    it has read the verdict itself. 0 = play every bar at once."""
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
        super().__post_init__()
        _require(self.mode in ENV_MODES, "env.mode", f"must be one of {ENV_MODES}, got {self.mode!r}")
        _require(self.backtest_window in BACKTEST_WINDOWS, "env.backtest_window",
                 f"must be one of {BACKTEST_WINDOWS}, got {self.backtest_window!r}")
        _require(self.restart_position in RESTART_POSITIONS, "env.restart_position", f"must be one of {RESTART_POSITIONS}, got {self.restart_position!r}")
        _require(self.paper_window_bars >= self.paper_warmup_bars, "env.paper_window_bars", "must be >= env.paper_warmup_bars")
        _require(self.feed_silence_flatten_secs >= self.feed_silence_warn_secs, "env.feed_silence_flatten_secs", "must be >= env.feed_silence_warn_secs")
        _require(self.split in SPLITS, "env.split", f"must be one of {SPLITS}, got {self.split!r}")
        _require(self.episode_start in EPISODE_STARTS, "env.episode_start", f"must be one of {EPISODE_STARTS}")


# ---------------------------------------------------------------------- what the env actor reads
# What the env actor reads (every shell: train, backtest, paper): the runtime's sections, the shared
# [instrument] and [account], its own [data] and [env], and two declared views of other actors' sections:
# whether the LoRA trainer wants hindsight labels and how they are cut (LoraLabelsView), and the fusion's
# staleness bound the paper summary counts thoughts against (FusionStalenessView).
#
# A view is decoded from its section with the other keys ignored (the job validated the whole section);
# its fields mirror the owner's, types and defaults (tests/config/test_actor_settings.py holds them equal).


class LoraLabelsView(msgspec.Struct, frozen=True, kw_only=True):
    """Of [lora]: a trainer that learns from hindsight labels makes the env publish them (actors/env/hindsight.py)."""

    enabled: bool = False
    labels: str = "trades_hindsight"
    hindsight_horizon_bars: PositiveCount = 60
    hindsight_stop_atr: Positive = 3.0
    hindsight_target_atr: Positive = 3.0


class FusionStalenessView(msgspec.Struct, frozen=True, kw_only=True):
    """Of [fusion]: the oldest thought fusion uses, in steps (the paper summary's thought accounting), and whether a
    learning fusion network is taught by hindsight labels (then the env publishes them: actors/env/hindsight.py)."""

    max_staleness_steps: Count = 10
    method: str = "rules"
    learn: bool = True
    hindsight_lessons: bool = True


class EnvSettings(RuntimeSettings, kw_only=True):
    """Every shell's (the factory in actors/env/actor.py decodes one settings type for all of them)."""

    instrument: InstrumentConfig = msgspec.field(default_factory=InstrumentConfig)
    account: AccountConfig = msgspec.field(default_factory=AccountConfig)
    """The shared sections (actors/common/market_settings.py)."""
    data: DataConfig = msgspec.field(default_factory=DataConfig)
    env: EnvConfig = msgspec.field(default_factory=EnvConfig)
    fusion: FusionStalenessView = FusionStalenessView()  # a view: a frozen value
    """Of [fusion] only max_staleness_steps and what decides its hindsight lessons."""
    lora: LoraLabelsView = LoraLabelsView()
    """Of [lora] only what the hindsight labels need."""
