"""The tables of docs/experiments/walk.md from finished `bin/run evaluate --gate-walk` runs on the same test days.

    PYTHONPATH=. .venv/bin/python docs/experiments/walk_tables.py ARM=RUN_DIR[:RUN_ARM] ...

ARM names the arm in the table (none, blackout, llm, or another name for the llm arm under another setting, e.g.
llm@ELEVATED=/tmp/walk/news-elev:llm); RUN_DIR is an evaluate run directory, RUN_ARM the arm it played (default ARM).
The arms must have walked the same days with the same policy (the same market, --days, --train-days, --budgets and
seed: the walk-forward is reproducible; the script checks the policies' weights, normalizer and meta are the same
bytes; the checkpoint zip itself differs in SB3's saved `data`).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
import sys
from pathlib import Path

from actors.jobs.evaluation.lockstep_walk import WALK_DIR, gate_walk, walk_lines


def policy_digest(checkpoint: Path) -> str:
    """The policy's weights, normalizer and meta (what decides its actions), hashed."""
    digest = hashlib.sha256()
    with zipfile.ZipFile(checkpoint) as outer:
        for name in ("meta.json", "normalizer.npz"):
            digest.update(outer.read(name))
        with zipfile.ZipFile(io.BytesIO(outer.read("sb3_model.zip"))) as model:
            digest.update(model.read("policy.pth"))
    return digest.hexdigest()


def main(specs: list[str]) -> None:
    arms, policies = {}, set()
    for spec in specs:
        name, _, where = spec.partition("=")
        run, _, played = where.partition(":")
        evaluate = Path(run) / "evaluate"
        arm_dir = evaluate / f"{WALK_DIR}-{played or name}"
        metrics = json.loads((arm_dir / "backtest" / "metrics.json").read_text())
        walk = json.loads((evaluate / "gate_walk.json").read_text())
        recorded = walk["arms"][played or name]
        ages = {k: v for k, v in recorded.get("thought_ages", {}).items() if v is not None}
        arms[name] = (metrics, str(arm_dir), ages, recorded.get("elapsed_secs") or float("nan"))
        policies.add(policy_digest(Path(walk["policy_checkpoint"])))
    if len(policies) != 1:
        raise SystemExit(f"the runs played different policies ({len(policies)} checkpoints): no paired table")
    result = gate_walk(arms, walk["test_start_day"], walk["policy_checkpoint"])
    print("\n".join(walk_lines(result)))
    for arm in result.arms.values():
        print(f"{arm.name}: {arm.elapsed_secs / 60:.1f} min")


if __name__ == "__main__":
    main(sys.argv[1:])
