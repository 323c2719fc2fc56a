"""The typed configuration: the runtime's own sections and the root ``Config``.

Each actor package owns its section struct(s) in ``actors/<x>/config.py``; the root
``Config`` composes them. All structs are frozen, keyword-only and forbid unknown
fields, so a typo in a key is an error that names it.
"""

from __future__ import annotations

import importlib

import msgspec

STRUCT_OPTIONS = dict(frozen=True, kw_only=True, forbid_unknown_fields=True)


class RunConfig(msgspec.Struct, **STRUCT_OPTIONS):
    name: str = ""
    """Run id prefix; empty = mode name. The run directory is <runs_dir>/<timestamp>-<name>."""
    runs_dir: str = "runs"
    """Where run directories are created (relative to the working directory)."""
    seed: int = 0
    """Seed for everything that is random (data, envs, policy, reasoner sampling)."""
    duration_secs: float = 0.0
    """Stop the runtime after this many seconds; 0 = until done or Ctrl-C."""


class BusConfig(msgspec.Struct, **STRUCT_OPTIONS):
    transport: str = "ipc"
    """ipc (Unix sockets in a short directory) | tcp."""
    host: str = "127.0.0.1"
    """Address the broker binds for tcp; anything but loopback needs CURVE keys (later issue)."""
    xsub_port: int = 0
    """tcp port publishers connect to; 0 = pick a free one."""
    xpub_port: int = 0
    """tcp port subscribers connect to; 0 = pick a free one."""
    socket_dir: str = ""
    """Directory for ipc sockets; empty = a short one under /tmp (a socket path has at most 107 bytes)."""
    max_message_bytes: int = 64 * 1024 * 1024
    """Frames larger than this are dropped unread (ZMQ_MAXMSGSIZE) and never unpacked."""
    send_hwm: int = 10000
    """High-water mark of outgoing queues (messages); beyond it PUB drops, which shows as sequence gaps."""
    recv_hwm: int = 10000
    """High-water mark of incoming queues (messages)."""

    def __post_init__(self) -> None:
        if self.transport not in ("ipc", "tcp"):
            raise ValueError(f"bus.transport must be 'ipc' or 'tcp', got {self.transport!r}")
        if self.transport == "tcp" and not _is_loopback(self.host):
            raise ValueError(
                f"bus.host {self.host!r} is not a loopback address: a bus reachable from other hosts needs CURVE keys, "
                "which this build does not set up yet; use 127.0.0.1"
            )


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class RuntimeConfig(msgspec.Struct, **STRUCT_OPTIONS):
    actors: list[str] = msgspec.field(default_factory=lambda: ["env", "policy", "reasoner", "fusion", "risk"])
    """Actors to start, each in its own process: a name X means actors/X/actor.py; a dotted path names a module."""
    heartbeat_interval_secs: float = 1.0
    """How often every actor publishes sys.heartbeat."""
    heartbeat_liveness: int = 5
    """An actor is silent (and restarted) after interval x liveness seconds without a heartbeat."""
    startup_grace_secs: float = 30.0
    """Time a (re)started actor gets before its first heartbeat is required."""
    stats_interval_secs: float = 5.0
    """How often every actor publishes sys.stats (counters) and logs them."""
    max_restarts: int = 3
    """More restarts than this within restart_window_secs stops the runtime with an error."""
    restart_window_secs: float = 60.0
    restart_backoff_secs: float = 0.5
    """First restart delay; doubles with each restart of the same actor, up to restart_backoff_max_secs."""
    restart_backoff_max_secs: float = 10.0
    shutdown_grace_secs: float = 5.0
    """After sys.shutdown, how long actors get to exit before SIGTERM (then as long again before SIGKILL)."""


class LoggingConfig(msgspec.Struct, **STRUCT_OPTIONS):
    level: str = "info"
    """debug | info | warning | error (JSON-lines files and console)."""
    console: str = "auto"
    """auto (readable console on a terminal) | on | off: the supervisor's console output."""
    rate_limit_secs: float = 5.0
    """A repeated warning of one kind (e.g. a malformed frame) is logged at most once per this many seconds."""

    def __post_init__(self) -> None:
        if self.level not in ("debug", "info", "warning", "error"):
            raise ValueError(f"logging.level must be debug|info|warning|error, got {self.level!r}")
        if self.console not in ("auto", "on", "off"):
            raise ValueError(f"logging.console must be auto|on|off, got {self.console!r}")


class EmptySection(msgspec.Struct, **STRUCT_OPTIONS):
    """A section whose actor is not installed yet: it accepts no keys."""


# section name -> "module:Struct". Order is the order of config/default.toml.
SECTIONS: dict[str, str] = {
    "run": "config.schema:RunConfig",
    "bus": "config.schema:BusConfig",
    "runtime": "config.schema:RuntimeConfig",
    "logging": "config.schema:LoggingConfig",
    "instrument": "actors.env.config:InstrumentConfig",
    "account": "actors.env.config:AccountConfig",
    "data": "actors.env.config:DataConfig",
    "env": "actors.env.config:EnvConfig",
    "policy": "actors.policy.config:PolicyConfig",
    "reasoner": "actors.reasoner.config:ReasonerConfig",
    "fusion": "actors.fusion.config:FusionConfig",
    "risk": "actors.risk.config:RiskConfig",
    "lora": "actors.lora.config:LoraConfig",
    "feed": "actors.feed.config:FeedConfig",
}


def section_struct(spec: str) -> type[msgspec.Struct]:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return EmptySection
    return getattr(module, attr)


def _build_config_type() -> type[msgspec.Struct]:
    fields = []
    for name, spec in SECTIONS.items():
        struct = section_struct(spec)
        fields.append((name, struct, msgspec.field(default_factory=struct)))
    return msgspec.defstruct("Config", fields, module=__name__, **STRUCT_OPTIONS)


Config = _build_config_type()
"""The root configuration: one attribute per section (config.env.n_envs, config.bus.transport, ...)."""
