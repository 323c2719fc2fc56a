"""Actors under test: in the test process (``actor_harness``) or in real processes (``running_actors``).

``actor_harness`` drives ONE actor instance inside the test's event loop. It stands a
``RecordingBus`` in for the actor's ``AsyncBus``; the actor itself runs unchanged (its ``run()``,
hooks, subscriptions, drain loop, failure rules). What the test sends is encoded and decoded by
bus/codec.py exactly as on the wire, so a bad frame is dropped, counted and logged as in
production; what the actor publishes is encoded, decoded back and recorded, typed. Only frames
whose topic the actor subscribed reach it (ZMQ's prefix rule); nothing it publishes comes back
to it. Shell logic is then tested in milliseconds, without processes or sockets::

    async def test_a_decision_follows_obs_and_proposal():
        async with actor_harness("fusion", {"fusion.method": "rules"}) as h:
            await h.deliver(env_obs(1), proposal(1, [BUY, BUY]))
            decision = await h.recv(FusionDecision)
            assert decision.step == 1

Log events: enter ``structlog.testing.capture_logs()`` before the harness starts (an actor may
bind its logger in on_start); the harness's logger passes every level through.

``running_actors`` starts a broker and real actor processes: keep a few such tests per actor
for the wiring (startup, subscriptions across the broker, restarts, shutdown).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterable, Iterator, Mapping, TypeVar

import structlog

from bus.broker import BusAddresses
from bus.client import Receiver, SyncBus, topic_bytes
from bus.codec import Decoded, Decoder, Encoder
from bus.messages import Message
from config.tree import load_settings, load_tree, validate
from runtime.actor import Actor
from runtime.logs import configure_logging
from runtime.rundir import RunDir, create_run_dir
from runtime.settings import RuntimeSettings
from runtime.supervisor import Supervisor

M = TypeVar("M", bound=Message)
HARNESS_START_SECS = 60.0
"""How long on_start may take in the harness (the env loads its data set, the policy torch)."""


class RecordingBus(Receiver):
    """What the actor sees as its AsyncBus. Inbound frames wait in a queue and a pipe's read end
    plays the SUB socket's fd (the loop's reader wakes the actor's drain loop as ZMQ_FD does);
    decoding, drop counts and gap tracking are the production ``Receiver``'s."""

    def __init__(self, sender: str, max_frame_bytes: int) -> None:
        super().__init__(max_frame_bytes)
        self.encoder = Encoder(sender)
        self.sent = 0
        self.records: list[Decoded] = []
        """Every message the actor published, decoded back, in order."""
        self.topics: list[bytes] = []
        self.published_event = asyncio.Event()
        self._published_decoder = Decoder(max_frame_bytes)
        self._inbox: deque[list[bytes]] = deque()
        self.lanes = True
        """As AsyncBus with direct lanes: the actor handles what one drain reads in send-time order (frames a test
        sends come from one encoder, in order, so only a test that feeds frames out of order sees a difference)."""
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)

    # ---------------------------------------------------------------- the AsyncBus interface

    def subscribe(self, subs: Iterable[type[Message] | str]) -> None:
        self.topics.extend(topic_bytes(sub) for sub in subs)

    def publish(self, msg: Message, subtopic: str = "") -> None:
        # Through the codec both ways: a message that would not survive the wire fails here, in the handler.
        frames = list(self.encoder.encode(msg, subtopic))
        self.records.append(self._published_decoder.decode(frames))
        self.sent += 1
        self.published_event.set()

    def poll_frames(self) -> list[bytes] | None:
        if self._inbox:
            return self._inbox.popleft()
        with contextlib.suppress(BlockingIOError):
            os.read(self._read_fd, 1 << 16)  # drained: the fd stops being readable
        return None

    @property
    def fd(self) -> int:
        return self._read_fd

    def close(self) -> None:
        os.close(self._read_fd)
        os.close(self._write_fd)

    # ---------------------------------------------------------------- the test's side

    def feed(self, frames: list[bytes]) -> bool:
        """Queue frames for the actor if it subscribed their topic; False when ZMQ would not deliver them."""
        topic = bytes(frames[0]) if frames else b""
        if not any(topic.startswith(prefix) for prefix in self.topics):
            return False
        self._inbox.append(frames)
        with contextlib.suppress(BlockingIOError):
            os.write(self._write_fd, b"x")
        return True

    @property
    def pending(self) -> int:
        return len(self._inbox)


class ActorHarness:
    """One actor running in the test's event loop on a RecordingBus (see the module docstring)."""

    def __init__(self, actor: Actor, bus: RecordingBus) -> None:
        self.actor = actor
        self.bus = bus
        self._test_encoder = Encoder("test")
        self._unread: list[Decoded] = []
        self._read_upto = 0
        self._task: asyncio.Task[int] | None = None

    async def start(self) -> None:
        """Run the actor until it has subscribed (its on_start is done)."""
        self._task = asyncio.get_running_loop().create_task(self.actor.run(), name=f"harness.{self.actor.name}")
        deadline = time.monotonic() + HARNESS_START_SECS
        while not self.bus.topics:
            if self._task.done():
                raise RuntimeError(f"{self.actor.name} ended during start with exit code {self._task.result()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.actor.name} did not start within {HARNESS_START_SECS} s")
            await asyncio.sleep(0.001)

    # ---------------------------------------------------------------- input

    def send(self, msg: Message, subtopic: str = "") -> bool:
        """Queue one message as the wire would carry it; False when the actor is not subscribed to it."""
        return self.bus.feed(list(self._test_encoder.encode(msg, subtopic)))

    def send_raw(self, frames: list[bytes]) -> bool:
        """Queue frames as they are (malformed input)."""
        return self.bus.feed(list(frames))

    async def settle(self, timeout_secs: float = 10.0) -> None:
        """Wait until the actor has handled everything queued (handlers that suspend included)."""
        deadline = time.monotonic() + timeout_secs
        await asyncio.sleep(0)
        while self.bus.pending or self.actor.handling:
            if self._task is not None and self._task.done():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.actor.name} still busy after {timeout_secs} s")
            await asyncio.sleep(0.0005)
        await asyncio.sleep(0)

    async def deliver(self, *msgs: Message) -> None:
        """Send each message, then wait until they are handled."""
        for msg in msgs:
            self.send(msg)
        await self.settle()

    # ---------------------------------------------------------------- output

    @property
    def published(self) -> list[Decoded]:
        """Everything the actor published so far (with topic, sender, seq and sent_ns)."""
        return self.bus.records

    def messages(self, kind: type[M]) -> list[M]:
        """Every published message of ``kind``, in order."""
        return [record.msg for record in self.bus.records if isinstance(record.msg, kind)]

    async def recv(self, kind: type[M] | tuple[type[Message], ...], where: Callable[[M], bool] | None = None,
                   timeout_secs: float = 10.0) -> M:
        """The oldest published ``kind`` (a type or a tuple of types, matching ``where``) not returned
        before; waits for it. Messages that do not match stay for later calls."""
        deadline = time.monotonic() + timeout_secs
        while True:
            self._unread.extend(self.bus.records[self._read_upto:])
            self._read_upto = len(self.bus.records)
            for index, record in enumerate(self._unread):
                if isinstance(record.msg, kind) and (where is None or where(record.msg)):
                    del self._unread[index]
                    return record.msg
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (self._task is not None and self._task.done()):
                raise TimeoutError(f"no {getattr(kind, '__name__', kind)} from {self.actor.name} within {timeout_secs} s")
            self.bus.published_event.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.bus.published_event.wait(), remaining)

    @property
    def dropped(self) -> dict[str, int]:
        """Dropped inbound frames by kind (as in sys.stats)."""
        return dict(self.bus.dropped)

    # ---------------------------------------------------------------- end

    async def stop(self, reason: str = "test") -> int:
        """Stop as sys.shutdown would (on_stop runs); the exit code."""
        assert self._task is not None
        self.actor.request_stop(reason)
        return await self._task

    @property
    def exit_code(self) -> int | None:
        """The actor's exit code once run() returned (a failed handler stops it with 1), else None."""
        return self._task.result() if self._task is not None and self._task.done() else None


@contextlib.asynccontextmanager
async def actor_harness(
    actor: str | type[Actor],
    overrides: Mapping[str, Any] | None = None,
    *,
    run_dir: Path | None = None,
    config_path: str | Path | None = None,
) -> AsyncIterator[ActorHarness]:
    """Start ``actor`` (a name as in runtime.actors, a dotted module path, or the class) in this
    event loop on a RecordingBus; stop it on exit. ``runtime.actors`` is the actor alone unless
    overridden, so it waits for no peers. ``run_dir`` defaults to a temporary directory."""
    from runtime.entry import actor_log_name, resolve_actor_class

    spec = actor if isinstance(actor, str) else f"{actor.__module__}:{actor.__name__}"
    actor_cls = resolve_actor_class(actor) if isinstance(actor, str) else actor
    name = actor_log_name(spec)
    config = load_settings(actor_cls.settings_type, config_path,
                           {"runtime.actors": [spec], "logging.console": "off", **dict(overrides or {})})
    tmp = None if run_dir is not None else Path(tempfile.mkdtemp(prefix="tt-harness-"))
    bus = RecordingBus(f"{name}:harness", config.bus.max_message_bytes)
    # Lazy, unfiltered and uncached: capture_logs() sees every level, whatever configured structlog before.
    log = structlog.wrap_logger(None, wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
                                cache_logger_on_first_use=False, actor=name)
    instance = actor_cls(name=name, config=config, run_dir=run_dir or tmp, bus=bus, log=log)
    harness = ActorHarness(instance, bus)
    try:
        await harness.start()
        yield harness
    finally:
        if harness.exit_code is None and harness._task is not None:
            await harness.stop("harness_exit")
        _restore_signals()
        bus.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _restore_signals() -> None:
    """Actor.run() installs SIGTERM/SIGINT handlers for a process of its own; give the test process its own back."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(sig)


@dataclass
class RunningRuntime:
    supervisor: Supervisor
    client: SyncBus
    run_dir: Path
    addresses: BusAddresses
    thread: threading.Thread
    exit_code: list

    def kill(self, name: str) -> int:
        """SIGKILL one actor's process (or the broker's); returns its pid."""
        return self.supervisor.kill(name)

    def pid(self, name: str) -> int:
        proc = self.supervisor.broker if name == "broker" else self.supervisor.actors[name].proc
        assert proc is not None
        return proc.pid

    def wait_started(self, timeout_secs: float = 60.0) -> None:
        """Block until every actor has sent a heartbeat (started and subscribed)."""
        from bus.messages import Heartbeat

        names = set(self.supervisor.actors)
        self.client.subscribe(Heartbeat, settle_secs=0)
        deadline = time.monotonic() + timeout_secs
        try:
            while names:
                if self.supervisor.failure:
                    raise RuntimeError(self.supervisor.failure)
                try:
                    beat = self.client.recv(Heartbeat, timeout_secs=max(0.01, min(1.0, deadline - time.monotonic())))
                    names.discard(beat.actor)
                except TimeoutError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"actors not started within {timeout_secs} s: {sorted(names)}") from None
        finally:
            self.client.unsubscribe(Heartbeat)
        time.sleep(0.1)  # let the last subscriptions propagate through the broker

    def stop(self, timeout_secs: float = 30.0) -> int:
        self.supervisor.request_stop("test")
        self.thread.join(timeout_secs)
        return self.exit_code[0] if self.exit_code else -1


@contextlib.contextmanager
def running_actors(
    actors: list[str],
    overrides: Mapping[str, Any] | None = None,
    *,
    config_path: str | Path | None = None,
    keep_run_dir: bool = False,
    wait_started_secs: float = 180.0,
) -> Iterator[RunningRuntime]:
    """Start a broker and ``actors`` (names or dotted module paths) in real processes, with a tmp run dir.

    Waits (up to ``wait_started_secs``; 0 = not at all) until every actor has sent its first heartbeat,
    which it does after on_start, when its subscriptions are in place."""
    settings = {"runtime.actors": list(actors), "logging.console": "off", **dict(overrides or {})}
    tree, sources = load_tree(config_path, settings)
    config = validate(tree, sources, RuntimeSettings)  # each actor validates its own sections as it starts
    tmp = Path(tempfile.mkdtemp(prefix="tt-run-"))
    run_dir: RunDir = create_run_dir(tree, "test", tmp / "run")
    log = configure_logging(log_file=run_dir.log_file("supervisor"), level=config.logging.level, actor="supervisor", run=run_dir.run_id)
    supervisor = Supervisor(config, run_dir, log)
    addresses = supervisor.start()
    exit_code: list[int] = []
    thread = threading.Thread(target=lambda: exit_code.append(supervisor.run()), name="supervisor", daemon=True)
    thread.start()
    client = SyncBus(addresses, sender="test")
    rt = RunningRuntime(supervisor, client, run_dir.path, addresses, thread, exit_code)
    try:
        if wait_started_secs:
            rt.wait_started(wait_started_secs)
        yield rt
    finally:
        client.close()
        rt.stop()
        if not keep_run_dir:
            shutil.rmtree(tmp, ignore_errors=True)
