"""``bin/run``: start the runtime in one of its modes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from config.loader import ConfigError

MODES = {
    "main": "the default job: a short hybrid training on the configured data (synthetic NQ by default) with the LLM thinking, then a backtest report on held-out data",
    "run": "start the broker and the configured actors ([runtime].actors) and keep them running until Ctrl-C or --duration-secs",
    "train": "train the policy inside the full decision loop (env, policy, reasoner, fusion, risk) for --timesteps steps",
    "backtest": "run the loop with a frozen policy (--model) on held-out data (or --data FILE) and write a report",
    "ablation": "train once, then backtest each variant (RL only, rule/neural fusion, single-shot/four-step thoughts, with/without risk veto) and write one table",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bin/run",
        description="Start the thinking futures-trading agent: a ZeroMQ broker plus one OS process per actor.",
        epilog="Modes:\n" + "\n".join(f"  {name:<9} {text}" for name, text in MODES.items())
        + "\n\nEvery run gets a directory (printed at start) with the resolved config, one JSON-lines log per actor"
        " (follow them with bin/tail), bus addresses, checkpoints and reports.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("mode", nargs="?", default="main", choices=list(MODES), help="what to run (default: main)")
    parser.add_argument("--config", type=Path, help="a TOML file merged over config/default.toml")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="override one config key (TOML value syntax; repeatable), e.g. --set env.n_envs=4",
    )
    parser.add_argument("--run-dir", type=Path, help="use this run directory instead of runs/<timestamp>-<mode>")
    parser.add_argument("--duration-secs", type=float, help="stop cleanly after this many seconds (same as --set run.duration_secs=...)")
    parser.add_argument("--timesteps", type=int, help="train/main/ablation: environment steps to train for")
    parser.add_argument("--model", type=Path, help="backtest: the policy checkpoint to evaluate (a file or a run directory)")
    parser.add_argument("--data", type=Path, help="backtest: a CSV/Parquet file of bars to test on instead of the held-out split")
    parser.add_argument("--resume", type=Path, help="train: continue from the last checkpoint of this run directory")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or console log lines, only the final summary")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from runtime import jobs

    try:
        return jobs.run_mode(args)
    except ConfigError as exc:
        print(f"bin/run: config error: {exc}", file=sys.stderr)
        return 2
    except jobs.JobError as exc:
        print(f"bin/run: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
