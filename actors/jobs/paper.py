"""Mode paper: the loop follows a live feed's bars (md.bar) until Ctrl-C; the env writes as it goes.

Attach a feed from another terminal (``bin/feed --run RUN_DIR --source ...``), or list ``"feed"`` in
runtime.actors. The env actor in paper mode is actors/env/paper_actor.py over actors/env/live.py.
At stop the job prints the env's summary (<run_dir>/<env.paper_dir>/summary.json): decisions, trades,
equity, how fresh the LLM's thoughts were and the lag from a bar to its verdict.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from actors import ENV
from actors.jobs.common import JobStopped, configure, format_table, run_job
from actors.jobs.train import policy_checkpoint
from config.schema import Config
from runtime.supervisor import EXIT_OK

PAPER_SETTINGS = {"env.mode": "paper", "env.n_envs": 1, "policy.learn": False}
"""One account, a frozen policy (a learning one would train on the live bars)."""
SUMMARY_ROWS = (
    "feed_bars", "decisions", "trades", "equity", "thoughts_used", "fresh_thought_share", "llm_staleness_mean_bars",
    "llm_staleness_max_bars", "query_rate", "veto_rate", "bar_to_verdict_p50_ms", "bar_to_verdict_p99_ms",
    "duplicate_bars", "bars_without_decision", "feed_silent", "flattened_feed_silent",
)


def paper_settings(model: Path | None) -> dict[str, Any]:
    settings: dict[str, Any] = dict(PAPER_SETTINGS)
    if model is not None:
        settings["policy.model_path"] = str(policy_checkpoint(model))
    return settings


def print_paper_summary(run_dir: Path, config: Config) -> None:
    out_dir = run_dir / config.env.paper_dir
    path = out_dir / "summary.json"
    if not path.is_file():
        print(f"paper trading stopped; no summary was written (see {run_dir}/logs/{ENV}.jsonl)")
        return
    summary = json.loads(path.read_text())
    rows = [(key, summary[key]) for key in SUMMARY_ROWS if key in summary]
    print(format_table(rows, "paper trading stopped"))
    if summary.get("thoughts_used"):
        print(f"\nLLM staleness: {summary.get('fresh_thought_share', 0.0):.0%} of the decisions with a thought used one at most 1 bar old "
              f"(mean {summary.get('llm_staleness_mean_bars', 0.0):.2f} bars, max {summary.get('llm_staleness_max_bars', 0.0):.0f}).")
    else:
        print("\nLLM staleness: no decision had a thought (no reasoner, or it had not finished one yet).")
    print(f"files: {out_dir}/equity.csv positions.jsonl trades.jsonl decisions.jsonl")
    if (out_dir / "report" / "report.html").is_file():
        print(f"report: {out_dir}/report/report.html")


def mode_paper(args: argparse.Namespace) -> int:
    config = configure(args, paper_settings(args.model))
    run_dir = args.run_dir
    try:
        result = run_job(config, "paper", run_dir=run_dir, quiet=args.quiet)
        run_dir = result.run_dir.path
    except JobStopped as stopped:  # Ctrl-C is how paper trading ends: a clean stop
        run_dir = stopped.run_dir
    print_paper_summary(Path(run_dir), config)
    return EXIT_OK
