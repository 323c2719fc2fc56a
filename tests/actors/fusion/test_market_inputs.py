"""fusion.market_inputs: the network reads the market its proposals are about, so it can trust a reader in one kind
of market and not in another.

The drill's seller always says SELL; the market moves with its trend 3 times in 4, so the seller is right in falls
and wrong in rises, an LLM that leans SELL. Without the market the network can only follow it everywhere (it loses)
or nowhere (the floor). With it, out of sample, it follows in falls only (the ceiling of a fusion that sees the trend).
"""

import math

import numpy as np
import pytest

from actors.common.actions import BUY, SELL
from actors.fusion.config import FusionConfig
from actors.fusion.network import INPUT_DIM, MARKET_INPUT_DIM, FusionLearner, fusion_input, market_inputs
from tests.actors.fusion import trust_drill
from tests.contexts import market_context


def config(**overrides) -> FusionConfig:
    return trust_drill.small_network(**{"market_inputs": True, **overrides})


def test_the_market_numbers_are_the_trend_one_hot_and_scaled_readings():
    row = market_inputs(market_context(trend="down", rsi=35.0, adx=60.0, atr=10.0, momentum=-45.0, vwap_distance_pct=-0.4,
                                       position=-1))
    assert row.tolist() == pytest.approx([0.0, 1.0, 0.0, -0.3, 1.0, -1.0, -0.4, -1.0])


def test_unknown_trend_words_and_broken_numbers_give_zeros_not_nan():
    row = market_inputs(market_context(trend="choppy", rsi=math.nan, atr=0.0, momentum=5.0, vwap_distance_pct=math.inf))
    assert np.isfinite(row).all() and row[:3].tolist() == [0.0, 0.0, 0.0] and row[5] == 0.0


def test_with_the_market_the_input_has_the_seed_numbers_first_then_eight_more():
    context = market_context(trend="up")
    plain = fusion_input(BUY, 0.7, SELL, 0.4, context)
    wide = fusion_input(BUY, 0.7, SELL, 0.4, context, with_market=True)
    assert wide.shape == (INPUT_DIM + MARKET_INPUT_DIM,) and np.array_equal(wide[:INPUT_DIM], plain)
    assert wide[INPUT_DIM] == 1.0  # trend up


def test_a_saved_network_must_be_loaded_with_the_market_setting_it_was_trained_with(tmp_path):
    path = FusionLearner(config()).save(tmp_path)
    FusionLearner(config()).load(path)
    with pytest.raises(ValueError, match="fusion.market_inputs = false gives 20"):
        FusionLearner(config(market_inputs=False)).load(path)


def followed_in(test: dict[str, np.ndarray], trend: str) -> float:
    steps = test["trend"] == trend
    return float(np.mean(test["fused"][steps] != 0.0))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_seller_right_in_falls_is_followed_in_falls_only_on_steps_never_learned_from(seed):
    test = trust_drill.learned_then_tested(config(), seed, trust_drill.seller(moves_with_trend=0.75))
    ceiling = float(np.mean(np.where(test["trend"] == "down", test["llm"], 0.0)))  # follow in falls, hold in rises
    fused, half = trust_drill.mean_and_half_width(test["fused"])
    assert followed_in(test, "down") >= 0.8 and followed_in(test, "up") <= 0.2
    assert fused - half > 0.0, f"fused {fused:+.1f} +- {half:.1f} a step is not above RL alone"
    assert fused >= 0.7 * ceiling, f"fused {fused:+.1f} a step, following in falls {ceiling:+.1f}"
    assert test["llm"].mean() < 0  # the seller followed everywhere loses


def test_without_the_market_the_same_seller_can_only_be_refused_everywhere():
    runs = [trust_drill.learned_then_tested(config(market_inputs=False), seed, trust_drill.seller(0.75)) for seed in range(3)]
    entries = float(np.mean([np.mean(run["fused"] != 0.0) for run in runs]))
    assert entries <= 0.2, f"followed on {entries:.0%} of the steps without seeing the trend"


def test_with_the_market_a_coin_is_still_not_followed_and_an_even_reader_still_is():
    """The trend words carry nothing here: the extra inputs must not make up a pattern."""
    coins = [trust_drill.learned_then_tested(config(), seed, trust_drill.even_reader(0.5)) for seed in range(3)]
    assert float(np.mean([np.mean(run["fused"] != 0.0) for run in coins])) <= 0.2
    good = trust_drill.learned_then_tested(config(), 0, trust_drill.even_reader(0.75))
    assert good["fused"].mean() >= 0.7 * good["llm"].mean() > 0
