"""--lockstep-decisions: the success table's fusion and LLM rows from a lockstep run's source scores."""

from __future__ import annotations

import math

import numpy as np

from actors.jobs.evaluation.evidence import success_rows
from actors.jobs.evaluation.lockstep_evidence import LockstepEvidence, news_window_start_day, verdict_above, window_settings
from actors.jobs.evaluation.decision_sources import PairedDifference, Share, SourceScores
from actors.jobs.evaluation.summary import Summary
from actors.jobs.evaluation.walkforward import VariantSeries, WalkForward
from tests.actors.jobs.evaluation.summaries import a_summary


def walk_forward() -> tuple[Summary, WalkForward]:
    """A walk-forward's summary with one policy series: enough for success_rows."""
    name = "policy@100#0"
    result = WalkForward("regimes", [], [0], [100], {name: VariantSeries(name, [10.0, -5.0], trades=10, wins=6)})
    return a_summary(), result


def scores(chose: Share, llm: Share, agreement: Share, paired: PairedDifference = PairedDifference(30, 5, 100)) -> SourceScores:
    n = llm.n
    return SourceScores(decisions=n, rl=Share(n // 2, n), llm=llm, fused=Share(n // 2 + 1, n), chose_right_source=chose,
                        agreement=agreement, label_mix={"HOLD": n, "BUY": 0, "SELL": 0}, fused_vs_rl=paired)


def rows_by_figure(lockstep: LockstepEvidence | None) -> dict:
    summary, result = walk_forward()
    return {row.figure: row for row in success_rows(summary, result, lockstep)}


def test_the_lockstep_scores_fill_the_fusion_llm_and_agreement_rows_with_their_verdicts():
    base = scores(chose=Share(10, 40), llm=Share(24, 40), agreement=Share(20, 40))
    adapted = scores(chose=Share(8750, 10_000), llm=Share(9750, 10_000), agreement=Share(7000, 10_000))
    evidence = LockstepEvidence(30, base, adapted, {"llm_trust": 0.3}, {"llm_trust": 0.42}, adapter_path="a.gguf")

    rows = rows_by_figure(evidence)

    fusion, llm, agreement = rows["fusion accuracy"], rows["LLM accuracy before -> after"], rows["RL/LLM agreement"]
    assert (fusion.value, fusion.verdict) == (0.875, "met")  # the whole interval inside 0.85-0.90
    assert "fusion LLM trust (mean) 0.42" in fusion.note and "adapter" in fusion.note
    assert (llm.value, llm.verdict) == (0.975, "met")  # after = the adapter's, its interval above 0.75
    assert "base 0.60 [" in llm.note and "-> adapter 0.97 [" in llm.note
    assert (agreement.value, agreement.verdict) == (0.7, "met")
    fused = rows["fused minus RL-only (accuracy, paired)"]
    assert math.isclose(fused.value, 0.25) and fused.low > 0 and fused.verdict == "met"
    assert all(row.verdict != "not evidence" for row in (fusion, llm, agreement, fused))


def test_without_an_adapter_the_rows_read_the_base_model_and_say_so():
    base = scores(chose=Share(10, 40), llm=Share(24, 40), agreement=Share(28, 40), paired=PairedDifference(0, 0, 40))

    rows = rows_by_figure(LockstepEvidence(40, base))

    assert rows["fusion accuracy"].verdict == "not met"  # 0.25 [0.14, 0.40], all below 0.85
    llm = rows["LLM accuracy before -> after"]
    assert llm.value == 0.6 and llm.verdict == "not met" and "base model only; --adapter to compare" in llm.note
    assert rows["RL/LLM agreement"].verdict == "not evidence"  # 0.70 [0.55, 0.82] straddles 0.65-0.75
    assert rows["fused minus RL-only (accuracy, paired)"].verdict == "not met"  # fusion never differed from RL: no gain


def test_without_the_flag_the_rows_stay_not_evidence_and_the_table_keeps_its_seven_rows():
    rows = rows_by_figure(None)

    assert len(rows) == 7
    for figure in ("fusion accuracy", "LLM accuracy before -> after", "RL/LLM agreement"):
        assert rows[figure].verdict == "not evidence" and math.isnan(rows[figure].value)


def test_a_handful_without_a_contested_decision_is_measured_with_its_n_not_invented():
    base = scores(chose=Share(0, 0), llm=Share(3, 5), agreement=Share(5, 5), paired=PairedDifference(0, 0, 5))

    rows = rows_by_figure(LockstepEvidence(6, base))

    assert math.isnan(rows["fusion accuracy"].value) and rows["fusion accuracy"].verdict == "not evidence"
    assert "0 where exactly one source was right" in rows["fusion accuracy"].note and "5 scored of 6" in rows["fusion accuracy"].note
    assert rows["RL/LLM agreement"].value == 1.0


def test_a_gain_needs_the_whole_interval_above_zero():
    assert verdict_above(0.2, 0.1, 0.3, 0.0) == "met"
    assert verdict_above(0.0, 0.0, 0.0, 0.0) == "not met"
    assert verdict_above(0.1, -0.1, 0.3, 0.0) == "not evidence"
    assert verdict_above(float("nan"), float("nan"), float("nan"), 0.0) == "not evidence"


def test_the_window_settings_start_the_env_actors_test_split_on_the_folds_first_test_day():
    from actors.env.factory import load_dataset
    from actors.jobs.config import load_config

    data = {"data.synthetic_days": 12}
    dataset = load_dataset(load_config(None, data))

    windowed = load_dataset(load_config(None, {**data, **window_settings(dataset, 9)}))

    assert windowed.split("test").start == dataset.session_starts[9] and windowed.split("test").stop == len(dataset)
    assert np.array_equal(windowed.close, dataset.close)  # the same bars: only the split moved


class _NewsDays:
    """Four days of 390 bars with events at day 2's bar 100 and day 3's bar 5 (the news market's event_truth)."""

    session_starts = np.array([0, 390, 780, 1170])
    events = ("headline", "release")
    event_truth = {"event_bar": np.array([780 + 100, 1170 + 5]), "surprise": np.array([1.0, -1.0]),
                   "text_sign": np.array([1, -1])}


def test_on_the_news_market_the_window_starts_on_the_first_test_day_whose_first_decisions_show_an_event():
    days = _NewsDays()
    assert news_window_start_day(days, 1, 30) == 3  # day 2's event is at bar 100, past 30 decisions
    assert news_window_start_day(days, 1, 200) == 2
    assert news_window_start_day(days, 1, 3) == 1  # none in reach: the fold's first test day, as before
    plain = type("Plain", (), {"session_starts": days.session_starts, "events": ()})()
    assert news_window_start_day(plain, 1, 200) == 1  # every other market: unchanged
