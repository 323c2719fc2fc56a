"""The simple-rule floors alone on the test days of an evaluate run, without training a policy (docs/experiments/rulefloor.md).

Stop 57's realistic run (3,000 days, 2 folds, 1,122 test days; cadence.md "Learning from decisions only") was made
before the rule floors existed. Re-running it costs over an hour on 2 cores; the rules alone cost minutes. This script
builds the same market and the same folds as ``bin/run evaluate --market M --quick --days D`` (evaluate.py's own
functions: first_train_days, plan_walk_forward), chooses each rule's setting on the fold's training days with
``fit_floors`` (the same function evaluate's reference cells call), plays the chosen setting on the test window
through the env, costs and risk rules (``play_window``), and prints each rule's $ a day and Sharpe per fold and over
both, beside a policy Sharpe given on the command line (from the earlier run on the same days).

    PYTHONPATH=. .venv/bin/python docs/experiments/rule_days.py realistic 3000 2008-01-02 0.30
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from actors.common.instruments import resolve_instrument
from actors.env.factory import build_dataset
from actors.jobs.config import load_config
from actors.jobs.evaluate import QUICK, first_train_days, market_settings
from actors.jobs.evaluation.chain import play_window
from actors.jobs.evaluation.floors import FADE, FIRST_HALF_HOUR, _sharpe, chosen_floors, fit_floors
from actors.jobs.evaluation.walkforward import plan_walk_forward
from actors.jobs.evaluation.folds import bars_per_session, purge_days_for


def main(market: str, days: int, start_date: str, policy_sharpe: float) -> dict:
    config = load_config(None, {**market_settings(market, days), "data.synthetic_start_date": start_date})
    instrument = resolve_instrument(config.instrument)
    seed = config.data.seed if config.data.seed >= 0 else config.run.seed
    dataset = build_dataset(config.data, config.account, seed, instrument.tick_size, symbol=instrument.symbol)
    settings = {**QUICK, "days": days, "train_days": None}
    purge = purge_days_for(config.lora.hindsight_horizon_bars, bars_per_session(dataset.session_starts, len(dataset)))
    train_days = first_train_days(settings, len(dataset.session_starts), purge)
    plan = plan_walk_forward(config, dataset, n_folds=settings["folds"], seeds=[0], budgets=[25_000], purge_days=purge,
                             min_train_days=train_days)
    out: dict = {"market": market, "days": days, "start_date": start_date, "policy_sharpe": policy_sharpe, "folds": []}
    daily: dict[str, list[np.ndarray]] = {FIRST_HALF_HOUR: [], FADE: []}
    for fold in plan.folds:
        started = time.monotonic()
        train, test = plan.splits(fold, dataset)
        choice = fit_floors(config, train, (fold.train_start_day, fold.train_stop_day), regime_feature=False, supervised=False)
        floors = chosen_floors(choice, dataset.hidden_regime, seed=config.run.seed + fold.index)
        row = {"fold": fold.index, "test_days": [fold.test_start_day, fold.test_stop_day],
               "first_half_hour_hold": choice.first_half_hour_hold, "fade_sigmas": choice.fade_sigmas,
               "train_sharpes": choice.rule_train_sharpes}
        for name in (FIRST_HALF_HOUR, FADE):
            window = play_window(config, test, floors[name])
            daily[name].append(window.daily_pnl)
            row[name] = {"usd_a_day": float(window.daily_pnl.mean()), "sharpe": _sharpe(window.daily_pnl),
                         "trades_a_day": len(window.trades) / max(1, len(window.daily_pnl))}
        row["secs"] = round(time.monotonic() - started, 1)
        out["folds"].append(row)
        print(json.dumps(row), flush=True)
    for name, parts in daily.items():
        joined = np.concatenate(parts)
        out[name] = {"days": len(joined), "usd_a_day": float(joined.mean()), "sharpe": _sharpe(joined)}
    best = max((FIRST_HALF_HOUR, FADE), key=lambda name: out[name]["sharpe"])
    out["policy_over_best_rule"] = policy_sharpe / out[best]["sharpe"] if out[best]["sharpe"] > 0 else None
    out["best_rule_on_test_days"] = best
    return out


if __name__ == "__main__":
    market, days, start, policy = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    print(json.dumps(main(market, days, start, policy), indent=2))
