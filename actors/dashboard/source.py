"""Where the dashboard's data comes from: a running runtime's bus, and a run's logs (live or finished).

``resolve_target`` turns what the user gave (``--run DIR`` or ``--bus BUS_JSON``) into a target, or a
``DashboardError`` that says what to give instead. ``Reader`` runs in one thread: it follows the newest
run directory under the target (a job such as main writes one per stage), reads its logs, and
subscribes to its bus while the runtime is alive.

The loop's hot topics (env.obs, policy.proposal, fusion.decision, risk.verdict) can arrive thousands of
times a second in a full-speed run. The reader decodes at most ``[dashboard] hot_steps_per_sec`` of each hot
topic per second of wall time since its last pass, the newest ones: a fast loop is shown as a sampled price line at
a bounded cost, and a paced run step by step, even when a busy machine delays the reader's passes. A loop more than
3 times that fast is not even received in full: the reader subscribes its topics for ``sample_window_ms`` a pass
and unsubscribes, so the broker, which every hop of the loop crosses, copies few frames to the dashboard. The runtime
never waits for the dashboard: a slow or absent reader only fills its own queue at the broker, which
drops beyond the high-water mark.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import zmq

from actors.dashboard.cells import PROGRESS_FILE
from actors.dashboard.config import DashboardConfig, RunView
from actors.dashboard.model import AccountRules, MarketHistory
from actors.dashboard.report import report_file
from actors.dashboard.state import DashboardState
from bus.broker import ADDRESSES_FILE, BusAddresses
from bus.messages import (EnvEpisode, EnvHindsight, EnvObs, EnvOutcome, Event, FusionDecision, LlmThought, LoraAdapter, LoraRound,
                          PolicyProposal, PolicyUpdate, RiskVerdict)
from runtime.rundir import CONFIG_FILE

SHOWN = (EnvObs, EnvOutcome, EnvEpisode, EnvHindsight, PolicyProposal, PolicyUpdate, LlmThought, FusionDecision, RiskVerdict,
         LoraRound, LoraAdapter, Event)
"""The messages the dashboard shows (besides sys.*), each handled by ``DashboardState._on_<type>``."""
TOPICS = ("sys.", *(message.TOPIC for message in SHOWN))
HOT_TOPICS = tuple(message.TOPIC for message in (EnvObs, PolicyProposal, FusionDecision, RiskVerdict))
HOT = tuple(topic.encode() for topic in HOT_TOPICS)
"""The decision loop's topics, decoded at most ``DashboardConfig.hot_steps_per_sec`` a second each (the newest of a pass): a
loop up to that rate keeps every step, so each trade's decisions are there when it is clicked; a faster one is sampled, and
the reader's cost stays bounded (a pass that decoded everything at 60 steps/s x 4 envs took 4-5% of a core)."""
SAMPLE_ABOVE = 3.0
"""A loop topic arriving faster than this x hot_steps_per_sec: the reader receives the loop's topics in a window per pass."""
RECEIVE_ALL_BELOW = 1.5
"""... and slower than this x hot_steps_per_sec (measured in the windows): every frame again."""
PASS_SECS = 0.2
"""How often the reader drains the socket: five passes a second keep the page's 0.5 s updates fresh."""
LOG_EVERY_PASSES = 5
"""The logs are read once a second (each read opens every actor's log file)."""


class DashboardError(RuntimeError):
    """What the user asked the dashboard to open cannot be opened; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    root: Path
    """A run directory, or a directory of stage run directories (bin/run main), to follow."""
    bus: BusAddresses | None = None
    """--bus: the addresses to attach to, whatever the directories say."""
    follow: bool = False
    """Wait for a run to appear under root and follow each new stage (bin/run ... --dashboard)."""


def resolve_target(run: Path | None, bus: Path | None, follow: bool = False, runs_dir: Path = Path("runs")) -> Target:
    if bus is not None:
        file = bus / ADDRESSES_FILE if bus.is_dir() else bus
        if not file.is_file():
            raise DashboardError(f"{bus}: no such bus.json (give the bus.json of a running runtime, or --run RUN_DIR)")
        try:
            addresses = BusAddresses.read(file.parent) if file.name == ADDRESSES_FILE else _read_addresses(file)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DashboardError(f"{file}: not a bus.json ({exc})") from None
        return Target(file.parent, addresses)
    if run is None:
        from runtime.rundir import newest_run_dir

        run = newest_run_dir(runs_dir)
        if run is None:
            raise DashboardError(f"no run directory found in {runs_dir}; give --run RUN_DIR or --bus BUS_JSON")
    if follow:
        Path(run).mkdir(parents=True, exist_ok=True)
        return Target(Path(run).resolve(), follow=True)
    if not Path(run).is_dir():
        raise DashboardError(f"{run}: no such run directory (bin/run prints the one it makes: 'run directory: ...')")
    if not run_dirs(Path(run)) and not (Path(run) / PROGRESS_FILE).is_file():
        raise DashboardError(f"{run}: not a run directory (no {CONFIG_FILE}, no stage directory holding one, no {PROGRESS_FILE})")
    return Target(Path(run).resolve())


def _read_addresses(file: Path) -> BusAddresses:
    data = json.loads(file.read_text())
    return BusAddresses(xsub=data["xsub"], xpub=data["xpub"], server_key=data.get("server_key", ""),
                        client_key_file=data.get("client_key_file", ""))


def run_dirs(root: Path) -> list[Path]:
    """The run directories at ``root``: itself, or its stage directories (bin/run main), oldest first."""
    if (root / CONFIG_FILE).is_file():
        return [root]
    stages = [p for p in root.iterdir() if p.is_dir() and (p / CONFIG_FILE).is_file()] if root.is_dir() else []
    return sorted(stages, key=lambda p: ((p / CONFIG_FILE).stat().st_mtime, p.name))


def run_mode(run_dir: Path) -> str:
    """The run's mode as its config says it (env.mode, and run.name when set), for the health panel."""
    try:
        import tomllib

        config = tomllib.loads((run_dir / CONFIG_FILE).read_text())
    except (OSError, ValueError):
        return "?"
    env_mode = config.get("env", {}).get("mode", "?")
    learn = config.get("policy", {}).get("learn", None)
    name = config.get("run", {}).get("name", "")
    mode = "train" if env_mode == "train" and learn else env_mode
    return f"{mode} ({name})" if name else f"{mode} ({run_dir.name})"


def run_view(run_dir: Path) -> RunView | None:
    """What the dashboard reads of the run's config (report folders, account rules with presets resolved); None
    when it is unreadable."""
    import tomllib

    import msgspec

    try:
        return msgspec.convert(tomllib.loads((run_dir / CONFIG_FILE).read_text()), RunView)
    except (OSError, ValueError, msgspec.ValidationError):
        return None


def account_rules(run: RunView | None) -> AccountRules:
    """The run's account rules; empty rules when its config was unreadable (no start balance)."""
    if run is None:
        return AccountRules()
    account = run.account
    return AccountRules(account.name, account.start_balance, account.profit_target, account.daily_loss_limit)


BarsOf = Callable[[Path], "tuple[MarketHistory | None, str]"]
"""Rebuilds a finished run's bars, or says why not (actors/jobs/dashboard.py ``market_history``: it needs the env's data
and the run's whole config, which only a job may load). Without one, a finished run's price chart stays empty."""


class LogReader:
    """New JSON lines of every actor log of one run directory (the same reading as bin/tail)."""

    def __init__(self, run_dir: Path) -> None:
        from runtime.tail import LogFollower

        self.follower = LogFollower(run_dir / "logs")

    def read(self) -> list[dict[str, Any]]:
        return self.follower.read_new()


class BusReader:
    """A SUB socket on the broker; ``drain`` decodes what a pass needs (see the module note on hot topics)."""

    def __init__(self, addresses: BusAddresses, sender: str, settings: DashboardConfig = DashboardConfig()) -> None:
        from bus.client import SyncBus

        self.settings = settings
        self.client = SyncBus(addresses, sender=sender, hwm=2000)
        self.client.subscribe(*TOPICS, settle_secs=0)
        self.last_message = 0.0
        self.last_drain = time.monotonic()
        self.frames = 0
        self.sampling = False
        """True while the loop is fast: its topics are received only in a window per pass (see SAMPLE_ABOVE)."""

    def wait_first(self, timeout_secs: float) -> bool:
        """True when any frame arrives within ``timeout_secs`` (actors beat every second)."""
        if self.client.poller.poll(int(timeout_secs * 1000)):
            self.last_message = time.monotonic()
            return True
        return False

    def drain(self, state: DashboardState, limit: int = 50_000) -> int:
        now = time.monotonic()
        rate = self.settings
        since_last = now - self.last_drain
        keep = min(rate.hot_max, max(rate.hot_keep, math.ceil(rate.hot_steps_per_sec * since_last)))
        self.last_drain = now
        window = self._open_window()
        hot, other, counts, received = self._receive(keep, limit)
        if window:
            self.client.unsubscribe(*HOT_TOPICS)
        self._choose_sampling(max(counts.values(), default=0) / (window or max(since_last, 1e-3)))
        if not received:
            return 0
        self.frames += received
        self.last_message = time.monotonic()
        # Thoughts and outcomes first, then the loop in hop order, so a verdict finds its proposal and fusion decision.
        for frames in other + [f for topic in HOT for f in hot[topic]]:
            decoded = self.client.decode(frames)
            if decoded is not None:
                state.on_message(decoded.msg, decoded.sender)
        state.health.transport.dropped_frames = max(state.health.transport.dropped_frames, sum(self.client.dropped.values()))
        return received

    def _open_window(self) -> float:
        """Sampling a fast loop: subscribe its topics and let them arrive for the window; its length in seconds (0: not sampling)."""
        if not self.sampling:
            return 0.0
        self.client.subscribe(*HOT_TOPICS, settle_secs=0)
        window = self.settings.sample_window_ms / 1000
        time.sleep(window)
        return window

    def _receive(self, keep: int, limit: int) -> tuple[dict[bytes, deque[list[bytes]]], list[list[bytes]], dict[bytes, int], int]:
        """Everything queued: the newest ``keep`` frames of each loop topic, every other frame, the loop topics' counts."""
        hot: dict[bytes, deque[list[bytes]]] = {topic: deque(maxlen=keep) for topic in HOT}
        counts = dict.fromkeys(HOT, 0)
        other: list[list[bytes]] = []
        sock, received = self.client.sub, 0
        while received < limit:
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
            received += 1
            queue = hot.get(frames[0]) if frames else None
            if queue is None:
                other.append(frames)
            else:
                queue.append(frames)
                counts[frames[0]] += 1
        return hot, other, counts, received

    def _choose_sampling(self, hot_rate: float) -> None:
        """Switch between receiving every loop frame and a window per pass, by the busiest loop topic's rate."""
        bound = self.settings.hot_steps_per_sec
        if not self.sampling and self.settings.sample_window_ms > 0 and hot_rate > SAMPLE_ABOVE * bound:
            self.client.unsubscribe(*HOT_TOPICS)
            self.sampling = True
        elif self.sampling and hot_rate < RECEIVE_ALL_BELOW * bound:
            self.client.subscribe(*HOT_TOPICS, settle_secs=0)
            self.sampling = False

    def close(self) -> None:
        self.client.close()


class Reader:
    """The dashboard's one reader thread: follows the target's newest run, its logs and, while alive, its bus."""

    def __init__(self, target: Target, state: DashboardState, settings: DashboardConfig = DashboardConfig(), *,
                 bars: BarsOf | None = None, on_error: Callable[[str], None] | None = None) -> None:
        self.target, self.state, self.settings, self.bars = target, state, settings, bars
        self.on_error = on_error
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="dashboard-reader", daemon=True)
        self.run_dir: Path | None = None
        self.logs: LogReader | None = None
        self.run = RunView()
        """What the dashboard reads of the followed run's config (its report folders, its account rules)."""
        self.bus: BusReader | None = None
        self._passes = 0
        self._tried_market: tuple[Path, float] | None = None
        """The report (and its mtime) whose bars were last rebuilt, so a finished run's bars are rebuilt once."""
        self._tried_bus: tuple[Path, float] | None = None
        """The bus.json (and its mtime) last found dead, so a finished run is not re-tried every pass."""

    # ------------------------------------------------------------------ lifecycle

    def check_bus(self) -> None:
        """--bus: attach now, or raise DashboardError when nothing speaks on it (a dead runtime)."""
        assert self.target.bus is not None
        self.bus = self._attach(self.target.bus)
        if self.bus is None:
            raise DashboardError(f"no message on the bus {self.target.bus.xpub} within {self.settings.attach_timeout_secs:g} s: "
                                 f"its runtime is not running (for a finished run use --run {self.target.root})")
        self._open_run(self.target.root, "live bus")

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout=5)
        if self.bus is not None:
            self.bus.close()
            self.bus = None

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        while not self.stop_event.is_set():
            try:
                self._pass()
            except Exception as exc:  # noqa: BLE001 - the page must say what broke, not go blank
                self.state.set_source(f"reader error: {exc}")
                if self.on_error is not None:
                    self.on_error(str(exc))
                self.stop_event.wait(1.0)
            self.stop_event.wait(PASS_SECS)

    def _pass(self) -> None:
        if self.target.bus is None:
            self._follow_newest()
        self._passes += 1
        if self.logs is not None and self.run_dir is not None and self._passes % LOG_EVERY_PASSES == 1:
            for record in self.logs.read():
                self.state.on_log(record)
                if record.get("event") == "report_written":  # a backtest just finished: its trades with their chains
                    self.state.on_report(self.run_dir, self.run)
        if self._passes % LOG_EVERY_PASSES == 1:  # a cell job's progress file (at its root; a stage's own, if any)
            self.state.cells.poll([self.target.root, *([self.run_dir] if self.run_dir is not None else [])])
        if self.bus is None and self.run_dir is not None:
            self._replay_market(self.run_dir)
        if self.bus is not None:
            if not self.bus.drain(self.state) and time.monotonic() - self.bus.last_message > self.settings.silent_secs:
                self.bus.close()
                self.bus = None
                self.state.set_source("logs (runtime stopped)")

    def _follow_newest(self) -> None:
        runs = run_dirs(self.target.root)
        if not runs:
            self.state.set_source("waiting for the runtime")
            return
        newest = runs[-1]
        if newest != self.run_dir:
            if self.bus is not None:
                self.bus.close()
                self.bus = None
            self._open_run(newest, "logs (finished run)")
        if self.bus is None:
            self._try_bus(newest)

    def _try_bus(self, run_dir: Path) -> None:
        file = run_dir / ADDRESSES_FILE
        if not file.is_file():
            return
        key = (file, file.stat().st_mtime)
        if self._tried_bus == key:
            return
        self._tried_bus = key
        try:
            addresses = BusAddresses.read(run_dir)
        except (OSError, ValueError, KeyError):
            return
        # A bus.json that was just written may belong to a broker still starting: wait the full timeout.
        self.bus = self._attach(addresses)
        if self.bus is not None:
            self._tried_bus = None
            self.state.set_source("live bus")

    def _replay_market(self, run_dir: Path) -> None:
        """A finished run (no live bus) with a report: its bars on the price chart, once per report."""
        report = report_file(run_dir, self.run)
        if report is None or self.bars is None:
            return
        key = (report, report.stat().st_mtime)
        if self._tried_market == key:
            return
        self._tried_market = key
        if self.state.price.rows:  # the bus drew the run while it was alive
            return
        history, why = self.bars(run_dir)
        if history is not None:
            self.state.on_market(history)
        else:
            self.state.note("report", "dashboard", why)

    def _attach(self, addresses: BusAddresses) -> BusReader | None:
        reader = BusReader(addresses, sender="dashboard", settings=self.settings)
        if reader.wait_first(self.settings.attach_timeout_secs):
            return reader
        reader.close()
        return None

    def _open_run(self, run_dir: Path, source: str) -> None:
        self.run_dir = run_dir
        self.state.attach(str(run_dir), run_mode(run_dir), source)
        view = run_view(run_dir)
        self.run = view or RunView()
        self.state.set_rules(account_rules(view))
        self.logs = LogReader(run_dir)
        self.state.on_report(run_dir, self.run)
