import pytest

from actors.lora.publishing import (COLLAPSED, NOT_ABOVE_ONE_ANSWER, NOT_BETTER, NO_STEPS, PUBLISHED, paired_gain,
                                    publish_verdict)

HOLD, BUY, SELL = 0, 1, 2
MIXED = [BUY, SELL, HOLD] * 100  # 300 held-out labels, no action more common than a third


def answers_right_on(labels, share):
    """Answers that hit the first ``share`` of the labels and miss the rest (BUY <-> SELL, HOLD -> BUY)."""
    cut = round(len(labels) * share)
    return list(labels[:cut]) + [{BUY: SELL, SELL: BUY, HOLD: BUY}[y] for y in labels[cut:]]


def answers_right_between(labels, start, stop):
    """Answers that hit the labels from ``start`` to ``stop`` (shares of the list) and miss the others."""
    lo, hi = round(len(labels) * start), round(len(labels) * stop)
    return [y if lo <= i < hi else {BUY: SELL, SELL: BUY, HOLD: BUY}[y] for i, y in enumerate(labels)]


def test_a_clear_gain_on_the_same_prompts_is_published():
    verdict = publish_verdict(answers_right_on(MIXED, 0.40), answers_right_on(MIXED, 0.55), MIXED, z=1.96, collapse_share=0.8)

    assert (verdict.publish, verdict.why) == (True, PUBLISHED)
    assert (verdict.before, verdict.after) == pytest.approx((0.40, 0.55))
    assert 0 < verdict.gain_low < 0.15 < verdict.gain_high


def test_an_adapter_no_better_than_the_current_one_beyond_its_interval_is_refused():
    # 2 points better on 300 prompts, right on other prompts than before: inside the noise of the paired difference
    verdict = publish_verdict(answers_right_between(MIXED, 0.0, 0.40), answers_right_between(MIXED, 0.20, 0.62), MIXED,
                              z=1.96, collapse_share=0.8)
    half_right = [BUY, SELL] * 2 + [SELL, BUY] * 2
    same = publish_verdict(half_right, half_right, [BUY, SELL] * 4, z=1.96, collapse_share=0.8)  # 0.50 -> 0.50 on 8 bars

    assert (verdict.publish, verdict.why) == (False, NOT_BETTER) and verdict.gain_low < 0
    assert (same.publish, same.why) == (False, NOT_BETTER)


def test_a_collapsed_adapter_is_refused_even_when_its_match_rate_is_higher():
    labels = [BUY] * 150 + [SELL] * 90 + [HOLD] * 60  # mixed: the commonest label is half of them
    before = [SELL] * 300  # right on 90
    after = [BUY] * 270 + [SELL] * 30  # right on 150 + 0: a big gain, but BUY on 90 % of the prompts

    verdict = publish_verdict(before, after, labels, z=1.96, collapse_share=0.8)

    assert (verdict.publish, verdict.why, verdict.collapsed, verdict.top_action) == (False, COLLAPSED, True, "BUY")
    assert verdict.top_share == pytest.approx(0.9) and verdict.metrics()["collapse"] == 1.0


def test_one_answer_everywhere_is_no_collapse_when_the_labels_are_that_one_answer():
    verdict = publish_verdict([HOLD] * 40, [BUY] * 40, [BUY] * 40, z=1.96, collapse_share=0.8)

    assert (verdict.publish, verdict.collapsed) == (True, False)


def test_a_round_without_training_steps_or_held_out_prompts_publishes_nothing():
    assert publish_verdict([BUY] * 10, [SELL] * 10, [SELL] * 10, z=1.96, collapse_share=0.8, trained=False).why == NO_STEPS
    assert not publish_verdict([], [], [], z=1.96, collapse_share=0.8).publish
    assert paired_gain([True], [True], 1.96)[1] == float("-inf")


def test_an_adapter_that_beats_the_base_model_but_not_one_answer_everywhere_is_refused():
    # The null market: the base model answers HOLD where labels are BUY or SELL, the adapter guesses BUY / SELL,
    # right on half: 40 points above the base, level with answering BUY everywhere.
    labels = [BUY, SELL] * 150
    guesses = [BUY, BUY, SELL, SELL] * 75  # right on every other prompt
    verdict = publish_verdict([HOLD] * 300, guesses, labels, z=1.96, collapse_share=0.8)

    assert (verdict.publish, verdict.why) == (False, NOT_ABOVE_ONE_ANSWER)
    assert verdict.gain_low > 0.4 and verdict.one_answer_gain_low < 0 < verdict.metrics()["gain_low"]


def test_an_adapter_above_one_answer_everywhere_beyond_its_interval_is_published():
    labels = [BUY, SELL] * 150
    reads = [y if i % 10 < 7 else {BUY: SELL, SELL: BUY}[y] for i, y in enumerate(labels)]  # right on 70 %

    verdict = publish_verdict([HOLD] * 300, reads, labels, z=1.96, collapse_share=0.8)

    assert (verdict.publish, verdict.why) == (True, PUBLISHED) and verdict.one_answer_gain_low > 0
