"""Paper trading on a live feed: the env's domain core fed bar by bar (no bus, no processes).

``PaperSession`` keeps the newest ``window_bars`` closed bars and their features. Each new bar:

1. duplicates and bars older than the newest one are ignored (a feed that reconnects may resend
   bars: nothing is decided twice for one bar start); a bar flagged ``history`` (a replay's warm-up
   from the file) only joins the frame, counted apart in ``history_bars``: no decision is made on it;
2. while fewer than ``warmup_bars`` bars are known the features are warming up: no decision;
3. the bar's features come from rolling state carried over every bar the session has seen
   (actors/env/feature_stream.py: bit for bit what ``compute_features``, the backtest's batch code,
   gives over those bars, in ~0.1 ms instead of recomputing a window), the env is
   pointed at the new window and stepped with the action decided on the previous bar: it fills at
   this bar's open with slippage and commission and plays the bar out (stops, targets, account
   rules), exactly as in a backtest (actors/env/env.py, trading.py);
4. the observation of the newest bar is ready for the next decision (``decide``).

The session calendar (flat time, entry windows) comes from the bar timestamps in US/Eastern, which
on a live feed are the wall clock. It is computed with two phantom bars after the newest one (the
next bars a live feed will bring, one interval apart), so the newest bar's entry mask and forced
flat are known before the next bar exists; a phantom bar never reaches the env.

A breached (or passed) evaluation account is followed by a fresh one from the next bar, as in a
backtest's walk. ``flatten`` closes a position outside a bar (a silent feed), at the last close.
``SilenceWatch`` says when a feed has been silent too long. The rolling window of bars and features is
live_window.py's; the files a user can open while the session runs are paper_recorder.py's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from actors.common.actions import HOLD
from actors.common.bars import OHLCV_COLUMNS, OHLCVBar
from actors.env.batch import BarHistory, ClosedTrade
from actors.common.instruments import InstrumentSpec
from actors.common.market_settings import AccountConfig
from actors.env.config import EnvConfig
from actors.env.dataset import DataSplit
from actors.env.env import FuturesTradingEnv
from actors.env.account_walk import EvaluationRecord
from actors.env.live_window import LiveWindow
from actors.env.features import regime_model_of
from actors.env.regime_model import RegimeModel
from actors.env.trading import Trade, market_fill

MIN_WARMUP_BARS = 20
"""The observation's 20-bar window; fewer bars cannot make a decision."""
LiveBar = OHLCVBar
"""One closed bar of a feed (the md.bar fields the env needs)."""


@dataclass
class PaperStep:
    """What one new bar did. ``ready``: an observation of this bar waits for a decision."""

    bar: LiveBar
    ready: bool = False
    warming: bool = False
    history: bool = False
    """A warm-up bar from before the session played (md.bar's ``history``): it only joins the frame."""
    executed_action: int = HOLD
    """The action filled at this bar's open (the previous bar's decision, after the env's mask)."""
    decision_step: int = -1
    """The loop step whose decision was executed on this bar (-1: none, e.g. warming up)."""
    closed_trades: list[ClosedTrade] = field(default_factory=list)
    equity: float = 0.0
    position: int = 0
    """Contracts held after the bar (+ long, - short)."""
    evaluation: str = "open"
    """The evaluation account's state after the bar: open | passed | failed."""


class LiveEnv(FuturesTradingEnv):
    """A FuturesTradingEnv whose data window moves: ``rebind`` points it at a newer window of bars."""

    tape_table = False  # a table of the window would be rebuilt every bar for one line

    def rebind(self, split: DataSplit) -> None:
        """Use ``split`` (the same bars plus one newer, maybe trimmed at the old end): the current bar becomes
        the one before the newest, so the next ``step`` plays the newest bar."""
        self._bind(split)
        self._t = split.stop - 2
        self._end = split.stop  # never truncated: a live session has no last bar
        self._mask = self._mask_list()

    def _episode_window(self, options: dict[str, Any]) -> tuple[int, int]:
        """A live account starts at the newest bar and runs until it passes or fails."""
        newest = self.split.stop - 1
        return newest, 1

    def flatten(self, reason: str) -> Trade | None:
        """Close the position now at the last close (market fill, slippage and commission); None when flat."""
        position = self._position
        if position is None:
            return None
        trade = self._close(market_fill(self._closes[self._t], -position.side, self.instrument), self._t, reason)
        self._mask = self._mask_list()
        return trade


class PaperSession:
    """One paper account fed closed bars one at a time (see the module docstring)."""

    def __init__(
        self, instrument: InstrumentSpec, account: AccountConfig, config: EnvConfig, *,
        warmup_bars: int, window_bars: int, history: pd.DataFrame | None = None, regime_model: RegimeModel | None = None,
    ) -> None:
        """``regime_model``: the HMM behind market_regime; None fits one on ``history`` (the days before the session,
        so the belief never reads the session it judges), and without history the belief is 0."""
        if warmup_bars < MIN_WARMUP_BARS or window_bars < warmup_bars:
            raise ValueError(f"need {MIN_WARMUP_BARS} <= warmup_bars ({warmup_bars}) <= window_bars ({window_bars})")
        self.instrument = instrument
        self.account_config = account
        self.config = config
        self.warmup_bars = warmup_bars
        self.window_bars = window_bars
        self.counters: Counter[str] = Counter()
        self.env: LiveEnv | None = None
        self.step = -1
        """The loop step of the observation waiting for a decision (-1 before the first)."""
        if regime_model is None and history is not None and len(history):
            regime_model = regime_model_of(history)
        self.regime_model = regime_model
        self._window = LiveWindow(window_bars, regime_model)
        self._pending: tuple[int, int, str] | None = None
        """(step, action, llm query id) decided on the newest bar; filled at the next bar's open."""
        self._trade_decisions: list[tuple[int, str]] = []
        """(step, query id) of the executed decisions that acted on the open trade."""
        self._evaluations: list[EvaluationRecord] = []
        self.trades: list[Trade] = []
        """Closed trades of every evaluation account so far."""
        self._history: list[tuple[int, float, float, float, float, int, int]] = []
        if history is not None and len(history):  # every bar warms the features up; the window keeps the newest
            for start_ns, row in zip(history.index.as_unit("ns").asi8.tolist(), history[list(OHLCV_COLUMNS)].to_numpy(dtype=np.float64).tolist()):
                self._window.append(start_ns, *row)
            self.counters["history_bars"] = len(self._window)

    # ------------------------------------------------------------------ bars

    @property
    def last_start_ns(self) -> int:
        return self._window.last_start_ns

    @property
    def warm(self) -> bool:
        return self.env is not None

    @property
    def bars_known(self) -> int:
        """Bars in the frame (history and feed): the warm-up is complete at ``warmup_bars``."""
        return len(self._window)

    def add_bar(self, bar: LiveBar, history: bool = False) -> PaperStep | None:
        """The next closed bar; None when it is a duplicate or older than the newest bar, or a history bar
        after the first decision (ignored, counted)."""
        if bar.start_ns <= self.last_start_ns:
            self.counters["duplicate_bars" if bar.start_ns == self.last_start_ns else "late_bars"] += 1
            return None
        if history and self.env is not None:  # the env plays every bar once it decides: history now would skip one
            self.counters["late_history_bars"] += 1
            return None
        self.counters["history_bars" if history else "bars"] += 1
        self._window.append(bar.start_ns, bar.open, bar.high, bar.low, bar.close, bar.volume)
        if history:
            return PaperStep(bar=bar, warming=True, history=True)
        if len(self._window) < self.warmup_bars:
            self.counters["warmup_bars"] += 1
            return PaperStep(bar=bar, warming=True)
        split = self._window.split(self.account_config.flat_minute_of_day)
        if self.env is None:
            return self._start(bar, split)
        return self._play(bar, split)

    def _start(self, bar: LiveBar, split: DataSplit) -> PaperStep:
        self.env = LiveEnv(split, self.instrument, self.account_config, self.config)
        self.env.end_episode_on_pass = True  # a passed evaluation ends; a fresh account goes on (a backtest's walk)
        self.env.reset(seed=0)
        self._record_bar()
        return self._ready(PaperStep(bar=bar, equity=self.env.equity))

    def _play(self, bar: LiveBar, split: DataSplit) -> PaperStep:
        env = self.env
        env.rebind(split)
        decision_step, action, query_id = self._pending or (-1, HOLD, "")
        self._pending = None
        if decision_step < 0:
            self.counters["bars_without_decision"] += 1
        _, terminated, truncated, info = env.play(action)  # the observation is read when it is published
        executed = info["executed_action"]
        self.counters["illegal_actions"] += int(info["illegal_action"])
        if executed != HOLD:
            self._trade_decisions.append((decision_step, query_id))
        step = PaperStep(bar=bar, executed_action=executed, decision_step=decision_step, evaluation=info["evaluation"])
        step.closed_trades = [self._closed(trade) for trade in info["closed_trades"]]
        self._record_bar()
        if terminated or truncated:
            self._evaluations.append(env.evaluation.record())
            env.reset()  # a fresh account from this bar
        step.equity = env.equity
        step.position = self.position_contracts
        return self._ready(step)

    def _ready(self, step: PaperStep) -> PaperStep:
        self.step += 1
        self.counters["decisions_asked"] += 1
        step.ready = True
        return step

    def _closed(self, trade: Trade) -> ClosedTrade:
        decisions, self._trade_decisions = self._trade_decisions, []
        self.trades.append(trade)
        return ClosedTrade(0, self.env.episode_id, trade, [step for step, _ in decisions], [qid for _, qid in decisions if qid])

    def _record_bar(self) -> None:
        env = self.env
        t = env.bar
        data = env.split.dataset.lists
        self._history.append((data["start_ns"][t], data["close"][t], data["high"][t], data["low"][t], env.equity, self.position_contracts, env.evaluation.index))

    # ------------------------------------------------------------------ decisions

    def observation(self) -> tuple[np.ndarray, np.ndarray]:
        """obs [1, 261] float32 and masks [1, 6] of the newest bar."""
        return self.env.observe()[None, :], self.env.action_masks()[None, :]

    def context(self) -> dict[str, Any]:
        return self.env.context()

    def decide(self, step: int, action: int, query_id: str = "") -> bool:
        """The decision for the observation of ``step``; False (ignored, counted) for any other step or a second one."""
        if step != self.step or (self._pending is not None and self._pending[0] == step):
            self.counters["decisions_ignored"] += 1
            return False
        self._pending = (step, int(action), query_id)
        self.counters["decisions"] += 1
        return True

    def flatten(self, reason: str) -> ClosedTrade | None:
        """Close the open position now (a silent feed); the decision waiting for the next bar is dropped."""
        if self.env is None:
            return None
        trade = self.env.flatten(reason)
        if trade is None:
            return None
        self._pending = None
        self.counters[f"flattened_{reason}"] += 1
        return self._closed(trade)

    # ------------------------------------------------------------------ state and results

    @property
    def in_position(self) -> bool:
        return self.env is not None and self.env.position is not None

    @property
    def position_contracts(self) -> int:
        position = self.env.position if self.env is not None else None
        return 0 if position is None else position.side * position.contracts

    def position_row(self) -> dict[str, Any]:
        """The open position (for positions.jsonl), or an empty dict when flat."""
        position = self.env.position if self.env is not None else None
        if position is None:
            return {}
        return {
            "trade_id": position.trade_id, "side": position.side, "contracts": position.contracts, "entry_price": position.entry_price,
            "entry_ns": position.entry_ns, "stop": position.stop, "stop_kind": position.stop_kind, "target": position.target,
            "trail_on": position.trail_on, "bars_held": position.bars_held,
            "unrealized_usd": position.unrealized_usd(self.env.context()["price"], self.instrument.multiplier),
        }

    def evaluations(self) -> list[EvaluationRecord]:
        records = list(self._evaluations)
        if self.env is not None:
            records.append(self.env.evaluation.record())
        return records

    def history(self) -> BarHistory:
        rows = self._history
        columns = list(zip(*rows)) if rows else [()] * 7
        return BarHistory(
            times_ns=np.array(columns[0], dtype=np.int64), close=np.array(columns[1], dtype=np.float64),
            high=np.array(columns[2], dtype=np.float64), low=np.array(columns[3], dtype=np.float64),
            equity=np.array(columns[4], dtype=np.float64), position=np.array(columns[5], dtype=np.int64),
            evaluation=np.array(columns[6], dtype=np.int64),
        )


class SilenceWatch:
    """When a feed has been silent too long: warn once per silence, then (in a position) flatten once."""

    def __init__(self, warn_secs: float, flatten_secs: float) -> None:
        self.warn_secs = warn_secs
        self.flatten_secs = flatten_secs
        self.last_bar_at: float | None = None
        self.warned = False
        self.flattened = False

    def on_bar(self, now: float) -> float:
        """A bar arrived at ``now``; returns the silence it ended (seconds) when it had been warned about, else 0."""
        ended = now - self.last_bar_at if self.warned and self.last_bar_at is not None else 0.0
        self.last_bar_at = now
        self.warned = self.flattened = False
        return ended

    def check(self, now: float, in_position: bool) -> str:
        """'' | 'warn' | 'flatten': what to do about the silence at ``now`` (each once per silence)."""
        if self.last_bar_at is None:  # no bar yet: nothing went silent
            return ""
        silent = now - self.last_bar_at
        if not self.warned and silent >= self.warn_secs:
            self.warned = True
            return "warn"
        if self.warned and in_position and not self.flattened and silent >= self.flatten_secs:
            self.flattened = True
            return "flatten"
        return ""

    def silent_secs(self, now: float) -> float:
        return 0.0 if self.last_bar_at is None else now - self.last_bar_at
