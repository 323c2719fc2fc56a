"""Every message that travels on the bus, in one place.

Each message is a frozen, typed ``msgspec.Struct`` with its topic and schema version as
class variables. The codec (bus/codec.py) wraps a body in an envelope (type, schema
version, sender, per-sender sequence number, monotonic send time) and validates field
types on decode, so a wrong field type is a counted, dropped frame, never a crash.

Arrays are ``numpy.ndarray`` fields; they travel as raw bytes + dtype + shape.
Decision-loop messages are batched: one message per hop per step for every environment
the env actor hosts, with per-env values in arrays or lists of equal length.

Action ids (DESIGN.md section 6): 0 HOLD, 1 BUY, 2 SELL, 3 MOVE_SL_TO_BE,
4 ENABLE_TRAIL, 5 DISABLE_TRAIL.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec
import numpy as np

ACTION_NAMES: tuple[str, ...] = ("HOLD", "BUY", "SELL", "MOVE_SL_TO_BE", "ENABLE_TRAIL", "DISABLE_TRAIL")
N_ACTIONS = len(ACTION_NAMES)
OBS_DIM = 261
NO_ACTION = -1  # an "absent" action in arrays (no thought, no proposal)


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


class Bar(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "md.bar"
    symbol: str
    start_ns: int
    """Bar start time, UTC nanoseconds since the epoch."""
    open: float
    high: float
    low: float
    close: float
    volume: float
    source: str
    """Where the bar came from (``replay``, ``synthetic``, ``ccxt:<exchange>``)."""


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


class LlmThought(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "llm.thought"
    env_id: int
    episode_id: int
    step_seen: int
    """The env.obs step this thought was about."""
    query_id: str
    action: int
    confidence: float
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
    fallback: bool = False
    """True when the text did not parse and the thought fell back to HOLD with confidence 0."""


class FusionDecision(Message, frozen=True, kw_only=True):
    TOPIC: ClassVar[str] = "fusion.decision"
    SCHEMA_VERSION: ClassVar[int] = 1
    env_ids: list[int]
    step: int
    actions: np.ndarray
    """int64 [n]: the fused action."""
    method: str
    """``rules`` | ``network`` | ``rl_only`` | ``llm_only`` | ``pass_through``."""
    rules: list[str]
    """Per env, which rule decided (``agreement``, ``rl_override``, ``weighted``, ``uncertain_hold``, ``no_thought``, ...)."""
    rl_actions: np.ndarray
    rl_confidences: np.ndarray
    llm_actions: np.ndarray
    """int64 [n], NO_ACTION (-1) where no usable thought."""
    llm_confidences: np.ndarray
    llm_staleness: np.ndarray
    """int64 [n]: steps between the thought's step_seen and this step; -1 where none."""
    llm_query_ids: list[str]
    """Per env, the query id of the thought used ('' where none)."""
    rl_trust: np.ndarray
    llm_trust: np.ndarray


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
    """Episode metrics (DESIGN.md section 6): win_rate, sharpe, max_drawdown, profit_factor, trades, ..."""


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
    Heartbeat,
    Stats,
    Shutdown,
    Done,
    Progress,
    Bar,
    EnvObs,
    PolicyProposal,
    LlmThought,
    FusionDecision,
    RiskVerdict,
    EnvTransition,
    EnvOutcome,
    EnvEpisode,
    LoraAdapter,
    Probe,
)

MESSAGE_TYPES: dict[str, type[Message]] = {cls.__name__: cls for cls in ALL_MESSAGES}
