"""The run directory: resolved config, bus addresses, one JSON-lines log per actor, pid files."""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from config.loader import dump_toml, load_resolved
from config.schema import Config

CONFIG_FILE = "config.toml"


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

    def load_config(self) -> Config:
        return load_resolved(self.config_file)


def create_run_dir(config: Config, mode: str, run_dir: str | Path | None = None) -> RunDir:
    """Create ``run_dir`` (or ``<runs_dir>/<timestamp>-<name>``) and write the resolved config there."""
    if run_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = config.run.name or mode
        run_dir = Path(config.run.runs_dir) / f"{stamp}-{name}-{secrets.token_hex(2)}"
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
