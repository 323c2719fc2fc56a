"""``bin/run grid``: ``bin/run evaluate`` once per settings variant, in parallel processes, the results side by side.

    bin/run grid VARIANTS.toml [--parallel N] [--only A,B] [--run-dir DIR] [--set K=V ...] -- EVALUATE OPTIONS...

``VARIANTS.toml`` names one table per variant, each holding the dotted settings it changes
(``"policy.gamma" = 0.97``); an empty table is the defaults. Every variant runs the same
evaluate options (market, days, folds, budgets, seeds), so its test days, floors and oracle
are the same and only the settings differ. This is how the regimes-market sweeps were run (docs/experiments/README.md):
``RUN_DIR/grid.md`` gives each variant's out-of-sample $ a day per budget with its interval,
the best momentum rule and the oracle on the same days, and the share of halted bars; each variant's run directory
and log sit beside it (``RUN_DIR/NAME``, ``RUN_DIR/NAME.log``).

Several variants tried on the same test days are several trials: a winner picked from them is
judged with the deflated Sharpe that counts them (``bin/run evaluate --seeds`` on fresh days),
never by its row here alone. (``bin/run sweep`` is the other search: Optuna over a space, every trial in the ledger.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


class GridError(ValueError):
    """A variants file that cannot be read or names nothing to run: one line from bin/run, naming the file."""


def load_variants(path: Path) -> dict[str, dict[str, object]]:
    """{variant: {dotted key: value}} from a TOML file of one table per variant."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise GridError(f"{path}: cannot read: {error}") from None
    variants: dict[str, dict[str, object]] = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise GridError(f"{path}: {name!r} must be a table of dotted settings, got {type(table).__name__}")
        variants[name] = dict(_flatten(table))
    if not variants:
        raise GridError(f"{path} names no variant")
    return variants


def chosen(variants: dict[str, dict[str, object]], only: str, path: Path) -> dict[str, dict[str, object]]:
    """The variants ``only`` names (comma-separated; empty: all of them)."""
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    missing = sorted(set(wanted) - set(variants))
    if missing:
        raise GridError(f"--only names unknown variants {missing}; {path} has {sorted(variants)}")
    return {name: variants[name] for name in wanted} if wanted else variants


def _flatten(table: dict, prefix: str = ""):
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, dotted + ".")
        else:
            yield dotted, value


def override_text(value: object) -> str:
    """A value as ``--set`` reads it (TOML syntax)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(override_text(v) for v in value) + "]"
    return repr(value)


def evaluate_command(name: str, settings: dict[str, object], out: Path, evaluate_args: list[str]) -> list[str]:
    command = [sys.executable, "-m", "actors.jobs.cli", "evaluate", *evaluate_args, "--run-dir", str(out / name)]
    for key, value in settings.items():
        command += ["--set", f"{key}={override_text(value)}"]
    return command


def run_variant(name: str, command: list[str], out: Path) -> tuple[str, int, float]:
    started = time.monotonic()
    with open(out / f"{name}.log", "w") as log:
        code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return name, code, time.monotonic() - started


def result_rows(out: Path, names: list[str]) -> list[str]:
    """One Markdown row per variant: the policy at each budget, the momentum floor (its lookback per fold chosen on the
    training days) and the oracle ($ a day)."""
    lines = ["| variant | policy $/day by budget [95% interval] | trades (last budget) | halted | momentum $/day (lookback per fold) | oracle $/day | oracle share |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name in names:
        path = out / name / "evaluate" / "metrics.json"
        if not path.is_file():
            lines.append(f"| {name} | (no result: see {name}.log) | | | | | |")
            continue
        summary = json.loads(path.read_text())
        curve = "; ".join(f"{row['timesteps'] // 1000}k {_money(row['pnl_per_day'])} {_pair(row['pnl_per_day_interval'])}"
                          for row in summary["learning_curve"])
        variants = summary["variants"]
        momentum = variants[summary["momentum_floor"]]
        lookbacks = "/".join(str(choice["momentum_lookback"]) for choice in summary.get("floor_choices", []))
        oracle = variants.get("oracle", {}).get("pnl_per_day")
        share = summary.get("oracle_share")
        lines.append(f"| {name} | {curve} | {summary['policy']['trades']} | {_pct(summary['policy']['halted_share'])} | "
                     f"{_money(momentum['pnl_per_day'])} ({lookbacks or 'n/a'} bars) | {_money(oracle)} | "
                     f"{'n/a' if share is None else f'{share:.2f}'} |")
    return lines


def _money(value) -> str:
    return "n/a" if value is None else f"{value:+,.0f}"


def _pair(pair) -> str:
    return "" if not pair or None in pair else f"[{pair[0]:+,.0f}, {pair[1]:+,.0f}]"


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def shared_options(args: argparse.Namespace) -> list[str]:
    """The shared options every variant's evaluate takes too (--config, --set, --duration-secs, --quiet)."""
    out = ["--config", str(args.config)] if args.config else []
    for text in args.overrides:
        out += ["--set", text]
    if args.duration_secs is not None:
        out += ["--duration-secs", str(args.duration_secs)]
    return out + (["--quiet"] if args.quiet else [])


def mode_grid(args: argparse.Namespace) -> int:
    from actors.jobs.common import configure
    from runtime.rundir import create_run_dir

    if args.variants_file is None:
        raise GridError("grid: name the variants file: bin/run grid VARIANTS.toml [--parallel N] -- EVALUATE OPTIONS")
    variants = chosen(load_variants(args.variants_file), args.only, args.variants_file)
    for settings in variants.values():  # a misspelt key or a bad value: one ConfigError line now, before any run
        configure(args, settings)
    out = create_run_dir(configure(args), "grid", args.run_dir).path
    evaluate_args = [*args.evaluate_args, *shared_options(args)]
    parallel = args.parallel or max(1, (os.cpu_count() or 2) - 1)
    commands = {name: evaluate_command(name, settings, out, evaluate_args) for name, settings in variants.items()}
    print(f"grid: run directory {out}; {len(commands)} variants, {parallel} at a time, evaluate {' '.join(evaluate_args)}",
          file=sys.stderr, flush=True)
    failed = []
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        for name, code, secs in pool.map(lambda item: run_variant(item[0], item[1], out), commands.items()):
            print(f"grid: {name} exited {code} after {secs:.0f} s", file=sys.stderr, flush=True)
            failed += [name] if code else []
    table = "\n".join(result_rows(out, list(commands)))
    settings_lines = [f"- `{name}`: " + (", ".join(f"`{k}={override_text(v)}`" for k, v in s.items()) or "defaults")
                      for name, s in variants.items()]
    (out / "grid.md").write_text(f"evaluate {' '.join(evaluate_args)}\n\n" + "\n".join(settings_lines) + "\n\n" + table + "\n")
    print(table)
    if failed:
        print(f"grid: {len(failed)} of {len(commands)} variants failed ({', '.join(failed)}): see {out}/NAME.log", file=sys.stderr)
    return 1 if failed else 0
