"""The runtime's own settings: run, bus, runtime and logging, the sections every process reads.

An actor's settings extend ``RuntimeSettings`` with the sections it reads (its own and the shared vocabulary);
the root ``Config`` of actors/jobs/config.py extends it with every section. Decoding a run directory's config.toml
into a subclass ignores the sections it does not list (the job validated the whole tree before writing it), so
the runtime starts an actor with its own settings without importing actors/jobs/config.py or any actor's section.
Imports nothing but msgspec, the stdlib and config.checks: the actor names below are defaults (data), written again in
config/default.toml; tests/runtime/test_placement.py holds them to the actor packages.
"""

from __future__ import annotations

import msgspec

from config.checks import ConfigSection, Count, Port, PositiveCount, PositiveSecs, Secs


class RunConfig(ConfigSection, kw_only=True):
    name: str = ""
    """Run id prefix; empty = mode name. The run directory is <runs_dir>/<timestamp>-<name>."""
    runs_dir: str = "runs"
    """Where run directories are created (relative to the working directory)."""
    trials_path: str = ""
    """The trials ledger every train, evaluate, sweep and main run appends to (actors/jobs/evaluation/ledger.py), one
    JSON line per configuration tried; the deflated Sharpe counts them all. Empty = <runs_dir>/trials.jsonl."""
    seed: Count = 0
    """Seed for everything that is random (data, envs, policy, reasoner sampling)."""
    duration_secs: Secs = 0.0
    """Stop the runtime after this many seconds; 0 = until done or Ctrl-C."""
    reproducible: bool = False
    """One seed, one result (docs/reliability.md, "Reproducible runs"): the policy learns synchronously (the loop waits
    for each PPO update), a step the rollout cannot store is an error, training stops at an exact step, deadlines wait
    instead of changing the data, torch runs deterministic kernels. On in the evidence jobs (train, backtest, main,
    evaluate, ablation, sweep: the REPRODUCIBLE preset); off in paper and live trading, which keep their asynchrony."""


class BusConfig(ConfigSection, kw_only=True):
    transport: str = "ipc"
    """ipc (Unix sockets in a short directory) | tcp."""
    host: str = "127.0.0.1"
    """Address the broker binds for tcp; anything but loopback needs the CURVE keys below."""
    xsub_port: Port = 0
    """tcp port publishers connect to; 0 = pick a free one."""
    xpub_port: Port = 0
    """tcp port subscribers connect to; 0 = pick a free one."""
    socket_dir: str = ""
    """Directory for ipc sockets; empty = a short one under /tmp (a socket path has at most 107 bytes)."""
    direct: bool = True
    """ipc only: each actor publishes on its own socket and subscribers connect to every actor's (no broker hop in
    the decision loop); the broker still carries outside publishers. Across lanes a message sent earlier can arrive
    later, so a message that depends on another waits for it (bounded): fusion for the thought an env.obs names,
    the env for the fusion decision a verdict follows, fusion's learning for the verdict an outcome follows."""
    max_message_bytes: PositiveCount = 64 * 1024 * 1024
    """Frames larger than this are dropped unread (ZMQ_MAXMSGSIZE) and never unpacked."""
    send_hwm: Count = 10000
    """High-water mark of outgoing queues (messages); beyond it PUB drops, which shows as sequence gaps."""
    recv_hwm: Count = 10000
    """High-water mark of incoming queues (messages)."""
    curve_server_secret_key_file: str = ""
    """CURVE (tcp only): the broker's key pair, a ``.key_secret`` file from ``bin/run keys``; empty = no CURVE."""
    curve_authorized_clients_dir: str = ""
    """CURVE: directory of the client public keys (``*.key``) the broker lets in; any other client is rejected and logged."""
    curve_client_secret_key_file: str = ""
    """CURVE: the key pair (``.key_secret``) this runtime's actors and tools connect with; its ``.key`` must be authorised."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.transport not in ("ipc", "tcp"):
            raise ValueError(f"bus.transport must be 'ipc' or 'tcp', got {self.transport!r}")
        curve_keys = {"curve_server_secret_key_file": self.curve_server_secret_key_file,
                      "curve_authorized_clients_dir": self.curve_authorized_clients_dir,
                      "curve_client_secret_key_file": self.curve_client_secret_key_file}
        if any(curve_keys.values()):
            missing = [f"bus.{key}" for key, value in curve_keys.items() if not value]
            if missing:
                raise ValueError(f"{missing[0]} is not set: CURVE needs all of {', '.join('bus.' + k for k in curve_keys)} "
                                 "(make the files with bin/run keys)")
            if self.transport != "tcp":
                raise ValueError("bus.transport must be 'tcp' with CURVE keys (ipc stays on this host, behind file permissions)")
        if self.transport == "tcp" and not is_loopback(self.host) and not self.curve:
            raise ValueError(
                f"bus.host {self.host!r} is not a loopback address: a bus reachable from other hosts needs CURVE keys "
                "(bin/run keys, then bus.curve_server_secret_key_file, bus.curve_authorized_clients_dir and "
                "bus.curve_client_secret_key_file); or use 127.0.0.1"
            )

    @property
    def curve(self) -> bool:
        """CURVE authentication and encryption is on (the key files are checked when the broker starts)."""
        return bool(self.curve_server_secret_key_file)


def is_loopback(host: str) -> bool:
    """localhost or a loopback IP (127.0.0.0/8, ::1): an address only this machine can reach."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


CPU_PLACEMENTS = ("split", "off")
"""The values of runtime.cpu_placement (runtime/placement.py)."""


class RuntimeConfig(ConfigSection, kw_only=True):
    actors: list[str] = msgspec.field(default_factory=lambda: ["env", "policy", "reasoner", "fusion", "risk"])
    """Actors to start, each in its own process: a name X means actors/X/actor.py; a dotted path names a module
    (the default: the decision loop, actors.DECISION_LOOP)."""
    heartbeat_interval_secs: PositiveSecs = 1.0
    """How often every actor publishes sys.heartbeat."""
    heartbeat_liveness: PositiveCount = 5
    """A heartbeat is late after interval x liveness seconds; a late actor whose process made no progress over that
    window (stopped, or asleep with nothing sent) is silent and restarted; one that computes is slow and left running
    (runtime/liveness.py)."""
    startup_grace_secs: Secs = 30.0
    """Time a (re)started actor gets before its first heartbeat is due (then judged as a late one); a restart gets at
    least 3x what the actor's previous start took."""
    startup_grace_by_actor: dict[str, float] = msgspec.field(default_factory=lambda: {"reasoner": 60.0, "lora": 120.0})
    """Actor short name -> its own start-up grace in seconds, for actors that load more: the reasoner maps its GGUF,
    lora its dequantised base model."""
    max_slow_secs: PositiveSecs = 120.0
    """A slow actor (late heartbeat, process still computing) is restarted anyway after this long past its deadline."""
    stats_interval_secs: PositiveSecs = 5.0
    """How often every actor publishes sys.stats (counters) and logs them."""
    max_restarts: Count = 3
    """More restarts than this within restart_window_secs stops the runtime with an error."""
    restart_window_secs: PositiveSecs = 60.0
    restart_backoff_secs: Secs = 0.1
    """First restart delay; doubles with each restart of the same actor, up to restart_backoff_max_secs."""
    restart_backoff_max_secs: Secs = 10.0
    spare_actors: list[str] = msgspec.field(default_factory=lambda: ["policy", "env", "fusion", "risk"])
    """Actors (short names) that keep a spare process with their imports and warm_up done, so a restart skips them
    (the decision loop's four: each is back within 2 s of a kill -9, bin/run chaos)."""
    spare_start_delay_secs: Secs = 20.0
    """Spares start this long after every actor first sent a heartbeat (a short run or a test never pays their
    imports); replacements for used ones start at once. 0 = at once."""
    shutdown_grace_secs: Secs = 5.0
    """After sys.shutdown, how long actors get to exit before SIGTERM (then as long again before SIGKILL)."""
    cpu_placement: str = "split"
    """split (Linux, 2+ CPUs): the decision loop's processes on every CPU but the last llm_cpus, the reasoner on those
    (runtime/placement.py) | off: the scheduler places every process."""
    llm_cpus: PositiveCount = 1
    """split: how many CPUs (the last ones) the reasoner holds; give reasoner.n_threads at most this many."""
    loop_actors: list[str] = msgspec.field(default_factory=lambda: ["env", "policy", "fusion", "risk", "feed"])
    """split: actors (short names) on the decision loop's path (obs -> verdict, bar -> obs): their event-loop threads
    and the broker hold every CPU but the last llm_cpus; their worker threads run anywhere. An actor in neither list
    is not placed."""
    llm_actors: list[str] = msgspec.field(default_factory=lambda: ["reasoner"])
    """split: actors (short names) that compute with the LLM: they hold the last llm_cpus CPUs, worker threads too.
    A run that starts none of them places no process (the loop then gets every CPU)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        bad = {name: secs for name, secs in self.startup_grace_by_actor.items() if not secs >= 0}
        if bad:
            raise ValueError(f"runtime.startup_grace_by_actor: seconds must be >= 0, got {bad}")
        if self.cpu_placement not in CPU_PLACEMENTS:
            raise ValueError(f"runtime.cpu_placement must be one of {', '.join(CPU_PLACEMENTS)}, got {self.cpu_placement!r}")


class LoggingConfig(ConfigSection, kw_only=True):
    level: str = "info"
    """debug | info | warning | error (JSON-lines files and console)."""
    console: str = "auto"
    """auto (readable console on a terminal) | on | off: the supervisor's console output."""
    rate_limit_secs: Secs = 5.0
    """A repeated warning of one kind (e.g. a malformed frame) is logged at most once per this many seconds."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.level not in ("debug", "info", "warning", "error"):
            raise ValueError(f"logging.level must be debug|info|warning|error, got {self.level!r}")
        if self.console not in ("auto", "on", "off"):
            raise ValueError(f"logging.console must be auto|on|off, got {self.console!r}")


class RuntimeSettings(msgspec.Struct, frozen=True):  # not kw_only: a subclass's kw_only sections then follow these four
    """What the runtime and every actor's base class read; a subclass adds an actor's sections.

    Unknown sections are ignored (an actor's settings are read from the whole resolved tree); unknown keys
    inside a section are still errors, as each section struct forbids them."""

    run: RunConfig = msgspec.field(default_factory=RunConfig)
    bus: BusConfig = msgspec.field(default_factory=BusConfig)
    runtime: RuntimeConfig = msgspec.field(default_factory=RuntimeConfig)
    logging: LoggingConfig = msgspec.field(default_factory=LoggingConfig)
