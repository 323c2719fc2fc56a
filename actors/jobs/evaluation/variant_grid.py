"""Run ``bin/run evaluate`` once per settings variant, in parallel processes, and put the results side by side.

    python -m actors.jobs.evaluation.variant_grid --variants variants.toml --out DIR [--parallel N] -- EVALUATE_ARGS...

``variants.toml`` names one table per variant, each holding the dotted settings it changes
(``"policy.gamma" = 0.97``); an empty table is the defaults. Every variant runs the same
evaluate arguments (market, days, folds, budgets, seeds), so its test days, floors and oracle
are the same and only the settings differ. This is how the regimes-market sweeps were run (docs/experiments/README.md): the
table ``DIR/sweep.md`` gives each variant's out-of-sample $ a day per budget with its interval,
the best momentum rule and the oracle on the same days, and the share of halted bars.

Several variants tried on the same test days are several trials: a winner picked from them is
judged with the deflated Sharpe that counts them (``bin/run evaluate --seeds`` on fresh days),
never by its row here alone.
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


def load_variants(path: Path) -> dict[str, dict[str, object]]:
    """{variant: {dotted key: value}} from a TOML file of one table per variant."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise SystemExit(f"sweep: cannot read {path}: {error}") from None
    variants: dict[str, dict[str, object]] = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise SystemExit(f"sweep: {path}: {name!r} must be a table of dotted settings, got {type(table).__name__}")
        variants[name] = dict(_flatten(table))
    if not variants:
        raise SystemExit(f"sweep: {path} names no variant")
    return variants


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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    evaluate_args = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="python -m actors.jobs.evaluation.variant_grid", description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", type=Path, required=True, help="TOML file: one table of dotted settings per variant")
    parser.add_argument("--out", type=Path, required=True, help="directory for each variant's run directory, log and sweep.md")
    parser.add_argument("--parallel", type=int, default=max(1, (os.cpu_count() or 2) - 1), help="variants run at once")
    parser.add_argument("--only", default="", help="comma-separated variant names to run (default: all)")
    args = parser.parse_args(own)
    variants = load_variants(args.variants)
    if args.only:
        wanted = [name.strip() for name in args.only.split(",") if name.strip()]
        missing = sorted(set(wanted) - set(variants))
        if missing:
            raise SystemExit(f"sweep: --only names unknown variants {missing}; {args.variants} has {sorted(variants)}")
        variants = {name: variants[name] for name in wanted}
    args.out.mkdir(parents=True, exist_ok=True)
    commands = {name: evaluate_command(name, settings, args.out, evaluate_args) for name, settings in variants.items()}
    print(f"sweep: {len(commands)} variants, {args.parallel} at a time, evaluate {' '.join(evaluate_args)}", file=sys.stderr, flush=True)
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        for name, code, secs in pool.map(lambda item: run_variant(item[0], item[1], args.out), commands.items()):
            print(f"sweep: {name} exited {code} after {secs:.0f} s", file=sys.stderr, flush=True)
    table = "\n".join(result_rows(args.out, list(commands)))
    settings_lines = [f"- `{name}`: " + (", ".join(f"`{k}={override_text(v)}`" for k, v in s.items()) or "defaults")
                      for name, s in variants.items()]
    (args.out / "sweep.md").write_text(f"evaluate {' '.join(evaluate_args)}\n\n" + "\n".join(settings_lines) + "\n\n" + table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
