import pytest

from actors.lora.stopping import Plateau


def test_training_stops_after_patience_rounds_without_a_better_validation_match():
    plateau = Plateau(patience=2)

    stops = [plateau.update(rate) for rate in (0.40, 0.48, 0.47, 0.48)]

    assert stops == [False, False, False, True]  # 0.48 again is no gain: two rounds since the best
    assert (plateau.best, plateau.best_round) == (0.48, 2)


def test_a_gain_smaller_than_min_gain_does_not_reset_the_patience():
    plateau = Plateau(patience=1, min_gain=0.02)

    assert plateau.update(0.50) is False
    assert plateau.update(0.51) is True


def test_patience_below_one_round_is_refused():
    with pytest.raises(ValueError, match="patience"):
        Plateau(patience=0)


@pytest.mark.slow
def test_rounds_stop_when_the_validation_match_stops_improving_and_validation_prompts_are_never_stored(tmp_path):
    from actors.lora.config import LoraConfig
    from actors.lora.core import train_until_plateau
    from actors.lora.store import ExperienceStore
    from tests.actors.lora.planted import TREND_REASONER, trend_experiences

    config = LoraConfig(rank=4, alpha=8.0, dropout=0.0, steps_per_round=1, batch_size=2, learning_rate=1e-6,
                        max_eval_examples=4, held_out_fraction=0.25, max_seq_tokens=256)
    validation = trend_experiences(6, seed=9)

    # A learning rate of 1e-6 changes no answer: the first round sets the best, the next brings no gain, stop.
    reports, rates = train_until_plateau(config, TREND_REASONER, tmp_path, trend_experiences(16), validation,
                                         max_rounds=5, patience=1)

    assert len(reports) == len(rates) == 2 and rates[0] == rates[1]
    store = ExperienceStore(tmp_path / "lora" / "experiences.sqlite", max_experiences=100, held_out_fraction=0.25)
    assert not {e.id for e in validation} & {e.id for e in store.all()}
    store.close()
