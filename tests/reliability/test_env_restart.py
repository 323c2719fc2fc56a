"""Restarts inside the decision loop: verdicts are idempotent per (env, step), a peer's restart makes the env re-send
its pending observation, and fusion and policy answer a re-sent step once (the same answer, no second sample)."""

from __future__ import annotations

import numpy as np

from actors.common.actions import BUY, HOLD
from bus.messages import EnvObs, EnvTransition, FusionDecision, Heartbeat, PolicyProposal, RiskVerdict
from runtime.testing import actor_harness
from tests.actors.policy.test_actor import SMALL_POLICY, transition
from tests.actors.policy.test_actor import env_obs as policy_obs
from tests.actors.risk.bus_inputs import env_obs, proposal

SMALL_ENV = {"data.synthetic_days": 6, "env.n_envs": 2, "env.stop_loss_atr": 100.0, "env.take_profit_atr": 100.0,
             "env.resend_obs_delay_ms": 0.0, "runtime.actors": ["env", "policy", "fusion", "risk"],
             "runtime.startup_grace_secs": 0.2}  # the peers are stand-ins: the first obs goes out without waiting for them


def verdict(step: int, actions: list[int]) -> RiskVerdict:
    n = len(actions)
    return RiskVerdict(env_ids=list(range(n)), step=step, actions=np.array(actions, dtype=np.int64), vetoed=[False] * n,
                       reasons=[""] * n, degraded=[False] * n, llm_query_ids=[""] * n)


async def test_a_duplicated_or_stale_verdict_never_trades_twice():
    async with actor_harness("env", SMALL_ENV) as h:
        await h.recv(EnvObs, timeout_secs=30)
        await h.deliver(verdict(0, [BUY, BUY]), verdict(0, [BUY, BUY]))  # the same verdict twice
        await h.recv(EnvObs, where=lambda m: m.step == 1)
        await h.deliver(verdict(0, [BUY, BUY]))  # stale: step 0 again while step 1 waits

        transitions = h.messages(EnvTransition)
        assert [t.step for t in transitions] == [0]
        assert [env.position.trade_id for env in h.actor.batch.envs] == [0, 0]  # one entry each, no second trade
        assert h.actor.counters["verdicts_ignored"] == 2


async def test_a_peer_beating_from_a_new_pid_gets_the_pending_observation_again_once():
    async with actor_harness("env", SMALL_ENV) as h:
        first = await h.recv(EnvObs, timeout_secs=30)
        await h.deliver(Heartbeat(actor="risk", pid=100, uptime_secs=1.0), Heartbeat(actor="risk", pid=100, uptime_secs=2.0))
        await h.deliver(Heartbeat(actor="risk", pid=200, uptime_secs=0.1))  # restarted

        again = await h.recv(EnvObs, timeout_secs=5)
        assert again.step == first.step and np.array_equal(again.obs, first.obs)
        assert h.actor.counters["obs_resent"] == 1
        await h.deliver(verdict(first.step, [HOLD, HOLD]))
        assert [t.step for t in h.messages(EnvTransition)] == [0]


async def test_fusion_answers_a_re_sent_step_with_the_same_decision_and_counts_it_once():
    async with actor_harness("fusion", {"fusion.method": "rules"}) as h:
        await h.deliver(env_obs(5), proposal(5, [BUY, BUY]))
        first = await h.recv(FusionDecision)

        await h.deliver(env_obs(5))
        again = await h.recv(FusionDecision)

        assert again.step == 5 and again.actions.tolist() == first.actions.tolist()
        assert h.actor.counters["decisions"] == 1 and h.actor.counters["resent_obs_answered"] == 1


async def test_the_policy_answers_a_re_sent_step_without_storing_a_second_transition():
    async with actor_harness("policy", SMALL_POLICY) as h:
        await h.deliver(policy_obs(0))
        first = await h.recv(PolicyProposal)
        await h.deliver(policy_obs(0))
        again = await h.recv(PolicyProposal)
        await h.deliver(transition(0, first.actions))

        assert again.actions.tolist() == first.actions.tolist()
        assert h.actor.counters["proposals"] == 1 and h.actor.counters["resent_obs_answered"] == 1
        assert h.actor.learner.rollout.counters["proposals_never_executed"] == 0
