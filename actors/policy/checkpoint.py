"""Policy checkpoints: one zip file per checkpoint, written atomically.

A checkpoint holds SB3's own saved model (weights, optimizer state, hyperparameters,
num_timesteps), the observation/reward normaliser and a small JSON of our counters, so
`--resume` continues with the same step count and `--model` serves the same inputs scale.
Files are written to a temporary name in the same directory, fsynced and renamed with
os.replace, so a kill at any moment leaves either the old or the new file, never half.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actors.common.observation import OBSERVATION_LAYOUT
from actors.common.file_errors import FileError

CHECKPOINT_DIR_NAME = "checkpoints"
LAYOUT_BEFORE_KEY = "261/1"
"""The observation layout of a checkpoint saved before checkpoints recorded theirs (before the session inputs came)."""
FORMAT_VERSION = 1
_NAME_PATTERN = re.compile(r"^policy_(\d+)\.zip$")
_MODEL_MEMBER = "sb3_model.zip"
_NORMALIZER_MEMBER = "normalizer.npz"
_META_MEMBER = "meta.json"


@dataclass(frozen=True)
class Checkpoint:
    model_bytes: bytes
    normalizer_bytes: bytes
    meta: dict[str, Any]


def checkpoint_dir(run_dir: Path) -> Path:
    return Path(run_dir) / CHECKPOINT_DIR_NAME


def write_checkpoint(directory: Path, num_timesteps: int, checkpoint: Checkpoint) -> Path:
    """Write atomically as <directory>/policy_<num_timesteps>.zip and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    final_path = directory / f"policy_{num_timesteps:012d}.zip"
    temp_path = directory / f".{final_path.name}.tmp-{os.getpid()}"
    meta = {**checkpoint.meta, "format_version": FORMAT_VERSION, "num_timesteps": num_timesteps, "observation_layout": OBSERVATION_LAYOUT}
    try:
        with open(temp_path, "wb") as raw:
            with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_STORED) as archive:
                archive.writestr(_MODEL_MEMBER, checkpoint.model_bytes)
                archive.writestr(_NORMALIZER_MEMBER, checkpoint.normalizer_bytes)
                archive.writestr(_META_MEMBER, json.dumps(meta, sort_keys=True))
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temp_path, final_path)
    finally:
        temp_path.unlink(missing_ok=True)
    _fsync_directory(directory)
    return final_path


class CheckpointError(FileError):
    """A file given as a policy checkpoint that is not one (or of another format); the message names it."""


def read_checkpoint(path: Path) -> Checkpoint:
    """Read a checkpoint file; a file that is not one raises CheckpointError (a ValueError) naming it."""
    try:
        with zipfile.ZipFile(path) as archive:
            model_bytes = archive.read(_MODEL_MEMBER)
            normalizer_bytes = archive.read(_NORMALIZER_MEMBER)
            meta = _meta(archive, path)
    except (zipfile.BadZipFile, KeyError) as error:
        raise CheckpointError(path, f"not a policy checkpoint ({error})") from error
    layout = meta.get("observation_layout", LAYOUT_BEFORE_KEY)
    if layout != OBSERVATION_LAYOUT:
        raise CheckpointError(path, f"trained on observation layout {layout}, this code builds layout {OBSERVATION_LAYOUT} "
                              "(actors/common/observation.py): train a new policy")
    return Checkpoint(model_bytes=model_bytes, normalizer_bytes=normalizer_bytes, meta=meta)


def check_checkpoint(path: Path) -> None:
    """Refuse a file that is not a checkpoint of this format (CheckpointError) by its table of contents and its
    meta.json alone, before a job starts the processes that would read it."""
    try:
        with zipfile.ZipFile(path) as archive:
            missing = {_MODEL_MEMBER, _NORMALIZER_MEMBER, _META_MEMBER} - set(archive.namelist())
            if missing:
                raise CheckpointError(path, f"not a policy checkpoint (no {', '.join(sorted(missing))} in it)")
            _meta(archive, path)
    except (zipfile.BadZipFile, OSError) as error:
        raise CheckpointError(path, f"not a policy checkpoint ({error})") from error


def _meta(archive: zipfile.ZipFile, path: Path) -> dict[str, Any]:
    try:
        meta = json.loads(archive.read(_META_MEMBER))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(path, f"not a policy checkpoint ({_META_MEMBER}: {error})") from error
    if not isinstance(meta, dict) or meta.get("format_version") != FORMAT_VERSION:
        version = meta.get("format_version") if isinstance(meta, dict) else None
        raise CheckpointError(path, f"checkpoint format {version} is not {FORMAT_VERSION}")
    return meta


def list_checkpoints(directory: Path) -> list[tuple[int, Path]]:
    """(num_timesteps, path) of every complete checkpoint in a directory, oldest first."""
    if not directory.is_dir():
        return []
    found = []
    for path in directory.iterdir():
        match = _NAME_PATTERN.match(path.name)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def latest_checkpoint(run_dir: Path | str) -> Path | None:
    """The newest checkpoint of a run directory (or its checkpoints/ folder); a file is returned as is."""
    location = Path(run_dir)
    if location.is_file():
        return location
    for directory in (checkpoint_dir(location), location):
        found = list_checkpoints(directory)
        if found:
            return found[-1][1]
    return None


def checkpoint_steps(path: Path | str) -> int | None:
    """The policy's num_timesteps a checkpoint was written at (from its name), None for another name."""
    match = _NAME_PATTERN.match(Path(path).name)
    return int(match.group(1)) if match else None


def prune_checkpoints(directory: Path, keep: int) -> list[Path]:
    """Delete all but the `keep` newest checkpoints; returns what was deleted."""
    found = list_checkpoints(directory)
    doomed = [path for _, path in found[: max(0, len(found) - keep)]]
    for path in doomed:
        path.unlink(missing_ok=True)
    return doomed


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable (POSIX); harmless where directories cannot be opened.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
