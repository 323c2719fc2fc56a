"""Every look at the test days in the trials ledger: evaluate appends before its lockstep half, a backtest of test days
is a trial, and ``bin/run trials`` summarises the ledger (N per market, runs, the best trial and its deflated Sharpe)."""

from __future__ import annotations

import numpy as np
import pytest

from actors.jobs.cli import main
from actors.jobs.common import JobError
from actors.jobs.config import load_config
from actors.jobs.evaluation.floors import FloorChoice
from actors.jobs.evaluation.ledger import TrialRecord, append_trials, read_trials
from actors.jobs.evaluation.walkforward import VariantSeries, WalkForward


def runs_of(path, market: str, runs: int, seeds: int = 2, days: int = 30) -> None:
    """``runs`` earlier runs of one configuration on ``market``, ``seeds`` trials each (one append call: one run)."""
    rng = np.random.default_rng(runs)
    for _ in range(runs):
        append_trials(path, [TrialRecord(config_hash="cfg", market=market, seed=k, fold=0, variant=f"policy@1000#{k}",
                                         daily_returns=list(rng.normal(0.0, 0.01, days)), date="2026-12-01T00:00:00Z",
                                         commit="abc", job="evaluate") for k in range(seeds)])


def test_trials_lists_n_per_market_the_runs_and_how_lucky_the_best_looks(tmp_path, capsys):
    ledger = tmp_path / "trials.jsonl"
    runs_of(ledger, "null", runs=3)  # the same configuration three times: 6 trials, not 2
    runs_of(ledger, "regimes", runs=1)
    append_trials(ledger, [TrialRecord(config_hash="cfg", market="null", seed=0, fold=0, variant="momentum", daily_returns=[0.1],
                                       date="2026-12-01T00:00:00Z", commit="abc", role="floor")])

    assert main(["trials", "--ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert f"trials ledger {ledger}: 9 records, 8 policy trials on 2 market(s)" in out
    null_row = next(line for line in out.splitlines() if line.startswith("| null |"))
    cells = [cell.strip() for cell in null_row.split("|")[1:-1]]
    assert cells[1:3] == ["6", "3"]  # N and runs
    assert 0.0 <= float(cells[8]) <= 1.0 and " run " in cells[5]  # the best trial's deflated Sharpe, and which run it was
    assert "runs: 5 in all:" in out and out.count("| evaluate |") == 5  # the floor's append is a run with 0 policy trials
    assert sorted(line.rsplit("|", 2)[1].strip() for line in out.splitlines() if "| evaluate |" in line) == ["0", "2", "2", "2", "2"]

    assert main(["trials", "--ledger", str(ledger), "--market", "regimes"]) == 0
    out = capsys.readouterr().out
    assert "2 policy trials on 1 market(s)" in out and "| null |" not in out


def test_the_best_trials_deflated_sharpe_falls_as_reruns_raise_n(tmp_path, capsys):
    from actors.jobs.trials_mode import summarise_market

    ledger = tmp_path / "trials.jsonl"
    lucky = TrialRecord(config_hash="cfg", market="null", seed=0, fold=0, variant="policy@1000#0",
                        daily_returns=list(0.004 + np.random.default_rng(0).normal(0, 0.01, 60)), date="d", commit="abc")
    append_trials(ledger, [lucky])
    alone = summarise_market(read_trials(ledger), "null")
    runs_of(ledger, "null", runs=10, seeds=1, days=60)
    crowded = summarise_market(read_trials(ledger), "null")
    assert (alone.trials.count, crowded.trials.count) == (1, 11)
    assert crowded.deflation.dsr < alone.deflation.dsr


@pytest.mark.parametrize("content, says", [
    (None, "no such file"),
    ('{"config_hash": "c", "market": "null"}\n', "1 unreadable line(s), first"),
    ("not json\n", "1 unreadable line(s), first"),
])
def test_a_missing_or_unreadable_ledger_is_one_line_and_exit_1(tmp_path, capsys, content, says):
    ledger = tmp_path / "trials.jsonl"
    if content is not None:
        ledger.write_text(content)
    assert main(["trials", "--ledger", str(ledger)]) == 1
    err = capsys.readouterr().err.strip()
    assert says in err and str(ledger) in err and len(err.splitlines()) == 1


def test_a_folder_given_as_the_ledger_and_a_market_it_does_not_hold_are_clear_errors(tmp_path, capsys):
    assert main(["trials", "--ledger", str(tmp_path)]) == 1
    assert "no such file" in capsys.readouterr().err
    ledger = tmp_path / "trials.jsonl"
    runs_of(ledger, "null", runs=1)
    assert main(["trials", "--ledger", str(ledger), "--market", "regimes"]) == 1
    assert "no records on market 'regimes' in the ledger (its markets: null)" in capsys.readouterr().err


def test_trials_help_names_its_options(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["trials", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "--ledger" in out and "--market" in out and "deflated Sharpe" in out


def test_trials_reads_the_default_ledger_of_the_config(tmp_path, capsys):
    runs_of(tmp_path / "trials.jsonl", "null", runs=2)
    assert main(["trials", "--set", f"run.runs_dir={tmp_path}"]) == 0
    assert f"trials ledger {tmp_path / 'trials.jsonl'}: 4 records, 4 policy trials" in capsys.readouterr().out


def tiny_walk_forward() -> WalkForward:
    series = {}
    for name in ("policy@100#0", "flat"):
        s = VariantSeries(name)
        s.daily_pnl.extend([10.0, -5.0, 3.0])
        s.fold_days.append(3)
        series[name] = s
    return WalkForward("null", [], [0], [100], series, floor_choices=[FloorChoice(60, 0.4, (0, 10))])


def test_evaluate_appends_its_test_days_before_its_lockstep_half(tmp_path, monkeypatch, capsys):
    import actors.jobs.evaluate as evaluate

    ledger = tmp_path / "trials.jsonl"
    monkeypatch.setattr(evaluate, "check_lockstep_ready", lambda config, adapter: {})
    monkeypatch.setattr(evaluate, "plan_walk_forward", lambda *a, **k: None)
    monkeypatch.setattr(evaluate, "evaluate_on_cells", lambda *a, **k: (tiny_walk_forward(), {}))

    def lockstep_dies(*_args, **_kwargs):
        raise JobError("the lockstep half stopped")

    monkeypatch.setattr(evaluate, "run_lockstep_evidence", lockstep_dies)
    code = main(["evaluate", "--market", "null", "--quick", "--days", "30", "--lockstep-decisions", "5", "--quiet",
                 "--run-dir", str(tmp_path / "run"), "--set", f"run.trials_path={ledger}"])
    assert code == 1 and "the lockstep half stopped" in capsys.readouterr().err
    recorded = read_trials(ledger)  # the test days were counted although the run stopped after them
    assert {r.variant for r in recorded} == {"policy@100#0", "flat"} and {r.job for r in recorded} == {"evaluate"}


def test_a_backtest_of_test_days_is_a_trial_and_one_of_training_days_is_not(tmp_path):
    from actors.jobs.backtest_ledger import backtest_record, record_backtests

    ledger = tmp_path / "trials.jsonl"
    for split in ("test", "train", "validation", "all"):
        config = load_config(None, {"env.split": split, "run.trials_path": str(ledger), "run.seed": 3})
        record_backtests(config, [backtest_record(config, [50.0, -20.0], "abc", job="backtest", variant="policy@10#3")])
    recorded = read_trials(ledger)
    assert [r.params["split"] for r in recorded] == ["test", "all"]
    start = load_config(None).account.start_balance
    assert recorded[0].daily_returns == [50.0 / start, -20.0 / start]
    assert recorded[0].run_id != recorded[1].run_id and recorded[0].job == "backtest"


def test_every_ablation_backtest_is_a_trial_of_one_run_named_by_variant_and_seed(tmp_path):
    import json
    from types import SimpleNamespace

    from actors.jobs.backtest_ledger import record_ablation

    ledger = tmp_path / "trials.jsonl"
    config = load_config(None, {"env.split": "test", "run.trials_path": str(ledger)})
    cells = {}
    for seed in (0, 1):
        for index in (0, 1):
            run_dir = tmp_path / f"seed{seed}-{index}"
            (run_dir / config.env.report_dir).mkdir(parents=True)
            (run_dir / config.env.report_dir / "metrics.json").write_text(json.dumps(
                {"session_pnl": [{"pnl_usd": 10.0 * (seed + 1)}, {"pnl_usd": -5.0 * (index + 1)}]}))
            cells[(seed, index)] = SimpleNamespace(config=config, run_dir=str(run_dir))

    assert record_ablation(cells, ["RL only", "RL + rule fusion"], "abc") == ledger
    recorded = read_trials(ledger)
    assert [r.variant for r in recorded] == ["ablation:RL only#0", "ablation:RL + rule fusion#0", "ablation:RL only#1",
                                             "ablation:RL + rule fusion#1"]
    start = config.account.start_balance
    assert recorded[3].daily_returns == [20.0 / start, -10.0 / start] and len({r.run_id for r in recorded}) == 1
    assert all(r.job == "ablation" and r.role == "policy" for r in recorded)
