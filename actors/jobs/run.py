"""Mode run: the broker and the configured actors until Ctrl-C or --duration-secs."""

from __future__ import annotations

import argparse

from actors.jobs.common import JobError, configure, format_table, run_job
from actors.risk.config import live_refusal


def mode_run(args: argparse.Namespace) -> int:
    config = configure(args)
    if refused := live_refusal(config.risk):
        raise JobError(refused)
    result = run_job(config, "run", run_dir=args.run_dir, quiet=args.quiet)
    print(format_table([("elapsed_secs", result.elapsed_secs), ("run_dir", str(result.run_dir.path))], "run stopped"))
    return result.exit_code
