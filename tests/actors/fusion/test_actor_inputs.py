"""What the fusion actor refuses to use: unreadable thoughts, ragged batches, and (when frozen) outcomes."""

import numpy as np
import torch

from actors.common.actions import BUY, HOLD, NO_ACTION, SELL
from bus.messages import EnvOutcome, FusionDecision, LlmThought, RiskVerdict
from runtime.testing import actor_harness
from tests.actors.risk.bus_inputs import env_obs, proposal
from tests.bus.samples import ragged_frames

FROZEN_NETWORK = {"fusion.method": "network", "fusion.hidden_dims": [16], "fusion.min_experiences": 1,
                  "fusion.update_every_experiences": 1, "fusion.gradient_steps_per_update": 2, "fusion.batch_size": 4,
                  "fusion.explore_rate": 0.0, "fusion.learn": False}


async def decide(h, step: int) -> FusionDecision:
    await h.deliver(env_obs(step), proposal(step, [BUY, BUY], confidence=0.7))
    return await h.recv(FusionDecision, where=lambda d: d.step == step)


def thought(step_seen: int, action: int, confidence: float, query_id: str, fallback: bool = False) -> LlmThought:
    return LlmThought(env_id=0, episode_id=0, step_seen=step_seen, query_id=query_id, action=action,
                      confidence=confidence, mode="single_shot", fallback=fallback)


async def test_a_fallback_thought_is_counted_apart_and_never_reaches_the_decision():
    async with actor_harness("fusion") as h:
        await decide(h, 0)
        await h.deliver(thought(0, HOLD, 0.0, "unreadable", fallback=True))
        decision = await decide(h, 1)
    assert decision.llm_query_ids[0] == "" and decision.llm_actions[0] == NO_ACTION
    assert decision.actions[0] == BUY and decision.rules[0] == "no_thought"
    assert h.actor.counters["fallback_thoughts"] == 1 and h.actor.counters["thoughts"] == 0


async def test_a_fallback_thought_does_not_replace_a_readable_one():
    async with actor_harness("fusion") as h:
        await h.deliver(thought(0, SELL, 0.95, "readable"), thought(1, HOLD, 0.0, "unreadable", fallback=True))
        decision = await decide(h, 2)
    assert decision.llm_query_ids[0] == "readable"


async def test_a_ragged_observation_is_dropped_before_fusion_sees_it():
    async with actor_harness("fusion") as h:
        good = env_obs(0)
        h.send_raw(ragged_frames(good, masks=np.ones((2, 5), dtype=bool)))
        await h.deliver(proposal(0, [BUY, BUY]))
        assert h.dropped == {"field_type": 1} and h.messages(FusionDecision) == []
        assert (await decide(h, 1)).step == 1


async def test_with_learning_off_the_network_keeps_its_weights_through_outcomes():
    async with actor_harness("fusion", FROZEN_NETWORK) as h:
        learner = h.actor.fuser.learner
        before = {k: v.clone() for k, v in learner._serving.state_dict().items()}
        for step in range(10):
            decision = await decide(h, step)
            h.send(RiskVerdict(env_ids=[0, 1], step=step, actions=decision.actions, vetoed=[False, False],
                               reasons=["", ""], degraded=[False, False]))
            h.send(EnvOutcome(env_id=0, episode_id=0, trade_id=step, side=1, contracts=1, entry_ns=0, exit_ns=1,
                              entry_price=1.0, exit_price=1.0, pnl_usd=-200.0, bars_held=1, exit_reason="signal",
                              decision_steps=[step], llm_query_ids=[]))
            await h.settle()
        assert learner.updates_done == 0 and learner.experience_count == 0
        assert h.actor.counters["experiences"] == 0
        after = learner._serving.state_dict()
        assert all(torch.equal(before[k], after[k]) for k in before)
