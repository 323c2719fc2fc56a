"""The files a mode's options name, read before any work: a job that trains for minutes and then finds its test file
broken has wasted the minutes.

``check_option_files(args, settings)`` reads each file an option names (``--data``: the bars, ``--model``: the policy
checkpoint, ``--adapter``: the GGUF adapter) and raises the error that names the file, row and column (bin/run prints
it as one line: actors/jobs/cli.py ``USER_ERRORS``). main and ablation call it first; the modes that start the
runtime at once meet the same checks in run_job (actors/jobs/common.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from actors.env import check_data
from actors.jobs.backtest import data_file_settings
from actors.jobs.common import configure
from actors.jobs.lora import adapter_file_settings
from actors.jobs.train import policy_checkpoint
from actors.reasoner import check_model_files


def check_option_files(args: argparse.Namespace, settings: dict[str, Any] | None = None) -> None:
    """Read every file ``args`` names (``settings``: the job's own, under which the data is read)."""
    settings = dict(settings or {})
    if getattr(args, "model", None) is not None:
        policy_checkpoint(Path(args.model))
    if getattr(args, "data", None) is not None:
        check_data(configure(args, {**settings, **data_file_settings(Path(args.data))}))
    if getattr(args, "adapter", None) is not None:
        check_model_files(configure(args, {**settings, **adapter_file_settings(Path(args.adapter))}).reasoner)
