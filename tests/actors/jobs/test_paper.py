"""What bin/run paper prints at stop, from the env's summary.json; and the vendor-style file it can write."""

from __future__ import annotations

import json

import pandas as pd

from actors.jobs.config import load_config
from actors.jobs.paper import paper_presets, paper_settings, print_paper_summary, session_span, write_vendor_bars
from actors.jobs.presets import apply_presets


def write_summary(run_dir, **figures) -> None:
    (run_dir / "paper").mkdir(parents=True)
    (run_dir / "paper" / "summary.json").write_text(json.dumps(figures))


def test_a_run_that_ended_in_the_warm_up_says_that_is_why_it_made_no_decision(tmp_path, capsys):
    write_summary(tmp_path, feed_bars=120.0, decisions=0.0, warmup_bars_known=120.0, warmup_bars_needed=210.0, thoughts_used=0.0)

    print_paper_summary(tmp_path, load_config(None, {}))

    out = capsys.readouterr().out
    assert "no decisions: the run ended during the feature warm-up (120 of 210 bars)" in out and "--start" in out


def test_unused_thoughts_are_explained_by_the_measured_cause_and_undefined_figures_show_as_na(tmp_path, capsys):
    write_summary(tmp_path, decisions=121.0, thoughts_used=0.0, thoughts_arrived=13.0, thoughts_dropped_stale=13.0, thoughts_usable=0.0,
                  max_staleness_steps=10.0, thought_age_min_bars=10.0, thought_age_max_bars=11.0, bar_interval_mean_secs=0.5,
                  thought_latency_mean_ms=5_400.0, query_rate=None)

    print_paper_summary(tmp_path, load_config(None, {}))

    out = capsys.readouterr().out
    assert "13 thoughts arrived, all 10-11 bars old (max_staleness_steps = 10)" in out and "--speed agent" in out
    assert "LLM query rate" in out and "n/a" in out


def test_lockstep_is_the_main_jobs_hybrid_preset():
    config = apply_presets(load_config(None, paper_settings(None)), paper_presets(lockstep=True))

    assert config.env.thought_lag_steps == 1 and config.reasoner.mode == "single_shot"
    assert config.reasoner.query_policy == "always" and config.env.mode == "paper"


def test_write_bars_writes_a_vendor_csv_at_real_nq_prices_in_eastern_time(tmp_path):
    opens = write_vendor_bars(tmp_path / "nq.csv", days=2, seed=0)

    frame = pd.read_csv(tmp_path / "nq.csv")
    assert list(frame.columns) == ["timestamp", "open", "high", "low", "close", "volume"] and len(frame) == 780
    assert opens == ["2023-11-27 09:30", "2023-11-28 09:30"] and frame["timestamp"][0] == "2023-11-27 09:30:00"
    assert 14_000 < frame["close"].mean() < 18_000 and ((frame["close"] * 4) % 1 == 0).all()  # quarter ticks


def test_a_long_file_names_its_first_and_last_sessions_not_all_of_them():
    opens = [f"2024-01-{day:02d} 09:30" for day in range(2, 30)]
    assert session_span(opens[:3]) == "2024-01-02 09:30, 2024-01-03 09:30, 2024-01-04 09:30"
    assert session_span(opens) == "2024-01-02 09:30, 2024-01-03 09:30, ... 2024-01-28 09:30, 2024-01-29 09:30"
