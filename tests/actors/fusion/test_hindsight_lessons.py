"""Flat steps that stayed flat teach the fusion network through their hindsight (fusion.hindsight_lessons).

When the policy holds while flat and the LLM says SELL, nothing trades and no outcome ever tests the LLM's
reading. The step's env.hindsight row says what a long and a short would have made; these tests show the network
learns to pass a reader that is right on to the trades (against the floor, RL alone, and the ceiling, the reader
alone, on steps it never learned from), and keeps holding where the reader is right only by chance.
"""

import numpy as np
import pytest

from actors.common.actions import BUY, ENABLE_TRAIL, HOLD, NO_ACTION, SELL
from actors.fusion.fuser import Fuser, network_choices
from actors.fusion.network import INPUT_DIM, DecisionRecord, hindsight_lesson
from actors.fusion.thoughts import Thought
from tests.actors.fusion import trust_drill
from tests.contexts import market_context

FLAT = trust_drill.FLAT
IN_POSITION = np.array([True, False, True, False, True, False])
PROPOSALS = np.array([True, False, True, False, False, False])
"""HOLD and SELL: what fusion can pick when RL holds and the LLM sells."""


def record(rl_action: int = HOLD, llm_action: int = SELL, mask=FLAT, executed: int = HOLD) -> DecisionRecord:
    return DecisionRecord(np.zeros(INPUT_DIM, np.float32), rl_action, llm_action, mask, executed)


config = trust_drill.small_network


def test_a_short_that_would_have_paid_teaches_the_llms_sell_and_trusts_the_llm():
    lesson = hindsight_lesson(record(), PROPOSALS, long_pnl_usd=-300.0, short_pnl_usd=300.0, pnl_scale_usd=500.0)
    assert (lesson.target_action, lesson.weight, lesson.rl_trust_target, lesson.llm_trust_target) == (SELL, 0.6, 0.0, 1.0)


def test_a_short_that_would_have_lost_teaches_holding_and_trusts_the_policy():
    lesson = hindsight_lesson(record(), PROPOSALS, long_pnl_usd=600.0, short_pnl_usd=-450.0, pnl_scale_usd=500.0)
    # The long would have paid, but nobody proposed it: among the choices holding was best.
    assert (lesson.target_action, lesson.weight, lesson.rl_trust_target, lesson.llm_trust_target) == (HOLD, 0.9, 1.0, 0.0)


def test_a_single_choice_or_a_tie_teaches_nothing():
    both_hold = np.array([True, False, False, False, False, False])
    assert hindsight_lesson(record(llm_action=HOLD), both_hold, 100.0, 100.0, 500.0) is None
    assert hindsight_lesson(record(), PROPOSALS, long_pnl_usd=50.0, short_pnl_usd=0.0, pnl_scale_usd=500.0) is None


def test_without_a_thought_the_llm_trust_is_not_taught():
    lesson = hindsight_lesson(record(rl_action=BUY, llm_action=NO_ACTION), FLAT, 300.0, -300.0, 500.0)
    assert lesson.target_action == BUY and lesson.rl_trust_target == 1.0 and np.isnan(lesson.llm_trust_target)


def test_the_choices_are_the_proposals_and_hold_among_the_legal_actions():
    choices = network_choices(np.array([FLAT, IN_POSITION]), np.array([HOLD, ENABLE_TRAIL]), np.array([SELL, NO_ACTION]),
                              "proposals")
    assert choices.tolist() == [PROPOSALS.tolist(), [True, False, False, False, True, False]]
    assert network_choices(FLAT[None, :], np.array([HOLD]), np.array([SELL]), "any").tolist() == [FLAT.tolist()]


def remembered(fuser: Fuser, step: int, mask=FLAT) -> None:
    fuser.add_thought(Thought(0, 0, step - 1, f"q{step}", SELL, 0.8))
    batch = fuser.fuse(step, [0], [0], np.array([HOLD]), np.array([0.7]), mask[None, :], [market_context()])
    assert batch.actions[0] == HOLD  # the rules follow the confident policy
    fuser.record_executed([0], step, batch.actions)


def test_only_a_flat_step_that_stayed_flat_is_taught_by_hindsight():
    fuser = Fuser(config())
    remembered(fuser, 1)
    remembered(fuser, 2, mask=IN_POSITION)
    remembered(fuser, 3)
    fuser.record_executed([0], 3, np.array([SELL]))  # risk let an entry through: its trade will teach it
    assert fuser.learn_from_hindsight(0, 1, -300.0, 300.0).target_action == SELL
    assert fuser.learn_from_hindsight(0, 1, -300.0, 300.0) is None  # taught once
    assert fuser.learn_from_hindsight(0, 2, -300.0, 300.0) is None
    assert fuser.learn_from_hindsight(0, 3, -300.0, 300.0) is None
    assert len(fuser.memory) == 2 and fuser.learner.experience_count == 1


def test_with_hindsight_lessons_off_or_a_frozen_network_nothing_is_taught():
    for fuser in (Fuser(config(hindsight_lessons=False)), Fuser(config(learn=False))):
        remembered(fuser, 1)
        assert fuser.learn_from_hindsight(0, 1, -300.0, 300.0) is None


def learned_then_tested(seed: int, llm_right: float) -> dict[str, np.ndarray]:
    """400 steps learning, then 400 others with the network frozen (out of sample)."""
    return trust_drill.learned_then_tested(config(), seed, trust_drill.even_reader(llm_right))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_reader_right_three_times_in_four_reaches_the_trades_on_steps_never_learned_from(seed):
    test = learned_then_tested(seed, llm_right=0.75)
    fused, half = trust_drill.mean_and_half_width(test["fused"])
    ceiling = float(test["llm"].mean())
    # Floor: RL alone holds and makes 0. Ceiling: following the reader everywhere (+87.5 a step expected).
    assert fused - half > 0.0, f"fused {fused:+.1f} +- {half:.1f} a step is not above RL alone"
    assert fused >= 0.7 * ceiling, f"fused {fused:+.1f} a step, the reader alone {ceiling:+.1f}"


def test_a_reader_right_only_by_chance_is_not_followed():
    # Measured over 10 seeds: 9 held on every test step, one followed half of them. Over 5, on average at most a fifth.
    runs = [learned_then_tested(seed, llm_right=0.5) for seed in range(5)]
    entries = float(np.mean([np.mean(run["fused"] != 0.0) for run in runs]))
    fused = float(np.mean([run["fused"].mean() for run in runs]))
    coin = float(np.mean([run["llm"].mean() for run in runs]))
    assert coin < 0  # following the coin loses (costs)
    assert entries <= 0.2, f"followed a coin flip on {entries:.0%} of the steps"
    assert fused > 0.5 * coin, f"fused {fused:+.1f} a step, the coin {coin:+.1f}"


def test_the_env_publishes_hindsight_when_a_learning_network_wants_it():
    from actors.env.hindsight import hindsight_wanted
    from actors.jobs.config import load_config

    wanted = load_config(None, {"fusion.method": "network", "env.mode": "backtest", "lora.enabled": False})
    rules = load_config(None, {"fusion.method": "rules", "env.mode": "backtest", "lora.enabled": False})
    off = load_config(None, {"fusion.method": "network", "fusion.hindsight_lessons": False, "env.mode": "backtest",
                             "lora.enabled": False})
    frozen = load_config(None, {"fusion.method": "network", "fusion.learn": False, "env.mode": "backtest",
                                "lora.enabled": False})
    assert hindsight_wanted(wanted) and not hindsight_wanted(rules) and not hindsight_wanted(off)
    assert not hindsight_wanted(frozen)
