"""The env actor's account state, saved so that a crash never resets the trailing-drawdown floor.

What survives a restart (per env): balance, equity peak and threshold (the floor), the day's P&L and
halts, the open position, the evaluation account, the bar cursor and episode window, the episode id,
the next trade id and the RNG state; for the batch: which envs are active, their chunk ends, the
finished evaluations and the decisions behind the open trade; for the loop: the step index.

What does not: the per-bar series behind the reports (equity curve, bar history, closed trade list of
the episode, finished episodes' metrics). They grow with the run, and writing them every step would cost
O(run) per step; after a restart the reports cover the bars from the restart on.

The file is JSON (the RNG state holds 128-bit integers, which msgpack cannot carry), written atomically
(tmp file + os.replace), so a kill -9 mid-write leaves the previous checkpoint whole. A checkpoint carries
a fingerprint of the settings that shape the state; one written under other settings is not restored.
Plain Python: no bus, no runtime.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import weakref
from collections import deque
from dataclasses import asdict
from pathlib import Path
from typing import Any

import msgspec

from actors.env.batch import EnvBatch
from actors.env.env import FuturesTradingEnv
from actors.env.account_walk import Evaluation, EvaluationRecord
from actors.env.trading import Position

FORMAT_VERSION = 1

_ACCOUNT_FIELDS = ("balance", "peak", "threshold", "breached", "consecutive_losses", "daily_pnl", "session", "trades",
                   "violations", "paused_today", "trading_days")
_EVALUATION_FIELDS = ("index", "start_ns", "end_ns", "start_balance", "profit_target_usd", "outcome", "reason", "balance")


def fingerprint(settings: dict[str, Any]) -> str:
    """A short hash of the settings that shape the env's state (mode, split, n_envs, account, instrument, seed)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------- capture


def capture(batch: EnvBatch, step_index: int, env_steps: int, fingerprint_: str) -> dict[str, Any]:
    """Everything a restarted env actor needs to go on from ``step_index`` (see the module docstring)."""
    return {
        "version": FORMAT_VERSION,
        "fingerprint": fingerprint_,
        "step_index": step_index,
        "env_steps": env_steps,
        "batch": {
            "active": list(batch.active),
            "episode_steps": list(batch.episode_steps),
            "chunk_end": list(batch._chunk_end),
            "decisions": [[list(d) for d in decisions] for decisions in batch._decisions],
            "evaluations": [[asdict(record) for record in records] for records in batch._evaluations],
            "recent_returns": list(batch.recent_returns),
        },
        "envs": [_capture_env(env) for env in batch.envs],
    }


def _capture_env(env: FuturesTradingEnv) -> dict[str, Any]:
    account = env.account
    evaluation = env.evaluation
    position = env.position
    return {
        "t": env._t,
        "end": env._end,
        "done": env._done,
        "equity": env._equity,
        "episode_id": env.episode_id,
        "episode_return": env.episode_return,
        "next_trade_id": env._next_trade_id,
        "illegal_actions": env.illegal_actions,
        "rng": _rng_state(env),
        "account": {**{name: getattr(account, name) for name in _ACCOUNT_FIELDS}, "recent_wins": list(account.recent_wins),
                    "recent_pnls": list(account.recent_pnls)},
        "evaluation": {**{name: getattr(evaluation, name) for name in _EVALUATION_FIELDS}, "days": sorted(evaluation._days)},
        "position": None if position is None else {name: getattr(position, name) for name in Position.__slots__},
    }


_RNG_STATES: weakref.WeakKeyDictionary[FuturesTradingEnv, tuple[int, dict[str, Any]]] = weakref.WeakKeyDictionary()
"""Per env, its RNG state and the episode it was read in. Only reset() draws from the RNG (the episode's start), and
every reset starts a new episode id, so the state is read once an episode, not at every checkpoint (a checkpoint is
due on every step that closes a trade: with 4 envs nearly every step)."""


def _rng_state(env: FuturesTradingEnv) -> dict[str, Any]:
    cached = _RNG_STATES.get(env)
    if cached is None or cached[0] != env.episode_id:
        cached = _RNG_STATES[env] = (env.episode_id, env.np_random.bit_generator.state)
    return cached[1]


def write(path: Path, state: dict[str, Any]) -> None:
    """Atomically replace ``path`` with ``state`` (a reader sees the old file or the new one, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace_bytes(path, _serialised(state))


_JSON = msgspec.json.Encoder()


def _serialised(state: dict[str, Any]) -> bytes:
    """JSON text of ``state``. msgspec writes it in a tenth of json.dumps's time (it was the largest part of the env's
    step with 4 envs); the same JSON values, read back by json.loads. It would write a NaN or infinity as null, so a
    state holding one (never expected: dollars and prices) goes through json.dumps, which keeps them."""
    if _all_finite(state):
        return _JSON.encode(state)
    return json.dumps(state, separators=(",", ":")).encode()


def _all_finite(state: dict[str, Any]) -> bool:
    """Whether every float of a captured state is finite (the sum of them all is: a NaN or infinity makes it NaN or
    infinite; a sum that overflows sends a finite state the slower way, still right). The fields are named rather than
    searched for (a search cost more than the encoding); tests/actors/env/test_checkpoint_encoding.py puts a NaN in
    every float of real states, so a float field added to the capture and missed here fails it."""
    batch = state["batch"]
    total = sum(batch["recent_returns"]) + sum(record["net_pnl_usd"] for records in batch["evaluations"] for record in records)
    for env in state["envs"]:
        account, evaluation, position = env["account"], env["evaluation"], env["position"]
        total += (env["equity"] + env["episode_return"] + account["balance"] + account["peak"] + account["threshold"] + account["daily_pnl"]
                  + sum(account["recent_pnls"]) + evaluation["start_balance"] + evaluation["profit_target_usd"] + evaluation["balance"])
        if position is not None:
            total += sum([value for value in position.values() if type(value) is float])
    return math.isfinite(total)


def _replace_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class CheckpointWriter:
    """Writes checkpoints in a thread of its own, newest state wins: the loop only captures the state
    (a few dict copies), never waits for the file system (a rename under load took 1-2 ms a step).

    The price: a kill within the write's millisecond restores the state before it, so a trade closed in
    that step can be played again after the restart; env.outcome consumers key trades by (env, episode,
    trade id). ``close`` writes the last state synchronously (the actor's stop)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)  # once: the thread's writes skip it
        self._pending: bytes | None = None
        self._pending_state: dict[str, Any] | None = None
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="env-checkpoint", daemon=True)
        self._thread.start()

    def submit(self, state: dict[str, Any]) -> None:
        # Serialised here, not in the thread: the thread then holds the GIL only between its syscalls.
        # A thread running json.dumps took the GIL from the loop in the middle of its sends (each zmq send
        # releases it), which doubled the env's send time and added milliseconds to obs->verdict p99.
        data = _serialised(state)
        with self._ready:
            self._pending, self._pending_state = data, state
            self._ready.notify()

    def close(self, final_state: dict[str, Any] | None = None) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify()
        self._thread.join(timeout=5.0)
        state = final_state if final_state is not None else self._pending_state
        if state is not None:
            write(self.path, state)

    def _run(self) -> None:
        while True:
            with self._ready:
                while self._pending is None and not self._closed:
                    self._ready.wait()
                if self._closed:
                    return
                data, self._pending = self._pending, None
            _replace_bytes(self.path, data)


# ---------------------------------------------------------------------- restore


def read(path: Path, fingerprint_: str) -> dict[str, Any] | None:
    """The checkpoint at ``path`` if there is one written under the same settings; None otherwise."""
    if not path.is_file():
        return None
    state = json.loads(path.read_text())
    if state.get("version") != FORMAT_VERSION or state.get("fingerprint") != fingerprint_:
        return None
    return state


def restore(batch: EnvBatch, state: dict[str, Any]) -> list[int]:
    """Put ``state`` back into ``batch`` (built and reset as at a fresh start). Returns the env ids with an open position."""
    saved = state["batch"]
    if len(state["envs"]) != len(batch.envs):
        raise ValueError(f"checkpoint has {len(state['envs'])} envs, the batch {len(batch.envs)}")
    batch.active = [bool(a) for a in saved["active"]]
    batch.episode_steps = [int(n) for n in saved["episode_steps"]]
    batch._chunk_end = [int(n) for n in saved["chunk_end"]]
    batch._decisions = [[(int(step), str(qid)) for step, qid in decisions] for decisions in saved["decisions"]]
    batch._evaluations = [[EvaluationRecord(**record) for record in records] for records in saved["evaluations"]]
    batch.recent_returns = [float(r) for r in saved["recent_returns"]]
    for env_id, (env, env_state) in enumerate(zip(batch.envs, state["envs"])):
        _restore_env(env, env_state)
        batch._history[env_id] = []
        if batch.mode == "backtest" and batch.active[env_id]:
            batch._record_bar(env_id, env)  # the report's bars start again at the restored bar
    return [env_id for env_id, env in enumerate(batch.envs) if env.position is not None and batch.active[env_id]]


def _restore_env(env: FuturesTradingEnv, saved: dict[str, Any]) -> None:
    env._t, env._end, env._done = int(saved["t"]), int(saved["end"]), bool(saved["done"])
    env._equity = float(saved["equity"])
    env.episode_id = int(saved["episode_id"])
    env.episode_return = float(saved["episode_return"])
    env._next_trade_id = int(saved["next_trade_id"])
    env.illegal_actions = int(saved["illegal_actions"])
    env.np_random.bit_generator.state = saved["rng"]
    _RNG_STATES.pop(env, None)
    account = env.account
    for name in _ACCOUNT_FIELDS:
        setattr(account, name, saved["account"][name])
    account.recent_wins = deque((bool(w) for w in saved["account"]["recent_wins"]), maxlen=account.recent_wins.maxlen)
    account.recent_pnls = deque((float(p) for p in saved["account"].get("recent_pnls", [])), maxlen=account.recent_pnls.maxlen)
    evaluation = saved["evaluation"]
    env.evaluation = Evaluation(int(evaluation["index"]), int(evaluation["start_ns"]), float(evaluation["start_balance"]),
                                float(evaluation["profit_target_usd"]))
    for name in ("end_ns", "outcome", "reason", "balance"):
        setattr(env.evaluation, name, evaluation[name])
    env.evaluation._days = set(evaluation["days"])
    env._position = _position(saved["position"])
    # The episode's series start again at the restored bar (not checkpointed, see the module docstring).
    env.trades = []
    env.equity_curve = [env._equity]
    env.observe()  # rebuilds the action mask of the restored bar


def _position(saved: dict[str, Any] | None) -> Position | None:
    if saved is None:
        return None
    return Position(**saved)


# ---------------------------------------------------------------------- the env actor's checkpoints


class AccountCheckpoints:
    """One env actor's checkpoint file: when one is due, the settings' fingerprint, the writer thread."""

    def __init__(self, path: Path, settings: dict[str, Any], every_steps: int) -> None:
        self.path = path
        self.every_steps = every_steps
        self._settings = settings
        self._fingerprint: str | None = None
        self._writer: CheckpointWriter | None = None

    def fingerprint(self) -> str:
        if self._fingerprint is None:  # the settings do not change within a process
            self._fingerprint = fingerprint(self._settings)
        return self._fingerprint

    def read(self) -> dict[str, Any] | None:
        return read(self.path, self.fingerprint())

    def due(self, step_index: int, closed_trades: bool) -> bool:
        """Every checkpoint_every_steps, and on any step that closed a trade: a restart replays at most a few
        steps, never a published trade. Writing every step at full speed cost a third of the loop's pace."""
        if self.every_steps <= 0:
            return False
        return closed_trades or step_index % self.every_steps == 0

    def save(self, batch: EnvBatch, step_index: int, env_steps: int) -> None:
        state = capture(batch, step_index, env_steps, self.fingerprint())
        if self._writer is None:
            self._writer = CheckpointWriter(self.path)
        self._writer.submit(state)

    def close(self) -> None:
        """The last state, on disk before the process ends."""
        if self._writer is not None:
            self._writer.close()
