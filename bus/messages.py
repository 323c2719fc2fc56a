"""Every message that travels on the bus, in one place.

Each message is a frozen, typed ``msgspec.Struct`` with its topic and schema version as
class variables. The codec (bus/codec.py) wraps a body in an envelope (type, schema
version, sender, per-sender sequence number, monotonic send time) and validates field
types on decode, so a wrong field type is a counted, dropped frame, never a crash.

Arrays are ``numpy.ndarray`` fields; they travel as raw bytes + dtype + shape.
Decision-loop messages are batched: one message per hop per step for every environment
the env actor hosts, with per-env values in arrays or lists of equal length. Their
``__post_init__`` checks that (and the widths of obs, masks and probs) once, so a ragged
batch never reaches an actor: on decode msgspec turns the ValueError into a
ValidationError, which the codec counts as a dropped ``field_type`` frame.

Action ids (docs/architecture.md, environment facts) are defined in actors/common/actions.py: 0 HOLD, 1 BUY,
2 SELL, 3 MOVE_SL_TO_BE, 4 ENABLE_TRAIL, 5 DISABLE_TRAIL.
"""

from __future__ import annotations

from typing import ClassVar

import math

import msgspec
import numpy as np

# Re-exported: code that builds loop messages reads the widths and the absent-action id here too.
from actors.common.actions import ACTION_NAMES, N_ACTIONS, NO_ACTION, OBS_DIM  # noqa: F401
from actors.common.bars import OHLCVBar
from actors.common.decisions import FusedBatch
from actors.common.events import MarketEvent
from actors.common.thoughts import ThoughtHeader
from bus.batch_checks import BOOL, FLOAT32, require_array, require_rows, require_vectors


class Message(msgspec.Struct, frozen=True, kw_only=True):
    """Base of every bus message. Subclasses set TOPIC and (when the body changes) SCHEMA_VERSION."""

    TOPIC: ClassVar[str] = ""
    SCHEMA_VERSION: ClassVar[int] = 1


# --------------------------------------------------------------------------- system


class Heartbeat(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "sys.heartbeat"
    actor: str
    """Actor name as configured (e.g. ``env``)."""
    pid: int
    """OS process id of the actor."""
    uptime_secs: float
    """Seconds since the actor process started."""


class Stats(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "sys.stats"
    actor: str
    counters: dict[str, int]
    """Monotonic counters: msgs_in, msgs_out, dropped_<kind>, seq_gaps, ... ."""
    gauges: dict[str, float] = {}
    """Point-in-time figures an actor wants to report (rates, latencies, queue sizes)."""


class Shutdown(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "sys.shutdown"
    reason: str
    """Why the runtime is stopping (``signal``, ``done``, ``restart_limit``, ...)."""


class Done(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "sys.done"
    actor: str
    """The actor whose job is finished (policy reached its timesteps, env finished a backtest)."""
    reason: str
    summary: dict[str, float] = {}


class Progress(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "sys.progress"
    actor: str
    steps: int
    """Steps done so far (env steps summed over environments)."""
    total_steps: int
    """Steps the job will do; 0 when open-ended."""
    steps_per_sec: float
    figures: dict[str, float] = {}
    """Latest job figures (mean episode reward, approx_kl, ...)."""


# --------------------------------------------------------------------------- market data


class Bar(OHLCVBar, Message, frozen=True, kw_only=True):
    """A closed bar (start_ns: its start, UTC ns; open, high, low, close, volume) of one symbol."""

    TOPIC: ClassVar[str] = "md.bar"
    symbol: str
    source: str
    """Where the bar came from (``replay``, ``synthetic``, ``ccxt:<exchange>``)."""
    history: bool = False
    """A bar before the session played (a replay's warm-up from the file): the env only learns its features from it, decides nothing."""


class Event(MarketEvent, Message, frozen=True, kw_only=True):
    """A market event (a scheduled release or a headline) as a feed or a replay publishes it."""

    TOPIC: ClassVar[str] = "md.event"
    LOG_EVENT: ClassVar[str] = "md_event"
    """Its publisher also logs it (``log_fields``), so a finished run's dashboard reads its events back from the logs."""
    source: str = ""
    """Where it came from: ``calendar:FILE``, ``headlines:FILE``, ``rss:URL``, ``synthetic:news``."""

    def log_fields(self) -> dict:
        """Its fields for a log line, the unknown figures (NaN: not JSON) left out; they read back as NaN (the defaults)."""
        return {key: value for key, value in msgspec.structs.asdict(self).items() if not (isinstance(value, float) and math.isnan(value))}

    @classmethod
    def of(cls, event: MarketEvent, source: str, **changes) -> Event:
        """``event`` as published by ``source``, with any field changed (a release's announcement: ``actual=nan``)."""
        return cls(**{**msgspec.structs.asdict(event), **changes}, source=source)


# --------------------------------------------------------------------------- decision loop


class MarketContext(msgspec.Struct, frozen=True, kw_only=True):
    """Named, human-meaningful state of one environment for prompts and rules."""

    symbol: str
    time_et: str
    """Bar time in US/Eastern, ``HH:MM``."""
    price: float
    trend: str
    """``up`` | ``down`` | ``sideways``."""
    rsi: float
    adx: float
    atr: float
    momentum: float
    vwap_distance_pct: float
    """(price - VWAP) / VWAP in percent."""
    support: float
    resistance: float
    pattern: str
    """Most notable pattern on the recent bars (``higher_highs``, ``double_top``, ``none``, ...)."""
    volume_trend: str
    """``rising`` | ``falling`` | ``flat``."""
    volatility_regime: float
    """Current ATR relative to its longer average (1.0 = normal)."""
    position: int
    """-1 short, 0 flat, 1 long (contracts sign)."""
    contracts: int
    entry_price: float
    unrealized_pnl: float
    bars_in_position: int
    trail_on: bool
    stop_at_break_even: bool
    consecutive_losses: int
    win_rate: float
    """Win rate over the last 10 closed trades, 0..1 (0.5 when none yet)."""
    balance: float
    drawdown_buffer: float
    """Dollars left before the trailing drawdown limit is breached."""
    trailing_limit: float
    """The account's trailing drawdown allowance in dollars (2,500 for Apex 50K)."""
    daily_pnl: float
    minutes_to_close: float
    """Minutes until the forced-flat time (4:59 PM US/Eastern)."""
    recent_net_pnl: float = 0.0
    """Net P&L of the last 10 closed trades, dollars (0 when none yet); the win-rate halt reads it."""
    session_id: int = -1
    """The trading day of the bar (by account.trading_day_reset_et); -1 when unknown. Halts that end with the session read it."""
    tape: str = ""
    """The last bars in numbers (actors/common/llm/tape.py): bucketed 5-bar moves, 20/60-bar moves, range position,
    ATR in ticks, VWAP distance, minutes to flat; "" when too few bars are known. What a hindsight label depends on."""
    bar_open: float = 0.0
    """The bar's open, high and low (``price`` is its close); 0 when the sender does not give them. The dashboard's candles."""
    bar_high: float = 0.0
    bar_low: float = 0.0
    stop_price: float = 0.0
    """The open position's stop-loss and take-profit prices (0 when flat or unknown). The dashboard's chart marks them."""
    target_price: float = 0.0


class EnvObs(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "env.obs"
    env_ids: list[int]
    episode_ids: list[int]
    step: int
    """Loop step number N (one per batch); every reply for this obs carries the same N."""
    obs: np.ndarray
    """float32 [n, 261]."""
    masks: np.ndarray
    """bool [n, 6]: True where the action is allowed."""
    contexts: list[MarketContext]
    thought_steps: list[int] = []
    """Per env, the newest ``step_seen`` of an llm.thought about it that the env had received when it published this
    observation (-1: none yet). What the observation depends on: in lockstep the env waited for that thought, and on
    direct lanes (bus.direct) it may reach fusion after this observation, so fusion decides the step only once it has
    it too (or fusion.max_thought_wait_ms passed). Empty: depends on no thought (free-running, or a sender that does
    not track thoughts)."""

    def __post_init__(self) -> None:
        n = len(self.env_ids)
        obs, masks = self.obs, self.masks
        if (obs.shape == (n, OBS_DIM) and obs.dtype == FLOAT32 and masks.shape == (n, N_ACTIONS) and masks.dtype == BOOL
                and len(self.episode_ids) == n and len(self.contexts) == n and len(self.thought_steps) in (n, 0)):
            return
        require_array("EnvObs", "obs", obs, (n, OBS_DIM), "float32")
        require_array("EnvObs", "masks", masks, (n, N_ACTIONS), "bool")
        require_rows("EnvObs", n, optional=("thought_steps",), episode_ids=self.episode_ids, contexts=self.contexts,
                      thought_steps=self.thought_steps)


class PolicyProposal(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "policy.proposal"
    env_ids: list[int]
    step: int
    actions: np.ndarray
    """int64 [n]."""
    confidences: np.ndarray
    """float32 [n]: probability of the chosen action under the masked distribution."""
    probs: np.ndarray
    """float32 [n, 6]: the masked action distribution."""
    values: np.ndarray
    """float32 [n]: value estimate."""

    def __post_init__(self) -> None:
        n = len(self.env_ids)
        vector = (n,)
        if (self.actions.shape == vector and self.confidences.shape == vector and self.values.shape == vector
                and self.probs.shape == (n, N_ACTIONS)):
            return
        require_vectors("PolicyProposal", n, actions=self.actions, confidences=self.confidences, values=self.values)
        require_array("PolicyProposal", "probs", self.probs, (n, N_ACTIONS))


class LlmThought(ThoughtHeader, Message, frozen=True, kw_only=True):
    """A thought about one env's step (env_id, episode_id, step_seen, query_id, action, confidence, step_built) and its
    text. With reasoner.think_on = news a quiet bar is answered by the env's latest thought again (``cached``): its
    ``step_seen`` is that bar, its ``step_built`` the earlier step its prompt read, so fusion ages it from there."""

    TOPIC: ClassVar[str] = "llm.thought"
    SCHEMA_VERSION: ClassVar[int] = 2
    """2: ``step_built`` (a v1 reader would take a carried answer's age for 0)."""
    mode: str
    """``four_step`` | ``single_shot``."""
    analysis: str = ""
    options: str = ""
    risks: str = ""
    decision: str = ""
    """The raw text of the final (decide) step."""
    reason: str = ""
    latency_ms: float = 0.0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    adapter_version: int = 0
    """0 = base model; otherwise the lora.adapter version that produced this thought."""
    cached: bool = False
    """True when served from the thought cache instead of the model."""
    memo: bool = False
    """True when it is the model's earlier answer to the exact same prompt and adapter (temperature 0; no model call)."""
    fallback: bool = False
    """True when the text did not parse and the thought fell back to HOLD with confidence 0."""
    news: list[str] = []
    """The texts of the events the thought's prompt read (its {news} line), newest first; [] without news (or from a
    sender that predates the field)."""
    news_ids: list[str] = []
    """Their event ids, in the same order."""
    risk_level: int = -1
    """The answer's risk read (reasoner.risk_read): 0 CALM, 1 ELEVATED, 2 EXTREME; -1 none (off, unparsed, or from a
    sender that predates the field: a defaulted field, so no schema version bump)."""
    risk_minutes: int = 0
    """For how many minutes the read holds (0 for CALM or none)."""


class FusionDecision(FusedBatch, Message, frozen=True, kw_only=True):
    """One fused decision per env of a step (the fields: actors/common/decisions.py ``FusedBatch``)."""

    TOPIC: ClassVar[str] = "fusion.decision"
    SCHEMA_VERSION: ClassVar[int] = 1

    def __post_init__(self) -> None:
        n = len(self.env_ids)
        vector = (n,)
        if (self.actions.shape == vector and self.rl_actions.shape == vector and self.rl_confidences.shape == vector
                and self.llm_actions.shape == vector and self.llm_confidences.shape == vector
                and self.llm_staleness.shape == vector and self.rl_trust.shape == vector and self.llm_trust.shape == vector
                and len(self.rules) == n and len(self.llm_query_ids) == n):
            return
        require_vectors("FusionDecision", n, actions=self.actions, rl_actions=self.rl_actions,
                         rl_confidences=self.rl_confidences, llm_actions=self.llm_actions,
                         llm_confidences=self.llm_confidences, llm_staleness=self.llm_staleness,
                         rl_trust=self.rl_trust, llm_trust=self.llm_trust)
        require_rows("FusionDecision", n, rules=self.rules, llm_query_ids=self.llm_query_ids)


class RiskVerdict(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "risk.verdict"
    env_ids: list[int]
    step: int
    actions: np.ndarray
    """int64 [n]: the action the env executes."""
    vetoed: list[bool]
    reasons: list[str]
    """Per env, why the action was changed ('' when passed as decided)."""
    degraded: list[bool]
    """Per env, True when risk decided without a fusion decision (deadline passed)."""
    llm_query_ids: list[str] = []
    """Per env, the thought behind the decision ('' where none), carried to env.outcome."""
    halts: list[str] = []
    """Per env, the entry-veto rule in force this step ('' when none), whether or not an entry was proposed
    (actors/risk/halts.py); empty when the sender does not track halts."""

    def __post_init__(self) -> None:
        n = len(self.env_ids)
        if (self.actions.shape == (n,) and len(self.vetoed) == n and len(self.reasons) == n and len(self.degraded) == n
                and len(self.llm_query_ids) in (n, 0) and len(self.halts) in (n, 0)):
            return
        require_vectors("RiskVerdict", n, actions=self.actions)
        require_rows("RiskVerdict", n, optional=("llm_query_ids", "halts"), vetoed=self.vetoed, reasons=self.reasons,
                      degraded=self.degraded, llm_query_ids=self.llm_query_ids, halts=self.halts)


class EnvTransition(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "env.transition"
    env_ids: list[int]
    step: int
    """The step N whose verdict was executed."""
    actions: np.ndarray
    """int64 [n]: the executed action (after fusion and risk)."""
    rewards: np.ndarray
    """float32 [n]."""
    terminated: np.ndarray
    """bool [n]."""
    truncated: np.ndarray
    """bool [n]."""
    terminal_obs: np.ndarray
    """float32 [n, 261]: the last observation of an episode that ended (zeros elsewhere);
    the next env.obs already holds the reset observation."""
    timed_out: list[bool] = []
    """Per env, True when no verdict arrived before the deadline and HOLD was taken."""

    def __post_init__(self) -> None:
        n = len(self.env_ids)
        vector = (n,)
        if (self.actions.shape == vector and self.rewards.shape == vector and self.terminated.shape == vector
                and self.truncated.shape == vector and self.terminal_obs.shape == (n, OBS_DIM) and len(self.timed_out) in (n, 0)):
            return
        require_vectors("EnvTransition", n, actions=self.actions, rewards=self.rewards, terminated=self.terminated,
                         truncated=self.truncated)
        require_array("EnvTransition", "terminal_obs", self.terminal_obs, (n, OBS_DIM))
        require_rows("EnvTransition", n, optional=("timed_out",), timed_out=self.timed_out)


class EnvOutcome(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "env.outcome"
    env_id: int
    episode_id: int
    trade_id: int
    side: int
    """1 long, -1 short."""
    contracts: int
    entry_ns: int
    exit_ns: int
    entry_price: float
    exit_price: float
    pnl_usd: float
    """Net of commission and slippage."""
    bars_held: int
    exit_reason: str
    """``stop`` | ``target`` | ``trail`` | ``break_even`` | ``forced_flat`` | ``drawdown`` | ``episode_end`` | ``signal``."""
    decision_steps: list[int]
    """Loop steps whose verdicts opened, managed or closed this trade."""
    llm_query_ids: list[str]
    """Query ids of the thoughts behind those decisions ('' filtered out)."""


class EnvEpisode(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "env.episode"
    env_id: int
    episode_id: int
    steps: int
    episode_return: float
    metrics: dict[str, float]
    """Episode metrics (docs/architecture.md, environment facts): win_rate, sharpe, max_drawdown, profit_factor, trades, ..."""


class EnvHindsight(Message, frozen=True, kw_only=True):
    """Hindsight outcomes of decision steps whose horizon has been played (actors/common/hindsight.py): for a
    long and a short entered at the next bar's open with the ATR stop and target, which barrier was hit first
    and the P&L after costs. One row per (env, decision step); the trainer joins a row to the thought that saw
    that step by (env id, step seen)."""

    TOPIC: ClassVar[str] = "env.hindsight"
    env_ids: list[int]
    episode_ids: list[int]
    steps: list[int]
    """The decision step of each row (the step a thought saw), not the step this message went out at."""
    actions: np.ndarray
    """int [n]: the label: BUY (long pays more), SELL (short pays more) or HOLD (neither pays after costs)."""
    long_pnl_usd: np.ndarray
    """float [n]: per contract, net of commission on both sides and slippage on both fills."""
    short_pnl_usd: np.ndarray
    long_exits: list[str]
    """``stop`` | ``target`` | ``time`` (neither hit within the horizon: out at the last bar's close)."""
    short_exits: list[str]
    long_bars: np.ndarray
    """int [n]: bars from entry to exit."""
    short_bars: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.env_ids)
        require_rows("EnvHindsight", n, episode_ids=self.episode_ids, steps=self.steps, long_exits=self.long_exits,
                      short_exits=self.short_exits)
        require_vectors("EnvHindsight", n, actions=self.actions, long_pnl_usd=self.long_pnl_usd,
                         short_pnl_usd=self.short_pnl_usd, long_bars=self.long_bars, short_bars=self.short_bars)


class PolicyUpdate(Message, frozen=True, kw_only=True):
    """One PPO update of the learning policy (SB3's train/ figures; NaN where it gave none). Also logged as LOG_EVENT
    with these fields, so a finished run's log reads back as this message (the dashboard's learning curve)."""
    TOPIC: ClassVar[str] = "policy.update"
    LOG_EVENT: ClassVar[str] = "ppo_update"
    update: int
    num_timesteps: int
    approx_kl: float = float("nan")
    entropy_loss: float = float("nan")
    value_loss: float = float("nan")
    policy_gradient_loss: float = float("nan")
    loss: float = float("nan")
    explained_variance: float = float("nan")
    clip_fraction: float = float("nan")
    mean_episode_return: float = float("nan")


class LoraRound(Message, frozen=True, kw_only=True):
    """One LoRA round: held-out match before and after, the store's size, published or not; also logged as LOG_EVENT."""
    TOPIC: ClassVar[str] = "lora.round"
    LOG_EVENT: ClassVar[str] = "lora_round"
    version: int
    experiences: int
    match_rate_before: float
    match_rate_after: float
    published: bool
    collapsed: bool
    """The adapter gave one answer to (nearly) every prompt: refused whatever its match (actors/lora/publishing.py)."""


class LoraAdapter(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "lora.adapter"
    version: int
    path: str
    """GGUF LoRA adapter file the reasoner should load."""
    metrics: dict[str, float] = {}


class Probe(Message, frozen=True, kw_only=True):
    """Latency probe for benchmarks and health checks; relayed hop by hop on sub-topics ``probe.<hop>``."""

    TOPIC: ClassVar[str] = "probe"
    probe_id: int
    hop: int
    """The hop that should handle this probe next."""
    hops: int
    """Hops in the ring; the last one returns the probe to hop 0."""
    sent_ns: int
    """When hop 0 sent it (monotonic ns, same host)."""
    payload: bytes = b""


ALL_MESSAGES: tuple[type[Message], ...] = (
    Heartbeat, Stats, Shutdown, Done, Progress, Bar, Event, EnvObs, PolicyProposal, LlmThought, FusionDecision, RiskVerdict,
    EnvTransition, EnvOutcome, EnvEpisode, EnvHindsight, PolicyUpdate, LoraRound, LoraAdapter, Probe,
)
"""Every message, in the order docs/reference.py lists them; the codec decodes these and no other."""

MESSAGE_TYPES: dict[str, type[Message]] = {cls.__name__: cls for cls in ALL_MESSAGES}
