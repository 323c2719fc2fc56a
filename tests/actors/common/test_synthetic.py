"""The synthetic markets' planted effects are measurable in their bars; the null twin has none."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.market_stats import REAL_NQ, market_statistics
from actors.common.synthetic import REGIMES, TREND_DOWN, TREND_UP, generate_market, scenario


def drift_per_regime(market) -> dict[str, float]:
    """Mean 1-minute log return inside each regime, in units of the scenario's midday sigma (session opens left out)."""
    close = market.bars["close"].to_numpy()
    returns = np.diff(np.log(close))
    regime = market.regime[1:]
    minute = np.tile(np.arange(390), len(close) // 390)[1:]
    inside = minute > 60  # past the open's extra volatility, where sigma is the scenario's own
    sigma = market.scenario.per_minute_sigma
    return {name: float(returns[(regime == k) & inside].mean() / sigma) for k, name in enumerate(REGIMES)}


@pytest.fixture(scope="module")
def twins():
    return generate_market(120, seed=3, market="regimes"), generate_market(120, seed=3, market="null")


def test_regimes_recovers_the_planted_trend_drift_within_its_tolerance(twins):
    regimes, _ = twins
    drift = drift_per_regime(regimes)
    planted = regimes.scenario.trend_drift_sigmas
    # ~10k bars per trend regime: the standard error of the mean is about 1/sqrt(10k) = 0.01 sigma.
    assert drift["trend_up"] == pytest.approx(planted, abs=0.04)
    assert drift["trend_down"] == pytest.approx(-planted, abs=0.04)


def test_null_has_no_drift_in_any_regime(twins):
    _, null = twins
    close = null.bars["close"].to_numpy()
    returns = np.diff(np.log(close))
    regime = null.regime[1:]
    for k, name in enumerate(REGIMES):
        inside = returns[regime == k]
        t_statistic = inside.mean() / (inside.std(ddof=1) / np.sqrt(len(inside)))
        assert abs(t_statistic) < 3.5, name


def test_null_is_the_same_seed_with_the_edge_removed(twins):
    regimes, null = twins
    assert np.array_equal(regimes.regime, null.regime)
    assert np.array_equal(regimes.bars["volume"].to_numpy(), null.bars["volume"].to_numpy())
    assert not np.array_equal(regimes.bars["close"].to_numpy(), null.bars["close"].to_numpy())


def test_a_harder_market_is_one_setting_away():
    harder = generate_market(120, seed=3, market=scenario("regimes", trend_drift_sigmas=0.04))
    assert drift_per_regime(harder)["trend_up"] == pytest.approx(0.04, abs=0.04)
    assert (harder.regime == TREND_UP).any() and (harder.regime == TREND_DOWN).any()


def test_the_regime_never_becomes_a_column_of_the_bars(twins):
    regimes, _ = twins
    assert list(regimes.bars.columns) == ["open", "high", "low", "close", "volume"]


def test_unknown_scenario_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown scenario 'trendy'"):
        scenario("trendy")


def test_calibration_is_near_real_nq_where_the_readme_says_it_is():
    stats = market_statistics(generate_market(60, seed=0, start_price=16_000.0).bars)
    assert stats["sigma_midday_pct"] == pytest.approx(REAL_NQ["sigma_midday_pct"], rel=0.2)
    assert stats["range_midday_points"] == pytest.approx(REAL_NQ["range_midday_points"], rel=0.25)
    assert stats["range_first15_points"] == pytest.approx(REAL_NQ["range_first15_points"], rel=0.25)
    assert stats["daily_range_pct"] == pytest.approx(REAL_NQ["daily_range_pct"], rel=0.3)
    assert stats["kurtosis"] > 10  # fat tails, though thinner than real NQ's 163 (actors/common/README.md)
