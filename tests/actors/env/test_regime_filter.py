"""The market-regime feature reads the planted trends of the synthetic market, finds none in its null twin,
and is not moved by the bars that carry no trend evidence (overnight gaps, jumps, warm-up)."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.synthetic import TREND_DOWN, TREND_UP, generate_market
from actors.env.features import STATIC_FEATURES, compute_features
from actors.env.regime_filter import BELIEF_FOR_A_TREND, MAX_EVIDENCE, RegimeFilter, regime_belief, trends_of

REGIME_COLUMN = STATIC_FEATURES.index("market_regime")


def belief_and_trend(market: str) -> tuple[np.ndarray, np.ndarray]:
    """The feature on bars at least 60 bars into a trend, and the hidden trend's sign there."""
    synthetic = generate_market(60, seed=4, market=market)
    belief = compute_features(synthetic.bars).static[:, REGIME_COLUMN]
    regime = synthetic.regime
    side = np.where(regime == TREND_UP, 1, np.where(regime == TREND_DOWN, -1, 0))
    bars_into_regime = np.zeros(len(regime), dtype=np.int64)
    for t in range(1, len(regime)):
        bars_into_regime[t] = bars_into_regime[t - 1] + 1 if regime[t] == regime[t - 1] else 0
    settled = (side != 0) & (bars_into_regime >= 60)
    return belief[settled], side[settled]


def test_the_belief_points_the_way_of_a_settled_trend_on_the_regimes_market():
    belief, side = belief_and_trend("regimes")
    assert len(side) > 2_000
    agreement = np.mean(np.sign(belief) == side)
    # A 60-bar momentum sign is right ~94 % of the time here (synthetic.py); the filter at least ~85 %.
    assert agreement > 0.85
    assert np.mean(np.abs(belief) > 0.4) > 0.5  # and it is confident, not hovering at zero


def test_the_null_twin_leaves_the_belief_no_better_than_a_coin():
    belief, side = belief_and_trend("null")  # the same hidden regimes, with their drift removed
    agreement = np.mean(np.sign(belief) == side)
    assert 0.35 < agreement < 0.65


def test_a_session_s_first_change_is_no_evidence_however_large():
    steady, gapped = RegimeFilter(), RegimeFilter()
    for _ in range(50):
        steady.push(1.0, 4.0, False)
        gapped.push(1.0, 4.0, False)
    assert steady.push(0.0, 4.0, True) == gapped.push(-400.0, 4.0, True)  # a 100-ATR overnight gap down


def test_a_jump_weighs_no_more_than_a_change_at_the_evidence_clip():
    jump, clipped = RegimeFilter(), RegimeFilter()
    scale = np.sqrt(0.35)  # FIRST_SCALE: the filter's standard deviation of ATR-normalised changes before any bar
    assert jump.push(50.0, 1.0, False) == pytest.approx(clipped.push(MAX_EVIDENCE * scale, 1.0, False), rel=1e-12)


def test_bars_without_an_atr_or_a_previous_close_carry_no_evidence_and_the_belief_stays_in_bounds():
    regime = RegimeFilter()
    assert regime.push(float("nan"), float("nan"), True) == 0.0
    assert regime.push(5.0, float("nan"), False) == 0.0
    assert regime.push(5.0, 0.0, False) == 0.0
    rng = np.random.default_rng(0)
    change = rng.standard_normal(5_000) * 3.0 + 0.5
    belief = regime_belief(change, np.full(5_000, 2.0), np.zeros(5_000, dtype=np.int64))
    assert np.all(np.abs(belief) <= 1.0)
    assert belief[-1] > 0.5  # a steady drift up of a sixth of the spread is read as a trend up


def test_the_context_s_trend_word_is_the_belief_read_against_its_threshold():
    synthetic = generate_market(20, seed=4)
    features = compute_features(synthetic.bars)
    belief = features.static[:, REGIME_COLUMN].astype(np.float64)
    word = features.trend_code.astype(np.int64) - 1
    confident = np.abs(np.abs(belief) - BELIEF_FOR_A_TREND) > 1e-6  # clear of the float32 rounding at the threshold
    assert np.array_equal(word[confident], trends_of(belief)[confident])
    assert {-1, 0, 1} <= set(word.tolist())
