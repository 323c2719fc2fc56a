"""``bin/feed``: attach a market-data feed actor to a running runtime, in its own process.

The runtime is found through its run directory (``--run``: bus.json holds the broker's
addresses, config.toml the resolved config, and the feed logs to logs/feed.jsonl there) or
given as addresses (``--bus``). The feed stops with the runtime (sys.shutdown), on Ctrl-C, or
when a finite source (replay, synthetic) has no more bars.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from actors.feed.config import FeedSettings
from config.tree import ConfigError

SOURCES_HELP = """Sources:
  replay     a CSV or Parquet file of bars (timestamp and OHLCV columns auto-detected, as bin/run's data.path),
             played at --speed (1.0 = real time, 60 = a minute of bars per second, 0 = as fast as possible,
             agent = each bar once the runtime decided on the previous one), optionally from --start: then the
             --warmup-bars bars before it (default env.paper_warmup_bars) go first, at once, flagged as history,
             so the first decision is on the bar at --start; finer bars are aggregated to --timeframe
  synthetic  the seeded NQ-like generator (--days sessions, --seed), a bar every --pace-secs (or --speed agent)
  ccxt       an exchange's public candles through ccxt (--exchange, --symbol e.g. BTC/USDT:USDT, --timeframe):
             polled just after each candle closes, each published once (the forming candle never),
             the exchange's rate limit respected, reconnects with exponential backoff.
             No key is needed for public candles; a key is read only from the environment variables named by
             feed.ccxt_api_key_env / feed.ccxt_secret_env (default TT_CCXT_API_KEY / TT_CCXT_SECRET), never logged.

Events (published on md.event beside the bars; formats in actors/common/event_files.py and docs/experiments/44-events.md):
  --calendar FILE   an economic calendar (.csv or .ics): each release goes out when the bar clock passes its time
                    (announced --event-ahead-mins before, for risk's news rule), in step with the bars at any --speed
  --headlines FILE  headlines (.jsonl: {"time", "text", "source"?, "importance"?}), replayed the same way
  --rss URL         an RSS/Atom feed polled every --event-poll-secs, each new entry once (a stalled feed is logged, polling goes on)
  A bad row in a file stops bin/feed at start with the file, row and field at fault.

Every option is also a [feed] config key (config/default.toml); --set feed.KEY=VALUE sets any of them.
Examples:
  bin/feed --run runs/20250101-120000-paper-ab12 --source synthetic --pace-secs 1
  bin/feed --run RUN_DIR --source replay --path bars.csv --speed 60 --start 2024-03-01T09:30
  bin/feed --run RUN_DIR --source replay --path bars.csv --start "2024-03-01 09:30" --speed agent --max-bars 390 --wait-for env
  bin/feed --run RUN_DIR --source ccxt --exchange bybit --market-type swap --symbol BTC/USDT:USDT --timeframe 1m
  bin/feed --bus ipc:///tmp/tt-x/ab.in,ipc:///tmp/tt-x/ab.out --source synthetic
  bin/feed --run RUN_DIR --source replay --path bars.csv --speed agent --calendar calendar.csv --headlines news.jsonl
  bin/feed --run RUN_DIR --source ccxt --exchange bybit --symbol BTC/USDT:USDT --rss https://example.com/markets.rss"""

# command-line option -> [feed] key
OPTION_KEYS = {
    "source": "source", "symbol": "symbol", "timeframe": "timeframe", "late_policy": "late_policy",
    "max_bars": "max_bars", "wait_for": "wait_for_actors",
    "path": "replay_path", "start": "replay_start", "timezone": "replay_timezone", "warmup_bars": "warmup_bars",
    "days": "synthetic_days", "pace_secs": "synthetic_pace_secs", "seed": "synthetic_seed",
    "exchange": "ccxt_exchange", "market_type": "ccxt_market_type", "history_bars": "ccxt_history_bars", "poll_secs": "ccxt_poll_secs",
    "calendar": "event_calendar_paths", "headlines": "event_headline_paths", "rss": "event_rss_urls",
    "event_poll_secs": "event_poll_secs", "event_timeout_secs": "event_timeout_secs", "event_ahead_mins": "event_schedule_ahead_mins",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bin/feed",
        description="Attach a live market-data feed (publishes md.bar) to a running runtime.",
        epilog=SOURCES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--run", type=Path, metavar="RUN_DIR", help="the running runtime's run directory (has bus.json)")
    where.add_argument("--bus", metavar="ADDRESS", help="the broker's addresses 'XSUB,XPUB' (e.g. tcp://127.0.0.1:5551,tcp://127.0.0.1:5552) or a bus.json file")
    parser.add_argument("--source", choices=["replay", "synthetic", "ccxt"], help="where bars come from (default: feed.source)")
    parser.add_argument("--symbol", help="symbol on md.bar (default: instrument.symbol); ccxt: the market, e.g. BTC/USDT:USDT")
    parser.add_argument("--timeframe", help="bars published: 30s, 1m, 5m, 1h, 1d (default 1m)")
    parser.add_argument("--late-policy", choices=["drop", "amend"], help="a record for a bar already published: drop it, or publish the corrected bar again")
    parser.add_argument("--max-bars", type=int, help="stop after this many bars played (from --start; the warm-up history is not counted; 0 = no limit)")
    parser.add_argument("--wait-for", action="append", metavar="ACTOR", help="publish only once this actor sent a heartbeat (repeatable), e.g. env")
    replay = parser.add_argument_group("replay")
    replay.add_argument("--path", help="CSV or Parquet file of bars")
    replay.add_argument("--speed", type=parse_speed, help="1.0 = real time, 0 = as fast as possible (default 1.0); "
                        "agent (replay and synthetic) = each bar once the runtime decided on the previous one")
    replay.add_argument("--start", help="play from this time (ISO 8601; naive = --timezone); the bars before it warm the env up")
    replay.add_argument("--warmup-bars", type=int, help="with --start: bars before it published first as history (default env.paper_warmup_bars; 0 = none)")
    replay.add_argument("--timezone", help="time zone of naive timestamps in the file (default America/New_York)")
    synthetic = parser.add_argument_group("synthetic")
    synthetic.add_argument("--days", type=int, help="sessions generated (default 5)")
    synthetic.add_argument("--pace-secs", type=float, help="seconds between bars, 0 = as fast as possible (default 1.0)")
    synthetic.add_argument("--seed", type=int, help="generator seed (default: run.seed)")
    live = parser.add_argument_group("ccxt")
    live.add_argument("--exchange", help="ccxt exchange id (default binance)")
    live.add_argument("--market-type", help="the exchange's defaultType: swap (perpetuals), future, spot")
    live.add_argument("--history-bars", type=int, help="closed candles published at start as a warm-up history")
    live.add_argument("--poll-secs", type=float, help="seconds between polls (default: just after each candle closes)")
    events = parser.add_argument_group("events (md.event)")
    events.add_argument("--calendar", action="append", metavar="FILE", help="economic-calendar file, .csv or .ics (repeatable)")
    events.add_argument("--headlines", action="append", metavar="FILE", help="headlines file, .jsonl (repeatable)")
    events.add_argument("--rss", action="append", metavar="URL", help="RSS/Atom feed of headlines, polled (repeatable)")
    events.add_argument("--event-poll-secs", type=float, help="seconds between polls of each --rss feed (default 60)")
    events.add_argument("--event-timeout-secs", type=float, help="a feed fetch waiting longer is abandoned, logged (default 10)")
    events.add_argument("--event-ahead-mins", type=float, help="a file's release is announced this long before its time (default 60; 0 = only at its time)")
    parser.add_argument("--config", type=Path, help="a TOML file merged over the defaults (or over the run's config with --run)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override any config key (repeatable)")
    parser.add_argument("--name", default="feed", help="actor name in logs and heartbeats (default feed; give each of several feeds its own)")
    parser.add_argument("--keep-running", action="store_true", help="stay attached after a finite source ends (default: exit)")
    return parser


def parse_speed(text: str) -> float | str:
    """--speed: a replay speed factor (>= 0) or ``agent``."""
    if text.strip().lower() == "agent":
        return "agent"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 or 'agent', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 or 'agent', got {text!r}")
    return value


def feed_overrides(args: argparse.Namespace) -> dict[str, object]:
    settings: dict[str, object] = {f"feed.{key}": getattr(args, option) for option, key in OPTION_KEYS.items() if getattr(args, option) is not None}
    if args.speed == "agent":
        settings["feed.pace"] = "agent"
    elif args.speed is not None:
        settings["feed.replay_speed"] = args.speed
    settings["feed.stop_when_exhausted"] = not args.keep_running
    return settings


def read_addresses(args: argparse.Namespace):
    from bus.broker import BusAddresses

    if args.run is not None:
        return BusAddresses.read(args.run)
    if "," in args.bus:
        xsub, xpub = (part.strip() for part in args.bus.split(",", 1))
        return BusAddresses(xsub=xsub, xpub=xpub)
    path = Path(args.bus)
    data = json.loads((path / "bus.json" if path.is_dir() else path).read_text())
    return BusAddresses(xsub=data["xsub"], xpub=data["xpub"])


def load_feed_config(args: argparse.Namespace) -> FeedSettings:
    """The run's resolved config (or the defaults) + --config + the feed options + --set, read as the feed's own
    settings (the sections it reads; a job validated the rest of a run's config)."""
    from config.tree import dump_toml, load_resolved, load_settings, parse_override

    def load_config(path, overrides) -> FeedSettings:
        return load_settings(FeedSettings, path, overrides)

    settings = feed_overrides(args)
    for text in args.overrides:
        keys, value = parse_override(text)
        settings[".".join(keys)] = value
    if args.run is None:
        return load_config(args.config, settings)
    base = load_resolved(args.run / "config.toml", FeedSettings)
    if args.config is None:
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as fh:
            fh.write(dump_toml(base))
        try:
            return load_config(fh.name, settings)
        finally:
            os.unlink(fh.name)
    return load_config(args.config, settings)


def check_event_files(feed) -> str:
    """The first event file that cannot be read, as the error naming its file, row and field ('' when all can)."""
    from actors.common.event_files import EventFileError, read_events

    for path in [*feed.event_calendar_paths, *feed.event_headline_paths]:
        try:
            read_events(path)
        except EventFileError as exc:
            return str(exc)
    return ""


async def run_feed(name: str, config: FeedSettings, run_dir: Path, addresses, log) -> int:
    from actors.feed.actor import FeedActor
    from bus.client import AsyncBus

    bus = AsyncBus(addresses, sender=f"{name}:{os.getpid()}", hwm=config.bus.send_hwm, max_frame_bytes=config.bus.max_message_bytes)
    actor = FeedActor(name=name, config=config, run_dir=run_dir, bus=bus, log=log)
    try:
        task = asyncio.get_running_loop().create_task(actor.run())
        await asyncio.sleep(0)  # run() installs its signal handlers first; then Ctrl-C stops this feed (no supervisor here)
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, actor.request_stop, "sigint")
        return await task
    finally:
        bus.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import uvloop

    from runtime.logs import configure_logging
    from runtime.rundir import RunDir, create_run_dir

    try:
        addresses = read_addresses(args)
    except (OSError, KeyError, ValueError) as exc:
        where = args.run if args.run is not None else args.bus
        print(f"bin/feed: cannot find the runtime's bus at {where}: {exc} (is the runtime running?)", file=sys.stderr)
        return 2
    try:
        config = load_feed_config(args)
    except ConfigError as exc:
        print(f"bin/feed: config error: {exc}", file=sys.stderr)
        return 2
    problem = check_event_files(config.feed)
    if problem:
        print(f"bin/feed: {problem}", file=sys.stderr)
        return 2
    # --run: log beside the runtime's actors; --bus: a run directory of the feed's own.
    rd = RunDir(args.run.resolve()) if args.run is not None else create_run_dir(config, "feed")
    rd.logs.mkdir(exist_ok=True)
    # Warnings (a short warm-up history, agent-pace timeouts) reach the terminal even when it is not a tty.
    log = configure_logging(log_file=rd.log_file(args.name), level=config.logging.level, console=True,
                            console_level="info" if sys.stderr.isatty() else "warning", actor=args.name, run=rd.run_id)
    print(f"bin/feed: {config.feed.source} -> {addresses.xsub} (log: {rd.log_file(args.name)})", file=sys.stderr)
    return uvloop.run(run_feed(args.name, config, rd.path, addresses, log))


if __name__ == "__main__":
    sys.exit(main())
