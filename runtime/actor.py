"""The actor base class and the per-process main loop.

An actor is a small class that declares the message types it subscribes to and handles
them one at a time, in arrival order, in ``on_message``. The base class owns the bus
connection, heartbeats, periodic ``sys.stats``, the bound logger, named tasks and a
worker thread for blocking engines.

Failure rules (few, on purpose):
- a bad frame is counted by kind, logged with a rate limit and dropped; never fatal;
- an exception in a handler goes to ``on_failure``; by default it is logged and the
  process exits non-zero, and the supervisor restarts the actor;
- ``sys.shutdown`` (or SIGTERM) stops the actor: ``on_stop`` runs, tasks are cancelled.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import time
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Awaitable, Callable, ClassVar, TypeVar

from bus.client import AsyncBus
from bus.messages import Done, Heartbeat, Message, Progress, Shutdown, Stats
from runtime.hops import HopTimer, hops_enabled
from runtime.logs import RateLimiter
from runtime.placement import release_worker_thread
from runtime.settings import RuntimeSettings

T = TypeVar("T")
STOP_TIMEOUT_SECS = 10.0
MAX_DRAIN_NS = 20_000_000
"""The longest the receive path handles a backlog before it lets the event loop's other tasks run. Without it
an actor that handles frames slower than they arrive (the reniced reasoner beside a full-speed backtest) never
returned to its loop, sent no heartbeat for five seconds and was restarted as silent."""
MAX_READ_BATCH = 256
"""Frames read (and decoded) before the first of them is handled; a batch is handled in send-time order."""


class Actor:
    subscriptions: tuple[type[Message], ...] = ()
    """Message types this actor handles; their topics are subscribed by prefix. Subscribing happens
    after on_start, so on_start may narrow them from the config (``self.subscriptions = (...)``)."""
    subscribe_topics: ClassVar[tuple[str, ...]] = ()
    """Narrower topic prefixes to subscribe instead of the types' own topics (e.g. ``probe.2``)."""
    settings_type: ClassVar[type[RuntimeSettings]] = RuntimeSettings
    """What ``self.config`` is: the sections this actor reads, decoded from the run directory's config.toml
    (the others are ignored there). An actor's own subclass of RuntimeSettings lists its section and the
    shared vocabulary it needs."""

    def __init__(self, *, name: str, config: RuntimeSettings, run_dir: Path, bus: AsyncBus, log: Any,
                 freeze_heap: bool = False) -> None:
        """``freeze_heap``: the actor owns its process (runtime.entry): gc.freeze() after on_start."""
        self.name = name
        self.freeze_heap = freeze_heap
        self.config = config
        self.run_dir = Path(run_dir)
        self.log = log
        self.counters: Counter[str] = Counter()
        self.__bus = bus
        self.__tasks: set[asyncio.Task] = set()
        # A loop actor's worker thread (PPO and fusion updates) runs on every CPU, not only the loop's (runtime/placement.py).
        self.__worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}-worker", initializer=release_worker_thread)
        self.__stopping = asyncio.Event()
        self.__stop_reason = ""
        self.__started_at = time.monotonic()
        self.__handled_types: tuple[type[Message], ...] = ()
        self.__drop_log = RateLimiter(config.logging.rate_limit_secs)
        self.__peers_seen: dict[str, float] = {}
        self.__peer_beat = asyncio.Event()
        self.__busy = False  # a suspended handler is running: nothing else may be dispatched
        self.__paused = False  # the actor asked not to read the bus (pause_receiving)
        self.__reading = False  # the loop watches the SUB socket
        self.__read: deque[Message] = deque()  # read and accepted, not yet handled (send-time order)
        # Direct lanes (bus.direct): every sender has its own connection, and ZMQ reads them in turn, so a frame sent
        # earlier on one lane can wait behind a later one of another. What a drain reads is handled in the order it
        # was sent (one host, one monotonic clock), as through one broker. That mends frames already queued, not one
        # still on its way (README, "Direct lanes"), which is why bus.direct is off by default.
        self.__send_time_order = bool(getattr(bus, "lanes", False))
        self.__hops = HopTimer() if hops_enabled() else None  # TT_PROFILE=hops: per-topic stage timings (runtime/hops.py)
        if self.__hops is not None:
            bus.hop_timer = self.__hops
            bus.decoder.time_validation = True

    # ------------------------------------------------------------------ hooks

    async def on_start(self) -> None:
        """Build domain objects; called once before the first message."""

    async def on_message(self, msg: Message) -> None:
        """Handle one subscribed message."""

    async def on_stop(self) -> None:
        """Flush what must survive (checkpoints, stores) into ``self.run_dir``."""

    async def on_failure(self, exc: BaseException, msg: Message | None) -> None:
        """An exception escaped a handler. Default: log it and let the process exit (the supervisor restarts it)."""
        self.log.error("handler_failed", message_type=type(msg).__name__ if msg else None, exc_info=exc)
        self.request_stop("handler_failed")
        self.__exit_code = 1

    def gauges(self) -> dict[str, float]:
        """Figures added to the periodic sys.stats."""
        return {}

    @classmethod
    def warm_up(cls, config: RuntimeSettings) -> None:
        """Run in a spare process (runtime.spare_actors) before it waits: work whose first run is slow (lazy imports,
        library set-up) done ahead, so a restart's on_start is quick. No bus, no run directory writes."""

    # ------------------------------------------------------------------ services

    def publish(self, msg: Message, subtopic: str = "") -> None:
        self.__bus.publish(msg, subtopic)
        self.counters["msgs_out"] += 1

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task:
        """The one way to create a task: named, tracked, and its end logged."""
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.name}.{name}")
        self.__tasks.add(task)
        task.add_done_callback(self._task_ended)
        return task

    async def in_worker(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking work (llama.cpp, torch training) in this actor's worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self.__worker, fn, *args)

    def done(self, reason: str, summary: dict[str, float] | None = None) -> None:
        """Announce that this actor's job is finished (the supervisor may then stop the run)."""
        self.publish(Done(actor=self.name, reason=reason, summary=dict(summary or {})))
        self.log.info("done", reason=reason, **(summary or {}))

    def progress(self, steps: int, total_steps: int, steps_per_sec: float, figures: dict[str, float] | None = None) -> None:
        self.publish(Progress(actor=self.name, steps=steps, total_steps=total_steps, steps_per_sec=steps_per_sec, figures=dict(figures or {})))

    def request_stop(self, reason: str) -> None:
        if not self.__stopping.is_set():
            self.__stop_reason = reason
            self.__stopping.set()

    async def wait_for_peers(self, names: list[str], timeout_secs: float) -> list[str]:
        """Wait until every actor in ``names`` has sent a heartbeat (a heartbeat means its on_start is done).
        Returns the names still missing when ``timeout_secs`` ran out."""
        deadline = time.monotonic() + timeout_secs
        while True:
            missing = [name for name in names if name not in self.__peers_seen]
            remaining = deadline - time.monotonic()
            if not missing or remaining <= 0:
                return missing
            self.__peer_beat.clear()
            try:
                await asyncio.wait_for(self.__peer_beat.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    def loop_peers(self) -> list[str]:
        """The other configured actors (their short names)."""
        from runtime.entry import actor_log_name

        return [actor_log_name(spec) for spec in self.config.runtime.actors if actor_log_name(spec) != self.name]

    @property
    def stopping(self) -> bool:
        return self.__stopping.is_set()

    @property
    def handling(self) -> bool:
        """A handler that suspended is still running, or read messages wait for it (the in-process test harness
        waits for them)."""
        return self.__busy or bool(self.__read)

    # ------------------------------------------------------------------ machinery

    def _task_ended(self, task: asyncio.Task) -> None:
        self.__tasks.discard(task)
        if task.cancelled():
            self.log.debug("task_cancelled", task=task.get_name())
        elif task.exception() is not None:
            self.log.error("task_failed", task=task.get_name(), exc_info=task.exception())
            self.request_stop(f"task_failed:{task.get_name()}")
            self.__exit_code = 1
        else:
            self.log.debug("task_finished", task=task.get_name())

    def stats(self) -> Stats:
        counters = dict(self.counters)
        counters["msgs_in"] = self.__bus.received
        counters["seq_gaps"] = self.__bus.sequences.gaps
        counters["dropped"] = sum(self.__bus.dropped.values())
        for kind, count in self.__bus.dropped.items():
            counters[f"dropped_{kind}"] = count
        return Stats(actor=self.name, counters=counters, gauges={k: float(v) for k, v in self.gauges().items()})

    async def _heartbeat_loop(self) -> None:
        interval = self.config.runtime.heartbeat_interval_secs
        pid = os.getpid()
        while True:
            self.__bus.publish(Heartbeat(actor=self.name, pid=pid, uptime_secs=time.monotonic() - self.__started_at))
            await asyncio.sleep(interval)

    async def _stats_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.runtime.stats_interval_secs)
            stats = self.stats()
            self.__bus.publish(stats)
            self.log.info("stats", **{**stats.counters, **stats.gauges})

    def _note_drop(self) -> None:
        exc = self.__bus.last_error
        allowed, suppressed = self.__drop_log.allow(exc.kind.value)
        if allowed:
            self.log.warning("frame_dropped", kind=exc.kind.value, detail=exc.detail[:200], suppressed=suppressed)

    # The receive path runs inside the event loop's reader callback: it drains every queued frame
    # and runs each handler right there. A handler that finishes without suspending (the common
    # case: decode, decide, publish) costs no task switch; one that suspends (awaits a worker, a
    # sleep) is finished by a task, and draining resumes after it, so handlers still run one at a
    # time in arrival order.

    def _on_readable(self) -> None:
        if self.__reading:
            self.__drain()

    def __drain(self) -> None:
        yield_at_ns = time.monotonic_ns() + MAX_DRAIN_NS
        timer = self.__hops
        while self.__reading:  # a handler may pause reading, or stop the actor
            if time.monotonic_ns() > yield_at_ns:
                # A backlog longer than MAX_DRAIN_NS: let the loop's tasks (the heartbeat, stats) run, then go on.
                # ZMQ_FD is edge-triggered and will not fire for frames already queued, so the loop calls back.
                asyncio.get_running_loop().call_soon(self._on_readable)
                return
            if not self.__read and not self.__read_batch():
                return  # drained: ZMQ_FD (edge-triggered) fires again on the next arrival
            if not self.__read:
                continue  # the batch held only dropped or runtime frames
            msg = self.__read.popleft()
            if isinstance(msg, Shutdown):
                self.log.info("shutdown_received", reason=msg.reason)
                self.request_stop(msg.reason)
                continue
            if timer is None:
                self.__run_handler(msg)  # a handler that suspends turns reading off until it is done
                continue
            bus = self.__bus
            bus.publish_ns = 0
            started = time.thread_time_ns()
            self.__run_handler(msg)
            timer.add(type(msg).TOPIC, "handler", time.thread_time_ns() - started - bus.publish_ns)

    def __read_batch(self) -> int:
        """Read up to MAX_READ_BATCH queued frames into self.__read, in send-time order; the number of frames read."""
        bus, timer = self.__bus, self.__hops
        batch: list[tuple[int, Message]] = []
        count = 0
        while count < MAX_READ_BATCH:
            frames = bus.poll_frames()
            if frames is None:
                break
            count += 1
            popped, popped_cpu = (time.monotonic_ns(), time.thread_time_ns()) if timer is not None else (0, 0)
            decoded = bus.decode(frames)
            if decoded is not None and timer is not None:
                topic = type(decoded.msg).TOPIC
                validate = bus.decoder.last_validate_ns
                timer.add(topic, "transit", popped - decoded.sent_ns)
                timer.add(topic, "decode", time.thread_time_ns() - popped_cpu - validate)
                timer.add(topic, "validate", validate)
            msg = self.__accept(decoded)
            if msg is not None:
                batch.append((decoded.sent_ns, msg))
        if self.__send_time_order and len(batch) > 1:
            batch.sort(key=lambda sent: sent[0])  # stable: one sender's frames keep their order
        self.__read.extend(msg for _, msg in batch)
        return count

    def __accept(self, decoded) -> Message | None:
        """Handle runtime messages of a decoded frame (None: dropped); the message for on_message, or None."""
        if decoded is None:
            self._note_drop()
            return None
        msg = decoded.msg
        if isinstance(msg, Heartbeat):
            self.__peers_seen[msg.actor] = time.monotonic()
            self.__peer_beat.set()
        elif isinstance(msg, Shutdown):
            return msg  # in its turn: what was sent before it is handled first
        return msg if isinstance(msg, self.__handled_types) else None

    def __run_handler(self, msg: Message) -> None:
        """Run on_message(msg) eagerly; if it suspends (or fails), a task finishes it while reading is off."""
        try:
            coro = self.on_message(msg)
            if coro is None:
                return  # a plain (non-async) handler
            awaited = coro.send(None)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001 - the failure hook decides
            self.__set_busy(True)
            self.spawn(self.__fail(exc, msg), "on_failure")
            return
        self.__set_busy(True)
        self.spawn(self.__finish_handler(coro, awaited, msg), "handler")

    def __set_busy(self, busy: bool) -> None:
        self.__busy = busy
        self.__update_reader()

    def pause_receiving(self) -> None:
        """Stop reading the bus until resume_receiving(): frames queue in ZMQ (up to bus.recv_hwm, then
        the broker drops them, seen as sequence gaps). For an actor that only wants the newest state
        after a long piece of work (the reasoner while it generates) and should not wake per message."""
        self.__paused = True
        self.__update_reader()

    def resume_receiving(self) -> None:
        """Read again; everything that queued meanwhile is handled now, in order."""
        self.__paused = False
        self.__update_reader()

    def __update_reader(self) -> None:
        # The loop's epoll is level-triggered on ZMQ_FD: while nobody reads (a suspended handler,
        # a pause), stop watching the fd instead of spinning on it.
        should_read = not (self.__busy or self.__paused or self.__stopping.is_set())
        if should_read == self.__reading:
            return
        loop = asyncio.get_running_loop()
        self.__reading = should_read
        if should_read:
            loop.add_reader(self.__bus.fd, self._on_readable)
            loop.call_soon(self._on_readable)  # what queued while not reading
        else:
            loop.remove_reader(self.__bus.fd)

    async def __finish_handler(self, coro, awaited, msg: Message) -> None:
        """Drive a suspended handler to its end (what a Task would do), then resume draining."""
        try:
            while True:
                if awaited is None:
                    await asyncio.sleep(0)  # a bare yield (asyncio.sleep(0) inside the handler)
                else:
                    # The handler yielded the future it awaits. Wait for it without awaiting it a second time
                    # (that would mean resetting asyncio's private "blocking" flag the handler's await set);
                    # resumed, the handler reads the future's result or exception itself.
                    try:
                        await asyncio.wait((awaited,))
                    except asyncio.CancelledError:  # this task was cancelled (a stop): so is what the handler awaits
                        awaited.cancel()
                        coro.close()
                        raise
                try:
                    awaited = coro.send(None)
                except StopIteration:
                    break
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            await self.on_failure(exc, msg)
        self.__set_busy(False)

    async def __fail(self, exc: Exception, msg: Message) -> None:
        await self.on_failure(exc, msg)
        self.__set_busy(False)

    async def run(self) -> int:
        """Start, serve until stopped, stop. Returns the process exit code."""
        self.__exit_code = 0
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self.request_stop, "sigterm")
        loop.add_signal_handler(signal.SIGINT, lambda: None)  # the supervisor stops us in order
        try:
            await self.on_start()
        except Exception as exc:  # noqa: BLE001
            self.log.error("start_failed", exc_info=exc)
            return 1
        if self.freeze_heap:
            # What the imports and on_start built (torch, a model, the data) lives to the end. Frozen, a full collection
            # no longer walks its ~200,000 objects: that took 50-100 ms in the middle of a step (the decision loop's p99).
            gc.freeze()
            self.log.info("heap_frozen", objects=gc.get_freeze_count())
        self.__handled_types = tuple(self.subscriptions)
        self.__bus.subscribe([*(self.subscribe_topics or self.subscriptions), Shutdown, Heartbeat])
        self.__update_reader()  # start reading (and handle what queued up during on_start)
        # The first heartbeat says "started": peers may wait for it (wait_for_peers), and the
        # supervisor gives a starting actor startup_grace_secs before it expects one.
        self.spawn(self._heartbeat_loop(), "heartbeat")
        self.log.info("actor_started", pid=os.getpid(), subscriptions=[m.TOPIC for m in self.subscriptions])
        self.spawn(self._stats_loop(), "stats")
        await self.__stopping.wait()
        try:
            await asyncio.wait_for(self.finish_in_flight(), timeout=STOP_TIMEOUT_SECS)
        except asyncio.TimeoutError:
            self.log.warning("finish_in_flight_timeout", secs=STOP_TIMEOUT_SECS)
        except Exception as exc:  # noqa: BLE001
            self.log.error("finish_in_flight_failed", exc_info=exc)
        self.__update_reader()  # stopping: no more reading
        await self._stop()
        return self.__exit_code

    async def finish_in_flight(self) -> None:
        """A stop was requested and messages are still read: an actor may wait here (bounded) for an answer already on
        its way, e.g. the paper env for the verdict on its last bar. Default: nothing."""

    async def _stop(self) -> None:
        self.log.info("actor_stopping", reason=self.__stop_reason)
        try:
            await asyncio.wait_for(self.on_stop(), timeout=STOP_TIMEOUT_SECS * 3)
        except Exception as exc:  # noqa: BLE001
            self.log.error("stop_failed", exc_info=exc)
            self.__exit_code = self.__exit_code or 1
        stats = self.stats()
        self.__bus.publish(stats)
        self.log.info("actor_stopped", **{**stats.counters, **stats.gauges})
        if self.__hops is not None:
            self.log.info("hop_profile", hops=self.__hops.summary())
        for task in list(self.__tasks):
            task.cancel()
        if self.__tasks:
            await asyncio.wait(self.__tasks, timeout=STOP_TIMEOUT_SECS)
        self.__worker.shutdown(wait=True, cancel_futures=True)
