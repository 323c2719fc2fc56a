"""The fusion actor: one fusion.decision per env.obs step, as soon as that step's proposal is in.

It never waits for the LLM: thoughts update the ThoughtBook whenever they arrive, and a
decision uses the freshest one. With method = network it also learns: risk.verdict tells
which action was executed, env.outcome which trades won, and periodic updates run in
the worker thread.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

from actors.fusion.actions import N_ACTIONS
from actors.fusion.fuser import FusedBatch, Fuser
from actors.fusion.network import MODEL_FILE_NAME, FusionLearner
from actors.fusion.thoughts import Thought
from bus.messages import EnvObs, EnvOutcome, FusionDecision, LlmThought, PolicyProposal, RiskVerdict
from runtime.actor import Actor

SAVE_DIR_NAME = "fusion"


class FusionActor(Actor):
    subscriptions = (EnvObs, PolicyProposal, LlmThought, RiskVerdict, EnvOutcome)

    async def on_start(self) -> None:
        torch.set_num_threads(1)  # a 20-input MLP gains nothing from threads; the machine is shared
        config = self.config.fusion
        self.fuser = Fuser(config)
        self._load_network(config.model_path)
        if self.fuser.learner is None:
            # Executed actions and outcomes only feed the network's learning: without it, fewer wake-ups per step.
            self.subscriptions = (EnvObs, PolicyProposal, LlmThought)
        self._obs: OrderedDict[int, EnvObs] = OrderedDict()
        self._proposals: OrderedDict[int, PolicyProposal] = OrderedDict()
        self._decided: OrderedDict[int, None] = OrderedDict()
        self._update: asyncio.Task | None = None
        self._trust_sums = np.zeros(2)
        self._staleness_sum = 0
        self._latest_step = -1

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
                if self.fuser.learner is not None:
                    self.fuser.record_executed(msg.env_ids, msg.step, msg.actions)
            case EnvOutcome():
                self._on_outcome(msg)

    # ------------------------------------------------------------------ decision loop

    def _on_obs(self, obs: EnvObs) -> None:
        n = len(obs.env_ids)
        if obs.masks.shape != (n, N_ACTIONS) or len(obs.contexts) != n or len(obs.episode_ids) != n:
            self.counters["bad_obs"] += 1
            return
        if obs.step < self._latest_step:
            self._env_restarted(obs.step)
        self._latest_step = obs.step
        self._remember(self._obs, obs.step, obs)
        proposal = self._proposals.pop(obs.step, None)
        if proposal is not None:
            self._decide(obs, proposal)

    def _env_restarted(self, step: int) -> None:
        """Steps went backwards: the env actor restarted. Its old steps and thoughts mean nothing now."""
        self.fuser.thoughts.clear()
        self._decided.clear()
        self._proposals = OrderedDict((s, p) for s, p in self._proposals.items() if s <= step)
        self.counters["env_restarts"] += 1
        self.log.warning("env_restart_seen", step=step, previous_step=self._latest_step)

    def _on_proposal(self, proposal: PolicyProposal) -> None:
        if proposal.step in self._decided:
            self.counters["late_proposals"] += 1
            return
        obs = self._obs.get(proposal.step)
        if obs is None:
            self._remember(self._proposals, proposal.step, proposal)
            return
        self._decide(obs, proposal)

    def _decide(self, obs: EnvObs, proposal: PolicyProposal) -> None:
        if not self._proposal_fits(obs, proposal):
            self.counters["bad_proposals"] += 1
            return
        self._obs.pop(obs.step, None)
        self._remember(self._decided, obs.step, None)
        batch = self.fuser.fuse(obs.step, obs.env_ids, obs.episode_ids, proposal.actions, proposal.confidences,
                                obs.masks, obs.contexts)
        self.publish(decision_message(batch))
        self._count(batch)

    @staticmethod
    def _proposal_fits(obs: EnvObs, proposal: PolicyProposal) -> bool:
        n = len(obs.env_ids)
        return (list(proposal.env_ids) == list(obs.env_ids) and proposal.actions.shape == (n,)
                and proposal.confidences.shape == (n,)
                and bool(np.all((proposal.actions >= 0) & (proposal.actions < N_ACTIONS)))
                and bool(np.all((proposal.confidences >= 0) & (proposal.confidences <= 1))))  # NaN fails too

    def _remember(self, book: OrderedDict, step: int, value) -> None:
        book[step] = value
        while len(book) > self.config.fusion.max_pending_steps:
            book.popitem(last=False)
            if book is not self._decided:
                self.counters["evicted_steps"] += 1

    def _count(self, batch: FusedBatch) -> None:
        has_thought = batch.llm_actions >= 0
        self.counters["decisions"] += 1
        self.counters["env_decisions"] += len(batch.env_ids)
        self.counters["with_thought"] += int(has_thought.sum())
        self.counters["agreements"] += int(np.sum(has_thought & (batch.llm_actions == batch.rl_actions)))
        self.counters["changed_rl_action"] += int(np.sum(batch.actions != batch.rl_actions))
        self._staleness_sum += int(batch.llm_staleness[has_thought].sum())
        self._trust_sums += (float(batch.rl_trust.sum()), float(batch.llm_trust.sum()))
        for rule in batch.rules:
            self.counters[f"rule_{rule}"] += 1

    # ------------------------------------------------------------------ thoughts and learning

    def _on_thought(self, msg: LlmThought) -> None:
        if not (0 <= msg.action < N_ACTIONS) or not (0.0 <= msg.confidence <= 1.0):
            self.counters["bad_thoughts"] += 1
            return
        if 0 <= self._latest_step < msg.step_seen - self.config.fusion.max_pending_steps:
            # About a step far beyond any observation: left over from before an env restart.
            self.counters["thoughts_from_the_future"] += 1
            return
        kept = self.fuser.add_thought(Thought(msg.env_id, msg.episode_id, msg.step_seen, msg.query_id,
                                              msg.action, float(msg.confidence)))
        self.counters["thoughts" if kept else "thoughts_out_of_order"] += 1

    def _on_outcome(self, outcome: EnvOutcome) -> None:
        learner = self.fuser.learner
        if learner is None:
            return
        experiences = self.fuser.learn_from_outcome(outcome.env_id, outcome.decision_steps, outcome.pnl_usd)
        self.counters["experiences"] += len(experiences)
        if learner.update_due() and (self._update is None or self._update.done()):
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
        env_decisions = max(self.counters["env_decisions"], 1)
        with_thought = max(self.counters["with_thought"], 1)
        figures = {
            "query_rate": self.counters["with_thought"] / env_decisions,
            "agreement_rate": self.counters["agreements"] / with_thought,
            "mean_staleness_steps": self._staleness_sum / with_thought,
            "mean_rl_trust": self._trust_sums[0] / env_decisions,
            "mean_llm_trust": self._trust_sums[1] / env_decisions,
        }
        learner = self.fuser.learner
        if learner is not None:
            figures.update(experience_buffer=learner.experience_count, network_updates=learner.updates_done,
                           network_loss=learner.last_loss, network_accuracy=learner.last_accuracy)
        return figures


def decision_message(batch: FusedBatch) -> FusionDecision:
    return FusionDecision(
        env_ids=batch.env_ids, step=batch.step, actions=batch.actions, method=batch.method, rules=batch.rules,
        rl_actions=batch.rl_actions, rl_confidences=batch.rl_confidences, llm_actions=batch.llm_actions,
        llm_confidences=batch.llm_confidences, llm_staleness=batch.llm_staleness,
        llm_query_ids=batch.llm_query_ids, rl_trust=batch.rl_trust, llm_trust=batch.llm_trust,
    )


ACTOR = FusionActor
