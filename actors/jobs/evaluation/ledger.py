"""The trials ledger: one JSON line per trial and fold, so the deflated Sharpe counts every trial, reruns included.

A backtest's best variant looks better the more variants were tried before it; the deflated Sharpe
(Bailey & Lopez de Prado 2014) corrects for that only if it is told how many trials there were and
how much their Sharpe ratios varied. One run's budgets x seeds undercount: the defaults were chosen
on many earlier runs. So every run that scores a policy on days it did not train on (train, evaluate, backtest, ablation,
sweep, the main job, the bench jobs that score a policy) appends what it tried here (``run.trials_path``, default
``<run.runs_dir>/trials.jsonl``, the project's ``runs/trials.jsonl`` when bin/run starts at the repository root;
``ledger_path`` gives it as an absolute path, which every run prints), and ``bin/run evaluate``, the main job's
phase 3 and ``bin/run trials`` read the whole history back.

One line per (configuration, code, run, market, seed, fold, variant) with its out-of-sample daily returns (P&L
over the account's start balance, so Sharpe ratios compare across accounts). A trial is identified by its
configuration hash, the code fingerprint (``code``: the cells cache's ``code_fingerprint``, so a code change is another
trial), the run that made it (``run_id``: a fresh id for every run) and its seed and variant: running the same
configuration again ADDS trials and N rises, it never replaces the earlier ones (rerunning until a lucky seed shows
up is exactly what the deflated Sharpe must count). Lines written before ``code`` and ``run_id`` existed are read
with both empty (actors/jobs/evaluation/trials.py tells their reruns apart by a fold recorded twice). Lines are only ever
appended, under an exclusive lock (Ray workers and parallel sweeps share one file), so a torn or
corrupt line never takes another record with it: ``read_trials`` names the file and line of every bad
one and carries the good records on its error.
"""

from __future__ import annotations

import fcntl
import hashlib
import secrets
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import msgspec

from actors.jobs.cells.cell import code_fingerprint
from actors.jobs.errors import JobError

ROLES = ("policy", "floor", "oracle")
"""``policy``: a configuration of the learner (a trial of the deflated Sharpe); ``floor``: a reference rule
played on the same days; ``oracle``: the ceiling that sees the hidden regime (never a trial)."""


class TrialRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One configuration's out-of-sample days on one fold."""

    config_hash: str
    """``config_hash`` of the settings that shape the result (the seed and the run's name and place excluded)."""
    market: str
    """regimes | null | ... | a bars file's path: Sharpe ratios are compared only within one market."""
    seed: int
    fold: int
    """The walk-forward fold (0 for a run with one test window)."""
    variant: str
    """What played: 'policy@<budget>#<seed>', 'ensemble@<budget>', a sweep's variant name, a floor's name."""
    daily_returns: list[float]
    """Each out-of-sample day's net P&L over the account's start balance, in time order."""
    date: str
    """When it was recorded, ISO 8601 UTC."""
    commit: str
    """The git commit of the code that ran ('unknown' outside a checkout)."""
    job: str = "evaluate"
    """train | evaluate | sweep | ..."""
    role: str = "policy"
    """One of ``ROLES``."""
    params: dict[str, str | int | float | bool] = {}
    """The settings a sweep changed for this variant, or what a floor chose on its training days."""
    code: str = ""
    """The code that ran: the first 16 hex digits of ``code_fingerprint`` (actors/jobs/cells/cell.py, the cells cache's
    own); filled in by ``append_trials``. Empty on lines written before it was recorded."""
    run_id: str = ""
    """The run that made the record ('<UTC time>-<8 hex>'), one per run and never reused, so a rerun is new trials;
    filled in by ``append_trials``. Empty on lines written before it was recorded."""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"trial record role must be one of {ROLES}, got {self.role!r}")


class LedgerError(ValueError):
    """One or more lines of a ledger could not be read; ``records`` holds every good one, in file order."""

    def __init__(self, message: str, records: list[TrialRecord]):
        super().__init__(message)
        self.records = records


def _numpy_scalar(value):
    """numpy scalars (a daily return read off an array) are written as the Python numbers they hold."""
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    raise NotImplementedError(f"a trial record cannot hold {type(value).__name__}")


_ENCODER = msgspec.json.Encoder(enc_hook=_numpy_scalar)
_DECODER = msgspec.json.Decoder(TrialRecord)


def code_of_trials() -> str:
    """A record's ``code``: the cells cache's code fingerprint, shortened (one hash of the sources, not a second)."""
    return code_fingerprint()[:16]


def new_run_id() -> str:
    """A fresh run id: the UTC time and 8 random hex digits (two runs in one second still differ)."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(4)}"


def stamped(records: Iterable[TrialRecord], run_id: str) -> list[TrialRecord]:
    """``records`` with the code fingerprint and ``run_id`` filled in where they are empty."""
    code = code_of_trials()
    return [msgspec.structs.replace(r, code=r.code or code, run_id=r.run_id or run_id) for r in records]


def append_trial(path: Path | str, record: TrialRecord, run_id: str | None = None) -> None:
    """Append ``record`` as one line; creates the file (and its folder). A file whose last line was torn (no
    newline) gets one first, so the new record stays whole and readable."""
    append_trials(path, [record], run_id)


def append_trials(path: Path | str, records: Iterable[TrialRecord], run_id: str | None = None) -> list[TrialRecord]:
    """Append several records under one lock (one run's variants land together), each stamped with the code
    fingerprint and ``run_id`` (default: a fresh one for this call, so one call is one run; a job that appends in
    several calls, as a sweep does trial by trial, passes its own ``new_run_id()`` to each). Returns them as written."""
    written = stamped(records, run_id or new_run_id())
    lines = b"".join(_ENCODER.encode(record) + b"\n" for record in written)
    if not lines:
        return written
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.seek(0, 2)
            if handle.tell() > 0:
                handle.seek(-1, 2)
                if handle.read(1) != b"\n":
                    lines = b"\n" + lines
            handle.write(lines)
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return written


def read_trials(path: Path | str) -> list[TrialRecord]:
    """Every record of the ledger in file order; [] when there is no file yet. Blank lines are skipped.

    Raises ``LedgerError`` naming the file and the line number of every line that is not a valid record (its
    ``records`` are the good ones); the file is never rewritten, so nothing is lost on disk either."""
    path = Path(path)
    if not path.exists():
        return []
    records: list[TrialRecord] = []
    bad: list[str] = []
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(_DECODER.decode(line))
            except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as error:
                bad.append(f"{path}:{number}: {error}")
    if bad:
        shown = "\n  ".join(bad[:10]) + (f"\n  ... and {len(bad) - 10} more" if len(bad) > 10 else "")
        raise LedgerError(f"trials ledger {path}: {len(bad)} unreadable line(s) ({len(records)} good records kept; "
                          f"mend or delete the line(s) named):\n  {shown}", records)
    return records


def read_trials_or_stop(path: Path | str, job: str) -> list[TrialRecord]:
    """``read_trials``, or a job error naming its bad lines (bin/run prints it and exits 1): a job that counts trials
    stops rather than count fewer. Jobs read it before their work, so a corrupt ledger costs no training."""
    try:
        return read_trials(path)
    except LedgerError as error:
        raise JobError(f"{error}\n(run.trials_path names the ledger; the deflated Sharpe needs every trial, so {job} "
                       "stops rather than count fewer)") from None


def config_hash(config: msgspec.Struct, *, exclude: Iterable[str] = ("run", "logging", "dashboard")) -> str:
    """A short hash of the settings that shape a result: the sections in ``exclude`` (the run's name, folder, seed
    and logging) left out, so two runs of the same configuration on other seeds share a hash."""
    data = msgspec.to_builtins(config)
    for section in exclude:
        data.pop(section, None)
    return hashlib.sha256(msgspec.json.encode(data, order="sorted")).hexdigest()[:16]


def current_commit(repo: Path | None = None) -> str:
    """``git rev-parse HEAD`` of the checkout this code runs from; 'unknown' outside one."""
    where = repo or Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def ledger_path(run_settings) -> Path:
    """``run.trials_path``, or ``<run.runs_dir>/trials.jsonl`` when it is empty, as an absolute path (what runs print)."""
    path = Path(run_settings.trials_path) if run_settings.trials_path else Path(run_settings.runs_dir) / "trials.jsonl"
    return path.resolve()
