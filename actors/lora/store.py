"""The experience store: SQLite in WAL mode with synchronous=FULL, bounded, sampled by outcome size
(and, with ``balance_actions``, so that every target action gets the same share of the draws; with
``balance_levels``, every hindsight risk level).

``add`` returns only after its transaction is committed and fsynced (WAL + FULL), so an
acknowledged experience survives a kill -9 of the trainer or a crash of the machine.
Ids are primary keys: adding the same experience twice (a duplicated outcome) is a no-op.
A stable share of ids (by hash) is held out for evaluation and never trained on.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from actors.common.file_errors import FileError
from actors.lora.experience import Experience

_SCHEMA = """
CREATE TABLE IF NOT EXISTS experiences (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL,
    held_out INTEGER NOT NULL,
    weight REAL NOT NULL,
    body TEXT NOT NULL
)
"""


def is_held_out(experience_id: str, fraction: float) -> bool:
    """Deterministic by id: the same experience is held out in every process and after every restart."""
    digest = hashlib.sha256(experience_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def _held_out(experience: Experience, fraction: float) -> bool:
    """An experience that says which side it is on (a market-history bar: held out by its day) stays there;
    any other is held out by its id's hash."""
    side = experience.meta.get("held_out")
    return bool(side) if side is not None else is_held_out(experience.id, fraction)


class ExperienceStore:
    def __init__(self, path: str | Path, *, max_experiences: int, held_out_fraction: float,
                 min_weight_usd: float = 10.0, balance_actions: bool = False, balance_levels: bool = False,
                 level_rare_share: float = 0.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._max = max_experiences
        self._held_out_fraction = held_out_fraction
        self._min_weight = min_weight_usd
        self._balance_actions = balance_actions
        self._balance_levels = balance_levels
        self._level_rare_share = level_rare_share
        self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_SCHEMA)
        self.evicted = 0

    def add(self, experiences: Iterable[Experience]) -> int:
        """Store (durably) and return how many were new; duplicates by id are ignored."""
        rows = [(e.id, int(_held_out(e, self._held_out_fraction)), abs(e.pnl_usd) + self._min_weight, _encode(e))
                for e in experiences]
        if not rows:
            return 0
        with self._transaction():
            before = self._db.total_changes
            self._db.executemany("INSERT OR IGNORE INTO experiences (id, held_out, weight, body) VALUES (?, ?, ?, ?)", rows)
            added = self._db.total_changes - before
            self._evict()
        return added

    def count(self, *, held_out: bool | None = None) -> int:
        if held_out is None:
            return self._db.execute("SELECT COUNT(*) FROM experiences").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM experiences WHERE held_out = ?", (int(held_out),)).fetchone()[0]

    def ids(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT id FROM experiences ORDER BY seq")]

    def all(self, *, held_out: bool | None = None) -> list[Experience]:
        sql, args = "SELECT body FROM experiences", ()
        if held_out is not None:
            sql, args = sql + " WHERE held_out = ?", (int(held_out),)
        return [_decode(row[0]) for row in self._db.execute(sql + " ORDER BY seq", args)]

    def last_seq(self) -> int:
        """The newest experience's sequence number (0 when empty): ``up_to_seq`` of a round that sees only these."""
        return self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM experiences").fetchone()[0]

    def held_out(self, limit: int, up_to_seq: int | None = None) -> list[Experience]:
        """The newest ``limit`` held-out experiences, oldest first (the same set before and after a round); with
        ``up_to_seq`` only those stored by then (a reproducible round)."""
        rows = self._db.execute("SELECT body FROM experiences WHERE held_out = 1 AND seq <= ? ORDER BY seq DESC LIMIT ?",
                                (_newest(up_to_seq), limit))
        return [_decode(row[0]) for row in rows][::-1]

    def sample(self, n: int, rng: np.random.Generator, up_to_seq: int | None = None) -> list[Experience]:
        """``n`` training experiences drawn with replacement, probability proportional to |P&L| + min weight;
        with ``balance_actions`` those weights are shared out per target action, so each action present is
        drawn equally often (a run on rising days would otherwise teach little but BUY), and each draw of ``n``
        holds every common action in equal numbers (``systematic_draws``); with ``up_to_seq`` only from those stored
        by then (a reproducible round, whose data must not depend on what the loop stored while it trained).
        With ``balance_levels`` (lora.teach = "risk") the draws are shared out per hindsight risk level instead (a
        store of event bars is about half CALM and 5 % EXTREME, and a round on it learned one level everywhere): a
        level under ``level_rare_share`` of the rows keeps its own share, the others split the rest equally (0: all
        three equally, however rare EXTREME is), within a level per action as above; experiences without a
        level (their target has no risk field) are not drawn. Only the training side is resampled: the held-out
        prompts keep their own mix."""
        rows = self._db.execute("SELECT weight, json_extract(body, '$.action'), body, "
                                "COALESCE(json_extract(body, '$.meta.risk_level'), -1) FROM experiences "
                                "WHERE held_out = 0 AND seq <= ? ORDER BY seq", (_newest(up_to_seq),)).fetchall()
        if self._balance_levels:
            rows = [row for row in rows if row[3] >= 0]
        if not rows:
            return []
        weights = np.array([row[0] for row in rows], dtype=np.float64)
        if self._balance_levels:
            levels = np.array([row[3] for row in rows], dtype=np.int64)
            actions = np.array([row[1] for row in rows], dtype=np.int64)
            weights = balanced_by_action(weights, actions) if self._balance_actions else weights
            picks = systematic_draws(balanced_by_action(weights, levels, rare_share=self._level_rare_share), levels, n, rng)
            return [_decode(rows[i][2]) for i in picks]
        if not self._balance_actions:
            picks = rng.choice(len(rows), size=n, replace=True, p=weights / weights.sum())
            return [_decode(rows[i][2]) for i in picks]
        actions = np.array([row[1] for row in rows], dtype=np.int64)
        picks = systematic_draws(balanced_by_action(weights, actions), actions, n, rng)
        return [_decode(rows[i][2]) for i in picks]

    def close(self) -> None:
        self._db.close()

    def _evict(self) -> None:
        excess = self.count() - self._max
        if excess > 0:
            self._db.execute("DELETE FROM experiences WHERE seq IN (SELECT seq FROM experiences ORDER BY seq LIMIT ?)",
                             (excess,))
            self.evicted += excess

    def _transaction(self):
        return _Transaction(self._db)


def _newest(up_to_seq: int | None) -> int:
    return (1 << 62) if up_to_seq is None else up_to_seq


class _Transaction:
    """BEGIN IMMEDIATE .. COMMIT (ROLLBACK on error); the commit is the durable acknowledgement."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")


RARE_ACTION_SHARE = 0.05
"""An action under this share of the stored labels keeps its own share of the draws instead of an equal one: on
market history HOLD is ~1 % of the labels, and an equal share would draw it a third of the time."""


def balanced_by_action(weights: np.ndarray, actions: np.ndarray, rare_share: float = RARE_ACTION_SHARE) -> np.ndarray:
    """Weights rescaled so that every common action carries the same mass (a rare one, under ``rare_share`` of the
    rows, its own share); within an action the draws still follow the weights. Without it, labels that lean one
    way teach that one answer everywhere (a round on 400 history prompts, 55 % BUY, ended answering SELL on all)."""
    codes, group = np.unique(actions, return_inverse=True)
    totals = np.bincount(group, weights=weights, minlength=len(codes))
    shares = np.bincount(group, minlength=len(codes)) / len(actions)
    rare = shares < rare_share  # never all of them: the commonest action holds at least a third of the rows
    mass = np.where(rare, shares, (1.0 - shares[rare].sum()) / (~rare).sum())
    return weights * (mass / totals)[group]


def systematic_draws(weights: np.ndarray, actions: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` row indices, each row's expected count ``n`` x its weight's share (as with independent draws), but the
    rows lined up by action and read at ``n`` evenly spaced points from one random start: so an action with share
    s appears floor(n s) or ceil(n s) times in every draw, never by chance more. A batch of 4 drawn independently
    from two balanced answers is 3-1 or 4-0 five times in eight; each such batch pushes every prompt's answer
    the same way, and on 300 held-out prompts rounds swung from one answer everywhere to the other."""
    order = np.argsort(actions, kind="stable")
    cumulative = np.cumsum(weights[order]) / weights.sum()
    points = (rng.random() + np.arange(n)) / n
    picks = order[np.minimum(np.searchsorted(cumulative, points, side="right"), len(order) - 1)]
    return rng.permutation(picks)


def _encode(e: Experience) -> str:
    return json.dumps({"id": e.id, "messages": e.messages, "mask": list(e.mask), "target": e.target, "action": e.action,
                       "pnl_usd": e.pnl_usd, "source": e.source, "meta": e.meta}, separators=(",", ":"))


def _decode(body: str) -> Experience:
    data = json.loads(body)
    return Experience(id=data["id"], messages=data["messages"], mask=tuple(bool(m) for m in data["mask"]),
                      target=data["target"], action=int(data["action"]), pnl_usd=float(data["pnl_usd"]),
                      source=data["source"], meta=data.get("meta", {}))


def write_experiences_file(path: str | Path, experiences: Iterable[Experience]) -> Path:
    """JSON lines, one experience a line: the offline input of ``bin/run lora --experiences FILE``."""
    path = Path(path)
    path.write_text("".join(_encode(e) + "\n" for e in experiences), encoding="utf-8")
    return path


class ExperienceFileError(FileError):
    """An experience file (``bin/run lora --experiences FILE``) with a line that is not an experience: file, line, field."""


def read_experiences_file(path: str | Path) -> list[Experience]:
    """The experiences of a JSON-lines file; a line that is not one raises ExperienceFileError naming it."""
    experiences = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            experiences.append(_decode(line))
        except json.JSONDecodeError as error:
            raise ExperienceFileError(path, f"not JSON ({error.msg})", row=number, unit="line") from None
        except KeyError as error:
            raise ExperienceFileError(path, "missing", row=number, field=str(error.args[0]), unit="line") from None
        except (TypeError, ValueError, AttributeError) as error:
            raise ExperienceFileError(path, f"not an experience ({error})", row=number, unit="line") from None
    return experiences
