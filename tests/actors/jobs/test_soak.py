import os

import pytest

from actors.jobs.soak import LoopCounts, ProcessMemory, growth_mb_per_hour, read_rss_kb, sample, table


def test_read_rss_kb_reads_vmrss_from_the_proc_status_file(tmp_path):
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "status").write_text("Name:\tpython\nVmPeak:\t 9000 kB\nVmRSS:\t  123456 kB\nThreads:\t3\n")

    assert read_rss_kb(42, proc_root=tmp_path) == 123456


def test_read_rss_kb_of_this_process_is_positive_and_of_a_gone_one_is_none(tmp_path):
    assert read_rss_kb(os.getpid()) > 0
    assert read_rss_kb(999_999, proc_root=tmp_path) is None


def test_growth_is_the_slope_over_the_second_half_in_mb_per_hour():
    # first half: a warm-up jump the fit must ignore; second half: +1 MB every 360 s = 10 MB/hour
    elapsed = [float(t) for t in range(0, 3600, 360)]
    rss = [100.0, 150.0, 180.0, 190.0, 200.0] + [200.0 + i for i in range(5)]

    assert growth_mb_per_hour(elapsed, rss) == pytest.approx(10.0)


def test_growth_of_too_few_samples_is_nan():
    assert growth_mb_per_hour([0.0], [100.0]) != growth_mb_per_hour([0.0], [100.0])


def test_a_flat_process_passes_and_a_leaking_or_restarted_one_fails():
    flat, leaking, restarted = ProcessMemory("flat"), ProcessMemory("leaking"), ProcessMemory("restarted")
    for i in range(20):
        flat.add(i * 60.0, 1, 200.0)
        leaking.add(i * 60.0, 2, 200.0 + i * 2.0)  # 2 MB a minute = 120 MB/hour
        restarted.add(i * 60.0, 3 if i < 10 else 4, 200.0)

    assert flat.passed
    assert not leaking.passed
    assert restarted.restarts == 1 and not restarted.passed


def test_the_bound_is_the_smaller_of_50_mb_and_20_percent_of_the_warm_rss_per_hour():
    small, large = ProcessMemory("small"), ProcessMemory("large")
    small.add(0.0, 1, 100.0)
    large.add(0.0, 1, 1000.0)

    assert small.bound_mb_per_hour == pytest.approx(20.0)
    assert large.bound_mb_per_hour == pytest.approx(50.0)


def test_sample_skips_processes_that_are_gone():
    rss_kb = {1: 2048, 2: None}

    assert sample({"a": 1, "b": 2}, read=rss_kb.get) == {"a": (1, 2.0)}


def test_the_table_has_one_row_per_process_with_its_verdict():
    m = ProcessMemory("env")
    for i in range(4):
        m.add(i * 10.0, 1, 100.0)

    text = table({"env": m}, LoopCounts(steps=5, thoughts=2), minutes=1.0)

    assert "env" in text and "PASS" in text and "thoughts 2" in text
