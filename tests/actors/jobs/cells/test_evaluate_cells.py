"""bin/run evaluate's cells on a two-node Ray cluster: the same table as the one-process run, both nodes used,
and a rerun read back from the cache."""

from __future__ import annotations

import json

import pytest

from actors.jobs.cli import main

pytestmark = pytest.mark.slow

TINY = ["evaluate", "--market", "regimes", "--quick", "--days", "30", "--train-days", "10", "--folds", "2", "--seeds", "2", "--budgets", "256,512",
        "--set", "policy.n_steps=128", "--set", "policy.batch_size=64", "--quiet"]
"""Two folds x two seeds, an update every 128 steps per env: 2 regime, 2 reference, 4 policy and 4 ensemble cells."""


def ledger(tmp_path, name: str) -> list[str]:
    """Each run its own trials ledger: the deflated Sharpe counts the runs a ledger holds, and these runs must not
    count each other."""
    return ["--set", f"run.trials_path={tmp_path / (name + '.jsonl')}"]


def metrics(run_dir):
    figures = json.loads((run_dir / "evaluate" / "metrics.json").read_text())
    return figures.pop("cells"), {k: v for k, v in figures.items() if k not in ("elapsed_secs", "ledger")}  # where, and how long


def test_evaluate_on_two_nodes_gives_the_one_process_table_and_a_rerun_reads_the_cache(two_nodes, tmp_path):
    assert main([*TINY, *ledger(tmp_path, "one"), "--ray", "off", "--run-dir", str(tmp_path / "one")]) == 0
    assert main([*TINY, *ledger(tmp_path, "ray"), "--ray", two_nodes.address, "--run-dir", str(tmp_path / "ray")]) == 0
    one_cost, one = metrics(tmp_path / "one")
    ray_cost, on_ray = metrics(tmp_path / "ray")

    assert on_ray == one  # every figure, the success table among them
    assert on_ray["variants"]["ensemble@512"]["trades"] == one["variants"]["ensemble@512"]["trades"]
    assert ray_cost["cells"] == one_cost["cells"] == 12 and ray_cost["cells_cached"] == 0
    assert ray_cost["nodes"] == 2 and one_cost["nodes"] == 1  # both nodes ran cells
    assert ray_cost["cpu_hours"] > 0 and "CPU-hours" in (tmp_path / "ray" / "evaluate" / "report.md").read_text()

    assert main([*TINY, *ledger(tmp_path, "again"), "--ray", two_nodes.address, "--run-dir", str(tmp_path / "ray")]) == 0  # again
    again_cost, again = metrics(tmp_path / "ray")
    assert again == one and again_cost["cells_cached"] == 12 and again_cost["cpu_hours"] == 0
