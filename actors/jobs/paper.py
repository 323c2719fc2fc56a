"""Mode paper: the loop follows a live feed's bars (md.bar) until Ctrl-C; the env writes as it goes.

Attach a feed from another terminal (``bin/feed --run RUN_DIR --source ...``), or list ``"feed"`` in
runtime.actors. The env actor in paper mode is actors/env/paper_actor.py over actors/env/live.py.
At stop the job prints the env's summary (<run_dir>/<env.paper_dir>/summary.json): decisions, trades,
equity, how fresh the LLM's thoughts were and the lag from a bar to its verdict, what became of the
thoughts (arrived, used, dropped as stale, late, fallbacks) and, where none was used or no decision was
made, the measured cause.

- ``--lockstep``: the main job's hybrid-phase preset (env.thought_lag_steps = 1, single-shot thoughts, a
  query on every bar): each decision waits, up to env.thought_wait_deadline_ms, for the previous bar's thought.
  With ``bin/feed --speed agent`` a replay then runs at the LLM's pace with a thought in every decision.
- ``--until-feed-done``: stop when the attached feed has played its bars (sys.done from a feed), not on Ctrl-C.
- ``--write-bars FILE``: write ``--days`` sessions of the seeded synthetic market (NQ at about 16,000, quarter
  ticks) as a vendor-style CSV (``timestamp,open,high,low,close,volume``, US/Eastern) and exit: a file to
  replay with ``bin/feed --source replay --path FILE --start ...``, nothing downloaded.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from actors import ENV
from actors.common.figures import labelled
from actors.env.pacing import unused_thoughts_cause
from actors.jobs.common import JobError, JobStopped, configure, format_table, run_job
from actors.jobs.config import Config
from actors.jobs.presets import LOCKSTEP, PAPER, Preset
from actors.jobs.train import policy_checkpoint
from actors.risk.config import live_refusal
from bus.messages import Done
from runtime.supervisor import EXIT_OK

SUMMARY_ROWS = (
    "feed_bars", "history_bars", "decisions", "trades", "equity", "thoughts_arrived", "thoughts_used", "thoughts_dropped_stale",
    "thoughts_late", "thoughts_fallback", "thought_age_mean_bars", "thought_age_mean_secs", "thought_latency_mean_ms",
    "fresh_thought_share", "llm_staleness_mean_bars", "llm_staleness_max_bars", "query_rate", "veto_rate",
    "bar_to_verdict_p50_ms", "bar_to_verdict_p99_ms", "decision_latency_p50_ms", "thought_wait_secs", "bar_interval_mean_secs", "duplicate_bars", "bars_without_decision",
    "feed_silent", "flattened_feed_silent",
)
WRITE_BARS_START_PRICE = 16_000.0
"""--write-bars: NQ's level of late 2023, where the issue's real file traded (prompts must survive it)."""


def paper_presets(lockstep: bool = False) -> list[Preset]:
    """PAPER, with --lockstep the main job's LOCKSTEP beside it."""
    return [PAPER, LOCKSTEP] if lockstep else [PAPER]


def paper_settings(model: Path | None) -> dict[str, Any]:
    return {} if model is None else {"policy.model_path": str(policy_checkpoint(model))}


def write_vendor_bars(path: Path, *, days: int, seed: int, start_date: str = "2023-11-27", market: str = "regimes",
                      settings: Any = None) -> list[str]:
    """``days`` synthetic sessions of ``market`` (a registered market, data.scenario; ``settings``: the [data] section
    for its own keys) as a vendor CSV (naive US/Eastern timestamps); returns each session's 09:30 bar time."""
    from actors.common.markets import MarketRequest, make_market

    frame = make_market(market, MarketRequest(days, seed, WRITE_BARS_START_PRICE, start_date, settings=settings)).bars
    local = frame.index.tz_convert("America/New_York")
    out = frame.reset_index(drop=True)
    out.insert(0, "timestamp", local.strftime("%Y-%m-%d %H:%M:%S"))
    path.parent.mkdir(parents=True, exist_ok=True)
    out[["timestamp", "open", "high", "low", "close", "volume"]].to_csv(path, index=False)
    return sorted({stamp for stamp in local.strftime("%Y-%m-%d %H:%M") if stamp.endswith("09:30")})


def print_paper_summary(run_dir: Path, config: Config) -> None:
    out_dir = run_dir / config.env.paper_dir
    path = out_dir / "summary.json"
    if not path.is_file():
        print(f"paper trading stopped; no summary was written (see {run_dir}/logs/{ENV}.jsonl)")
        return
    summary = json.loads(path.read_text())
    rows = [(key, "n/a" if summary[key] is None else summary[key]) for key in SUMMARY_ROWS if key in summary]
    print(format_table(labelled(rows), "paper trading stopped"))
    known, needed = int(summary.get("warmup_bars_known", 0)), int(summary.get("warmup_bars_needed", 0))
    if not summary.get("decisions") and needed and known < needed:
        print(f"\nno decisions: the run ended during the feature warm-up ({known} of {needed} bars). Replay with bin/feed --start T: "
              f"the {needed} bars before T then warm up at once (--warmup-bars N), and decisions start at T.")
    if summary.get("thoughts_used"):
        print(f"\nLLM: {summary['thoughts_used']:.0f} of {summary.get('decisions', 0):.0f} decisions used a thought; "
              f"{summary.get('fresh_thought_share', 0.0):.0%} of them at most 1 bar old "
              f"(mean {summary.get('llm_staleness_mean_bars', 0.0):.2f} bars, max {summary.get('llm_staleness_max_bars', 0.0):.0f}).")
    elif summary.get("decisions"):
        print(f"\nLLM: no decision used a thought: {summary.get('thoughts_unused_cause') or unused_thoughts_cause(summary)}.")
    print(f"files: {out_dir}/equity.csv positions.jsonl trades.jsonl decisions.jsonl")
    if (out_dir / "report" / "report.html").is_file():
        print(f"report: {out_dir}/report/report.html")


def feed_done(msg) -> bool:
    """A feed attached with bin/feed (actor name feed, or another given with --name) played its bars."""
    return isinstance(msg, Done) and msg.actor.startswith("feed")


def session_span(opens: list[str], max_listed: int = 4) -> str:
    """The sessions' opens for a one-line message: all of a few, else the first and last two (200 would fill a screen)."""
    if len(opens) <= max_listed:
        return ", ".join(opens)
    return f"{', '.join(opens[:2])}, ... {', '.join(opens[-2:])}"


def mode_paper(args: argparse.Namespace) -> int:
    if getattr(args, "write_bars", None) is not None:
        days = args.days or 2
        config = configure(args)
        opens = write_vendor_bars(args.write_bars, days=days, seed=config.run.seed, market=config.data.scenario, settings=config.data)
        print(f"wrote {days * 390} bars ({days} sessions, NQ from {WRITE_BARS_START_PRICE:,.0f}) to {args.write_bars}; "
              f"sessions open at {session_span(opens)} (US/Eastern)")
        return EXIT_OK
    config = configure(args, paper_settings(args.model), paper_presets(getattr(args, "lockstep", False)))
    if refused := live_refusal(config.risk):
        raise JobError(refused)
    run_dir = args.run_dir
    try:
        result = run_job(config, "paper", run_dir=run_dir, quiet=args.quiet, progress_actor=ENV, progress_label="paper",
                         stop_when=feed_done if getattr(args, "until_feed_done", False) else None)
        run_dir = result.run_dir.path
    except JobStopped as stopped:  # Ctrl-C is how paper trading ends: a clean stop
        run_dir = stopped.run_dir
    print_paper_summary(Path(run_dir), config)
    return EXIT_OK
