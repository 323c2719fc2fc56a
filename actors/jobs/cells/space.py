"""A sweep's SPACE.toml, typed: what the search varies, what it fixes, the walk-forward each trial runs, and how
many trials. docs/experiments/sweeps/*.toml are examples; a wrong key or value is an error naming the file and key.

    [sweep]
    trials = 20                # Optuna trials (a pruned one counts)
    seed = 0                   # the TPE sampler's seed
    parallel = 0               # trials in flight at once; 0 = as many as the cluster has CPUs for their cells
    pruner = "median"          # median (stop a trial whose running mean is below the median of the others at that fold) | none

    [walk_forward]             # as bin/run evaluate's flags; the last test_folds windows are the held-out test
    market = "regimes"
    validation_folds = 2
    test_folds = 1
    seeds = 1
    budgets = [50000, 100000]
    days = 660
    train_days = 400

    [fixed]                    # dotted settings every trial gets
    "env.management_actions" = false

    [space."policy.gamma"]     # one table per searched setting
    type = "float"             # float | int | categorical
    low = 0.95
    high = 0.995
    log = false
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from config.checks import Count, PositiveCount


class SweepSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    trials: PositiveCount = 20
    """Optuna trials, pruned ones included."""
    seed: int = 0
    """The sampler's seed: the same SPACE.toml proposes the same trials (and reads their cells from the cache)."""
    parallel: Count = 0
    """Trials in flight at once; 0 = the pool's CPUs divided by the seeds (one cell per seed a fold)."""
    pruner: Literal["median", "none"] = "median"
    """median: stop a trial whose mean over the validation folds so far is below the other trials' median there."""


class WalkForwardSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """bin/run evaluate's walk-forward flags, in their order (--market, --folds, --seeds, --budgets, --days,
    --train-days), with --folds split into the validation windows and the held-out test."""

    market: str = "regimes"
    """regimes | null | a bars file, as bin/run evaluate --market."""
    validation_folds: PositiveCount = 2
    """Walk-forward windows the trials are scored and pruned on."""
    test_folds: PositiveCount = 1
    """The newest windows, played once, by the best trial, at the end."""
    seeds: PositiveCount = 1
    """Seeds a trial trains at each fold (run.seed, run.seed + 1, ...); its score there is their mean."""
    budgets: list[PositiveCount] = msgspec.field(default_factory=lambda: [50_000, 100_000])
    """Training steps; a trial's score is the policy at the last one."""
    days: PositiveCount = 660
    """Trading days of a synthetic market."""
    train_days: PositiveCount = 400
    """Training days before the first validation window."""


class Param(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    type: Literal["float", "int", "categorical"]
    low: float | None = None
    high: float | None = None
    step: float | None = None
    log: bool = False
    choices: list[Any] | None = None


class Space(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    sweep: SweepSettings = SweepSettings()
    walk_forward: WalkForwardSettings = WalkForwardSettings()
    fixed: dict[str, Any] = {}
    space: dict[str, Param] = {}


class SpaceError(ValueError):
    pass


def load_space(path: Path) -> Space:
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise SpaceError(f"{path}: cannot read: {error}") from None
    try:
        space = msgspec.convert(data, Space)
    except msgspec.ValidationError as error:
        raise SpaceError(f"{path}: {error}") from None
    if not space.space:
        raise SpaceError(f"{path}: [space] names no setting to search")
    for key, param in space.space.items():
        check_param(path, key, param)
    for key in [*space.space, *space.fixed]:
        if key.startswith("data.") or "." not in key:
            raise SpaceError(f"{path}: {key!r}: a searched or fixed key is a dotted setting outside [data] "
                             "(every trial plays the same market: [walk_forward] sets it)")
    if sorted(space.walk_forward.budgets) != space.walk_forward.budgets:
        raise SpaceError(f"{path}: walk_forward.budgets must grow, got {space.walk_forward.budgets}")
    return space


def check_param(path: Path, key: str, param: Param) -> None:
    if param.type == "categorical":
        if not param.choices:
            raise SpaceError(f"{path}: space.{key!r}: a categorical setting needs choices = [...]")
        return
    if param.low is None or param.high is None or not param.low < param.high:
        raise SpaceError(f"{path}: space.{key!r}: a {param.type} setting needs low < high, got low={param.low}, high={param.high}")
    if param.log and param.low <= 0:
        raise SpaceError(f"{path}: space.{key!r}: log = true needs low > 0")


def distributions(space: Space) -> dict[str, Any]:
    """Optuna's distribution per searched setting."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    made = {}
    for key, p in space.space.items():
        if p.type == "categorical":
            made[key] = CategoricalDistribution([json.dumps(c) if isinstance(c, list) else c for c in p.choices])
        elif p.type == "int":
            made[key] = IntDistribution(int(p.low), int(p.high), step=int(p.step or 1), log=p.log)
        else:
            made[key] = FloatDistribution(p.low, p.high, step=p.step, log=p.log)
    return made


def setting_value(value: Any) -> Any:
    """A sampled value as the config reads it: a list choice (net_arch) is a JSON string to Optuna, whose
    categorical choices are scalars."""
    return json.loads(value) if isinstance(value, str) and value.startswith("[") else value
