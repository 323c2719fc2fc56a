import numpy as np
import pytest
import torch

from actors.common.actions import BUY, HOLD, NO_ACTION, SELL
from actors.fusion.config import FusionConfig
from actors.fusion.fuser import Fuser
from actors.fusion.network import INPUT_DIM, DecisionRecord, FusionLearner, fusion_input, label_decision
from actors.fusion.thoughts import Thought
from tests.contexts import market_context

ALL_LEGAL = np.ones(6, dtype=bool)


def small_network_config(**overrides) -> FusionConfig:
    values = dict(method="network", hidden_dims=(64, 32), dropout=0.0, learning_rate=3e-3, batch_size=128,
                  gradient_steps_per_update=100, min_experiences=64, update_every_experiences=64, explore_rate=0.0)
    values.update(overrides)
    return FusionConfig(**values)


def test_fusion_input_has_twenty_numbers_in_seed_order():
    row = fusion_input(BUY, 0.7, SELL, 0.4, market_context(volatility_regime=1.5, win_rate=0.6, consecutive_losses=2,
                                                           drawdown_buffer=1250.0, bars_in_position=50))
    assert row.shape == (INPUT_DIM,) and row.dtype == np.float32
    assert row[BUY] == 1 and row[6] == pytest.approx(0.7)
    assert row[7 + SELL] == 1 and row[13] == pytest.approx(0.4) and row[14] == 0
    assert row[15:].tolist() == pytest.approx([0.5, 0.6, 0.4, 0.5, 0.5])


def test_fusion_input_without_a_thought_leaves_the_llm_part_zero():
    row = fusion_input(HOLD, 0.9, NO_ACTION, 0.0, market_context())
    assert row[7:15].tolist() == [0.0] * 8


def test_a_lost_trade_teaches_the_side_that_advised_otherwise():
    record = DecisionRecord(np.zeros(INPUT_DIM, np.float32), rl_action=BUY, llm_action=SELL, mask=ALL_LEGAL,
                            executed_action=BUY)
    lost = label_decision(record, pnl_usd=-250.0, pnl_scale_usd=500.0)
    won = label_decision(record, pnl_usd=1000.0, pnl_scale_usd=500.0)
    assert (lost.target_action, lost.weight, lost.rl_trust_target, lost.llm_trust_target) == (SELL, 0.5, 0.0, 1.0)
    assert (won.target_action, won.weight, won.rl_trust_target, won.llm_trust_target) == (BUY, 1.0, 1.0, 0.0)
    assert label_decision(record, pnl_usd=0.0, pnl_scale_usd=500.0) is None


def drive(fuser: Fuser, rng: np.random.Generator, step: int, learn: bool) -> tuple[int, int, bool]:
    """One decision with disagreeing sides; in high volatility the LLM is right, in low volatility RL is."""
    rl_action, llm_action = rng.choice(6, size=2, replace=False)
    high_volatility = bool(rng.random() < 0.5)
    fuser.add_thought(Thought(0, 0, step - 1, f"q{step}", int(llm_action), float(rng.uniform(0.3, 1.0))))
    context = market_context(volatility_regime=2.5 if high_volatility else 0.5)
    batch = fuser.fuse(step, [0], [0], np.array([rl_action]), np.array([rng.uniform(0.3, 1.0)]),
                       ALL_LEGAL[None, :], [context])
    right = int(llm_action if high_volatility else rl_action)
    if learn:
        executed = int(rng.choice([rl_action, llm_action]))  # explore both sides
        fuser.record_executed([0], step, np.array([executed]))
        fuser.learn_from_outcome(0, [step], pnl_usd=300.0 if executed == right else -300.0)
    return int(batch.actions[0]), right, batch.rules[0] == "network"


@pytest.mark.slow
def test_network_learns_to_trust_the_llm_when_volatility_is_high():
    torch.set_num_threads(1)  # as in the actor; more threads only fight over a shared machine
    fuser = Fuser(small_network_config(update_every_experiences=300, gradient_steps_per_update=60))
    rng = np.random.default_rng(1)
    for step in range(1, 1201):
        drive(fuser, rng, step, learn=True)
        if fuser.learner.update_due():
            fuser.learner.update_now()
    results = [drive(fuser, rng, step, learn=False) for step in range(3000, 3400)]
    assert all(by_network for _, _, by_network in results)
    accuracy = np.mean([chosen == right for chosen, right, _ in results])
    assert accuracy > 0.9  # chance between the two sides is 0.5


def test_network_is_in_warmup_until_its_first_update_and_then_decides():
    fuser = Fuser(small_network_config(min_experiences=8, update_every_experiences=8, gradient_steps_per_update=2))
    rng = np.random.default_rng(0)
    _, _, by_network = drive(fuser, rng, 1, learn=True)
    assert not by_network and fuser.fuse(2, [0], [0], np.array([BUY]), np.array([0.8]), ALL_LEGAL[None, :],
                                         [market_context()]).rules[0].startswith("warmup_")
    for step in range(3, 20):
        drive(fuser, rng, step, learn=True)
    fuser.learner.update_now()
    assert drive(fuser, rng, 30, learn=False)[2]


def test_network_method_leaves_a_share_of_decisions_to_the_rules_to_keep_exploring():
    fuser = Fuser(small_network_config(min_experiences=8, update_every_experiences=8, gradient_steps_per_update=2,
                                       explore_rate=0.25))
    rng = np.random.default_rng(4)
    for step in range(1, 20):
        drive(fuser, rng, step, learn=True)
    fuser.learner.update_now()
    batch = fuser.fuse(50, list(range(400)), [0] * 400, np.full(400, BUY), np.full(400, 0.8),
                       np.ones((400, 6), dtype=bool), [market_context()] * 400)
    explored = np.mean([rule.startswith("explore_") for rule in batch.rules])
    assert 0.15 < explored < 0.35
    frozen = Fuser(small_network_config(explore_rate=0.25, learn=False), learner=fuser.learner)
    batch = frozen.fuse(51, list(range(400)), [0] * 400, np.full(400, BUY), np.full(400, 0.8),
                        np.ones((400, 6), dtype=bool), [market_context()] * 400)
    assert set(batch.rules) == {"network"}  # a frozen network learns nothing from exploring: it only decides


def chosen_actions(choices: str) -> set[int]:
    """What a barely trained network picks when RL says BUY and the LLM says SELL, in varied contexts."""
    rng = np.random.default_rng(5)
    fuser = Fuser(small_network_config(network_choices=choices, min_experiences=8, update_every_experiences=8,
                                       gradient_steps_per_update=2))
    for step in range(1, 20):
        drive(fuser, rng, step, learn=True)
    fuser.learner.update_now()
    chosen = set()
    for step in range(100, 300):
        fuser.add_thought(Thought(0, 0, step - 1, "q", SELL, float(rng.random())))
        context = market_context(volatility_regime=float(rng.uniform(0, 3)), win_rate=float(rng.random()))
        chosen.add(int(fuser.fuse(step, [0], [0], np.array([BUY]), np.array([rng.random()]), ALL_LEGAL[None, :],
                                  [context]).actions[0]))
    return chosen


def test_network_chooses_among_the_proposals_and_hold():
    assert chosen_actions("proposals") <= {BUY, SELL, HOLD}


def test_network_never_returns_a_masked_action_and_falls_back_to_rl_when_nothing_is_legal():
    learner = FusionLearner(small_network_config())
    rng = np.random.default_rng(2)
    inputs = rng.random((500, INPUT_DIM)).astype(np.float32)
    masks = rng.random((500, 6)) < 0.4
    masks[:50] = False
    rl_actions = rng.integers(0, 6, size=500)
    prediction = learner.predict(inputs, masks, rl_actions)
    legal_rows = masks.any(axis=1)
    assert masks[legal_rows, prediction.actions[legal_rows]].all()
    assert (prediction.actions[~legal_rows] == rl_actions[~legal_rows]).all()
    assert ((prediction.rl_trust >= 0) & (prediction.rl_trust <= 1)).all()


def test_a_saved_network_loads_and_gives_the_same_answers(tmp_path):
    config = small_network_config(min_experiences=8, update_every_experiences=8, gradient_steps_per_update=5)
    fuser = Fuser(config)
    rng = np.random.default_rng(3)
    for step in range(1, 30):
        drive(fuser, rng, step, learn=True)
    fuser.learner.update_now()
    path = fuser.learner.save(tmp_path / "fusion")
    loaded = FusionLearner(config)
    loaded.load(path)
    inputs = rng.random((20, INPUT_DIM)).astype(np.float32)
    masks, rl_actions = np.ones((20, 6), dtype=bool), np.zeros(20, dtype=np.int64)
    assert loaded.ready
    assert (loaded.predict(inputs, masks, rl_actions).actions
            == fuser.learner.predict(inputs, masks, rl_actions).actions).all()
    with pytest.raises(ValueError, match="fusion.model_path"):
        FusionLearner(small_network_config(hidden_dims=(8,))).load(path)


def test_fuser_reports_staleness_query_ids_and_no_thought_per_env():
    fuser = Fuser(FusionConfig(method="rules", max_staleness_steps=3))
    fuser.add_thought(Thought(env_id=0, episode_id=0, step_seen=8, query_id="a", action=BUY, confidence=0.9))
    fuser.add_thought(Thought(env_id=1, episode_id=0, step_seen=2, query_id="b", action=SELL, confidence=0.9))
    batch = fuser.fuse(10, [0, 1], [0, 0], np.array([BUY, HOLD]), np.array([0.8, 0.8]),
                       np.ones((2, 6), dtype=bool), [market_context(), market_context()])
    assert batch.rules == ["agreement", "no_thought"]
    assert batch.llm_staleness.tolist() == [2, -1]
    assert batch.llm_query_ids == ["a", ""]
    assert batch.llm_actions.tolist() == [BUY, NO_ACTION]


def test_a_frozen_network_decides_but_never_learns_from_outcomes():
    fuser = Fuser(small_network_config(learn=False, min_experiences=1, update_every_experiences=1))
    before = {k: v.clone() for k, v in fuser.learner._serving.state_dict().items()}
    for step in range(20):
        fuser.fuse(step, [0], [0], np.array([BUY]), np.array([0.7]), ALL_LEGAL[None, :], [market_context()])
        experiences = fuser.learn_from_outcome(0, [step], pnl_usd=-300.0)
        assert experiences == []
    assert not fuser.learns and fuser.learner.experience_count == 0 and not fuser.learner.update_due()
    after = fuser.learner._serving.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
