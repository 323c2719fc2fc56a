"""``bin/tail``: follow the JSON-lines logs of every actor of a run, merged in time order,
or (``--bus``) subscribe live to bus topics and print decoded messages."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec
import numpy as np

LEVEL_ORDER = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
COLOURS = {"debug": "\033[2m", "info": "\033[32m", "warning": "\033[33m", "error": "\033[31m", "critical": "\033[41m"}
ACTOR_COLOURS = ["\033[36m", "\033[35m", "\033[34m", "\033[33m", "\033[32m", "\033[96m", "\033[95m", "\033[94m"]
RESET, DIM, BOLD = "\033[0m", "\033[2m", "\033[1m"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bin/tail",
        description="Follow the structured logs of a run (all actors merged in time order), or watch the live bus.",
        epilog="Examples:\n  bin/tail                          newest run, follow\n"
        "  bin/tail runs/X --actor policy --event 'ppo_*'\n  bin/tail --event md.event          the market events (releases, headlines) published\n  bin/tail --level warning --no-follow\n"
        "  bin/tail --bus --topic env.outcome --topic llm.thought",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", nargs="?", type=Path, help="run directory (default: the newest under --runs-dir)")
    parser.add_argument("--runs-dir", type=Path, default=Path("runs"), help="where to look for the newest run (default: runs)")
    parser.add_argument("--actor", action="append", default=[], help="only these actors (repeatable)")
    parser.add_argument("--event", action="append", default=[], help="only events matching this glob (repeatable), e.g. 'ppo_*'; a topic name matches its log event (md.event: md_event)")
    parser.add_argument("--level", default="debug", choices=list(LEVEL_ORDER), help="minimum level (default: everything)")
    parser.add_argument("--since", help="only lines newer than this: seconds ago (e.g. 90, 5m, 2h) or an ISO time")
    parser.add_argument("--json", action="store_true", help="print the raw JSON lines")
    parser.add_argument("--no-follow", action="store_true", help="print what is there and exit")
    parser.add_argument("--bus", action="store_true", help="subscribe to the run's live bus instead of reading logs")
    parser.add_argument("--topic", action="append", default=[], help="--bus: topic prefixes (repeatable; default: everything)")
    parser.add_argument("--count", type=int, default=0, help="--bus: exit after this many messages (0 = until Ctrl-C)")
    return parser


def parse_since(text: str | None) -> datetime | None:
    if not text:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    try:
        if text[-1] in units:
            return datetime.now(timezone.utc) - timedelta(seconds=float(text[:-1]) * units[text[-1]])
        return datetime.now(timezone.utc) - timedelta(seconds=float(text))
    except ValueError:
        pass
    stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


@dataclass
class LineFilter:
    actors: list[str]
    events: list[str]
    min_level: int
    since: datetime | None

    def accepts(self, record: dict) -> bool:
        if self.actors and record.get("actor") not in self.actors:
            return False
        if self.events and not any(_event_matches(str(record.get("event", "")), pat) for pat in self.events):
            return False
        if LEVEL_ORDER.get(record.get("level", "info"), 20) < self.min_level:
            return False
        if self.since is not None:
            try:
                if datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")) < self.since:
                    return False
            except (KeyError, ValueError):
                return False
        return True


def _event_matches(event: str, pattern: str) -> bool:
    """A glob over log event names; a bus topic matches the events logged for it (``md.event`` -> ``md_event``)."""
    return fnmatch.fnmatch(event, pattern) or fnmatch.fnmatch(event, pattern.replace(".", "_"))


class LogFollower:
    """Reads every *.jsonl file of a run's logs folder, including files that appear later."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.offsets: dict[Path, int] = {}
        self.partial: dict[Path, str] = {}

    def read_new(self) -> list[dict]:
        records: list[dict] = []
        for path in sorted(self.logs.glob("*.jsonl")):
            with open(path, "r", encoding="utf-8", errors="replace") as fh:
                fh.seek(self.offsets.get(path, 0))
                chunk = fh.read()
                self.offsets[path] = fh.tell()
            text = self.partial.pop(path, "") + chunk
            lines = text.split("\n")
            if lines and lines[-1]:
                self.partial[path] = lines[-1]  # a line still being written
            for line in lines[:-1]:
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    records.append({"timestamp": "", "level": "warning", "actor": path.stem, "event": "unparsable_log_line", "line": line[:200]})
        records.sort(key=lambda r: r.get("timestamp", ""))
        return records


def render(record: dict, colour: bool, actor_colours: dict[str, str]) -> str:
    stamp = str(record.get("timestamp", ""))[11:23]
    level = str(record.get("level", "info"))
    actor = str(record.get("actor", "?"))
    event = str(record.get("event", ""))
    skip = {"timestamp", "level", "actor", "event", "run"}
    fields = " ".join(f"{k}={_short(v)}" for k, v in record.items() if k not in skip)
    if not colour:
        return f"{stamp} {level[:4].upper():<4} {actor:<12} {event:<24} {fields}"
    ac = actor_colours.setdefault(actor, ACTOR_COLOURS[len(actor_colours) % len(ACTOR_COLOURS)])
    return f"{DIM}{stamp}{RESET} {COLOURS.get(level, '')}{level[:4].upper():<4}{RESET} {ac}{actor:<12}{RESET} {BOLD}{event:<24}{RESET} {DIM}{fields}{RESET}"


def _short(value) -> str:
    text = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    return text if len(text) <= 120 else text[:117] + "..."


def tail_logs(args: argparse.Namespace, run_dir: Path) -> int:
    flt = LineFilter(args.actor, args.event, LEVEL_ORDER[args.level], parse_since(args.since))
    follower = LogFollower(run_dir / "logs")
    colour = sys.stdout.isatty() and not args.json
    actor_colours: dict[str, str] = {}
    try:
        while True:
            for record in follower.read_new():
                if flt.accepts(record):
                    print(json.dumps(record) if args.json else render(record, colour, actor_colours), flush=True)
            if args.no_follow:
                return 0
            time.sleep(0.25)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0


def to_printable(value):
    if isinstance(value, np.ndarray):
        return value.round(4).tolist() if value.size <= 64 else f"<array {value.dtype} {list(value.shape)}>"
    if isinstance(value, msgspec.Struct):
        return {f: to_printable(getattr(value, f)) for f in value.__struct_fields__}
    if isinstance(value, list):
        return [to_printable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_printable(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value


def tail_bus(args: argparse.Namespace, run_dir: Path) -> int:
    from bus.broker import BusAddresses
    from bus.client import SyncBus

    try:
        addresses = BusAddresses.read(run_dir)
    except FileNotFoundError:
        print(f"bin/tail: {run_dir} has no bus.json: is the runtime running?", file=sys.stderr)
        return 2
    colour = sys.stdout.isatty() and not args.json
    seen = 0
    with SyncBus(addresses, sender=f"tail:{os.getpid()}") as client:
        client.subscribe(*(args.topic or [""]), settle_secs=0)
        try:
            while not args.count or seen < args.count:
                try:
                    decoded = client.recv_decoded(timeout_secs=1.0)
                except TimeoutError:
                    continue
                seen += 1
                msg = decoded.msg
                body = to_printable(msg)
                if args.json:
                    print(json.dumps({"type": type(msg).__name__, "topic": msg.TOPIC, "sender": decoded.sender, "seq": decoded.seq, "body": body}, default=str), flush=True)
                else:
                    head = f"{BOLD}{msg.TOPIC}{RESET}" if colour else msg.TOPIC
                    print(f"{head} {decoded.sender}#{decoded.seq} {json.dumps(body, default=str)[:400]}", flush=True)
        except (KeyboardInterrupt, BrokenPipeError):
            pass
    if client.dropped:
        print(f"bin/tail: dropped frames: {dict(client.dropped)}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from runtime.rundir import newest_run_dir

    run_dir = args.run_dir or newest_run_dir(args.runs_dir)
    if run_dir is None or not Path(run_dir).is_dir():
        print(f"bin/tail: no run directory found (looked in {args.runs_dir}); start one with bin/run", file=sys.stderr)
        return 2
    return tail_bus(args, Path(run_dir)) if args.bus else tail_logs(args, Path(run_dir))


if __name__ == "__main__":
    sys.exit(main())
