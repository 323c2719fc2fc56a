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
``SilenceWatch`` says when a feed has been silent too long; ``PaperRecorder`` appends what happens
to files a user can open while the session runs.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from actors.common.actions import HOLD
from actors.common.bars import OHLCV_COLUMNS, OHLCVBar
from actors.env.batch import BarHistory, ClosedTrade
from actors.common.instruments import InstrumentSpec
from actors.common.market_settings import AccountConfig
from actors.env.account import flat_schedule
from actors.env.config import EnvConfig
from actors.env.dataset import DataSplit, Dataset
from actors.env.env import FuturesTradingEnv
from actors.env.evaluation import EvaluationRecord
from actors.env.feature_stream import FeatureRow, FeatureStream, et_minute_and_session
from actors.env.features import BAR_FEATURES as BAR_FEATURE_NAMES, STATIC_FEATURES as STATIC_FEATURE_NAMES, _SESSION_ROLL_HOURS, FeatureSet
from actors.env.trading import Trade, market_fill

PHANTOM_BARS = 2
"""Bars assumed after the newest one for the session calendar: the fill bar of a decision and the one after it."""
MIN_WARMUP_BARS = 20
"""The observation's 20-bar window; fewer bars cannot make a decision."""
DEFAULT_INTERVAL_NS = 60 * 10**9
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


def bar_interval_ns(start_ns: list[int]) -> int:
    """The feed's bar interval: the median spacing of the newest bars (1 minute until two bars are known)."""
    if len(start_ns) < 2:
        return DEFAULT_INTERVAL_NS
    recent = np.diff(np.asarray(start_ns[-50:], dtype=np.int64))
    return int(np.median(recent)) or DEFAULT_INTERVAL_NS


def live_split(frame: pd.DataFrame, flat_minute_of_day: int | None) -> DataSplit:
    """Features and calendar for ``frame`` (closed bars, UTC index) by the batch code, recomputed whole;
    phantom bars only shape the calendar. The oracle ``LiveWindow`` is tested against."""
    interval = bar_interval_ns(frame.index.asi8.tolist())
    last = frame.iloc[-1]
    phantom_index = pd.DatetimeIndex([frame.index[-1] + pd.Timedelta(interval * (k + 1), "ns") for k in range(PHANTOM_BARS)])
    phantoms = pd.DataFrame({"open": last.close, "high": last.close, "low": last.close, "close": last.close, "volume": last.volume}, index=phantom_index)
    dataset = Dataset.from_frame(pd.concat([frame, phantoms]), flat_minute_of_day, source="live", warmup_bars=0)
    return DataSplit(dataset, "live", 0, len(frame))


_BAR_COLUMNS = ("open", "high", "low", "close", "volume")
_RAW_FEATURES = ("atr", "rsi", "adx", "momentum", "vwap_distance_pct", "support", "resistance", "volatility_regime")
_CODE_FEATURES = {"trend_code": np.int8, "volume_trend_code": np.int8, "pattern_code": np.int8, "session_id": np.int64, "minute_et": np.int16}


class LiveWindow:
    """The newest ``window_bars`` bars and their feature rows, in arrays that grow by one row a bar.

    A bar's features come from a ``FeatureStream`` fed every bar since the first, so they do not depend on
    where the window starts. ``split`` hands the env zero-copy views of the window plus ``PHANTOM_BARS``
    phantom rows (the calendar's next bars; their feature rows repeat the newest and are never read).
    Rows live in buffers of twice the window: when one fills up, the window moves to a fresh buffer,
    so views handed out earlier stay as they were.
    """

    def __init__(self, window_bars: int) -> None:
        self.window_bars = window_bars
        self.stream = FeatureStream()
        self._capacity = 2 * window_bars + PHANTOM_BARS
        self._lo = self._hi = 0
        self._arrays = self._allocate()

    def _allocate(self) -> dict[str, np.ndarray]:
        rows = self._capacity
        arrays = {"start_ns": np.zeros(rows, dtype=np.int64), **{name: np.zeros(rows) for name in _BAR_COLUMNS}}
        arrays["bar"] = np.zeros((rows, len(BAR_FEATURE_NAMES)), dtype=np.float32)
        arrays["static"] = np.zeros((rows, len(STATIC_FEATURE_NAMES)), dtype=np.float32)
        arrays.update({name: np.zeros(rows) for name in _RAW_FEATURES})
        arrays.update({name: np.zeros(rows, dtype=dtype) for name, dtype in _CODE_FEATURES.items()})
        return arrays

    def __len__(self) -> int:
        return self._hi - self._lo

    @property
    def last_start_ns(self) -> int:
        return int(self._arrays["start_ns"][self._hi - 1]) if len(self) else -1

    def append(self, start_ns: int, open_: float, high: float, low: float, close: float, volume: float) -> None:
        """The next closed bar (newer than the last): its features, then the window's oldest bar dropped if full."""
        row = self.stream.push(start_ns, high, low, close, volume)
        if self._hi + PHANTOM_BARS >= self._capacity:
            self._move_to_fresh_buffer()
        self._write(self._hi, start_ns, (open_, high, low, close, volume), row)
        self._hi += 1
        self._lo = max(self._lo, self._hi - self.window_bars)

    def _move_to_fresh_buffer(self) -> None:
        old, keep = self._arrays, slice(self._hi - self.window_bars + 1, self._hi)  # the append drops the oldest
        self._arrays = self._allocate()
        for name, array in old.items():
            self._arrays[name][: keep.stop - keep.start] = array[keep]
        self._lo, self._hi = 0, keep.stop - keep.start

    def _write(self, i: int, start_ns: int, prices: tuple[float, ...], row: FeatureRow) -> None:
        arrays = self._arrays
        arrays["start_ns"][i] = start_ns
        for name, value in zip(_BAR_COLUMNS, prices):
            arrays[name][i] = value
        arrays["bar"][i], arrays["static"][i] = row.bar, row.static
        for name in _RAW_FEATURES:
            arrays[name][i] = getattr(row, name)
        for name in _CODE_FEATURES:
            arrays[name][i] = getattr(row, name)

    def split(self, flat_minute_of_day: int | None) -> DataSplit:
        """The window as the env's data: features as carried, calendar from the bar times and the phantoms."""
        arrays, lo, hi = self._arrays, self._lo, self._hi
        interval = bar_interval_ns(arrays["start_ns"][max(lo, hi - 50) : hi].tolist())
        for k in range(PHANTOM_BARS):  # the phantoms: the newest close, flat, one interval apart
            for name, array in arrays.items():
                array[hi + k] = array[hi - 1]
            arrays["start_ns"][hi + k] = arrays["start_ns"][hi - 1] + interval * (k + 1)
            arrays["open"][hi + k] = arrays["high"][hi + k] = arrays["low"][hi + k] = arrays["close"][hi - 1]
            arrays["minute_et"][hi + k], arrays["session_id"][hi + k] = et_minute_and_session(int(arrays["start_ns"][hi + k]))
        view = {name: array[lo : hi + PHANTOM_BARS] for name, array in arrays.items()}
        index = pd.DatetimeIndex(view["start_ns"], tz="UTC")
        features = FeatureSet(**{name: view[name] for name in FeatureSet.__dataclass_fields__})
        schedule = flat_schedule(index, flat_minute_of_day)
        et_date = view["session_id"] - (view["minute_et"] >= 24 * 60 - _SESSION_ROLL_HOURS * 60)  # the session id is the date 6 h later
        starts = np.flatnonzero(np.concatenate(([True], et_date[1:] != et_date[:-1])))  # bar_files.session_starts(index), without pandas
        dataset = Dataset(
            index=index, start_ns=view["start_ns"], features=features, schedule=schedule, session_starts=starts,
            bounds={"all": (0, len(index))}, source="live", warmup_bars=0, **{name: view[name] for name in _BAR_COLUMNS},
        )
        dataset.lists = {
            **{name: view[name].tolist() for name in ("open", "high", "low", "close", "start_ns", "atr")},
            "flat_at_close": schedule.flat_at_close.tolist(), "entry_allowed": schedule.entry_allowed.tolist(),
            "session_id": view["session_id"].tolist(),
        }
        return DataSplit(dataset, "live", 0, hi - lo)


class PaperSession:
    """One paper account fed closed bars one at a time (see the module docstring)."""

    def __init__(
        self, instrument: InstrumentSpec, account: AccountConfig, config: EnvConfig, *,
        warmup_bars: int, window_bars: int, history: pd.DataFrame | None = None,
    ) -> None:
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
        self._window = LiveWindow(window_bars)
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
        _, _, terminated, truncated, info = env.step(action)
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


class PaperRecorder:
    """Appends what a paper session does to files in ``out_dir``, flushed per line so they can be read while it runs:
    equity.csv (one row per bar), positions.jsonl (the open position after each bar), trades.jsonl (closed trades
    with the decisions behind them), decisions.jsonl (every decision of the loop)."""

    EQUITY_COLUMNS = ("time_utc", "start_ns", "open", "high", "low", "close", "equity", "position", "evaluation", "executed_action")

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        equity_path = self.out_dir / "equity.csv"
        new = not equity_path.exists()
        self._equity_file = equity_path.open("a", newline="")
        self._equity = csv.writer(self._equity_file)
        if new:
            self._equity.writerow(self.EQUITY_COLUMNS)
            self._equity_file.flush()
        self._jsonl = {name: (self.out_dir / f"{name}.jsonl").open("a") for name in ("positions", "trades", "decisions")}

    def bar(self, step: PaperStep, evaluation_index: int, action_name: str, position: dict[str, Any]) -> None:
        bar = step.bar
        time_utc = pd.Timestamp(bar.start_ns, tz="UTC").isoformat()
        self._equity.writerow((time_utc, bar.start_ns, bar.open, bar.high, bar.low, bar.close, round(step.equity, 2), step.position, evaluation_index, action_name))
        self._equity_file.flush()
        self._line("positions", {"time_utc": time_utc, "start_ns": bar.start_ns, "position": step.position, **position})

    def trade(self, row: dict[str, Any]) -> None:
        self._line("trades", row)

    def decision(self, row: dict[str, Any]) -> None:
        self._line("decisions", row)

    def _line(self, name: str, row: dict[str, Any]) -> None:
        handle = self._jsonl[name]
        handle.write(json.dumps(row, default=_json_default) + "\n")
        handle.flush()

    def close(self) -> None:
        self._equity_file.close()
        for handle in self._jsonl.values():
            handle.close()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    if isinstance(value, msgspec.Struct):
        return msgspec.structs.asdict(value)
    return str(value)


def trade_row(closed: ClosedTrade) -> dict[str, Any]:
    """A closed trade as one JSON line (times in UTC ISO and ns)."""
    trade = closed.trade
    return {
        "trade_id": trade.trade_id, "evaluation": closed.episode_id, "side": "long" if trade.side > 0 else "short",
        "contracts": trade.contracts, "entry_time_utc": pd.Timestamp(trade.entry_ns, tz="UTC").isoformat(),
        "exit_time_utc": pd.Timestamp(trade.exit_ns, tz="UTC").isoformat(), "entry_price": trade.entry_price,
        "exit_price": trade.exit_price, "pnl_usd": round(trade.pnl_usd, 2), "commission_usd": trade.commission_usd,
        "bars_held": trade.bars_held, "exit_reason": trade.exit_reason, "decision_steps": closed.decision_steps,
        "llm_query_ids": closed.llm_query_ids,
    }
