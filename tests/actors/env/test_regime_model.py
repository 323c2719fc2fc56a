"""The market-regime belief: an HMM fitted on the training days of whatever market is loaded, read by a filter
(bars <= t only), saved as plain numbers; it reads the planted trends of the synthetic market and none in its null twin."""

from __future__ import annotations

import json

import numpy as np
import pytest

from actors.common.synthetic import TREND_DOWN, TREND_UP, generate_market
from actors.env.dataset import Dataset
from actors.env.features import STATIC_FEATURES, compute_features, regime_model_of
from actors.env.regime_model import BELIEF_FOR_A_TREND, INPUT_BARS, RegimeBelief, RegimeModel, trends_of

REGIME_COLUMN = STATIC_FEATURES.index("market_regime")


@pytest.fixture(scope="module")
def regimes():
    synthetic = generate_market(50, seed=4, market="regimes")
    return synthetic, regime_model_of(synthetic.bars.iloc[: 35 * 390])


def settled_trend_side(regime: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    side = np.where(regime == TREND_UP, 1, np.where(regime == TREND_DOWN, -1, 0))
    bars_into_regime = np.zeros(len(regime), dtype=np.int64)
    for t in range(1, len(regime)):
        bars_into_regime[t] = bars_into_regime[t - 1] + 1 if regime[t] == regime[t - 1] else 0
    return (side != 0) & (bars_into_regime >= 60), side


def test_the_fitted_belief_points_the_way_of_a_settled_trend_on_days_it_was_not_fitted_on(regimes):
    synthetic, model = regimes
    belief = compute_features(synthetic.bars, model).static[:, REGIME_COLUMN]
    settled, side = settled_trend_side(synthetic.regime)
    later = np.arange(len(belief)) >= 35 * 390  # the days after the fit's
    agreement = np.mean(np.sign(belief[settled & later]) == side[settled & later])
    assert (settled & later).sum() > 500 and agreement > 0.7


def test_the_null_twin_s_belief_is_no_better_than_a_coin():
    synthetic = generate_market(40, seed=4, market="null")  # the same hidden regimes, with their drift removed
    belief = compute_features(synthetic.bars, regime_model_of(synthetic.bars.iloc[: 25 * 390])).static[:, REGIME_COLUMN]
    settled, side = settled_trend_side(synthetic.regime)
    assert 0.35 < np.mean(np.sign(belief[settled]) == side[settled]) < 0.65


def test_the_belief_at_a_bar_does_not_change_when_later_bars_change(regimes):
    synthetic, model = regimes
    frame = synthetic.bars.iloc[: 3 * 390].copy()
    cut = 700
    changed = frame.copy()
    changed.iloc[cut + 1 :, :4] = changed.iloc[cut + 1 :, :4].to_numpy() * np.linspace(1.0, 0.9, len(frame) - cut - 1)[:, None]
    original, altered = (compute_features(bars, model).static[:, REGIME_COLUMN] for bars in (frame, changed))
    assert np.array_equal(original[: cut + 1], altered[: cut + 1])
    assert not np.array_equal(original[cut + 1 :], altered[cut + 1 :])  # the change reached the belief: the test can fail


def test_the_fit_sees_the_training_split_only():
    synthetic = generate_market(30, seed=2)
    bars = synthetic.bars
    dataset = Dataset.from_frame(bars, 16 * 60 + 10)
    changed = bars.copy()
    train_stop = dataset.bounds["train"][1]
    changed.iloc[train_stop:, :4] = changed.iloc[train_stop:, :4].to_numpy() * 1.2  # the later days only
    assert Dataset.from_frame(changed, 16 * 60 + 10).regime_model == dataset.regime_model
    refitted = dataset.with_regime_fitted_on(train_stop // 2)  # a walk-forward fold's shorter training block
    assert refitted.regime_model != dataset.regime_model
    assert refitted.regime_model == regime_model_of(bars.iloc[: train_stop // 2])
    others = np.arange(dataset.features.static.shape[1]) != REGIME_COLUMN
    assert np.array_equal(refitted.features.static[:, others], dataset.features.static[:, others])


def test_the_model_survives_json_and_says_what_each_state_looks_like(regimes):
    _, model = regimes
    assert RegimeModel.from_dict(json.loads(json.dumps(model.to_dict()))) == model
    lines = model.describe()
    assert len(lines) == 1 + len(model.start) and "change" in lines[1] and "range" in lines[1]
    changes = [row[0] for row in model.means]
    assert changes == sorted(changes) and changes[0] < 0 < changes[-1]  # states sorted bearish to bullish


def test_a_session_s_first_bars_carry_no_evidence_however_large_the_gap(regimes):
    _, model = regimes
    steady, gapped = RegimeBelief(model), RegimeBelief(model)
    for k in range(50):
        steady.push(20_000.0 + k, 4.0, 4.0, k == 0)
        gapped.push(20_000.0 + k, 4.0, 4.0, k == 0)
    for k in range(INPUT_BARS):  # a new session opening 400 ATR lower: its windows restart, the gap is not a trend
        assert steady.push(20_100.0, 4.0, 4.0, k == 0) == gapped.push(18_400.0, 4.0, 4.0, k == 0)


def test_too_few_training_bars_give_a_belief_of_zero_and_it_stays_in_bounds(regimes):
    short = generate_market(2, seed=1).bars
    assert regime_model_of(short) == RegimeModel.uninformative()
    assert not compute_features(short, regime_model_of(short)).static[:, REGIME_COLUMN].any()
    _, model = regimes
    belief = RegimeBelief(model)
    values = [belief.push(20_000.0 + 3.0 * k, 2.0, 2.0, k == 0) for k in range(500)]  # a steady climb
    assert max(abs(v) for v in values) <= 1.0 and values[-1] > BELIEF_FOR_A_TREND


def test_the_context_s_trend_word_is_the_belief_read_against_its_threshold(regimes):
    synthetic, model = regimes
    features = compute_features(synthetic.bars.iloc[: 20 * 390], model)
    belief = features.static[:, REGIME_COLUMN].astype(np.float64)
    word = features.trend_code.astype(np.int64) - 1
    confident = np.abs(np.abs(belief) - BELIEF_FOR_A_TREND) > 1e-6  # clear of the float32 rounding at the threshold
    assert np.array_equal(word[confident], trends_of(belief)[confident])
    assert {-1, 0, 1} <= set(word.tolist())


def test_the_model_is_saved_beside_the_policy_checkpoints_and_read_back_and_a_broken_file_is_named(regimes, tmp_path):
    import structlog

    from actors.env.regime_model import load_regime_model_beside, record_regime_model

    _, model = regimes
    with structlog.testing.capture_logs() as logs:
        lines = record_regime_model(structlog.get_logger(), model, tmp_path / "checkpoints")
    assert lines == model.describe() and logs[0]["event"] == "regime_model" and logs[0]["fit_bars"] == model.fit_bars
    assert load_regime_model_beside(tmp_path / "checkpoints" / "policy_000000051200.zip") == model
    assert load_regime_model_beside(tmp_path) is None  # nothing saved there
    (tmp_path / "checkpoints" / "regime_model.json").write_text("{\"means\": [")
    with pytest.raises(ValueError, match="regime_model.json"):
        load_regime_model_beside(tmp_path / "checkpoints")


def test_paper_trading_fits_its_model_on_the_history_bars_and_has_none_without():
    from actors.common.instruments import resolve_instrument
    from actors.common.market_settings import AccountConfig, InstrumentConfig
    from actors.env.config import EnvConfig
    from actors.env.live import PaperSession

    history = generate_market(10, seed=6).bars

    def session(**kwargs):
        return PaperSession(resolve_instrument(InstrumentConfig()), AccountConfig(), EnvConfig(), warmup_bars=300, window_bars=400, **kwargs)
    assert session(history=history).regime_model == regime_model_of(history)
    assert session().regime_model is None
