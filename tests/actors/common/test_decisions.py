import numpy as np
import pytest

from actors.common.decisions import DecisionStats


def test_decision_stats_give_agreement_query_rate_and_veto_rate():
    stats = DecisionStats()
    stats.add_fusion(np.array([1, 2, 0, 1]), np.array([1, 0, -1, -1]), np.array([0.8, 0.6, 0.0, 0.0]), np.array([1, 3, -1, -1]), np.full(4, 0.7), np.full(4, 0.3))
    stats.add_verdict([True, False, False, False])
    summary = stats.summary()
    assert summary["query_rate"] == 0.5 and summary["agreement_rate"] == 0.5
    assert summary["llm_confidence"] == pytest.approx(0.7) and summary["llm_staleness_steps"] == 2
    assert summary["veto_rate"] == 0.25 and summary["rl_trust"] == pytest.approx(0.7)


def test_no_decisions_read_as_zero_rates():
    assert set(DecisionStats().summary().values()) == {0.0}
