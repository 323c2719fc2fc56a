"""The run directory: resolved config, bus addresses, one JSON-lines log per actor, pid files."""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, TypeVar

import msgspec

from bus.broker import ADDRESSES_FILE, BusAddresses
from config.tree import dump_toml, load_resolved
from runtime.settings import RuntimeSettings

CONFIG_FILE = "config.toml"
S = TypeVar("S", bound=RuntimeSettings)
JOIN_ADDRESS = re.compile(r"^tcp://(?P<host>\[[^\]]+\]|[^:/\s]+):(?P<xsub>\d+),(?P<xpub>\d+)$")
"""``tcp://HOST:XSUB_PORT,XPUB_PORT``: a remote broker named without its bus.json."""
WILDCARD_HOSTS = ("0.0.0.0", "*", "[::]", "::")


class JoinTargetError(ValueError):
    """The broker to join could not be found from what was given; the message says what to give."""


@dataclass(frozen=True)
class RunDir:
    path: Path

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def config_file(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    @property
    def pids(self) -> Path:
        return self.path / "pids"

    def log_file(self, actor: str) -> Path:
        return self.logs / f"{actor}.jsonl"

    def stderr_file(self, actor: str) -> Path:
        return self.logs / f"{actor}.stderr"

    def pid_file(self, actor: str) -> Path:
        return self.pids / f"{actor}.pid"

    def write_pid(self, actor: str, pid: int) -> None:
        self.pid_file(actor).write_text(f"{pid}\n")

    def load_settings(self, settings_type: type[S]) -> S:
        """The resolved config, read as ``settings_type`` (an actor's settings; other sections ignored)."""
        return load_resolved(self.config_file, settings_type)


def create_run_dir(config: RuntimeSettings | Mapping[str, Any], mode: str, run_dir: str | Path | None = None) -> RunDir:
    """Create ``run_dir`` (or ``<runs_dir>/<timestamp>-<name>``) and write the resolved config there: the
    validated root Config of a job, or a merged tree of sections (a test's, validated as each actor starts)."""
    if run_dir is None:
        run = (config if isinstance(config, RuntimeSettings) else msgspec.convert(dict(config), RuntimeSettings)).run
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = run.name or mode
        run_dir = Path(run.runs_dir) / f"{stamp}-{name}-{secrets.token_hex(2)}"
    path = Path(run_dir).resolve()
    path.mkdir(parents=True, exist_ok=True)
    rd = RunDir(path)
    rd.logs.mkdir(exist_ok=True)
    rd.pids.mkdir(exist_ok=True)
    tmp = rd.config_file.with_suffix(".tmp")
    tmp.write_text(dump_toml(config))
    os.replace(tmp, rd.config_file)
    return rd


def newest_run_dir(runs_dir: str | Path = "runs") -> Path | None:
    """The most recently created run directory (by its config file's time), or None."""
    root = Path(runs_dir)
    if not root.is_dir():
        return None
    candidates = [p for p in root.iterdir() if (p / CONFIG_FILE).is_file()]
    return max(candidates, key=lambda p: (p / CONFIG_FILE).stat().st_mtime, default=None)


def join_addresses(target: str, server_key: str = "") -> BusAddresses:
    """The addresses of a broker on another host, from ``target``: its run directory's bus.json (a copy of the
    file, or a directory holding one) or ``tcp://HOST:XSUB_PORT,XPUB_PORT``. ``server_key`` is the broker's
    CURVE public key (z85 text or a ``server.key`` file); bus.json already carries it."""
    match = JOIN_ADDRESS.match(target)
    if match:
        host = match["host"]
        addresses = BusAddresses(xsub=f"tcp://{host}:{match['xsub']}", xpub=f"tcp://{host}:{match['xpub']}")
    else:
        addresses = _read_bus_json(Path(target).expanduser())
    if server_key:
        addresses = BusAddresses(addresses.xsub, addresses.xpub, _server_public_key(server_key), addresses.client_key_file)
    for address in (addresses.xsub, addresses.xpub):
        if not address.startswith("tcp://"):
            raise JoinTargetError(f"{target}: the broker listens on {address}, which no other host can reach; "
                                  "run it with bus.transport = \"tcp\" and bus.host = an address of its host")
        if address[len("tcp://"):].rpartition(":")[0] in WILDCARD_HOSTS:
            raise JoinTargetError(f"{target}: the broker is bound to all interfaces ({address}); name the host: "
                                  "tcp://HOST:XSUB_PORT,XPUB_PORT (with --server-key), or set bus.host to the host's address")
    return addresses


def _read_bus_json(path: Path) -> BusAddresses:
    file = path / ADDRESSES_FILE if path.is_dir() else path
    try:
        return BusAddresses.from_json(json.loads(file.read_text()))
    except FileNotFoundError:
        raise JoinTargetError(f"{path}: neither a bus.json, a run directory holding one, nor tcp://HOST:XSUB_PORT,XPUB_PORT") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise JoinTargetError(f"{file}: not a bus.json ({exc})") from None


def _server_public_key(key: str) -> str:
    """z85 text as given, or the public key of a certificate file (server.key; server.key_secret also holds it)."""
    if len(key) == 40 and not Path(key).expanduser().exists():
        return key
    from bus.auth import load_key_pair

    return load_key_pair(key, what="--server-key", need_secret=False).public.decode()
