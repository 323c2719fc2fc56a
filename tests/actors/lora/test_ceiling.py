"""The learnability ceiling on the real synthetic markets: the label is readable from the tape on `regimes`, not on `null`."""

import numpy as np
import pytest

from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.lora import history_bars, history_market
from actors.lora.ceiling import SoftmaxRegression, learnability_ceiling


def history_config(scenario: str):
    return configure(build_parser().parse_args(["lora"]), {"data.scenario": scenario})


def test_held_out_prompts_never_come_from_a_training_day():
    bars = history_bars(history_config("regimes"), 200, held_out=100)

    train_days = {b.day for b in bars if not b.held_out}
    held_days = {b.day for b in bars if b.held_out}
    assert len([b for b in bars if not b.held_out]) == 200 and len(held_days) >= 2
    assert not train_days & held_days and max(train_days) < min(held_days)  # later days, never seen in training
    assert all(b.context["tape"].startswith("moves ") for b in bars)  # every prompt shows the tape


def test_validation_days_for_early_stopping_are_the_last_training_days_and_never_a_held_out_day():
    bars = history_bars(history_config("regimes"), 200, held_out=100, validation=60)

    train_days = {b.day for b in bars if not b.held_out and not b.validation}
    validation_days = {b.day for b in bars if b.validation}
    held_days = {b.day for b in bars if b.held_out}
    assert len([b for b in bars if b.validation]) == 60 and not any(b.held_out for b in bars if b.validation)
    assert max(train_days) < min(validation_days) and max(validation_days) < min(held_days)


def test_the_history_market_spreads_prompts_over_many_days_so_each_trend_word_is_labelled_its_way_in_training():
    # 60 days (data.synthetic_days) left 34 training days: on 400 prompts "down" was labelled SELL 48 % of the time
    config = history_config("regimes")
    market = history_market(config)
    bars = history_bars(market, 400, held_out=300)

    train = [b for b in bars if not b.held_out]
    assert market.data.synthetic_days == config.lora.market_history_days == 600 and config.data.synthetic_days == 60
    assert len({b.day for b in train}) > 150 and len({b.day for b in bars if b.held_out}) > 50

    def sell_share(word):
        labels = [b.label.action for b in train if b.context["trend"] == word and b.label.action != 0]
        return sum(label == 2 for label in labels) / len(labels)
    assert sell_share("down") > 0.6 > 0.4 > sell_share("up")


def test_the_history_market_is_the_runs_data_for_a_bars_file_or_when_set_to_0():
    file_config = configure(build_parser().parse_args(["lora"]), {"data.source": "file", "data.path": "bars.csv"})
    own = configure(build_parser().parse_args(["lora"]), {"lora.market_history_days": 0})

    assert history_market(file_config) is file_config and history_market(own) is own


@pytest.mark.parametrize("scenario", ["regimes", "null"])
def test_the_label_is_readable_from_the_tape_on_regimes_and_not_on_null(scenario):
    bars = history_bars(history_config(scenario), 1500, held_out=600)
    ceiling = learnability_ceiling([(b.context["tape"], b.label.action) for b in bars if not b.held_out],
                                   [(b.context["tape"], b.label.action) for b in bars if b.held_out])

    print(f"{scenario}: ceiling {ceiling.classifier}, chance {ceiling.chance.value:.3f}, labels {ceiling.label_mix}")
    assert ceiling.classifier.n == 600
    if scenario == "regimes":
        assert ceiling.beats_chance
    else:
        assert not ceiling.beats_chance


def test_the_classifier_finds_a_planted_rule_in_tape_lines_and_refuses_lines_without_a_tape():
    rng = np.random.default_rng(0)

    def line(move):
        return f"moves {' '.join(['0'] * 12)} | 20 bars {move:+.1f} ATR | 60 bars {move:+.1f} ATR | range 50% | ATR 20 ticks | VWAP +0.0 ATR | 100 min to flat"

    rows = [(line(m), 1 if m > 0 else 2) for m in rng.normal(0, 3, 400)]
    ceiling = learnability_ceiling(rows[:300], rows[300:] + [("not enough bars yet", 1)])

    assert ceiling.classifier.value > 0.95 and ceiling.classifier.n == 100 and ceiling.beats_chance
    assert isinstance(SoftmaxRegression().fit(np.zeros((3, 2)), np.array([0, 1, 2])).predict(np.zeros((1, 2))), np.ndarray)
    with pytest.raises(ValueError, match="full tape"):
        learnability_ceiling([("no tape", 1)], rows[300:])


def test_a_trend_word_given_beside_the_tape_is_read_as_two_columns():
    rng = np.random.default_rng(1)
    flat_tape = f"moves {' '.join(['0'] * 12)} | 20 bars +0.0 ATR | 60 bars +0.0 ATR | range 50% | ATR 20 ticks | VWAP +0.0 ATR | 100 min to flat"
    words = rng.choice(["up", "down"], 400)
    rows = [(flat_tape, 1 if word == "up" else 2, str(word)) for word in words]  # the label lives in the word alone

    with_word = learnability_ceiling(rows[:300], rows[300:])
    tape_only = learnability_ceiling([row[:2] for row in rows[:300]], [row[:2] for row in rows[300:]])

    assert with_word.classifier.value == 1.0
    assert tape_only.classifier.value < 0.7
