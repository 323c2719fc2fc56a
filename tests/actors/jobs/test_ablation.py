"""The ablation job's table."""

import numpy as np
import pytest

from actors.jobs.ablation import ABLATION_VARIANTS, ablation_markdown, mean_and_half_width, significant_differences
from actors.jobs.config import load_config
from actors.jobs.presets import apply_presets

VARIANT_NAMES = [variant.name for variant in ABLATION_VARIANTS]


def test_ablation_table_has_a_row_per_variant_and_every_column_the_issue_names():
    rows = [{"variant": name, "metrics": {"win_rate": 0.5, "sharpe": 1.25, "trades": 10.0}} for name in VARIANT_NAMES]

    table = ablation_markdown(rows, "notes on data and seeds")

    lines = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    assert len(lines) == 1 + len(ABLATION_VARIANTS)  # header + one row each
    for label in ("win rate", "Sharpe", "max DD $", "profit factor", "trades", "Apex violations", "agreement", "veto rate", "query rate", "LLM staleness (steps)"):
        assert label in lines[0]
    assert "| RL only | 0.500 | 1.250 | - | - | 10 |" in table and "notes on data and seeds" in table
    methods = {variant.settings.get("fusion.method") for variant in ABLATION_VARIANTS}
    assert methods == {"rl_only", "rules", "network"}


def test_a_95_percent_interval_over_seeds_uses_student_t():
    mean, half = mean_and_half_width([1.0, 2.0, 3.0])

    assert mean == 2.0
    assert half == pytest.approx(4.303 * 1.0 / 3 ** 0.5, rel=1e-3)  # sd 1, three seeds: t(0.975, 2) = 4.303
    assert mean_and_half_width([5.0]) == (5.0, 0.0)
    assert np.isnan(mean_and_half_width([float("nan")])[0])


def test_only_differences_larger_than_their_paired_interval_are_named():
    base = [{"net_pnl_usd": 100.0, "sharpe": 1.0}, {"net_pnl_usd": 200.0, "sharpe": 0.5}, {"net_pnl_usd": 150.0, "sharpe": 0.8}]
    better = [{"net_pnl_usd": m["net_pnl_usd"] + 500.0 + i, "sharpe": m["sharpe"] + (0.3 if i % 2 else -0.3)} for i, m in enumerate(base)]
    rows = [{"variant": "RL only", "per_seed": base}, {"variant": "RL + rules", "per_seed": better}]

    findings = significant_differences(rows)

    assert len(findings) == 1 and findings[0].startswith("RL + rules: net_pnl_usd differs from RL only by +501")


def test_the_table_shows_mean_and_interval_and_the_llm_variants_run_in_lockstep():
    rows = [{"variant": "RL only", "metrics": {"net_pnl_usd": 1500.0}, "half_widths": {"net_pnl_usd": 250.0}}]

    assert "| 1,500 ± 250 |" in ablation_markdown(rows, "")
    for variant in ABLATION_VARIANTS:
        uses_llm = variant.settings.get("fusion.method") != "rl_only"
        config = apply_presets(load_config(None, variant.settings), variant.presets)
        assert config.env.thought_lag_steps == (1 if uses_llm else 0) and config.env.mode == "backtest", variant.name


def test_one_seed_shows_no_interval_and_several_seeds_do():
    one = {"variant": "RL only", "metrics": {"trades": 6.0}, "half_widths": {"trades": 0.0}, "per_seed": [{"trades": 6.0}]}
    three = {**one, "variant": "RL + rules", "half_widths": {"trades": 2.5}, "per_seed": [{}, {}, {}]}

    table = ablation_markdown([one, three], "notes")

    assert "| RL only | - | - | - | - | 6 |" in table  # not "6 ± 0"
    assert "| RL + rules | - | - | - | - | 6 ± 2.500 |" in table


def test_the_success_table_scores_the_seeds_system_and_says_what_this_run_could_not_measure():
    from actors.jobs.ablation import LORA_VARIANT, SYSTEM_VARIANT, ablation_success_rows
    from actors.jobs.evaluation.decision_sources import Share, SourceScores

    rows = [{"variant": SYSTEM_VARIANT, "per_seed": [{"win_rate": 0.40, "sharpe": 1.0}, {"win_rate": 0.44, "sharpe": 2.0},
                                                     {"win_rate": 0.42, "sharpe": 1.5}]}]
    scores = {SYSTEM_VARIANT: SourceScores(decisions=200, rl=Share(40, 200), llm=Share(60, 200), fused=Share(50, 200),
                                           chose_right_source=Share(30, 60), agreement=Share(70, 200))}

    table = {row.figure: row for row in ablation_success_rows(rows, scores)}

    assert table["win rate (mean over seeds)"].verdict == "not met"  # 0.40-0.44 with its t-interval, all under 0.58
    assert table["fusion accuracy (chose the source that was right)"].value == 0.5
    assert table["fusion accuracy (chose the source that was right)"].verdict == "not met"
    assert table["RL/LLM agreement"].verdict == "not met" and table["LLM accuracy, base model (advice = hindsight label)"].value == 0.3
    after = table["LLM accuracy, after LoRA"]
    assert after.verdict == "not evidence" and after.note == "run with --lora" and LORA_VARIANT.name not in scores
