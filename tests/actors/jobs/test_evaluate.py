"""bin/run evaluate end to end on a tiny walk-forward: files, success table, verdict, and clear errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from msgspec.structs import replace

from actors.jobs.cli import main
from tests.actors.jobs.evaluation.summaries import a_deflation, a_summary, a_track_record, a_variant


NO_SPARES = ["--set", "runtime.spare_actors=[]"]
"""A lockstep run restarts no actor here: without spares, no four torch imports start 20 s after its actors ran (under
load they did, in every lockstep run of these tests, beside the thoughts the run waits for)."""


def earlier_trials(path, market: str, count: int, other_market_count: int) -> None:
    """Trials of an earlier configuration on ``market`` (and some on another market) already in the ledger."""
    from actors.jobs.evaluation.ledger import TrialRecord, append_trials

    rng = np.random.default_rng(1)
    append_trials(path, [TrialRecord(config_hash="earlier", market=m, seed=k, fold=0, variant=f"policy@1000#{k}",
                                     daily_returns=list(rng.normal(0.0, 0.01, 20)), date="2026-11-01T00:00:00Z", commit="abc")
                         for m, n in ((market, count), ("elsewhere", other_market_count)) for k in range(n)])


@pytest.mark.slow
@pytest.mark.parametrize("market", ["regimes", "null"])
def test_a_tiny_walk_forward_writes_the_success_table_and_a_verdict(tmp_path, market, capsys):
    from actors.jobs.evaluation.ledger import read_trials

    run_dir, ledger = tmp_path / market, tmp_path / "trials.jsonl"
    earlier_trials(ledger, market, count=4, other_market_count=2)
    code = main(["evaluate", "--market", market, "--quick", "--budgets", "2048", "--folds", "2", "--days", "30", "--seeds", "2",
                 "--run-dir", str(run_dir), "--quiet", "--set", f"run.trials_path={ledger}"])
    assert code == 0
    metrics = json.loads((run_dir / "evaluate" / "metrics.json").read_text())
    figures = [row["figure"] for row in metrics["success_table"]]
    share = metrics["ensemble"]["oracle_share"]  # null in the JSON where the oracle has no edge
    ensemble_row = share is not None and math.isfinite(share)
    assert len(figures) == 7 + ensemble_row and any("oracle share" in f for f in figures) and any("deflated" in f for f in figures)
    assert any(f.startswith("oracle share, ensemble of the 2 seeds") for f in figures) == ensemble_row
    assert all(row["verdict"] in ("met", "not met", "not evidence") for row in metrics["success_table"])
    assert {"flat", "random", "buy_and_hold", "momentum", "regime_rule", "oracle"} <= set(metrics["variants"])
    assert metrics["variants"]["flat"]["net_pnl"] == 0
    if market == "regimes":  # planted trends: the oracle earns, so a share of it means something
        assert metrics["variants"]["oracle"]["net_pnl"] > 0 and metrics["oracle_share"] is not None
    else:  # null: nothing to learn, even the oracle has no edge to share, and no edge may be claimed
        assert metrics["oracle_share"] is None and share is None
        assert metrics["verdict"].startswith("null: no evidence of an edge")
    assert metrics["test_days"] == sum(f["test_days"][1] - f["test_days"][0] + 1 for f in metrics["folds_days"])
    assert (run_dir / "evaluate" / "learning_curve.png").stat().st_size > 1000
    assert "ensemble@2048" in metrics["variants"] and metrics["ensemble"]["seeds"] == 2  # two seeds: their ensemble plays too
    # The deflated Sharpe counts this run's two seeds, their ensemble and their mean (the policy row it deflates) and
    # the 4 earlier trials on this market.
    assert (metrics["dsr_trials"], metrics["dsr_trials_this_run"], metrics["dsr_runs"]) == (4 + 4, 4, 2)
    assert metrics["dsr_of"] == "seeds-mean@2048"
    records = read_trials(ledger)
    mine = [r for r in records if r.config_hash != "earlier"]
    assert len(mine) == 2 * (len(metrics["variants"]) + 1)  # every variant and the seeds' mean, once a fold
    assert {r.role for r in mine if r.variant.startswith(("policy@", "ensemble@"))} == {"policy"}
    choices = metrics["floor_choices"]
    assert [c["fold"] for c in choices] == [0, 1] and all(c["momentum_lookback"] in (30, 60, 120) for c in choices)
    assert [r.params["momentum_lookback"] for r in mine if r.variant == "momentum"] == [c["momentum_lookback"] for c in choices]
    # issue 52: the supervised floor is a floor in the ledger with its threshold; diagnostics per fold; trades a day per budget
    assert [r.params["supervised_threshold"] for r in mine if r.variant == "supervised"] == [c["supervised_threshold"] for c in choices]
    assert "supervised" in metrics["comparisons"] and [d["fold"] for d in metrics["diagnostics"]] == [0, 1]
    assert {"first30", "fade15", "trades_per_day"} <= set(metrics["diagnostics"][0])
    assert all(point["trades_per_day"] >= 0 for point in metrics["learning_curve"])
    out = capsys.readouterr().out
    assert "diagnostics (the policies at the last budget" in out
    assert market in out and "ensemble" in out
    assert "floors chosen on each fold's training days" in out and "minimum track record (PSR 0.95)" in out
    assert ("planted trends" if market == "regimes" else "nothing to learn") in out
    assert "| kurtosis of 1-min returns |" in out and "StepM" in out


@pytest.mark.slow
def test_on_the_news_market_evaluate_prints_and_records_the_news_floors_of_each_fold(tmp_path, capsys):
    code = main(["evaluate", "--market", "news", "--quick", "--budgets", "2048", "--folds", "2", "--days", "30", "--seeds", "1",
                 "--run-dir", str(tmp_path / "news"), "--quiet", "--set", f"run.trials_path={tmp_path / 'trials.jsonl'}"])
    assert code == 0
    metrics = json.loads((tmp_path / "news" / "evaluate" / "metrics.json").read_text())
    rows = metrics["news_floors"]
    assert [r["rows"] for r in rows] == ["fold 1", "fold 2", "all test days"]
    assert rows[-1]["test_days"] == metrics["test_days"] and rows[-1]["flat_usd_per_event"] == 0
    out = capsys.readouterr().out
    assert "news floors on the test days" in out and "| all test days |" in out
    assert "## News floors on the test days" in (tmp_path / "news" / "evaluate" / "report.md").read_text()
    days = metrics["test_days"]  # each variant's median trades a day (a null market's target: <= 2)
    assert metrics["variants"]["flat"]["median_trades_per_day"] == 0 and metrics["policy"]["median_trades_per_day"] >= 0
    assert metrics["variants"]["oracle"]["median_trades_per_day"] <= metrics["variants"]["oracle"]["trades"] / days * 3
    assert "median trades a day" in out


def test_a_corrupt_trials_ledger_stops_evaluate_before_any_training_naming_the_line(tmp_path, capsys):
    ledger = tmp_path / "trials.jsonl"
    earlier_trials(ledger, "regimes", count=1, other_market_count=0)
    with open(ledger, "a") as handle:
        handle.write("{not json\n")
    code = main(["evaluate", "--market", "regimes", "--quick", "--run-dir", str(tmp_path / "r"), "--set", f"run.trials_path={ledger}"])
    assert code == 1
    err = capsys.readouterr().err
    assert f"{ledger}:2:" in err and "1 good records kept" in err
    assert not (tmp_path / "r").exists()  # stopped before the run directory, let alone the training
    assert len(ledger.read_text().splitlines()) == 2  # nothing lost


@pytest.mark.slow
def test_lockstep_decisions_measure_the_fusion_and_llm_rows_through_the_actors_on_the_base_model_and_an_adapter(tmp_path, capsys):
    from actors.common.llm.model import default_model_path
    from actors.lora.gguf_adapter import random_lora_adapter

    adapter = random_lora_adapter(default_model_path(), tmp_path / "adapter.gguf", rank=4, alpha=8.0, std=0.2)
    run_dir = tmp_path / "run"

    # The win-rate halt on every bar keeps the account flat (no entry passes risk), so every decision after the first
    # (which has no thought yet) is scored: a tiny policy that entered at once would leave none flat to score.
    always_halted = ["--set", "risk.min_win_rate=1.0", "--set", "risk.min_trades_for_win_rate=0",
                     "--set", "risk.win_rate_halt_needs_net_loss=false", *NO_SPARES]

    # The news market: its lockstep window starts on a test day whose first decisions make an event public, so the
    # rows of the decisions right after an event read are measured too.
    code = main(["evaluate", "--market", "news", "--quick", "--budgets", "2048", "--folds", "2", "--days", "30", "--seeds", "1",
                 "--lockstep-decisions", "6", "--adapter", str(adapter), "--run-dir", str(run_dir), "--quiet", *always_halted,
                 "--set", f"run.trials_path={tmp_path / 'trials.jsonl'}"])

    assert code == 0
    out = run_dir / "evaluate"
    metrics = json.loads((out / "metrics.json").read_text())
    lockstep = metrics["lockstep"]
    assert lockstep["decisions_requested"] == 6 and lockstep["fold"] == 1 and lockstep["rows_read"] == "adapter"
    assert list((out / "lockstep-policy").glob("policy_*.zip")) and (out / "lockstep-base").is_dir() and (out / "lockstep-adapter").is_dir()
    for run in ("base", "adapter"):
        scored = lockstep[run]["scores"]
        assert scored["decisions"] == 5 and scored["llm"]["n"] == 5  # measured, with its n
        assert sum(scored["label_mix"].values()) == 5
        assert "llm_trust" in lockstep[run]["llm"] and "agreement_rate" in lockstep[run]["llm"]
    rows = {row["figure"]: row for row in metrics["success_table"]}
    # the seeds' seven, fused minus RL-only in accuracy and in hindsight dollars, fused against its floors (SPA), and
    # right after an event: the LLM against the label and against the keyword rule
    assert len(rows) == 12
    assert rows["fused against its floors (SPA p, the largest)"]["verdict"] == "not evidence"  # 5 decisions: too few to test
    after_event = lockstep["adapter"]["events"]
    assert after_event["read"] >= 1 and after_event["decisions"] >= 1 and after_event["unknown_events"] == 0
    assert rows["LLM advice = hindsight label, right after an event"]["note"].startswith("base ")
    assert 'think_on = "news"' in (out / "lockstep-base" / "config.toml").read_text()  # thinks when something new arrives
    # the policy reads the regime belief of the fold it was trained on (saved beside it), not a refit (issue 51)
    assert f'regime_model_path = "{out / "lockstep-policy" / "regime_model.json"}"' in (out / "lockstep-base" / "config.toml").read_text()
    ages = lockstep["base"]["thought_ages"]  # the share with a thought, and its real age
    assert ages["decisions"] == 6 and 0 < ages["with_thought_share"] <= 1 and ages["max_staleness_steps"] == 10
    assert "Thought ages, in bars from the market state the prompt read" in (out / "report.md").read_text()
    for figure in ("LLM accuracy before -> after", "RL/LLM agreement", "fused minus RL-only (accuracy, paired)",
                   "fused minus RL-only (hindsight $ a flat decision, paired)"):
        assert rows[figure]["value"] is not None and f"scored of 6 decisions" in rows[figure]["note"]
    assert "-> adapter" in rows["LLM accuracy before -> after"]["note"]
    fusion = rows["fusion accuracy"]
    contested = lockstep["adapter"]["scores"]["chose_right_source"]["n"]
    assert f"{contested} where exactly one source was right" in fusion["note"]
    assert (fusion["value"] is not None) == (contested > 0)  # no contested decision: n/a with its n, never a made-up share
    assert "Fusion and the LLM in lockstep" in (out / "report.md").read_text()
    assert "whom fusion should have trusted" in capsys.readouterr().out


@pytest.mark.slow
def test_a_fusion_warmup_on_the_training_days_teaches_the_network_the_lockstep_run_fuses_with(tmp_path):
    run_dir = tmp_path / "run"
    # Held flat by the win-rate halt: every step stays flat, so each one whose proposals differ is a hindsight lesson;
    # a 2-bar horizon lets the labels mature inside 5 decisions (4 lessons, measured), and one lesson is enough for an
    # update here.
    settings = ["--set", "risk.min_win_rate=1.0", "--set", "risk.min_trades_for_win_rate=0",
                "--set", "risk.win_rate_halt_needs_net_loss=false", "--set", "lora.hindsight_horizon_bars=2",
                "--set", "fusion.min_experiences=1", "--set", "fusion.update_every_experiences=1",
                "--set", "fusion.explore_rate=0.5", *NO_SPARES]

    code = main(["evaluate", "--quick", "--budgets", "2048", "--folds", "2", "--days", "30", "--seeds", "1",
                 "--lockstep-decisions", "3", "--fusion-warmup", "5", "--run-dir", str(run_dir), "--quiet", *settings,
                 "--set", f"run.trials_path={tmp_path / 'trials.jsonl'}"])

    assert code == 0
    out = run_dir / "evaluate"
    lockstep = json.loads((out / "metrics.json").read_text())["lockstep"]
    warmup = lockstep["base"]["fusion_warmup"]
    # It ends a purge (1 + ceil(2 / 390) = 2 days) before the test window and takes one day of bars.
    assert warmup["decisions"] == 5 and warmup["start_day"] == lockstep["test_start_day"] - 2 - 1
    assert warmup["figures"]["decisions"] == 5
    test_config = (out / "lockstep-base" / "config.toml").read_text()
    assert 'method = "network"' in test_config
    report = (out / "report.md").read_text()
    if warmup["network"]:
        assert warmup["figures"]["network_updates"] >= 1 and warmup["network"] in test_config
        assert "fused with it, frozen" in report
    else:
        assert warmup["figures"].get("hindsight_experiences", 0) + warmup["figures"].get("experiences", 0) == 0
        assert "fused by the rules (no update)" in report


def test_a_fusion_warmup_without_lockstep_decisions_is_a_clear_error(tmp_path, capsys):
    assert main(["evaluate", "--fusion-warmup", "100", "--run-dir", str(tmp_path / "r")]) == 1
    assert "--lockstep-decisions" in capsys.readouterr().err


def test_a_warmup_ends_a_purge_before_the_test_window():
    from actors.jobs.evaluation.lockstep_evidence import warmup_start_day

    assert warmup_start_day(326, 400, 2) == 326 - 2 - 2 and warmup_start_day(326, 390, 2) == 323
    assert warmup_start_day(2, 4000, 2) == 0


def test_an_adapter_without_lockstep_decisions_is_a_clear_error(tmp_path, capsys):
    assert main(["evaluate", "--adapter", str(tmp_path / "a.gguf"), "--run-dir", str(tmp_path / "r")]) == 1
    assert "--lockstep-decisions" in capsys.readouterr().err


def test_an_unknown_market_file_is_a_clear_error(tmp_path, capsys):
    assert main(["evaluate", "--market", str(tmp_path / "missing.csv"), "--run-dir", str(tmp_path / "r")]) == 1
    assert "no file" in capsys.readouterr().err


def test_bad_budgets_are_a_clear_error(tmp_path, capsys):
    assert main(["evaluate", "--budgets", "10k", "--run-dir", str(tmp_path / "r")]) == 1
    assert "--budgets" in capsys.readouterr().err


def test_the_first_fold_trains_on_the_presets_share_of_the_days_unless_train_days_says_otherwise():
    from argparse import Namespace

    from actors.jobs.evaluate import first_train_days, plan

    def settings(**given):
        return plan(Namespace(**{"quick": False, "folds": None, "seeds": None, "budgets": None, "days": None, "train_days": None, **given}))

    assert first_train_days(settings(quick=True), 400, 2) == 250  # two test windows of 74 days after the purge
    assert first_train_days(settings(), 700, 2) == 398
    assert first_train_days(settings(quick=True), 120, 2) == 75  # a file's own days, not the synthetic preset's
    assert first_train_days(settings(quick=True), 12, 2) == 10  # the floor
    assert first_train_days(settings(quick=True, train_days=300), 400, 2) == 300


def test_train_days_that_leave_no_test_day_are_a_clear_error(tmp_path, capsys):
    code = main(["evaluate", "--market", "null", "--quick", "--days", "20", "--train-days", "19", "--run-dir", str(tmp_path / "r")])
    assert code == 1
    err = capsys.readouterr().err
    assert "--train-days 19 leaves no test days" in err and "20 days" in err


def test_the_help_states_the_presets_that_evaluate_and_main_really_use():
    """The --help text is written out in cli.py (importing the jobs would slow every start); it must not drift."""
    from actors.jobs.cli import mode_parser
    from actors.jobs.evaluate import FULL, QUICK
    from actors.jobs.main import LONG_DATA, LONG_TRAINING, MAIN_DATA, MAIN_TRAINING

    helps = {action.dest: action.help for mode in ("evaluate", "main") for action in mode_parser(mode)._actions}
    assert f"default {FULL['folds']}, --quick {QUICK['folds']}" in helps["folds"]
    assert f"default {','.join(map(str, FULL['budgets']))}; --quick {','.join(map(str, QUICK['budgets']))}" in helps["budgets"]
    assert f"default {FULL['days']}, --quick {QUICK['days']}" in helps["days"]
    assert f"{LONG_TRAINING['policy.total_timesteps']:,} steps on {LONG_DATA['data.synthetic_days']}" in helps["long"]
    assert f"{MAIN_TRAINING['policy.total_timesteps']:,} on {MAIN_DATA['data.synthetic_days']}" in helps["long"]


def test_the_headline_says_whether_the_seeds_ensemble_beats_the_momentum_rule():
    from actors.jobs.evaluation.evidence import headline
    from actors.jobs.evaluation.summary import Beats, Difference, Ensemble

    summary = a_summary()
    assert headline(summary) == ("regimes: evidence of an edge (deflated-Sharpe probability 0.99 >= 0.95); "
                                 "the policy does not beat the momentum rule (its lookback chosen on the training days) out of sample")
    never_traded = replace(summary, deflation=a_deflation(float("nan")), policy=replace(summary.policy, trades=0))
    assert headline(never_traded).startswith("regimes: no evidence of an edge (the policy never traded: ")
    too_few = replace(summary, deflation=a_deflation(0.6, track_record=a_track_record(too_few=True, enough=False, days=10)))
    assert headline(too_few).endswith("; 10 test days are too few for a verdict on the Sharpe")
    ensemble = Ensemble(name="ensemble@100", seeds=3, pnl_per_day=1.0, pnl_per_day_interval=(0.0, 2.0), sharpe=1.0,
                        vs_momentum=Beats(pnl_per_day_difference=115.2, interval=(37.0, 186.4), beats=True),
                        vs_seeds_mean=Difference(pnl_per_day_difference=0.0, interval=(0.0, 0.0)), oracle_share=0.3,
                        oracle_share_interval=(0.2, 0.4))
    assert headline(replace(summary, ensemble=ensemble)).endswith("; the ensemble of its 3 seeds beats it (+115 $ a day [+37, +186])")


def test_a_misspelt_figure_of_the_summary_is_an_error_not_a_missing_row():
    summary = a_summary()
    with pytest.raises(AttributeError):
        summary.polcy  # noqa: B018 (the read is the test)
    with pytest.raises(AttributeError):
        summary.policy.sharpe_intervall  # noqa: B018
    with pytest.raises(AttributeError):  # frozen: a figure is not overwritten after the fact
        summary.psr = 0.5


def test_metrics_json_keeps_the_deflated_sharpe_beside_the_psr_and_drops_an_absent_lockstep():
    fields = a_summary().to_json()
    keys = list(fields)
    assert keys[keys.index("psr"):keys.index("pbo") + 1] == [
        "psr", "dsr", "dsr_trials", "dsr_runs", "dsr_sharpe_variance", "dsr_benchmark_sharpe", "track_record",
        "dsr_trials_this_run", "dsr_of", "pbo"]
    assert "deflation" not in fields and "lockstep" not in fields and keys[keys.index("verdict") + 1] == "ledger"
    assert fields["pbo"] == {"pbo": 0.1, "n_combinations": 70}  # no null "why" beside a PBO
    assert list(fields["policy"]["sharpe_interval"]) == [3.5, 4.5] and "lockstep" in replace(a_summary(), lockstep={"fold": 1}).to_json()


def test_the_success_table_gives_the_ensemble_s_oracle_share_its_own_row_where_there_is_an_ensemble():
    from actors.jobs.evaluation.evidence import _ensemble_rows
    from actors.jobs.evaluation.summary import Beats, Difference, Ensemble

    ensemble = Ensemble(name="ensemble@100", seeds=3, pnl_per_day=1.0, pnl_per_day_interval=(0.0, 2.0), sharpe=1.0,
                        vs_momentum=Beats(pnl_per_day_difference=1.0, interval=(0.0, 2.0), beats=False),
                        vs_seeds_mean=Difference(pnl_per_day_difference=0.0, interval=(0.0, 0.0)), oracle_share=0.353,
                        oracle_share_interval=(0.31, 0.40))
    (row,) = _ensemble_rows(ensemble)
    assert (row.figure, row.value, row.low, row.high, row.verdict) == ("oracle share, ensemble of the 3 seeds", 0.353, 0.31, 0.40, "met")
    assert _ensemble_rows(replace(ensemble, oracle_share_interval=(0.22, 0.40)))[0].verdict == "not evidence"
    assert _ensemble_rows(None) == [] and _ensemble_rows(replace(ensemble, oracle_share=float("nan"))) == []


def test_the_learning_curve_is_drawn_for_a_policy_that_never_traded(tmp_path):
    """A policy with no trades has no Sharpe (NaN): the chart says so instead of failing the whole evaluation."""
    from actors.jobs.evaluate import draw_learning_curve

    from actors.jobs.evaluation.summary import LearningPoint

    nan = float("nan")
    summary = a_summary(
        learning_curve=[LearningPoint(timesteps=100_000, pnl_per_day=0.0, pnl_per_day_interval=(0.0, 0.0), sharpe=nan,
                                      sharpe_per_seed=[nan], sharpe_interval=(nan, nan))],
        variants={"oracle": a_variant(1172.0, 22.3), "momentum": a_variant(319.0, 5.8), "flat": a_variant(0.0, nan)})
    draw_learning_curve(summary, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 1000
