"""The [lora] config section: experience store, labels, peft LoRA training, evaluation, publishing; LoraSettings,
what the trainer reads (with its view of [reasoner])."""

from __future__ import annotations

from functools import partial
from typing import Annotated

import msgspec

from config.checks import ConfigSection, Count, Fraction, NonNegative, Positive, PositiveCount, require
from runtime.settings import RuntimeSettings

DEVICES = ("cpu", "cuda")
LABEL_SOURCES = ("trades", "trades_hindsight")
EVAL_METHODS = ("grammar", "generate")
TEACH_MODES = ("direction", "risk")
# Hugging Face module names of a llama block that gguf's tensor name map knows.
LLAMA_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

_require = partial(require, section="lora")


class LoraConfig(ConfigSection, kw_only=True):
    enabled: bool = False
    """Run the trainer actor in runtime.actors' place when the job asks for it."""
    model_path: str = ""
    """Base GGUF to train on; "" = reasoner.model_path, or the packaged reasoner.model."""
    device: str = "cpu"
    """cpu | cuda: where torch trains and evaluates."""
    torch_threads: PositiveCount = 1
    """torch CPU threads of the trainer (the machine is shared with the decision loop)."""
    seed: int = 0
    """Seeds the LoRA initialisation, sampling and dropout."""
    base_cache_dir: str = ""
    """The base GGUF dequantised for torch is kept here (safetensors, ~0.5 GB for SmolLM2-135M) so later loads
    take a second instead of ~20 s; "" = $XDG_CACHE_HOME (or ~/.cache)/thinking-trader/lora-base."""

    # ---- LoRA shape
    rank: PositiveCount = 8
    alpha: Positive = 16.0
    """The update is (alpha / rank) * B @ A; recorded in the GGUF as adapter.lora.alpha."""
    dropout: Annotated[float, msgspec.Meta(ge=0, lt=1)] = 0.05
    """LoRA dropout during training (not exported)."""
    target_modules: tuple[str, ...] = ("q_proj", "v_proj")
    """Hugging Face module names of each block to adapt (q_proj k_proj v_proj o_proj gate_proj up_proj down_proj)."""

    # ---- training rounds
    experiences_per_round: PositiveCount = 64
    """M: a training round starts after this many new experiences."""
    steps_per_round: PositiveCount = 16
    """N: optimiser steps per round."""
    batch_size: PositiveCount = 4
    """Examples per optimiser step."""
    learning_rate: Positive = 3e-4
    """AdamW learning rate of the LoRA weights (1e-3 with the choice-only loss collapsed a first round onto SELL)."""
    action_loss_weight: NonNegative = 1.0
    """Weight of the choice loss: cross-entropy of the target action among the allowed actions' first tokens, at the
    answer's first position (what the decide grammar's greedy choice reads).
    Measured (peft, 400 prompts of a 600-day ``regimes`` market, 300 held out, 1 x 40 steps, lr 3e-4; ceiling 0.627,
    one answer everywhere 0.497): the choice alone (text_loss_weight 0) 0.190 -> 0.633, BUY on 93 % of the "up"
    prompts and 2 % of the "down" ones, +0.137 [+0.061, +0.212] over one answer everywhere, and a second round kept
    it (0.630); the text loss beside it (both 1) 0.550, BUY 97 % / 60 %, and its second round collapsed onto BUY; the
    text loss alone collapsed onto BUY in both rounds. The text loss's many reason tokens drown the one token
    that chooses, and pull every answer to the same side."""
    text_loss_weight: NonNegative = 0.3
    """Weight of the answer-text loss (cross-entropy of every answer token: action, confidence, reason), beside the
    choice loss. At 1 it drowned the choice (above); at 0 the reason is the base model's, which wrote "uptrend" after
    SELL on 10 of 29 phase-4 thoughts of a main job (``reason_contradicts_action``). At 0.3 (the same 400 / 300
    prompts, 1 x 40 steps) the choice held: 0.650, BUY on 92 % of "up" and 2 % of "down", +0.153 [+0.073, +0.233]
    over one answer everywhere; at 0.1 the answers were those of 0. Through llama.cpp (the Q4_1 engine, whole answers
    on 60 prompts) 0.3 gave 0.570 with no reason against its action, 0.1 gave 0.610 with 14, 0 gave 0.630; with the
    trainer in llama.cpp's arithmetic (mirror_llama_arithmetic) 0.3 gives 0.613 through llama.cpp and 0.617 in peft,
    no reason against its action (README, "Peft and llama.cpp now compute alike"). 0 (with action_loss_weight > 0) =
    the choice alone."""
    level_loss_weight: NonNegative = 1.0
    """teach = "risk": weight of the level choice loss, the cross-entropy of the hindsight risk level among the three
    levels' first tokens (CALM / ELEVATED / EXTREME) at the position after ``ACTION | conf |`` where the grammar writes
    it (what the round is judged on), beside action_loss_weight x the action choice and text_loss_weight x every
    answer token. With action_loss_weight 0 and text_loss_weight 0 a risk round learns the level choice alone (the
    direction label is noise on event bars, and the reason's 20+ tokens drowned the one that chooses:
    docs/experiments/riskfit.md); 0 = no level choice loss (the level then learnt only as text). Unused by
    teach = "direction"."""
    max_seq_tokens: PositiveCount = 1024
    """Longer prompts keep their end (the decide turn) and lose their start."""
    mirror_llama_arithmetic: bool = True
    """Train and evaluate in llama.cpp's arithmetic (actors/lora/llama_arithmetic.py): activations rounded to 8-bit
    blocks before every quantised weight, keys and values to half precision, gradients straight through. Without it
    an adapter's BUY-SELL margin came out 0.22 lower through llama.cpp than in peft (0.650 held out in peft, 0.570
    through llama.cpp, SELL on 74 % of answers); false = the dequantised float32 model as transformers loads it."""
    cache_shared_prefix: bool = True
    """Read the prompt start all examples of a batch share (the system prompt) once per step, without gradient
    through it, and run forward/backward over each example's own tokens only (about 2.5x fewer tokens for a
    single-shot prompt); false = every example's whole prompt through forward and backward."""
    target_confidence: Fraction = 0.8
    """Confidence written in a target answer (ACTION | 0.80 | reason)."""
    teach: str = "direction"
    """direction (the target is the triple-barrier action, a round is judged on it) | risk (on a news market the
    history prompts also carry the hindsight volatility level, ``ACTION | 0.80 | ELEVATED 15 | reason``; a choice
    loss, level_loss_weight, is taken at the level's first token and a round is judged on the level at held-out event bars beside the
    calendar and keyword rules: actors/lora/risk_teach.py; needs reasoner.risk_read = true)."""

    # ---- experiences
    labels: str = "trades_hindsight"
    """trades (closed trades only, as the seeds) | trades_hindsight (also the env's hindsight labels of every thought)."""
    store_path: str = ""
    """SQLite experience store; "" = <run dir>/lora/experiences.sqlite."""
    seed_experiences_path: str = ""
    """JSON lines of experiences (the bin/run lora --experiences format) stored at start, before any thought;
    ``bin/run main --market-history N`` writes one from the training days (actors/lora/history.py). "" = none."""
    max_experiences: PositiveCount = 20000
    """Store bound: the oldest experiences are evicted beyond this."""
    held_out_fraction: Annotated[float, msgspec.Meta(gt=0, lt=1)] = 0.2
    """Share of experiences (by a hash of their id, so stable) kept apart for evaluation."""
    min_sample_weight_usd: Positive = 10.0
    """Sampling weight is |P&L| + this, so zero-P&L (HOLD) experiences are still drawn."""
    balance_actions: bool = True
    """Share the sampling weights out per target action, so BUY, SELL and HOLD targets are drawn equally often."""
    balance_levels: bool = True
    """teach = "risk": share the training draws out per hindsight risk level first (CALM, ELEVATED and EXTREME
    equally, up-sampling the rare EXTREME; per action within a level), and draw no experience without a level. The
    held-out prompts keep their mix. Without it a round on event bars (half CALM, 5 % EXTREME) kept one level
    everywhere (docs/experiments/riskread.md); with it one round read EXTREME on two thirds of the gate's bars where
    it was 4 of 75, and the paired publish rule refused it (docs/experiments/riskfit.md). How rare a level must be to
    keep its own share: level_rare_share (0 = equal thirds, those draws)."""
    level_rare_share: Annotated[float, msgspec.Meta(ge=0)] = 0.1
    """balance_levels: a level under this share of the training rows keeps its own share of the draws and the common
    levels share the rest equally (0 = every level an equal third, however rare, the draws of
    docs/experiments/riskfit.md; 0.1 = on event bars CALM and ELEVATED half each of ~94 %, EXTREME its own ~6 %: a
    round judged on the raw match is not handicapped by a third of its draws on a 5 % level). At most 1/3 (three levels:
    the commonest always holds a third of the rows)."""
    max_pending_outcomes: PositiveCount = 1000
    """Outcomes waiting for their thoughts; the oldest are dropped (counted) beyond this."""
    max_thoughts: PositiveCount = 20000
    """Thoughts kept for matching by query id; the oldest are forgotten beyond this."""
    max_obs_steps: PositiveCount = 256
    """Observation steps kept to rebuild a thought's prompt from its context."""
    publish_from_step: Count = 0
    """A published adapter goes out on lora.adapter only once the loop's env.obs reached this step (0 = at once): the
    reasoner then swaps it in at a fixed step whatever the trainer's pace (the main job's reproducible phase 2 holds it
    until the policy's budget is played)."""

    # ---- hindsight labels (triple barrier)
    hindsight_horizon_bars: PositiveCount = 60
    """H: bars after entry within which the stop or the target must be hit (else exit at the last close).
    60 bars, 3 and 3 ATRs: the label the tape can tell. On regimes (seed 0, 60 days, later days held out) a logistic
    regression on the tape reads it at 0.595 [0.561, 0.630] where one answer everywhere gets 0.51; the old 20 bars,
    2 and 4 ATRs: 0.554 against 0.46 (the planted drift drowns in 20 bars of noise); on null every choice is chance."""
    hindsight_stop_atr: Positive = 3.0
    """Stop distance in ATRs from the entry."""
    hindsight_target_atr: Positive = 3.0
    """Target distance in ATRs from the entry (equal to the stop: the label is which way the next hour goes)."""

    # ---- evaluation and publishing
    eval_method: str = "grammar"
    """grammar (greedy first action under the decide grammar, one forward pass) | generate (greedy text, parsed)."""
    max_eval_examples: PositiveCount = 64
    """Held-out experiences evaluated before and after a round (newest first)."""
    publish_z: Positive = 1.96
    """Publish only when the held-out match rate beats the current adapter's (the last published, else the base
    model) by more than this many standard errors of the paired difference on the same prompts (1.96: 95 %)."""
    collapse_share: Annotated[float, msgspec.Meta(gt=0.5, lt=1)] = 0.8
    """Refuse an adapter giving one answer on more than this share of the held-out prompts while their labels are
    mixed (no label that common): the hold collapse; logged and counted as lora_collapse."""
    early_stop_patience: Annotated[int, msgspec.Meta(ge=0)] = 0
    """bin/run lora --market-history: stop after this many rounds without a better match rate on the validation
    days (the last training days; never the held-out test days), --rounds being the most; 0 = exactly --rounds."""
    early_stop_prompts: PositiveCount = 120
    """Validation-day prompts that early stopping measures the match rate on (not trained on)."""
    market_history_days: Annotated[int, msgspec.Meta(ge=0)] = 600
    """bin/run lora --market-history (and bin/bench lora --market) on a synthetic market: its prompts come from a market
    of this many days (the run's seed and scenario; 0 = data.synthetic_days). The default 60 days hold 34 training and
    8 held-out days: on 400 prompts the "down" trend word was labelled SELL 48 % of the time, so nothing taught the
    model to sell, and 300 held-out prompts from 8 days are far fewer independent cases than 300. With 600 days:
    232 training and 80 held-out days, "up" BUY 72 % and "down" SELL 72 % (seed 0)."""
    versions_dir: str = ""
    """Where every adapter version is kept (vNNNN/adapter.gguf + metrics.json); "" = <run dir>/lora/versions."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _require(self.device in DEVICES, "device", f"must be one of {DEVICES}, got {self.device!r}")
        _require(self.labels in LABEL_SOURCES, "labels", f"must be one of {LABEL_SOURCES}, got {self.labels!r}")
        _require(self.eval_method in EVAL_METHODS, "eval_method", f"must be one of {EVAL_METHODS}")
        _require(self.teach in TEACH_MODES, "teach", f"must be one of {TEACH_MODES}, got {self.teach!r}")
        _require(self.text_loss_weight > 0 or self.action_loss_weight > 0 or (self.teach == "risk" and self.level_loss_weight > 0),
                 "text_loss_weight", "and action_loss_weight (and level_loss_weight, with teach = \"risk\") cannot all be 0 "
                 "(nothing to learn from)")
        _require(self.level_rare_share <= 1 / 3, "level_rare_share",
                 f"must be at most 1/3 (a level under it keeps its own share; the commonest of three always holds a "
                 f"third), got {self.level_rare_share}")
        _require(bool(self.target_modules) and set(self.target_modules) <= set(LLAMA_MODULES), "target_modules",
                 f"must be a non-empty subset of {LLAMA_MODULES}")


class ReasonerView(msgspec.Struct, frozen=True, kw_only=True):
    """The [reasoner] keys the trainer reads (actors/lora/core.py ReasonerSettings): its prompts and mode, so it
    teaches what the reasoner asks, and its model, the base it trains on. Decoded from [reasoner] with the
    other keys ignored; no defaults, as the prompts are the reasoner's (config/default.toml has every one).
    tests/config/test_actor_settings.py holds the fields equal to actors/reasoner/config.py's."""

    mode: str
    """four_step | single_shot: the form of the prompts the trainer builds."""
    model: str
    """The packaged model (reasoner.model) when model_path is ""."""
    model_path: str
    """The base the adapters are trained on, unless lora.model_path names another."""
    system_prompt: str
    single_shot_system_prompt: str
    """The system prompts of both forms."""
    context_template: str
    single_shot_context_template: str
    """The market context of both forms."""
    analyse_prompt: str
    options_prompt: str
    risks_prompt: str
    decide_prompt: str
    single_shot_prompt: str
    """The tasks: the four steps, or the one question."""
    risk_read: bool = False
    """The decide and single-shot questions ask for a risk read (lora.teach = "risk" teaches it)."""


class LoraSettings(RuntimeSettings, kw_only=True):
    """What the LoRA trainer reads: the runtime's sections, [lora], and what it teaches of [reasoner]."""

    reasoner: ReasonerView
    lora: LoraConfig = msgspec.field(default_factory=LoraConfig)
