"""The fusion actor: one fusion.decision per env.obs step, as soon as that step's proposal is in.

It never waits for the LLM to think: thoughts update the ThoughtBook whenever they arrive, and a
decision uses the freshest one. It waits only for a thought the observation names as already sent
(EnvObs.thought_steps, lockstep): on direct lanes (bus.direct) the reasoner's thought can reach fusion
after the env's next observation has become the policy's proposal. Such a step is parked until the
thought arrives (any answer of the reasoner, a fallback too) or fusion.max_thought_wait_ms passed
(decided anyway, counted as thought_waits_expired); thought_waits counts the parked steps.
With method = network it also learns: risk.verdict tells
which action was executed, env.outcome which trades won, env.hindsight what the flat steps that stayed flat
would have made with a long or a short (fusion.hindsight_lessons), and periodic updates run in
the worker thread (unless fusion.learn is false: a frozen network for backtests).

An env.outcome whose last decision step's risk.verdict has not arrived yet (it may come after the outcome on
direct lanes) waits for it, at most fusion.max_verdict_wait_ms, so that the trade teaches what risk really executed.

Observations and proposals are joined by step (actors/common/stepjoin.py); their batch
shapes were checked where they were decoded (bus/messages.py). Thoughts the parser could
not read (LlmThought.fallback) are dropped and counted as fallback_thoughts: they are no
opinion, and as a HOLD at confidence 0 they would turn RL's uncertain actions into HOLD.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np
import torch

from actors.common.actions import N_ACTIONS
from actors.common.decisions import DecisionStats, FusedBatch
from actors.common.stepjoin import StepJoin
from actors.fusion.config import FusionSettings
from actors.fusion.fuser import Fuser
from actors.fusion.network import MODEL_FILE_NAME, FusionLearner
from actors.fusion.thoughts import ThoughtsReceived
from bus.messages import EnvHindsight, EnvObs, EnvOutcome, Event, FusionDecision, LlmThought, PolicyProposal, RiskVerdict
from runtime.actor import Actor
from runtime.logs import RateLimiter

SAVE_DIR_NAME = "fusion"


@dataclass(slots=True)
class _Step:
    """What has arrived of one step: a decision needs both."""

    obs: EnvObs | None = None
    proposal: PolicyProposal | None = None


class FusionActor(Actor):
    settings_type = FusionSettings
    subscriptions = (EnvObs, PolicyProposal, LlmThought, RiskVerdict, EnvOutcome, EnvHindsight)

    async def on_start(self) -> None:
        torch.set_num_threads(1)  # a 20-input MLP gains nothing from threads; the machine is shared
        config = self.config.fusion
        self.fuser = Fuser(config)
        self._load_network(config.model_path)
        if not self.fuser.learns:
            # Executed actions and outcomes only feed the network's learning: without it, fewer wake-ups per step.
            self.subscriptions = (EnvObs, PolicyProposal, LlmThought)
        elif not self.fuser.learns_from_hindsight:
            self.subscriptions = (EnvObs, PolicyProposal, LlmThought, RiskVerdict, EnvOutcome)
        if config.event_inputs and self.fuser.learner is not None:  # the news around each decision (fusion.event_inputs)
            self.subscriptions = (*self.subscriptions, Event)
        self._steps: StepJoin[_Step] = StepJoin(config.max_pending_steps, _Step, self.counters)
        self._update: asyncio.Task | None = None
        self._sync_update_due = False
        self._early_thoughts: list[LlmThought] = []
        """run.reproducible: thoughts about a step not decided yet, kept out of the book until it is (_publish_decision)."""
        self._decided_step = -1
        """run.reproducible: an update is due and runs before the next message is read (on_message), not beside the loop."""
        self.decision_stats = DecisionStats()
        self._answers: OrderedDict[int, tuple[EnvObs, FusionDecision]] = OrderedDict()
        """Answered steps (the newest max_pending_steps) with their decision: a re-sent observation gets the same one."""
        self._received = ThoughtsReceived()
        self._parked: dict[int, asyncio.TimerHandle] = {}
        """Steps with both halves in, waiting for a thought their observation names, and their wait's end."""
        self._wait_secs = config.max_thought_wait_ms / 1000.0
        self._expired_log = RateLimiter(self.config.logging.rate_limit_secs)
        self._verdict_step = -1
        """The step of the newest risk.verdict received (learning only)."""
        self._outcomes_waiting: list[EnvOutcome] = []
        self._outcome_timer: asyncio.TimerHandle | None = None

    def _load_network(self, model_path: str) -> None:
        """After a restart, this run's own saved network; else fusion.model_path; else a fresh one."""
        learner = self.fuser.learner
        if learner is None:
            return
        own = self.run_dir / SAVE_DIR_NAME / MODEL_FILE_NAME
        path = own if own.is_file() else Path(model_path) if model_path else None
        if path is not None:
            learner.load(path)
            self.log.info("fusion_network_loaded", path=str(path))

    async def on_message(self, msg) -> None:
        match msg:
            case EnvObs():
                self._on_obs(msg)
            case PolicyProposal():
                self._on_proposal(msg)
            case LlmThought():
                self._on_thought(msg)
            case RiskVerdict():
                if self.fuser.learns:
                    self.fuser.record_executed(msg.env_ids, msg.step, msg.actions)
                    self._verdict_step = msg.step
                    self._learn_waiting_outcomes(up_to_step=msg.step)
            case EnvOutcome():
                self._on_outcome(msg)
            case EnvHindsight():
                self._on_hindsight(msg)
            case Event():
                self.fuser.add_event(msg)
        if self._sync_update_due:
            self._sync_update_due = False
            await self._train(self.fuser.learner)

    # ------------------------------------------------------------------ decision loop

    def _on_obs(self, obs: EnvObs) -> None:
        if self._steps.is_answered(obs.step) and self._answer_again(obs):
            return
        previous_step = self._steps.latest_step
        if self._steps.went_back(obs.step):
            self._env_restarted(obs.step, previous_step)
        entry = self._steps.entry(obs.step)
        entry.obs = obs
        if entry.proposal is not None:
            self._decide(obs, entry.proposal)

    def _env_restarted(self, step: int, previous_step: int) -> None:
        """Steps went backwards: the env actor restarted. Its old steps and thoughts mean nothing now."""
        self.fuser.thoughts.clear()
        self._received.clear()
        self._early_thoughts.clear()
        self._decided_step = -1
        for timer in self._parked.values():
            timer.cancel()
        self._parked.clear()
        self._steps.forget_after(step)
        self._answers.clear()
        self._verdict_step = -1
        self._learn_waiting_outcomes(up_to_step=None)
        self.log.warning("env_restart_seen", step=step, previous_step=previous_step)

    def _on_proposal(self, proposal: PolicyProposal) -> None:
        if self._steps.is_answered(proposal.step):
            self.counters["late_proposals"] += 1
            return
        entry = self._steps.entry(proposal.step)
        entry.proposal = proposal
        if entry.obs is not None:
            self._decide(entry.obs, proposal)

    def _decide(self, obs: EnvObs, proposal: PolicyProposal) -> None:
        if not self._proposal_fits(obs, proposal):
            self.counters["bad_proposals"] += 1
            self._steps.entry(obs.step).proposal = None  # the observation waits on for a proposal that fits
            return
        if self._wait_secs > 0 and self._received.missing(obs.env_ids, obs.thought_steps):
            self._park(obs.step)
            return
        self._publish_decision(obs, proposal)

    # ------------------------------------------------------------------ a step waiting for a thought already sent

    def _park(self, step: int) -> None:
        """The step's observation names a thought not received yet: decide when it comes, or at the wait's end."""
        if step in self._parked:  # a re-sent observation of a step already waiting
            return
        self.counters["thought_waits"] += 1
        self._parked[step] = asyncio.get_running_loop().call_later(self._wait_secs, self._thought_wait_expired, step)

    def _release_parked(self) -> None:
        """A thought arrived: decide the parked steps (oldest first) that now have every thought they name."""
        for step in sorted(self._parked):
            entry = self._steps.get(step)
            if entry is None or entry.obs is None or entry.proposal is None:  # evicted meanwhile
                self._parked.pop(step).cancel()
            elif not self._received.missing(entry.obs.env_ids, entry.obs.thought_steps):
                self._parked.pop(step).cancel()
                self._publish_decision(entry.obs, entry.proposal)

    def _thought_wait_expired(self, step: int) -> None:
        """max_thought_wait_ms passed: the step is decided with the thoughts at hand (the named one was lost)."""
        self._parked.pop(step, None)
        entry = self._steps.get(step)
        if entry is None or entry.obs is None or entry.proposal is None:
            return
        self.counters["thought_waits_expired"] += 1
        allowed, suppressed = self._expired_log.allow("thought_wait_expired")
        if allowed:
            self.log.warning("thought_wait_expired", step=step, missing_env_ids=self._received.missing(entry.obs.env_ids, entry.obs.thought_steps),
                             wait_ms=self.config.fusion.max_thought_wait_ms, suppressed=suppressed)
        self._publish_decision(entry.obs, entry.proposal)

    def _publish_decision(self, obs: EnvObs, proposal: PolicyProposal) -> None:
        self._steps.answer(obs.step)
        batch = self.fuser.fuse(obs.step, obs.env_ids, obs.episode_ids, proposal.actions, proposal.confidences,
                                obs.masks, obs.contexts)
        decision = decision_message(batch)
        self.publish(decision)
        self._answers[obs.step] = (obs, decision)
        self._decided_step = max(self._decided_step, obs.step)
        if self._early_thoughts:
            due = [thought for thought in self._early_thoughts if thought.step_seen <= self._decided_step]
            self._early_thoughts = [thought for thought in self._early_thoughts if thought.step_seen > self._decided_step]
            for thought in due:
                self._keep_thought(thought)
        while len(self._answers) > self.config.fusion.max_pending_steps:
            self._answers.popitem(last=False)
        self._count(batch)

    def _answer_again(self, obs: EnvObs) -> bool:
        """The env re-sent an answered step (a peer restarted and lost it): the same decision again, not a new
        one (no second count, no second learning sample). False when the step is new (the env started over)."""
        answered = self._answers.get(obs.step)
        if answered is None:
            return False
        first, decision = answered
        if list(first.env_ids) != list(obs.env_ids) or list(first.episode_ids) != list(obs.episode_ids) or not bool((first.obs == obs.obs).all()):
            return False
        self.publish(decision)
        self.counters["resent_obs_answered"] += 1
        return True

    @staticmethod
    def _proposal_fits(obs: EnvObs, proposal: PolicyProposal) -> bool:
        """Both batches are well formed (checked on decode); they must be for the same envs, with sane values."""
        return (list(proposal.env_ids) == list(obs.env_ids)
                and bool(np.all((proposal.actions >= 0) & (proposal.actions < N_ACTIONS)))
                and bool(np.all((proposal.confidences >= 0) & (proposal.confidences <= 1))))  # NaN fails too

    def _count(self, batch: FusedBatch) -> None:
        self.decision_stats.add_fusion(batch.rl_actions, batch.llm_actions, batch.llm_confidences, batch.llm_staleness,
                              batch.rl_trust, batch.llm_trust)
        self.counters["decisions"] += 1
        self.counters["env_decisions"] += len(batch.env_ids)
        self.counters["changed_rl_action"] += int(np.sum(batch.actions != batch.rl_actions))
        for rule in batch.rules:
            self.counters[f"rule_{rule}"] += 1

    # ------------------------------------------------------------------ thoughts and learning

    def _on_thought(self, msg: LlmThought) -> None:
        self._received.record(msg.env_id, msg.step_seen)  # whatever becomes of it: the reasoner answered
        if self.config.run.reproducible and msg.step_seen > self._decided_step:
            # A thought about step N counts from step N+1 (lockstep's previous-step thought), never at N itself:
            # whether it came before N's proposal would be up to the machine's pace.
            self._early_thoughts.append(msg)
            return
        self._keep_thought(msg)
        if self._parked:
            self._release_parked()

    def _keep_thought(self, msg: LlmThought) -> None:
        if msg.fallback:
            self.counters["fallback_thoughts"] += 1
            return
        if not (0 <= msg.action < N_ACTIONS) or not (0.0 <= msg.confidence <= 1.0):
            self.counters["bad_thoughts"] += 1
            return
        if 0 <= self._steps.latest_step < msg.step_seen - self.config.fusion.max_pending_steps:
            # About a step far beyond any observation: left over from before an env restart.
            self.counters["thoughts_from_the_future"] += 1
            return
        kept = self.fuser.add_thought(msg)
        self.counters["thoughts" if kept else "thoughts_out_of_order"] += 1
        if msg.carried:  # an earlier thought answering a quiet bar (think_on = news): aged from the step it read
            self.counters["carried_thoughts"] += 1
            self.counters["carried_thoughts_too_stale"] += msg.age_at(msg.step_seen) > self.config.fusion.max_staleness_steps

    def _on_outcome(self, outcome: EnvOutcome) -> None:
        if self.fuser.learner is None or not self.fuser.learns:
            return
        if outcome.decision_steps and max(outcome.decision_steps) > self._verdict_step:
            # Its last verdict is still on its way (direct lanes): learning now would label that step with fusion's action.
            self.counters["outcomes_before_verdict"] += 1
            self._outcomes_waiting.append(outcome)
            if self._outcome_timer is None:
                self._outcome_timer = asyncio.get_running_loop().call_later(self.config.fusion.max_verdict_wait_ms / 1000.0, self._verdict_wait_over)
            return
        self._learn_from(outcome)

    def _learn_waiting_outcomes(self, up_to_step: int | None) -> None:
        """Learn from the waiting outcomes whose decision steps all have their verdict (every one when None)."""
        if not self._outcomes_waiting:
            return
        ready, waiting = [], []
        for outcome in self._outcomes_waiting:
            (ready if up_to_step is None or max(outcome.decision_steps) <= up_to_step else waiting).append(outcome)
        self._outcomes_waiting = waiting
        if not self._outcomes_waiting and self._outcome_timer is not None:
            self._outcome_timer.cancel()
            self._outcome_timer = None
        for outcome in ready:
            self._learn_from(outcome)

    def _verdict_wait_over(self) -> None:
        """fusion.max_verdict_wait_ms passed: no verdict is coming for them (the env held at its deadline); learn as they are."""
        self._outcome_timer = None
        self.counters["outcomes_without_verdict"] += len(self._outcomes_waiting)
        self._learn_waiting_outcomes(up_to_step=None)

    def _learn_from(self, outcome: EnvOutcome) -> None:
        experiences = self.fuser.learn_from_outcome(outcome.env_id, outcome.decision_steps, outcome.pnl_usd)
        self.counters["experiences"] += len(experiences)
        self._update_if_due()

    def _on_hindsight(self, msg: EnvHindsight) -> None:
        """Flat steps that stayed flat learn what a long and a short from there made. A row comes
        lora.hindsight_horizon_bars steps after its decision, long after that step's verdict."""
        if not self.fuser.learns_from_hindsight:
            return
        for env_id, step, long_pnl, short_pnl in zip(msg.env_ids, msg.steps, msg.long_pnl_usd, msg.short_pnl_usd, strict=True):
            if self.fuser.learn_from_hindsight(int(env_id), int(step), float(long_pnl), float(short_pnl)) is not None:
                self.counters["hindsight_experiences"] += 1
        self._update_if_due()

    def _update_if_due(self) -> None:
        learner = self.fuser.learner
        if learner is not None and learner.update_due() and (self._update is None or self._update.done()):
            if self.config.run.reproducible:  # the network changes at a fixed message, whatever the machine's pace
                self._sync_update_due = True
                return
            self._update = self.spawn(self._train(learner), "fusion_update")

    async def _train(self, learner: FusionLearner) -> None:
        job = learner.prepare_update()
        result = await self.in_worker(learner.run_update, job)
        learner.install(result)
        self.log.info("fusion_network_updated", updates=learner.updates_done, experiences=len(job.targets),
                      loss=round(result.loss, 4), accuracy=round(result.accuracy, 3))

    # ------------------------------------------------------------------ stop and stats

    async def on_stop(self) -> None:
        learner = self.fuser.learner
        # An untrained network is not worth keeping (and must not replace a trained one).
        if learner is not None and learner.ready:
            path = learner.save(self.run_dir / SAVE_DIR_NAME)
            self.log.info("fusion_network_saved", path=str(path), updates=learner.updates_done)

    def gauges(self) -> dict[str, float]:
        summary = self.decision_stats.summary()
        figures = {
            "query_rate": summary["query_rate"],
            "agreement_rate": summary["agreement_rate"],
            "mean_staleness_steps": summary["llm_staleness_steps"],
            "mean_rl_trust": summary["rl_trust"],
            "mean_llm_trust": summary["llm_trust"],
            # decisions whose env's thought was older than max_staleness_steps (a carried answer counted at its real age)
            "stale_thought_decisions": float(self.fuser.thoughts.too_stale),
            "stale_carried_thought_decisions": float(self.fuser.thoughts.too_stale_carried),
        }
        learner = self.fuser.learner
        if learner is not None:
            figures.update(experience_buffer=learner.experience_count, network_updates=learner.updates_done,
                           network_loss=learner.last_loss, network_accuracy=learner.last_accuracy)
        if self.config.fusion.event_inputs:  # decisions near an event, and those whose thought had read it
            figures.update({name: float(count) for name, count in self.fuser.event_counts.items()})
        return figures


def decision_message(batch: FusedBatch) -> FusionDecision:
    return FusionDecision(**msgspec.structs.asdict(batch))


ACTOR = FusionActor
