"""Neural fusion (the first prototype's design): a small network that learns from closed trades whom to trust.

Input, 20 numbers per decision: RL action one-hot (6), RL confidence, LLM action one-hot
(6, zeros without a usable thought), LLM confidence (decayed, 0 without one), agreement,
volatility, recent win rate, consecutive losses, distance from the drawdown limit, time
in position. With fusion.event_inputs, 3 more (last) say whether the latest thought read a new market event, how
recent it is and how soon a release is due. With fusion.market_inputs, 8 more describe the market the advice is about:
trend one-hot (up, down, sideways), RSI, ADX, 10-bar momentum in ATRs, distance to VWAP and
the position's side. Without them the network can only trust a reader everywhere or
nowhere; a reader right in falls and wrong in rises (an LLM that leans SELL) needs them.
Output: 6 action logits, an RL trust and an LLM trust (sigmoids).

Training is supervised from outcomes. A winning trade teaches "the executed action was
right here"; a losing one teaches "the side that advised otherwise was right" (or HOLD
when both sides advised the losing action). Each example is weighted by min(|pnl| /
pnl_scale_usd, 1). The trust heads learn which side's advice matched the outcome.

Trades teach nothing about the steps where the account stayed flat: when the policy holds
and the LLM says SELL, nothing trades, nothing closes, and the LLM's reading is never
tested. An env.hindsight row (fusion.hindsight_lessons) is that step's counterfactual: what
a long and a short entered at the next open would have made (actors/common/hindsight.py).
``hindsight_lesson`` teaches the choice among the proposals and HOLD that would have paid
most, weighted by how much more it paid than the runner-up, and trusts the side(s) that
advised it.

The learner keeps two copies of the network: the serving copy answers decisions on the
event loop while the training copy is updated in a worker thread; a finished update is
installed into the serving copy between decisions, so the two threads never share a
tensor.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from actors.common.actions import HOLD, N_ACTIONS, NO_ACTION
from actors.common.hindsight import action_pnl_usd
from actors.fusion.config import FusionConfig

if TYPE_CHECKING:
    from bus.messages import MarketContext  # an env's market context: the account and market figures the inputs read

INPUT_DIM = 20
"""The seed's inputs: the proposals and the account."""
MARKET_INPUT_DIM = 8
"""fusion.market_inputs: the market the proposals are about (``market_inputs``)."""
EVENT_INPUT_DIM = 4
"""fusion.event_inputs: the news around the decision and the latest thought's risk read (``event_inputs``)."""
MAX_RISK_LEVEL = 2
"""EXTREME (reasoner.risk_read's levels: CALM 0, ELEVATED 1, EXTREME 2)."""
TRENDS = ("up", "down", "sideways")
MODEL_FILE_NAME = "fusion_network.pt"
# Scales that bring the context figures to about [0, 1] (the first prototype's choices).
MAX_CONSECUTIVE_LOSSES_SCALE = 5.0
MAX_BARS_IN_POSITION_SCALE = 100.0
MAX_VOLATILITY_REGIME = 3.0
MAX_MOMENTUM_ATRS = 3.0
MAX_VWAP_DISTANCE_PCT = 1.0
ADX_SCALE = 50.0


def input_dim(market_inputs: bool, with_events: bool = False) -> int:
    return INPUT_DIM + (MARKET_INPUT_DIM if market_inputs else 0) + (EVENT_INPUT_DIM if with_events else 0)


def event_inputs(thought_age_steps: int, minutes_since_event: int | None, minutes_to_release: int | None,
                 window_minutes: int, risk_level: int = -1) -> np.ndarray:
    """The 4 news numbers, each in [0, 1]: the latest thought read the newest event of the window (1/0; a thought
    ``thought_age_steps`` bars old read an event at least that many minutes old: one step per 1-minute bar), how
    recent that event is (1 just out, 0 at the window's end or none), how soon a release is due (1 now, 0 none
    within the window), and the risk read in force (reasoner.risk_read: its level / EXTREME while its minutes last,
    0 for CALM, none or expired: ``risk_level`` -1)."""
    row = np.zeros(EVENT_INPUT_DIM, dtype=np.float32)
    if minutes_since_event is not None and 0 <= minutes_since_event < window_minutes:
        row[0] = float(0 <= thought_age_steps <= minutes_since_event)
        row[1] = 1.0 - minutes_since_event / window_minutes
    if minutes_to_release is not None and 0 < minutes_to_release <= window_minutes:
        row[2] = 1.0 - minutes_to_release / window_minutes
    row[3] = max(risk_level, 0) / MAX_RISK_LEVEL
    return row


def market_inputs(context: MarketContext) -> np.ndarray:
    """The 8 market numbers, each in about [-1, 1]: trend one-hot, RSI about 50, ADX, momentum in ATRs, VWAP distance,
    position side. Unknown trend words leave the one-hot at zero."""
    row = np.zeros(MARKET_INPUT_DIM, dtype=np.float32)
    if context.trend in TRENDS:
        row[TRENDS.index(context.trend)] = 1.0
    row[3] = np.clip((context.rsi - 50.0) / 50.0, -1.0, 1.0)
    row[4] = np.clip(context.adx / ADX_SCALE, 0.0, 1.0)
    momentum_atrs = context.momentum / context.atr if context.atr > 0 else 0.0
    row[5] = np.clip(momentum_atrs, -MAX_MOMENTUM_ATRS, MAX_MOMENTUM_ATRS) / MAX_MOMENTUM_ATRS
    row[6] = np.clip(context.vwap_distance_pct, -MAX_VWAP_DISTANCE_PCT, MAX_VWAP_DISTANCE_PCT) / MAX_VWAP_DISTANCE_PCT
    row[7] = float(np.sign(context.position))
    return np.nan_to_num(row, nan=0.0, posinf=0.0, neginf=0.0)


def fusion_input(rl_action: int, rl_confidence: float, llm_action: int, llm_confidence: float,
                 context: MarketContext, with_market: bool = False, news: np.ndarray | None = None) -> np.ndarray:
    """The input of one decision (float32): 20 numbers, 28 ``with_market`` (fusion.market_inputs), 4 more
    with ``news`` (fusion.event_inputs: ``event_inputs``), last."""
    row = np.zeros(input_dim(with_market, news is not None), dtype=np.float32)
    row[rl_action] = 1.0
    row[6] = rl_confidence
    if llm_action != NO_ACTION:
        row[7 + llm_action] = 1.0
        row[13] = llm_confidence
        row[14] = float(llm_action == rl_action)
    row[15] = np.clip(context.volatility_regime, 0.0, MAX_VOLATILITY_REGIME) / MAX_VOLATILITY_REGIME
    row[16] = np.clip(context.win_rate, 0.0, 1.0)
    row[17] = min(max(context.consecutive_losses, 0) / MAX_CONSECUTIVE_LOSSES_SCALE, 1.0)
    limit = context.trailing_limit
    row[18] = np.clip(context.drawdown_buffer / limit, 0.0, 1.0) if limit > 0 else 1.0
    row[19] = min(max(context.bars_in_position, 0) / MAX_BARS_IN_POSITION_SCALE, 1.0)
    if with_market:
        row[INPUT_DIM:INPUT_DIM + MARKET_INPUT_DIM] = market_inputs(context)
    if news is not None:
        row[-EVENT_INPUT_DIM:] = news
    return row


class FusionNetwork(nn.Module):
    def __init__(self, hidden_dims: tuple[int, ...], dropout: float, inputs: int = INPUT_DIM) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = inputs
        for hidden in hidden_dims:
            layers += [nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(dropout)]
            width = hidden
        self.encoder = nn.Sequential(*layers)
        self.action_head = nn.Linear(width, N_ACTIONS)
        self.rl_trust_head = nn.Linear(width, 1)
        self.llm_trust_head = nn.Linear(width, 1)

    def forward(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Action logits [b, 6], RL trust logit [b], LLM trust logit [b]."""
        features = self.encoder(inputs)
        return (self.action_head(features), self.rl_trust_head(features).squeeze(-1),
                self.llm_trust_head(features).squeeze(-1))


@dataclass(frozen=True, slots=True)
class Experience:
    """One decision behind a closed trade, labelled by the trade's outcome."""

    inputs: np.ndarray
    target_action: int
    weight: float
    rl_trust_target: float
    llm_trust_target: float
    """NaN where the decision had no thought (nothing to learn about the LLM)."""


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """What fusion remembers of one env's decision until the trade it belongs to closes."""

    inputs: np.ndarray
    rl_action: int
    llm_action: int
    mask: np.ndarray
    executed_action: int


def label_decision(record: DecisionRecord, pnl_usd: float, pnl_scale_usd: float) -> Experience | None:
    """The training example a closed trade's P&L makes of one of its decisions (None: nothing to learn)."""
    weight = min(abs(pnl_usd) / pnl_scale_usd, 1.0)
    if weight == 0.0:
        return None
    executed = record.executed_action
    has_thought = record.llm_action != NO_ACTION
    won = pnl_usd > 0
    if won:
        target = executed
    else:
        alternatives = [a for a in (record.rl_action, record.llm_action, HOLD)
                        if a != NO_ACTION and a != executed and record.mask[a]]
        if not alternatives:
            return None
        target = alternatives[0]

    def trust(side_action: int) -> float:
        followed = side_action == executed
        return 1.0 if followed == won else 0.0

    llm_trust = trust(record.llm_action) if has_thought else float("nan")
    return Experience(record.inputs, target, weight, trust(record.rl_action), llm_trust)


def hindsight_lesson(record: DecisionRecord, choices: np.ndarray, long_pnl_usd: float, short_pnl_usd: float,
                     pnl_scale_usd: float) -> Experience | None:
    """The example a flat step's hindsight makes: among ``choices`` (bool [6], the actions fusion could pick there),
    the one that would have paid most (BUY: the long, SELL: the short, HOLD and the rest: nothing), weighted by
    min(its lead over the runner-up / pnl_scale_usd, 1). None: a single choice or a tie, nothing to learn."""
    def value(action: int) -> float:
        return action_pnl_usd(action, long_pnl_usd, short_pnl_usd)

    ranked = sorted(((value(a), a == HOLD, a) for a in np.flatnonzero(choices)), reverse=True)
    if len(ranked) < 2:
        return None
    (best, _, target), (runner_up, _, _) = ranked[0], ranked[1]
    weight = min((best - runner_up) / pnl_scale_usd, 1.0)
    if weight <= 0.0:
        return None

    def trust(side_action: int) -> float:
        return float(value(side_action) >= best)

    llm_trust = trust(record.llm_action) if record.llm_action != NO_ACTION else float("nan")
    return Experience(record.inputs, int(target), weight, trust(record.rl_action), llm_trust)


@dataclass(frozen=True, slots=True)
class TrainingJob:
    inputs: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    rl_trust: np.ndarray
    llm_trust: np.ndarray


@dataclass(frozen=True, slots=True)
class TrainingResult:
    state: dict[str, torch.Tensor]
    loss: float
    accuracy: float


@dataclass(frozen=True, slots=True)
class NetworkPrediction:
    actions: np.ndarray
    rl_trust: np.ndarray
    llm_trust: np.ndarray


class FusionLearner:
    """Serves the fusion network's decisions and learns it online from labelled experiences."""

    def __init__(self, config: FusionConfig) -> None:
        self.config = config
        torch.manual_seed(config.seed)
        self.input_dim = input_dim(config.market_inputs, config.event_inputs)
        self._serving = FusionNetwork(config.hidden_dims, config.dropout, self.input_dim).eval()
        self._training = copy.deepcopy(self._serving).train()
        self._optimizer = torch.optim.Adam(self._training.parameters(), lr=config.learning_rate)
        self._rng = np.random.default_rng(config.seed)
        self._buffer: deque[Experience] = deque(maxlen=config.max_experiences)
        self._new_since_update = 0
        self.updates_done = 0
        self.last_loss = float("nan")
        self.last_accuracy = float("nan")
        self.loaded = False

    # ------------------------------------------------------------------ serving

    @property
    def ready(self) -> bool:
        """True once the network has been trained (or loaded): before that it would only add noise."""
        return self.loaded or self.updates_done > 0

    def predict(self, inputs: np.ndarray, masks: np.ndarray, rl_actions: np.ndarray) -> NetworkPrediction:
        """Greedy legal actions for a batch; an env whose mask allows nothing gets its RL action."""
        with torch.no_grad():
            logits, rl_trust, llm_trust = self._serving(torch.from_numpy(np.array(inputs, dtype=np.float32)))
        # Copies: arrays decoded from the bus are read-only views, which torch will not wrap.
        masks_t = torch.from_numpy(np.array(masks, dtype=bool))
        masked_logits = logits.masked_fill(~masks_t, float("-inf"))
        actions = masked_logits.argmax(dim=1).numpy().astype(np.int64)
        nothing_legal = ~masks_t.any(dim=1).numpy()
        actions[nothing_legal] = np.asarray(rl_actions, dtype=np.int64)[nothing_legal]
        return NetworkPrediction(actions, torch.sigmoid(rl_trust).numpy().astype(np.float32),
                                 torch.sigmoid(llm_trust).numpy().astype(np.float32))

    # ------------------------------------------------------------------ learning

    def add(self, experiences: list[Experience]) -> None:
        self._buffer.extend(experiences)
        self._new_since_update += len(experiences)

    @property
    def experience_count(self) -> int:
        return len(self._buffer)

    def update_due(self) -> bool:
        return (len(self._buffer) >= self.config.min_experiences
                and self._new_since_update >= min(self.config.update_every_experiences, len(self._buffer)))

    def prepare_update(self) -> TrainingJob:
        """Snapshot the buffer (on the loop thread) for an update in the worker thread."""
        self._new_since_update = 0
        items = list(self._buffer)
        return TrainingJob(
            inputs=np.stack([e.inputs for e in items]).astype(np.float32),
            targets=np.array([e.target_action for e in items], dtype=np.int64),
            weights=np.array([e.weight for e in items], dtype=np.float32),
            rl_trust=np.array([e.rl_trust_target for e in items], dtype=np.float32),
            llm_trust=np.array([e.llm_trust_target for e in items], dtype=np.float32),
        )

    def run_update(self, job: TrainingJob) -> TrainingResult:
        """Gradient steps on the training copy (worker thread; touches nothing the loop uses)."""
        data = {name: torch.from_numpy(getattr(job, name))
                for name in ("inputs", "targets", "weights", "rl_trust", "llm_trust")}
        size = len(job.targets)
        losses, accuracies = [], []
        for _ in range(self.config.gradient_steps_per_update):
            index = torch.from_numpy(self._rng.integers(0, size, size=min(self.config.batch_size, size)))
            loss, accuracy = self._gradient_step({k: v[index] for k, v in data.items()})
            losses.append(loss)
            accuracies.append(accuracy)
        state = {k: v.detach().clone() for k, v in self._training.state_dict().items()}
        return TrainingResult(state, float(np.mean(losses)), float(np.mean(accuracies)))

    def _gradient_step(self, batch: dict[str, torch.Tensor]) -> tuple[float, float]:
        self._training.train()
        logits, rl_trust_logit, llm_trust_logit = self._training(batch["inputs"])
        weights = batch["weights"]
        action_loss = (nn.functional.cross_entropy(logits, batch["targets"], reduction="none") * weights).sum()
        action_loss = action_loss / weights.sum().clamp_min(1e-6)
        rl_trust_loss = nn.functional.binary_cross_entropy_with_logits(rl_trust_logit, batch["rl_trust"])
        has_llm = ~torch.isnan(batch["llm_trust"])
        llm_trust_loss = (nn.functional.binary_cross_entropy_with_logits(
            llm_trust_logit[has_llm], batch["llm_trust"][has_llm]) if has_llm.any() else torch.zeros(()))
        loss = action_loss + 0.5 * (rl_trust_loss + llm_trust_loss)
        self._optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self._training.parameters(), max_norm=1.0)
        self._optimizer.step()
        accuracy = (logits.argmax(dim=1) == batch["targets"]).float().mean().item()
        return loss.item(), accuracy

    def install(self, result: TrainingResult) -> None:
        """Make a finished update the serving network (loop thread)."""
        self._serving.load_state_dict(result.state)
        self._serving.eval()
        self.updates_done += 1
        self.last_loss, self.last_accuracy = result.loss, result.accuracy

    def update_now(self) -> TrainingResult:
        """prepare + run + install in the calling thread (tests, offline use)."""
        result = self.run_update(self.prepare_update())
        self.install(result)
        return result

    # ------------------------------------------------------------------ persistence

    def save(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / MODEL_FILE_NAME
        torch.save({"hidden_dims": list(self.config.hidden_dims), "input_dim": self.input_dim, "state": self._serving.state_dict(),
                    "updates_done": self.updates_done, "experiences": len(self._buffer)}, path)
        return path

    def load(self, path: Path) -> None:
        """Load a saved network; its layer sizes must match fusion.hidden_dims."""
        saved = torch.load(path, map_location="cpu", weights_only=True)
        if tuple(saved["hidden_dims"]) != tuple(self.config.hidden_dims):
            raise ValueError(f"fusion.model_path: {path} has hidden_dims {saved['hidden_dims']}, "
                             f"config says {list(self.config.hidden_dims)}")
        saved_inputs = int(saved.get("input_dim", INPUT_DIM))  # files from before fusion.market_inputs: 20
        if saved_inputs != self.input_dim:
            raise ValueError(f"fusion.model_path: {path} reads {saved_inputs} inputs, fusion.market_inputs = "
                             f"{str(self.config.market_inputs).lower()}{' with event_inputs = true' if self.config.event_inputs else ''} "
                             f"gives {self.input_dim}: set them as when the network was trained")
        self._serving.load_state_dict(saved["state"])
        self._training.load_state_dict(saved["state"])
        self.loaded = True
