"""A stand-in for fusion + risk: every policy.proposal becomes the risk.verdict with the same actions.

Used by the policy's process tests and its benchmark (actor pipeline with the LLM off), and
handy to run env + policy alone: `runtime.actors = ["env", "policy", "actors.policy.pass_through"]`.
"""

from __future__ import annotations

from bus.messages import PolicyProposal, RiskVerdict
from runtime.actor import Actor


class PassThroughActor(Actor):
    subscriptions = (PolicyProposal,)

    async def on_message(self, msg) -> None:
        match msg:
            case PolicyProposal():
                n = len(msg.env_ids)
                self.publish(
                    RiskVerdict(
                        env_ids=msg.env_ids,
                        step=msg.step,
                        actions=msg.actions,
                        vetoed=[False] * n,
                        reasons=[""] * n,
                        degraded=[False] * n,
                    )
                )


ACTOR = PassThroughActor
