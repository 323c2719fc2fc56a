"""The [fusion] config section, and what the fusion actor reads (``FusionSettings``)."""

from __future__ import annotations

from functools import partial

import msgspec

from config.checks import ConfigSection, Count, Fraction, NonNegative, Positive, PositiveCount, require
from runtime.settings import RuntimeSettings

FUSION_METHODS = ("rules", "network", "rl_only", "llm_only")
NETWORK_CHOICES = ("proposals", "any")


_require = partial(require, section="fusion")


class FusionConfig(ConfigSection, kw_only=True):
    method: str = "rules"
    """rules | network | rl_only | llm_only: who decides between the policy and the LLM."""
    llm_weight: Fraction = 0.3
    """Weight of the LLM in the confidence-weighted rule (0 = RL only, 1 = LLM only)."""
    override_confidence: Fraction = 0.9
    """A side above this confidence overrides the other ..."""
    override_other_below: Fraction = 0.6
    """... when the other side is below this confidence."""
    uncertain_below: Fraction = 0.5
    """Both sides below this confidence -> HOLD."""
    max_staleness_steps: Count = 10
    """K: a thought seen more than K loop steps ago counts as no thought."""
    llm_confidence_decay_per_step: Fraction = 0.05
    """A thought's confidence is multiplied by (1 - this) for every step of age."""
    max_pending_steps: PositiveCount = 64
    """Observations / proposals kept while waiting for their partner; older ones are dropped (counted)."""
    max_thought_wait_ms: NonNegative = 100.0
    """A step whose env.obs names a thought (EnvObs.thought_steps) not received yet waits this long for it, then is
    decided anyway (counted as thought_waits_expired). Through the broker the thought always comes first; on direct
    lanes it comes 1-4 ms after. Below risk.fusion_deadline_ms, or risk decides without fusion. 0 = never wait."""
    hidden_dims: tuple[PositiveCount, ...] = (128, 64, 32)
    """Hidden layer sizes of the fusion network."""
    dropout: Fraction = 0.2
    """Dropout between the fusion network's hidden layers (training only)."""
    learning_rate: Positive = 3e-4
    """Adam learning rate of the fusion network."""
    batch_size: PositiveCount = 256
    """Experiences per gradient step."""
    gradient_steps_per_update: PositiveCount = 50
    """Gradient steps in one periodic update (run in the worker thread)."""
    min_experiences: PositiveCount = 256
    """Experiences needed before the first update; until then the network method fuses by the rules."""
    update_every_experiences: PositiveCount = 64
    """A new update starts once this many experiences arrived since the last one."""
    max_experiences: PositiveCount = 20000
    """Size of the experience buffer (oldest dropped first)."""
    network_choices: str = "proposals"
    """proposals: the network chooses among RL's action, the LLM's action and HOLD (it decides whom to
    trust) | any: any legal action. Trades teach it only about steps that traded, so left free it
    invents entries neither side proposed."""
    explore_rate: Fraction = 0.1
    """With method = network and learn, the share of decisions still made by the rules, so that outcomes of
    both sides keep arriving (a network that only ever holds would never learn again); a frozen network never explores."""
    pnl_scale_usd: Positive = 500.0
    """A trade's weight in training is min(|pnl| / this, 1)."""
    max_remembered_decisions: PositiveCount = 50000
    """Decisions remembered (per env and step) to be matched with env.outcome; oldest dropped first."""
    model_path: str = ""
    """A saved fusion network (fusion_network.pt) to start from; '' = fresh network."""
    seed: int = 0
    """Seed of the fusion network's initial weights and sampling."""
    learn: bool = True
    """With method = network, train on env.outcome; false freezes the network (backtests: no learning on test data)."""
    hindsight_lessons: bool = True
    """With method = network and learn: a flat step that stayed flat (no trade will ever say whether holding was
    right) is taught by its env.hindsight row, what a long and a short from there would have made; the env publishes
    them (train and backtest modes). False: closed trades teach alone."""
    max_verdict_wait_ms: NonNegative = 500.0
    """With method = network and learn: an env.outcome whose last decision step's risk.verdict has not arrived yet
    (direct lanes) waits this long for it, so the trade teaches what risk executed; then it teaches as it is
    (counted as outcomes_without_verdict)."""
    market_inputs: bool = False
    """The network also reads the market its proposals are about (trend, RSI, ADX, momentum, VWAP distance, position
    side: 8 more inputs), so it can trust a reader in one kind of market and not in another. A saved network
    (model_path) must have been trained with the same setting."""
    event_inputs: bool = False
    """The network also reads the news around a decision (md.event, placed on the env's clock: actors/common/llm/news.py):
    whether the latest thought read an event made public within event_window_minutes, how recent that event is, how
    soon a release is due, and the latest thought's risk read while its minutes last (reasoner.risk_read; 0 without
    one) (4 more inputs), so hindsight can teach whom to trust around events. A saved network must have been trained
    with the same setting."""
    event_window_minutes: PositiveCount = 60
    """fusion.event_inputs: an event this many minutes old or older counts as no news."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _require(self.method in FUSION_METHODS, "method", f"must be one of {FUSION_METHODS}, got {self.method!r}")
        _require(self.network_choices in NETWORK_CHOICES, "network_choices",
                 f"must be one of {NETWORK_CHOICES}, got {self.network_choices!r}")
        _require(len(self.hidden_dims) >= 1 and all(d > 0 for d in self.hidden_dims),
                 "hidden_dims", f"must be one or more positive sizes, got {self.hidden_dims}")


class FusionSettings(RuntimeSettings, kw_only=True):
    """What the fusion actor reads: the runtime's sections and [fusion]."""

    fusion: FusionConfig = msgspec.field(default_factory=FusionConfig)
