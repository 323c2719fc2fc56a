"""``bin/run evaluate``: walk-forward evidence that the policy learns, against floors, a ceiling and the null market.

    bin/run evaluate [--market regimes|null|realistic|realistic_null|news|news_null|FILE [FILE ...]] [--folds K] [--seeds N] [--budgets 10000,50000,200000] [--quick]
                     [--lockstep-decisions N [--adapter ADAPTER.gguf]]

Writes ``<run>/evaluate/metrics.json`` (key ``success_table``), ``report.md`` and
``learning_curve.png``, and prints the success table and a one-line verdict. ``--lockstep-decisions N`` adds a
lockstep backtest of the last fold's policy through the actors (actors/jobs/evaluation/lockstep_evidence.py: the
fusion, LLM accuracy and RL/LLM agreement rows, metrics.json key ``lockstep``).

Every variant's test days are appended to the trials ledger (``run.trials_path``, default ``<runs_dir>/trials.jsonl``;
actors/jobs/evaluation/ledger.py) as soon as they exist (before the lockstep half), and the deflated Sharpe counts every
policy trial the ledger holds for the market, reruns included; it deflates the policy row, itself one of the trials
(``deflated_variant``: the one seed's, or the seeds' mean recorded as a trial).
The policy's settings (decision cadence, minimum hold, turnover charge, entropy; ``--policy-grid``) are chosen per fold
on the last quarter of its training days, each candidate a trial of the ledger (actors/jobs/evaluation/cadence.py).
The momentum and regime floors are chosen on each fold's training days (actors/jobs/evaluation/floors.py); SPA, the
reality check and StepM (arch) test every candidate; the minimum track record says how many test days a verdict needs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec
import numpy as np

from actors.common.markets import market_names
from actors.env.factory import build_dataset
from actors.common.instruments import resolve_instrument
from actors.jobs.common import EXIT_OK, JobError, configure
from actors.jobs.inputs import check_option_files
from actors.jobs.evaluation.cadence import GRID, QUICK_GRID, grid_for
from actors.jobs.evaluation.calibration import calibration_lines, dataset_frame, what_the_market_shows
from actors.jobs.evaluation.evidence import REGIME_RULE, Row, summarise
from actors.jobs.evaluation.diagnostics import diagnostic_lines
from actors.jobs.evaluation.floors import RULE_FLOORS
from actors.jobs.evaluation.rule_ratio import rule_choice_text, rule_ratio_lines
from actors.jobs.evaluation.ledger import append_trials, config_hash, current_commit, ledger_path, read_trials_or_stop, utc_now
from actors.jobs.evaluation.trials import ledger_market, ledger_trials, walk_forward_records
from actors.jobs.evaluation.folds import bars_per_session, purge_days_for, too_few_days
from actors.jobs.evaluation.lockstep_evidence import check_lockstep_ready, run_lockstep_evidence
from actors.jobs.evaluation.lockstep_walk import run_gate_walk, walk_gates, walk_lines
from actors.jobs.evaluation.lockstep_report import interval, lockstep_lines, num
from actors.jobs.evaluation.news_rows import NEWS_NOTE, news_floor_lines, news_floor_rows
from actors.env.hindsight import barrier_spec
from actors.jobs.cells.pool import cost_markdown
from actors.jobs.cells.walkforward import evaluate_on_cells
from actors.jobs.evaluation.summary import Deflation, Snooping, Summary
from actors.jobs.evaluation.walkforward import plan_walk_forward
from actors.jobs.config import Config
from runtime.rundir import create_run_dir

QUICK = {"days": 400, "folds": 2, "seeds": 1, "budgets": (25_000, 50_000, 75_000, 100_000), "train_share": 0.625}
FULL = {"days": 700, "folds": 3, "seeds": 3, "budgets": (25_000, 50_000, 100_000, 150_000, 200_000), "train_share": 0.57}
"""The first fold trains on ``train_share`` of the days (--quick: 250 of 400, two test windows of 74 days; full: 398 of
700, three of 100), unless --train-days says otherwise. The regimes-market sweeps (docs/experiments/README.md) trained on 500 days
and found the out-of-sample P&L highest near 100k steps (+$249..+$345 a day over 3 seeds, momentum +$263), falling again
by 400k: hence the largest budgets. The curve has 4-5 points: a seed trains once, stopping at each budget to
play the test window, so the points below the largest cost a test play each, not a training run."""
"""Synthetic days are cheap, and a policy trained on a few dozen days memorises their noise (on 44 days, in
sample +$1,259 a day and out of sample -$95), so every fold trains on at least a few hundred days."""


def plan(args: argparse.Namespace) -> dict:
    preset = dict(QUICK if args.quick else FULL)
    if args.folds:
        preset["folds"] = args.folds
    if args.seeds is not None:
        preset["seeds"] = args.seeds
    if args.budgets:
        preset["budgets"] = tuple(sorted(parse_budgets(args.budgets)))
    if args.days:
        preset["days"] = args.days
    preset["train_days"] = getattr(args, "train_days", None)
    grid = getattr(args, "policy_grid", None) or ("quick" if args.quick else "full")
    preset["policy_grid"] = {"full": GRID, "quick": QUICK_GRID, "off": ()}[grid]
    return preset


def first_train_days(settings: dict, n_days: int, purge_days: int) -> int:
    """--train-days, else the preset's share of the data's days (a file's own count), leaving each fold a test day."""
    if settings["train_days"]:
        return settings["train_days"]
    room = n_days - purge_days - settings["folds"]
    return max(10, min(int(n_days * settings["train_share"]), room))


def parse_budgets(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise JobError(f"--budgets takes step counts separated by commas (10000,50000), got {text!r}") from None
    if not values or min(values) < 1:
        raise JobError(f"--budgets needs positive step counts, got {text!r}")
    return values


def market_settings(market: str | list[str], days: int) -> dict:
    """The [data] keys of ``--market``: a synthetic scenario, or one or more bars files joined into one calendar
    (actors/common/bar_join.py; their paths joined by os.pathsep in data.path)."""
    markets = [market] if isinstance(market, str) else list(market)
    if len(markets) == 1 and markets[0] in market_names():  # a registered market (actors/common/markets.py)
        return {"data.source": "synthetic", "data.scenario": markets[0], "data.synthetic_days": days}
    for name in markets:
        if not Path(name).is_file():
            raise JobError(f"--market takes {' | '.join(market_names())} or bars files; no file {name}")
    return {"data.source": "file", "data.path": os.pathsep.join(str(Path(name).resolve()) for name in markets)}


def market_has_events(markets: list[str]) -> bool:
    """A registered synthetic market that carries events (actors/common/news_market.py); a file's never does here."""
    from actors.common.news_market import NEWS_SCENARIOS

    return all(name in NEWS_SCENARIOS for name in markets)


def mode_evaluate(args: argparse.Namespace) -> int:
    settings = plan(args)
    markets = args.market if isinstance(args.market, list) else [args.market or "regimes"]
    market = " + ".join(markets)
    data = market_settings(markets, settings["days"])
    config: Config = configure(args, {**data, "run.name": f"evaluate-{Path(markets[0]).stem}"})
    lockstep_decisions = getattr(args, "lockstep_decisions", None)
    if lockstep_decisions is not None and lockstep_decisions < 1:
        raise JobError(f"--lockstep-decisions takes a positive number of decisions, got {lockstep_decisions}")
    gate_walk = getattr(args, "gate_walk", None)
    if getattr(args, "adapter", None) is not None and lockstep_decisions is None and gate_walk is None:
        raise JobError("evaluate --adapter needs --lockstep-decisions N (the adapter is compared in the lockstep backtest)")
    if gate_walk is not None:
        gate_walk = walk_gates(gate_walk, market_has_events(markets), market)
    lockstep_window = getattr(args, "lockstep_window", None) or "all"
    if lockstep_window != "all" and lockstep_decisions is None:
        raise JobError(f"evaluate --lockstep-window {lockstep_window} needs --lockstep-decisions N (the most decisions played)")
    if lockstep_window == "events" and not market_has_events(markets):
        raise JobError(f"evaluate --lockstep-window events needs a market with events (news, news_null, news_drift), got {market}")
    fusion_warmup = getattr(args, "fusion_warmup", None) or 0
    if fusion_warmup and lockstep_decisions is None:
        raise JobError("evaluate --fusion-warmup needs --lockstep-decisions N (it teaches the fusion network of the lockstep runs)")
    if fusion_warmup < 0:
        raise JobError(f"--fusion-warmup takes a positive number of decisions, got {fusion_warmup}")
    check_option_files(args)  # --adapter: a file that is no GGUF stops the job now, not after the walk-forward
    needs_model = lockstep_decisions or (gate_walk and "llm" in gate_walk)  # --gate-walk none blackout runs without the LLM
    adapter = check_lockstep_ready(config, getattr(args, "adapter", None)) if needs_model else {}
    ledger = ledger_path(config.run)
    _read_ledger(ledger)  # a corrupt ledger stops the run now, not after the training
    commit = current_commit()  # the code that runs (a commit made while it trains is not it)
    instrument = resolve_instrument(config.instrument)
    seed = config.data.seed if config.data.seed >= 0 else config.run.seed
    dataset = build_dataset(config.data, config.account, seed, instrument.tick_size, symbol=instrument.symbol)  # a bad file stops here
    rd = create_run_dir(config, "evaluate", args.run_dir)
    out = rd.path / "evaluate"
    out.mkdir(parents=True, exist_ok=True)
    seeds = [config.run.seed + k for k in range(settings["seeds"])]
    purge = purge_days_for(config.lora.hindsight_horizon_bars, bars_per_session(dataset.session_starts, len(dataset)))
    n_days = len(dataset.session_starts)
    train_days = first_train_days(settings, n_days, purge)
    shortfall = too_few_days(n_days, train_days, purge, settings["folds"])
    if shortfall and not settings["train_days"] and not 1 <= train_days <= n_days - purge - settings["folds"]:
        raise JobError(f"{dataset.source}: {shortfall}")
    if not 1 <= train_days <= n_days - purge - settings["folds"]:
        raise JobError(f"--train-days {train_days} leaves no test days: {n_days} days, a purge of {purge} and "
                       f"{settings['folds']} fold(s) allow at most {n_days - purge - settings['folds']}")
    say = (lambda _t: None) if args.quiet else (lambda text: print(f"evaluate: {text}", file=sys.stderr, flush=True))
    say(f"run directory {rd.path}; market {market} ({dataset.source}), {len(dataset.session_starts)} days, "
        f"{settings['folds']} folds, seeds {seeds}, budgets {list(settings['budgets'])}, purge {purge} day(s), embargo 1")
    if shortfall:  # it runs (the machinery can be checked on a short file), and says what its figures are worth
        print(f"evaluate: WARNING {dataset.source}: {shortfall}", file=sys.stderr, flush=True)
    started = time.monotonic()
    if settings["policy_grid"] and not grid_for(config, settings["policy_grid"], min(settings["budgets"])):
        say(f"policy settings as configured: a first budget of {min(settings['budgets']):,} steps is below one PPO rollout "
            f"({config.policy.n_steps * config.env.n_envs:,} steps), so the candidates of --policy-grid would not train")
    cells_plan = plan_walk_forward(config, dataset, n_folds=settings["folds"], seeds=seeds, budgets=list(settings["budgets"]),
                                   purge_days=purge, min_train_days=train_days, policy_grid=settings["policy_grid"],
                                   stand_aside=bool(getattr(args, "stand_aside", False)))
    result, cells_cost = evaluate_on_cells(args, cells_plan, market, rd.path, say)  # actors/jobs/cells: local Ray, a cluster or this process
    walk_forward_secs = time.monotonic() - started
    market_key = ledger_market(config)  # the name train and the main job file their trials under too
    # The test returns exist now: into the ledger before the lockstep half, so a run stopped there is still counted.
    append_trials(ledger, walk_forward_records(result, config.account.start_balance, config_hash=config_hash(config),
                                               commit=commit, date=utc_now(), base_seed=config.run.seed,
                                               market=market_key))
    trials = ledger_trials(_read_ledger(ledger), market_key)
    say(f"trials ledger {ledger}: {trials.count} policy trials on this market from {trials.runs} run(s)")
    lockstep = (run_lockstep_evidence(args, data, dataset, result, out, lockstep_decisions, adapter, say,
                                      fusion_warmup=fusion_warmup, purge_days=purge, window=lockstep_window)
                if lockstep_decisions else None)
    walk = run_gate_walk(args, data, dataset, result, out, gate_walk, adapter, say) if gate_walk else None
    summary = summarise(result, config.account.start_balance, lockstep, trials)
    if summary.lockstep is not None:
        summary.lockstep["elapsed_secs"] = time.monotonic() - started - walk_forward_secs
    summary = msgspec.structs.replace(
        summary, deflation=msgspec.structs.replace(summary.deflation, ledger=str(ledger)),
        market_shows=what_the_market_shows(market), calibration=calibration_lines(dataset_frame(dataset), market),
        elapsed_secs=walk_forward_secs,
        news_floors=news_floor_rows(dataset, result.folds, barrier_spec(
            instrument, config.lora.hindsight_horizon_bars, config.lora.hindsight_stop_atr, config.lora.hindsight_target_atr),
            contracts=config.env.contracts_per_trade),
        cells=cells_cost,
        folds_days=[{"fold": f.index, "train_days": [f.train_start_day, f.train_stop_day - 1],
                     "test_days": [f.test_start_day, f.test_stop_day - 1]} for f in result.folds])
    (out / "metrics.json").write_text(json.dumps(_json_ready({**summary.to_json(), **({"gate_walk": walk.to_json()} if walk else {})}), indent=2))
    (out / "report.md").write_text(report_markdown(summary) + cost_markdown(cells_cost))
    draw_learning_curve(summary, out / "learning_curve.png")
    print(console_summary(summary))
    if walk is not None:
        print("\n" + "\n".join(walk_lines(walk)))
    if shortfall:
        print(f"\nno verdict: {shortfall}")
    print(f"\nreport: {out / 'report.md'}\nmetrics: {out / 'metrics.json'}\nlearning curve: {out / 'learning_curve.png'}")
    return EXIT_OK


def _read_ledger(path: Path) -> list:
    return read_trials_or_stop(path, "evaluate")


def _json_ready(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        return _json_ready(value.item())
    return value


def success_lines(rows: Sequence[Row]) -> list[str]:
    lines = ["| figure | value | 95% interval | target | verdict | note |", "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row.figure} | {num(row.value, '.3f')} | {interval((row.low, row.high), '.3f')} | "
                     f"{row.target} | {row.verdict} | {row.note} |")
    return lines


def variant_lines(summary: Summary) -> list[str]:
    lines = ["| variant | $ per day | 95% interval | daily Sharpe | trades | median trades a day | win rate | halted bars | breaches |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, v in summary.variants.items():
        lines.append(f"| {name} | {num(v.pnl_per_day, ',.0f')} | {interval(v.pnl_per_day_interval, ',.0f')} | "
                     f"{num(v.sharpe)} | {v.trades} | {num(v.median_trades_per_day, 'g')} | {num(v.win_rate)} | {num(v.halted_share)} | {v.breaches} |")
    return lines


def report_markdown(summary: Summary) -> str:
    policy = summary.policy
    lines = [
        f"# Walk-forward evaluation: {summary.market}", "",
        f"**{summary.verdict}.**", "",
        f"{summary.folds} folds, {summary.test_days} out-of-sample test days, seeds {summary.seeds}, "
        f"budgets {summary.budgets} env steps. Each fold trains on the days before its test window less a purge, "
        "and tests frozen; every figure below is out of sample, after costs, through the same env and risk rules.", "",
        "## Success table (the seeds' targets)", "", *success_lines(summary.success_table), "",
        "## The policy against floors and the ceiling", "",
        f"Policy (last budget, averaged over seeds): ${num(policy.pnl_per_day, ',.0f')} a day "
        f"{interval(policy.pnl_per_day_interval, ',.0f')}, daily Sharpe {num(policy.sharpe)} {interval(policy.sharpe_interval)}, "
        f"oracle share {num(summary.oracle_share, '.3f')} {interval(summary.oracle_share_interval, '.3f')}, "
        f"PSR {num(summary.psr, '.3f')}, DSR {num(summary.deflation.dsr, '.3f')} ({summary.deflation.dsr_trials} trials), "
        f"PBO {num(summary.pbo.pbo, '.2f')}.", "",
        *(f"- {line}" for line in rule_ratio_lines(summary.simple_rules)), "",
        f"**The market.** {summary.market_shows}", "",
        *summary.calibration, "",
        "## Trials counted, and how many days a verdict needs", "",
        *(f"- {line}" for line in evidence_lines(summary.deflation, summary.snooping)), "",
        "## Floors chosen on each fold's training days", "", *floor_choice_lines(summary), "",
        *policy_choice_lines(summary),
        "SPA and reality-check p: every policy variant of this run (budgets x seeds, ensembles) against the floor, from "
        "arch.bootstrap (H0: none beats it); variants beating it: Romano-Wolf StepM at 5 %.", "",
        "| floor | policy minus floor, $ a day | 95% interval | reality check p | SPA p | variants beating it (StepM) | beats |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in summary.comparisons.items():
        lines.append(f"| {name} | {num(c.pnl_per_day_difference, ',.0f')} | {interval(c.interval, ',.0f')} | "
                     f"{num(c.p_value_reality_check, '.3f')} | {num(c.p_value_spa, '.3f')} | "
                     f"{', '.join(c.variants_beating_it) or 'none'} | {'yes' if c.beats else 'no'} |")
    if summary.news_floors:
        lines += ["", "## News floors on the test days", "", NEWS_NOTE, "", *news_floor_lines(summary.news_floors)]
    lines += ensemble_lines(summary)
    lines += lockstep_lines(summary)
    lines += ["", "## Every variant", "", *variant_lines(summary), "", "## Learning curve", "", "![learning curve](learning_curve.png)", "",
              "| env steps | $ per day | 95% interval | daily Sharpe | Sharpe per seed | trades a day |", "| --- | --- | --- | --- | --- | --- |"]
    for point in summary.learning_curve:
        per_seed = ", ".join(num(s) for s in point.sharpe_per_seed)
        lines.append(f"| {point.timesteps:,} | {num(point.pnl_per_day, ',.0f')} | {interval(point.pnl_per_day_interval, ',.0f')} | "
                     f"{num(point.sharpe)} | {per_seed} | {num(point.trades_per_day, '.1f')} |")
    return "\n".join(lines) + "\n"


def ensemble_lines(summary: Summary) -> list[str]:
    """The ensemble of seeds (one account on the seeds' mean distribution) in one sentence; none with one seed."""
    e = summary.ensemble
    if e is None:
        return []
    momentum, seeds = e.vs_momentum, e.vs_seeds_mean
    return ["", f"Ensemble of the {e.seeds} seeds ({e.name}): ${num(e.pnl_per_day, ',.0f')} a day "
                f"{interval(e.pnl_per_day_interval, ',.0f')}, daily Sharpe {num(e.sharpe)}, oracle share {num(e.oracle_share, '.3f')}; "
                f"minus the momentum floor: ${num(momentum.pnl_per_day_difference, ',.0f')} {interval(momentum.interval, ',.0f')} "
                f"({'beats it' if momentum.beats else 'does not beat it'}); minus the seeds' mean: "
                f"${num(seeds.pnl_per_day_difference, ',.0f')} {interval(seeds.interval, ',.0f')}."]


def console_summary(summary: Summary) -> str:
    policy = summary.policy
    rows = [
        f"walk-forward on {summary.market}: {summary.test_days} test days in {summary.folds} folds, {summary.elapsed_secs:.0f} s",
        f"  policy        ${num(policy.pnl_per_day, ',.0f')} a day {interval(policy.pnl_per_day_interval, ',.0f')}, "
        f"Sharpe {num(policy.sharpe)}, median trades a day {num(policy.median_trades_per_day, 'g')}, "
        f"halted bars {num(policy.halted_share)}",
    ]
    if summary.ensemble is not None:
        e = summary.ensemble
        rows.append(f"  ensemble      ${num(e.pnl_per_day, ',.0f')} a day {interval(e.pnl_per_day_interval, ',.0f')} "
                    f"({e.seeds} seeds' mean distribution), minus the momentum floor "
                    f"${num(e.vs_momentum.pnl_per_day_difference, ',.0f')} {interval(e.vs_momentum.interval, ',.0f')}")
    for name in ("oracle", REGIME_RULE, summary.momentum_floor, *RULE_FLOORS, "supervised", "buy_and_hold", "random", "flat"):
        if name in summary.variants:
            v = summary.variants[name]
            rows.append(f"  {name:<15} ${num(v.pnl_per_day, ',.0f')} a day, Sharpe {num(v.sharpe)}, "
                        f"{num(v.trades / max(summary.test_days, 1), '.1f')} trades a day, halted bars {num(v.halted_share)}")
    rows += [f"  {line}" for line in rule_ratio_lines(summary.simple_rules)]
    rows.append(f"  oracle share {num(summary.oracle_share, '.3f')}, deflated-Sharpe probability {num(summary.deflation.dsr, '.3f')}, "
                f"PBO {num(summary.pbo.pbo, '.2f')}")
    rows += [f"  {line}" for line in evidence_lines(summary.deflation, summary.snooping)]
    if summary.diagnostics:
        rows.append("  diagnostics (the policies at the last budget, means over seeds; actors/jobs/evaluation/diagnostics.py):")
        rows += [f"    {line}" for line in diagnostic_lines(summary.diagnostics)]
    rows.append("  floors chosen on each fold's training days:")
    rows += [f"    {line[2:]}" for line in floor_choice_lines(summary)]
    rows += [f"    {line[2:]}" for line in policy_choice_lines(summary)[2:-1]]
    if summary.news_floors:
        rows.append("  news floors on the test days (hindsight $, env.contracts_per_trade contracts an event):")
        rows += [f"    {line}" for line in news_floor_lines(summary.news_floors)]
    rows.append(f"  market: {summary.market_shows}")
    rows += [f"  {line}" for line in summary.calibration if line]
    rows.append("  success table: " + "; ".join(f"{r.figure.split(' (')[0]} {r.verdict}" for r in summary.success_table))
    rows.append(f"  verdict: {summary.verdict}")
    return "\n".join(rows)


def evidence_lines(deflated: Deflation, snooping: Snooping | None = None) -> list[str]:
    """The deflated Sharpe's trials, the minimum track record, and SPA / StepM over every candidate, in sentences."""
    record = deflated.track_record
    lines = [f"deflated Sharpe of {deflated.dsr_of or 'the policy'} {num(deflated.dsr, '.3f')} (one of the N trials): "
             f"{deflated.dsr_trials} policy trials on this market in the "
             f"trials ledger ({deflated.dsr_trials_this_run} this run, {deflated.dsr_runs} run(s) in all; "
             f"{deflated.ledger or 'no ledger'}), variance of their daily Sharpe {num(deflated.dsr_sharpe_variance, '.2e')}, "
             f"so the best of them by luck alone has a daily Sharpe of {num(deflated.dsr_benchmark_sharpe, '.3f')}"]
    if record.enough:
        verdict = "enough days for a verdict on the Sharpe"
    elif record.too_few:
        verdict = "TOO FEW DAYS FOR ANY VERDICT on the Sharpe: the deflated Sharpe and the Sharpe row say nothing either way"
    else:
        verdict = "the observed Sharpe is not above the trials' lucky best: no number of days would make it evidence"
    lines.append(f"minimum track record (PSR 0.95): {_days(record.min_days_vs_zero)} against a Sharpe of 0, "
                 f"{_days(record.min_days_vs_trials)} against the trials' lucky best; this run has {record.days} test days: {verdict}")
    if snooping is not None:
        superior = ", ".join(snooping.superior) or "none"
        lines.append(f"every candidate ({len(snooping.candidates)}: the policy variants and the floors) against "
                     f"flat, arch.bootstrap: SPA p {num(snooping.p_value_spa, '.3f')}, reality check p "
                     f"{num(snooping.p_value_reality_check, '.3f')}; StepM (5 %) finds these beat flat: {superior}")
    return lines


def _days(value) -> str:
    if value is None or value != value:
        return "n/a (no variation)"
    return "never (the Sharpe is not above it)" if value == math.inf else f"{math.ceil(value):,} test days"


def floor_choice_lines(summary: Summary) -> list[str]:
    return [f"- fold {c.fold + 1} (training days {c.train_days[0]}-{c.train_days[1] - 1}): momentum "
            f"{c.momentum_lookback} bars (training nets {_nets(c.momentum_nets)}), regime rule {c.regime_threshold:g} "
            f"(training nets {_nets(c.regime_nets)})" + rule_choice_text(c) for c in summary.floor_choices]



def policy_choice_lines(summary: Summary) -> list[str]:
    """The policy settings each fold chose on its validation days (actors/jobs/evaluation/cadence.py); none without a grid."""
    if not summary.policy_choices:
        return []
    lines = []
    for c in summary.policy_choices:
        p = c["params"]
        tried = ", ".join(f"{name}: {_usd(net)} ({c['validation_trades'][name]} trades)" for name, net in c["validation_net_usd"].items())
        lines.append(f"- fold {c['fold'] + 1}: policy settings {c['chosen']} (decision every {p['env.decision_every_bars']} bars, "
                     f"minimum hold {p['env.min_hold_bars']} bars, turnover charge ${p['env.entry_penalty_usd']:g}, entropy "
                     f"{p['policy.ent_coef']:g}{', learns from its decisions only' if p.get('policy.skip_forced_bars') else ''}), chosen on validation days {c['validation_days'][0]}-{c['validation_days'][1] - 1} "
                     f"at {c['budget']:,} steps ({tried or 'too few training days: as configured'})"
                     f"{'; stood aside (flat) on the test days: it did not net above $0 there' if c.get('stood_aside') else ''}")
    return ["## Policy settings chosen on each fold's validation days", "", *lines, ""]


def _usd(value: float) -> str:
    return f"{'-' if value < 0 else ''}${abs(value):,.0f}"


def _nets(nets: dict) -> str:
    return ", ".join(f"{key}: ${value:,.0f}" for key, value in nets.items()) or "n/a"


def draw_learning_curve(summary: Summary, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = summary.learning_curve
    steps = [p.timesteps for p in curve]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, key, label in ((axes[0], "pnl_per_day", "OOS net $ per day"), (axes[1], "sharpe", "OOS daily Sharpe (annualised)")):
        values = [getattr(p, key) for p in curve]
        intervals = [getattr(p, f"{key}_interval") for p in curve]
        ax.plot(steps, values, "o-", color="tab:blue", label="policy (mean over seeds)")
        ax.fill_between(steps, [i[0] for i in intervals], [i[1] for i in intervals], color="tab:blue", alpha=0.15, label="95% interval")
        for name, colour in (("oracle", "tab:green"), (summary.momentum_floor, "tab:orange"), ("flat", "grey")):
            if name in summary.variants:
                level = getattr(summary.variants[name], key)
                ax.axhline(level if math.isfinite(level) else 0.0, color=colour, ls="--", label=name)
        if any(math.isfinite(value) for value in values):
            ax.set_xscale("log")  # a policy that never traded has no Sharpe: no point to place, so no log axis either
        else:
            ax.text(0.5, 0.5, "no finite value (no trades?)", transform=ax.transAxes, ha="center", color="tab:blue")
        ax.set_xlabel("training env steps")
        ax.set_title(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Learning curve, walk-forward on {summary.market}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
