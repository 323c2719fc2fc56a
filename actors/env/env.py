"""``FuturesTradingEnv``: one futures account trading one instrument on 1-minute bars.

Timing: the observation at step t describes bar t after its close (features use bars
<= t). The action chosen on it executes at the open of bar t+1; bar t+1 is then played
out (stop, target and drawdown checks on its range, forced flat and trailing at its
close) and the next observation describes bar t+1.

Episodes: ``episode_bars`` steps from a random start (or a session open) inside the
split, truncated at the end; terminated when the trailing drawdown is breached. Each episode
is one evaluation account (actors/env/account_walk.py); with ``end_episode_on_pass`` (backtests)
the episode also ends, truncated, on the bar the evaluation passes.
``reset(options={"start": bar, "n_bars": n})`` plays a fixed window (backtests).
An open position is closed at the last bar's close when an episode is truncated.

It is over 400 lines because it is one Gymnasium env: reset, step, the fills on a bar's range and the
observation share the account's state, and splitting them would pass that state between modules.

Actions follow bus/messages.py: 0 HOLD, 1 BUY, 2 SELL, 3 MOVE_SL_TO_BE, 4 ENABLE_TRAIL,
5 DISABLE_TRAIL. When flat, BUY/SELL open a position; in a position the opposite one
closes it (a signal exit) and the same one is masked. ``action_masks()`` follows
sb3-contrib's convention; an action outside the mask is executed as HOLD and counted
(``illegal_actions``). The reward is in actors/env/rewards.py. No I/O happens here.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from actors.common.actions import BUY, DISABLE_TRAIL, ENABLE_TRAIL, HOLD, MOVE_SL_TO_BE, N_ACTIONS, OBS_DIM, SELL, legal_or_hold
from actors.common.llm.tape import market_tape
from actors.env.account import ApexAccount, trading_days
from actors.common.market_settings import AccountConfig
from actors.env.config import EnvConfig
from actors.env.dataset import DataSplit
from actors.env.account_walk import Evaluation
from actors.env.cadence import gated_mask, is_decision_bar
from actors.env.features import (
    CLIP, N_BAR, PATTERNS, POSITION_START, RISK_END, RISK_START, STATIC_END, STATIC_START, TRENDS,
    VALIDITY_END, VOLUME_TRENDS, WINDOW, WINDOW_END,
)
from actors.common.instruments import InstrumentSpec
from actors.env.metrics import episode_metrics
from actors.env.rewards import step_reward
from actors.env.tape_table import TapeTable
from actors.env.trading import Position, Trade, bar_exit, close_position, market_fill, open_position

# The observation layout (actors/env/features.py) ends where the shared width says a row ends.
assert RISK_END == OBS_DIM, f"features end at {RISK_END}, OBS_DIM is {OBS_DIM}"


def _clip(value: float) -> float:
    """Clip a per-step feature to the observation bounds (plain Python: cheaper than numpy for one float)."""
    return -CLIP if value < -CLIP else (CLIP if value > CLIP else value)


class FuturesTradingEnv(gym.Env):
    metadata = {"render_modes": []}
    tape_table = True
    """Read the context's tape from a table of the data set's bars (actors/env/tape_table.py); a live env, whose
    window moves every bar, computes each line instead."""

    def __init__(self, split: DataSplit, instrument: InstrumentSpec, account: AccountConfig, config: EnvConfig) -> None:
        super().__init__()
        if split.n_bars < 3:
            raise ValueError(f"split {split.name!r} has {split.n_bars} bars; an episode needs at least 3")
        self.split = split
        self.instrument = instrument
        self.account_config = account
        self.config = config
        self.observation_space = spaces.Box(-CLIP, CLIP, shape=(OBS_DIM,), dtype=np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.account = ApexAccount(account)
        self.contracts = min(config.contracts_per_trade, account.max_contracts)
        self.illegal_actions = 0
        self.episode_id = -1
        self._bind(split)
        self._drawdown_scale = account.trailing_drawdown if account.has_trailing_drawdown else 0.05 * account.start_balance
        """Dollars that scale the account features of the observation (the trailing allowance, else 5 % of the start)."""
        self.end_episode_on_pass = False
        """End the episode when the evaluation passes (backtests walk consecutive evaluations; training plays on)."""
        self.evaluation = Evaluation(0, 0, account.start_balance, account.profit_target)
        self._obs = np.zeros(OBS_DIM, dtype=np.float32)
        self._mask: list[bool] = [True] + [False] * (N_ACTIONS - 1)
        """The masks of the current observation (state only changes in step(), which rebuilds it)."""
        self._next_trade_id = 0
        self._t = split.start
        self._end = split.start
        self._position: Position | None = None
        self._equity = account.start_balance
        self._done = True
        self.trades: list[Trade] = []
        self.equity_curve: list[float] = []
        self.episode_return = 0.0

    def _bind(self, split: DataSplit) -> None:
        """Read bars, features and trading days from ``split`` (at start, and when a live window moves)."""
        self.split = split
        data = split.dataset
        self._data = data
        self._bar_features = data.features.bar
        self._static_features = data.features.static
        lists = data.lists
        self._opens, self._highs, self._lows, self._closes = lists["open"], lists["high"], lists["low"], lists["close"]
        self._start_ns, self._atr = lists["start_ns"], lists["atr"]
        self._flat_at_close, self._entry_allowed = lists["flat_at_close"], lists["entry_allowed"]
        self._session = trading_days(data.index, self.account_config.reset_minute_of_day).tolist()
        """The trading day of each bar (by account.trading_day_reset_et): daily P&L, end-of-day trailing, halts."""
        self._tapes: TapeTable | None = None
        """Built on the first context() (tape_table): a backtest or training run without a context never pays for it."""

    # ------------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        start, n_bars = self._episode_window(options)
        self._t = start
        self._end = start + n_bars
        self.account.reset()
        self.account.new_bar(self._session[start])
        self._position = None
        self._equity = self.account.balance
        self._done = False
        self.trades = []
        self.equity_curve = [self._equity]
        self.episode_return = 0.0
        self.episode_id += 1
        self.evaluation = Evaluation(self.episode_id, self._start_ns[start], self.account_config.start_balance, self.account_config.profit_target)
        return self._observation(), {"start_bar": start, "n_bars": n_bars}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        reward, terminated, truncated, info = self.play(action)
        return self._observation(), reward, terminated, truncated, info

    def play(self, action: int) -> tuple[float, bool, bool, dict[str, Any]]:
        """``step`` without building the observation: (reward, terminated, truncated, info). The env actor reads the
        observation once, with ``observe()``, when it publishes it; the action masks of the new bar are set here."""
        if self._done:
            raise RuntimeError("step() after the episode ended: call reset()")
        action = int(action)
        legal = legal_or_hold(action, self._mask, fallback=HOLD)  # the env's mask always allows HOLD
        illegal = legal != action
        if illegal:
            self.illegal_actions += 1
            action = legal
        t1 = self._t + 1
        self.account.new_bar(self._session[t1])
        equity_before = self._equity
        closed: list[Trade] = []
        before = self._position
        held_into_bar = self._execute(action, t1, closed)
        entered = self._position is not None and self._position is not before
        breached = self._play_bar(t1, held_into_bar, closed)
        truncated = t1 >= self._end
        position = self._position
        if position is not None and truncated:
            closed.append(self._close(market_fill(self._closes[t1], -position.side, self.instrument), t1, "episode_end"))
        breached = self._settle(t1, breached, closed)
        outcome = self.evaluation.on_bar(self._start_ns[t1], self._session[t1], self.account.balance, self._position is None, breached)
        truncated = truncated or (outcome == "passed" and self.end_episode_on_pass)
        if truncated and not breached and outcome == "open":
            self.evaluation.end_of_data()

        self._t = t1
        self.equity_curve.append(self._equity)
        reward = step_reward(equity_before, self._equity, breached, self.config.reward_scale_usd, self.config.drawdown_penalty,
                             entered, self.config.entry_penalty_usd)
        self.episode_return += reward
        self._done = breached or truncated
        info: dict[str, Any] = {"closed_trades": closed, "illegal_action": illegal, "executed_action": action, "evaluation": outcome}
        if self._done:
            info["episode_metrics"] = self.episode_metrics()
        self._mask = self._mask_list()
        return reward, breached, truncated and not breached, info

    def observe(self) -> np.ndarray:
        """The current observation again (what the last reset/step returned)."""
        return self._observation()

    def action_masks(self) -> np.ndarray:
        """bool [6]: True where the action is allowed now (sb3-contrib MaskablePPO convention)."""
        return np.array(self._mask, dtype=bool)

    # ------------------------------------------------------------------ episode window

    def _episode_window(self, options: dict[str, Any]) -> tuple[int, int]:
        split = self.split
        last_bar = split.stop - 1
        if "start" in options:
            start = int(options["start"])
            n_bars = int(options.get("n_bars", last_bar - start))
            if not split.start <= start < last_bar or n_bars < 1 or start + n_bars > last_bar:
                raise ValueError(f"episode window start={start} n_bars={n_bars} is outside split {split.name!r} [{split.start}, {split.stop})")
            return start, n_bars
        n_bars = min(self.config.episode_bars, last_bar - split.start)
        latest_start = last_bar - n_bars
        if self.config.episode_start == "session_open":
            opens = split.session_open_bars()
            opens = opens[opens <= latest_start]
            if len(opens):
                return int(opens[self.np_random.integers(len(opens))]), n_bars
        return int(self.np_random.integers(split.start, latest_start + 1)), n_bars

    # ------------------------------------------------------------------ trading

    def _execute(self, action: int, t1: int, closed: list[Trade]) -> bool:
        """Carry out the decision at bar t1's open; True when a position was held into the bar."""
        position = self._position
        if action == HOLD:
            return position is not None
        if action == BUY or action == SELL:
            side = 1 if action == BUY else -1
            if position is None:
                self._position = open_position(
                    self._next_trade_id, side, self.contracts, self._opens[t1], self._atr[self._t], t1, self._start_ns[t1],
                    self.config.stop_loss_atr, self.config.take_profit_atr, self.instrument,
                )
                self._next_trade_id += 1
                self.account.pay(self._position.entry_commission)
                return False
            closed.append(self._close(market_fill(self._opens[t1], -position.side, self.instrument), t1, "signal"))
            return False
        if action == MOVE_SL_TO_BE:
            position.move_stop_to_break_even()
        elif action == ENABLE_TRAIL:
            position.trail_on = True
        elif action == DISABLE_TRAIL:
            position.trail_on = False
        return True

    def _play_bar(self, t1: int, held_into_bar: bool, closed: list[Trade]) -> bool:
        """Stops, targets, drawdown liquidation and forced flat on bar t1; True on a breach."""
        position = self._position
        if position is None:
            return False
        high, low = self._highs[t1], self._lows[t1]
        position.bars_held += 1
        position.track_excursions(high, low)
        hit = bar_exit(position, self._opens[t1], high, low, self._breach_price(position), self.instrument, held_into_bar)
        if hit is not None:
            closed.append(self._close(hit[0], t1, hit[1]))
            return hit[1] == "drawdown"
        # Intraday trailing: the peak includes the bar's favourable extreme. The adverse side is assumed to
        # trade first (above), so the raised threshold is tested from the close on.
        favourable = high if position.side > 0 else low
        self.account.mark(self.account.balance + position.unrealized_usd(favourable, self.instrument.multiplier))
        if self._flat_at_close[t1]:
            closed.append(self._close(market_fill(self._closes[t1], -position.side, self.instrument), t1, "forced_flat"))
        return False

    def _settle(self, t1: int, breached: bool, closed: list[Trade]) -> bool:
        """Trail the stop, mark equity at the close and apply the trailing-drawdown rule."""
        account = self.account
        position = self._position
        close = self._closes[t1]
        if position is not None:
            if position.trail_on:
                position.trail(close, self.config.trail_atr * self._atr[t1], self.instrument.tick_size)
            unrealized = position.unrealized_usd(close, self.instrument.multiplier)
            self._equity = account.balance + unrealized
            if account.daily_loss_hit(unrealized):  # pauses the day; the account does not fail
                closed.append(self._close(market_fill(close, -position.side, self.instrument), t1, "daily_loss_limit"))
                position = None
        else:
            self._equity = account.balance
        if not breached and self._equity <= account.threshold:
            # A stop filled beyond the threshold, or costs pushed equity through it.
            breached = True
            if position is not None:
                closed.append(self._close(market_fill(close, -position.side, self.instrument), t1, "drawdown"))
                self._equity = account.balance
        if breached:
            account.breach()
        else:
            account.mark(self._equity)
        return breached

    def _breach_price(self, position: Position) -> float:
        """The tradable price at which equity first touches the threshold (rounded to the tick against the position)."""
        room_usd = self.account.balance - self.account.threshold
        exact = position.entry_price - position.side * room_usd / (self.instrument.multiplier * position.contracts)
        tick = self.instrument.tick_size
        ticks = exact / tick
        return (math.floor(ticks + 1e-9) if position.side > 0 else math.ceil(ticks - 1e-9)) * tick

    def _close(self, price: float, bar: int, reason: str) -> Trade:
        trade = close_position(self._position, price, bar, self._start_ns[bar], reason, self.instrument)
        self.account.close_trade(trade.pnl_usd + self._position.entry_commission)
        self.account.record_result(trade.pnl_usd)
        self._position = None
        self._equity = self.account.balance
        self.trades.append(trade)
        return trade

    # ------------------------------------------------------------------ observation

    def _mask_list(self) -> list[bool]:
        """The trading mask, gated by the decision cadence and the minimum hold (actors/env/cadence.py) when they are on."""
        mask = self._trading_mask()
        config = self.config
        if config.decision_every_bars <= 1 and config.min_hold_bars <= 0:
            return mask
        position = self._position
        return gated_mask(mask, decision_bar=is_decision_bar(self._data.features.minute_et[self._t], config.decision_every_bars),
                          bars_held=None if position is None else position.bars_held, min_hold_bars=config.min_hold_bars)

    def _trading_mask(self) -> list[bool]:
        position = self._position
        if position is None:
            can_enter = self._entry_allowed[self._t] and not self.account.daily_loss_reached
            return [True, can_enter, can_enter, False, False, False]
        if not self.config.management_actions:
            return [True, position.side < 0, position.side > 0, False, False, False]
        return [
            True,
            position.side < 0,
            position.side > 0,
            position.can_move_stop_to_break_even(self._closes[self._t]),
            not position.trail_on,
            position.trail_on,
        ]

    def _observation(self) -> np.ndarray:
        t = self._t
        obs = self._obs
        if t >= WINDOW - 1:
            obs[:WINDOW_END] = self._bar_features[t - WINDOW + 1 : t + 1].reshape(-1)
        else:  # fewer than 20 bars of history (tiny files): zeros stand in for the missing oldest bars
            obs[:WINDOW_END] = 0.0
            obs[WINDOW_END - (t + 1) * N_BAR : WINDOW_END] = self._bar_features[: t + 1].reshape(-1)
        obs[STATIC_START:STATIC_END] = self._static_features[t]
        mask = self._mask = self._mask_list()
        position = self._position
        account = self.account
        drawdown_room = self._drawdown_scale
        close = self._closes[t]
        if position is None:
            obs[POSITION_START:VALIDITY_END] = (0.0, 0.0, 0.0, 0.0, 0.0, float(mask[BUY]), 0.0, 0.0)
            unrealized, adverse_share = 0.0, 0.0
        else:
            atr = self._atr[t] or 1.0
            side = position.side
            obs[POSITION_START:VALIDITY_END] = (
                side,
                _clip((close / position.entry_price - 1.0) * 100.0),
                _clip(side * (close - position.stop) / atr),
                _clip(side * (position.target - close) / atr),
                _clip(position.bars_held / 390.0),
                0.0,
                float(mask[MOVE_SL_TO_BE]),
                float(position.trail_on),
            )
            unrealized = position.unrealized_usd(close, self.instrument.multiplier)
            excursion = position.mae_points + position.mfe_points
            adverse_share = position.mae_points / excursion if excursion > 0 else 0.0
        obs[RISK_START:RISK_END] = (
            _clip(unrealized / drawdown_room),
            _clip((account.peak - self._equity) / drawdown_room),
            _clip(account.consecutive_losses / 5.0),
            account.win_rate,
            adverse_share,
        )
        return obs.copy()

    # ------------------------------------------------------------------ reporting

    @property
    def bar(self) -> int:
        """Index (in the dataset) of the bar the current observation describes."""
        return self._t

    @property
    def position(self) -> Position | None:
        return self._position

    @property
    def equity(self) -> float:
        return self._equity

    def episode_metrics(self) -> dict[str, float]:
        return episode_metrics(self.equity_curve, self.trades, self.account.violations, self.episode_return)

    def context(self) -> dict[str, Any]:
        """The named market context (bus MarketContext fields) of the current bar and account."""
        t = self._t
        features = self._data.features
        position = self._position
        account = self.account
        close = self._closes[t]
        minute = int(features.minute_et[t])
        return {
            "symbol": self.instrument.symbol,
            "time_et": f"{minute // 60:02d}:{minute % 60:02d}",
            "price": close,
            "trend": TRENDS[features.trend_code[t]],
            "rsi": float(features.rsi[t]),
            "adx": float(features.adx[t]),
            "atr": self._atr[t],
            "momentum": float(features.momentum[t]),
            "vwap_distance_pct": float(features.vwap_distance_pct[t]),
            "support": float(features.support[t]),
            "resistance": float(features.resistance[t]),
            "pattern": PATTERNS[features.pattern_code[t]],
            "volume_trend": VOLUME_TRENDS[features.volume_trend_code[t]],
            "volatility_regime": float(features.volatility_regime[t]),
            "position": 0 if position is None else position.side,
            "contracts": 0 if position is None else position.contracts,
            "entry_price": 0.0 if position is None else position.entry_price,
            "unrealized_pnl": 0.0 if position is None else position.unrealized_usd(close, self.instrument.multiplier),
            "bars_in_position": 0 if position is None else position.bars_held,
            "trail_on": False if position is None else position.trail_on,
            "stop_at_break_even": False if position is None else position.stop_kind == "break_even",
            "consecutive_losses": account.consecutive_losses,
            "win_rate": account.win_rate,
            "recent_net_pnl": account.recent_net_pnl,
            "balance": account.balance,
            "drawdown_buffer": self._equity - account.threshold,
            "trailing_limit": self.account_config.trailing_drawdown,
            "daily_pnl": account.daily_pnl,
            "minutes_to_close": float(self._data.schedule.minutes_to_flat[t]),
            "session_id": self._session[t],
            "bar_open": self._opens[t], "bar_high": self._highs[t], "bar_low": self._lows[t],
            "stop_price": 0.0 if position is None else position.stop,
            "target_price": 0.0 if position is None else position.target,
            "tape": self._tape(t),
        }

    def _tape(self, t: int) -> str:
        if self.tape_table:
            if self._tapes is None:
                self._tapes = TapeTable.of(self._data, self.instrument.tick_size)
            return self._tapes.line(t)
        return market_tape(self._highs, self._lows, self._closes, t, self._atr[t], self.instrument.tick_size,
                           float(self._data.features.vwap_distance_pct[t]), float(self._data.schedule.minutes_to_flat[t]))
