"""Every adapter version the trainer made, with its metrics: ``vNNNN/adapter.gguf`` + ``vNNNN/metrics.json``.

A rollback republishes an earlier adapter as a NEW version (a copy, with ``rollback_of``
in its metrics): the reasoner only takes versions newer than the one it runs, so going
back is a step forward in numbering, and the history stays complete.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

ADAPTER_FILE = "adapter.gguf"
METRICS_FILE = "metrics.json"


@dataclass(frozen=True, slots=True)
class AdapterVersion:
    version: int
    path: Path
    """The adapter.gguf file."""
    metrics: dict[str, float]
    published: bool


class VersionBook:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def folder(self, version: int) -> Path:
        return self.root / f"v{version:04d}"

    def versions(self) -> list[AdapterVersion]:
        found = []
        for folder in sorted(self.root.glob("v[0-9]*")):
            metrics_path = folder / METRICS_FILE
            if metrics_path.is_file() and (folder / ADAPTER_FILE).is_file():
                data = json.loads(metrics_path.read_text(encoding="utf-8"))
                found.append(AdapterVersion(int(folder.name[1:]), folder / ADAPTER_FILE, data["metrics"], data["published"]))
        return found

    def next_version(self) -> int:
        existing = [int(p.name[1:]) for p in self.root.glob("v[0-9]*") if p.name[1:].isdigit()]
        return max(existing, default=0) + 1

    def get(self, version: int) -> AdapterVersion:
        for candidate in self.versions():
            if candidate.version == version:
                return candidate
        raise KeyError(f"no adapter version {version} in {self.root}")

    def latest_published(self) -> AdapterVersion | None:
        published = [v for v in self.versions() if v.published]
        return published[-1] if published else None

    def record(self, version: int, adapter_file: Path, metrics: dict[str, float], *, published: bool) -> AdapterVersion:
        """Keep ``adapter_file`` (moved in) as ``version`` with its metrics; metrics.json is written last."""
        folder = self.folder(version)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / ADAPTER_FILE
        if Path(adapter_file).resolve() != target.resolve():
            shutil.move(str(adapter_file), target)
        tmp = folder / (METRICS_FILE + ".tmp")
        tmp.write_text(json.dumps({"metrics": metrics, "published": published}, indent=1), encoding="utf-8")
        tmp.replace(folder / METRICS_FILE)
        return AdapterVersion(version, target, metrics, published)

    def rollback(self, version: int) -> AdapterVersion:
        """A new published version whose adapter is a copy of ``version``'s."""
        old = self.get(version)
        new_version = self.next_version()
        copy = self.root / f"rollback-{new_version}.gguf"
        shutil.copyfile(old.path, copy)
        return self.record(new_version, copy, {**old.metrics, "rollback_of": float(version)}, published=True)
