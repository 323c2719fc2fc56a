"""The LoRA trainer actor: thoughts + closed trades -> durable experiences -> rounds -> lora.adapter.

env.hindsight rows (the triple-barrier outcome of a decision step) label the
thoughts that saw that step, when lora.labels = "trades_hindsight".

It keeps the recent env.obs contexts because an llm.thought does not carry its prompt:
the decide-step prompt is rebuilt from the context and mask the thought saw. Training
runs in the worker thread every M new experiences; the event loop keeps storing
experiences (each acknowledged only once committed to disk) while a round runs.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

import msgspec

from actors.common.hindsight import HindsightLabel, SideOutcome
from actors.lora.config import LoraSettings
from actors.lora.core import LoraCore, RoundReport
from actors.lora.matching import TradeOutcome
from actors.lora.round_types import StepProgress
from actors.lora.store import read_experiences_file
from bus.messages import EnvHindsight, EnvObs, EnvOutcome, LlmThought, LoraAdapter, LoraRound
from runtime.actor import Actor


class LoraActor(Actor):
    settings_type = LoraSettings
    subscriptions = (EnvObs, LlmThought, EnvOutcome, EnvHindsight)

    async def on_start(self) -> None:
        self.core = LoraCore(self.config.lora, self.config.reasoner, self.run_dir)
        self._obs: OrderedDict[int, EnvObs] = OrderedDict()
        self._round: asyncio.Task | None = None
        self._rounds = 0
        self._held_adapter: LoraAdapter | None = None
        """A published adapter waiting for env.obs to reach lora.publish_from_step."""
        self._last_step = -1
        self._stored = self.core.store.count()  # gauges may run after on_stop closed the store
        self.log.info("lora_started", experiences=self.core.store.count(), model=self.core.model_path,
                      versions=len(self.core.versions.versions()))
        self.spawn(self._load_model(), "lora_load")
        if self.config.lora.seed_experiences_path:
            self._seed(self.config.lora.seed_experiences_path)

    def _seed(self, path: str) -> None:
        """The seed experiences, before any thought: their round can start while the loop's first steps run."""
        try:
            experiences = read_experiences_file(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # the trainer goes on with live experiences only
            self.counters["seed_file_errors"] += 1
            self.log.error("lora_seed_failed", path=path, error=repr(exc))
            return
        added = self.core.add_experiences(experiences)
        self.counters["seed_experiences"] += added
        self._stored = self.core.store.count()
        self.log.info("lora_seeded", path=path, added=added, experiences=self._stored)
        self._maybe_train()

    async def _load_model(self) -> None:
        """Load the trainer's model now, in the worker, so the first round starts training at once."""
        started = asyncio.get_running_loop().time()
        await self.in_worker(self.core.load_trainer)
        self.log.info("lora_model_loaded", secs=round(asyncio.get_running_loop().time() - started, 2))

    async def on_message(self, msg) -> None:
        match msg:
            case EnvObs():
                self._on_obs(msg)
                return  # the hot path: nothing stored, nothing to train
            case LlmThought():
                self._on_thought(msg)
            case EnvOutcome():
                self.counters["experiences"] += self.core.add_outcome(outcome_of(msg))
            case EnvHindsight():
                self.counters["hindsight_labels"] += len(msg.env_ids)
                for env_id, step, label in hindsight_rows(msg):
                    self.counters["experiences"] += self.core.add_hindsight_at(env_id, step, label)
        self._stored = self.core.store.count()
        self._maybe_train()

    def _on_obs(self, obs: EnvObs) -> None:
        self._last_step = obs.step
        if self._held_adapter is not None and obs.step >= self.config.lora.publish_from_step:
            self.publish(self._held_adapter)
            self._held_adapter = None
        if self._obs and obs.step < next(reversed(self._obs)):
            self._obs.clear()  # the env restarted: its old step numbers mean other observations now
        self._obs[obs.step] = obs
        while len(self._obs) > self.config.lora.max_obs_steps:
            self._obs.popitem(last=False)

    def _on_thought(self, thought: LlmThought) -> None:
        obs = self._obs.get(thought.step_seen)
        if obs is None or thought.env_id not in obs.env_ids:
            self.counters["thoughts_without_obs"] += 1  # too old or from before a restart: no prompt to rebuild
            return
        row = obs.env_ids.index(thought.env_id)
        self.counters["thoughts"] += 1
        self.counters["experiences"] += self.core.add_thought(
            thought, context=msgspec.structs.asdict(obs.contexts[row]),
            mask=[bool(m) for m in obs.masks[row]], adapter_version=thought.adapter_version,
            earlier_answers={"analyse": thought.analysis, "options": thought.options, "risks": thought.risks})

    def _maybe_train(self) -> None:
        if self.core.round_due() and (self._round is None or self._round.done()):
            self.core.start_round(snapshot=self.config.run.reproducible)
            self._round = self.spawn(self._train_round(), "lora_round")

    async def _train_round(self) -> None:
        loop = asyncio.get_running_loop()

        def publish_step(p: StepProgress) -> None:
            if not self.stopping:  # a step the worker finished after shutdown began: the bus may be closed already
                self.progress(p.step, p.steps, p.tokens_per_sec, {"loss": p.loss, "tokens_per_sec": p.tokens_per_sec, "round": self._rounds + 1})

        def progress(p: StepProgress) -> None:  # called in the worker thread
            loop.call_soon_threadsafe(publish_step, p)

        report: RoundReport = await self.in_worker(self.core.run_round, progress)
        self._rounds += 1
        version = report.version
        summary = round_message(version.version, version.metrics, version.published)
        self.log.info(LoraRound.LOG_EVENT, **{**version.metrics, **msgspec.structs.asdict(summary)})
        self.publish(summary)
        if version.published:
            adapter = LoraAdapter(version=version.version, path=str(version.path), metrics=version.metrics)
            if self.config.lora.publish_from_step and self._last_step < self.config.lora.publish_from_step:
                self._held_adapter = adapter  # _on_obs sends it at the step
                self.log.info("lora_adapter_held", version=version.version, until_step=self.config.lora.publish_from_step)
            else:
                self.publish(adapter)

    async def on_stop(self) -> None:
        self.core.close()  # every experience is already committed; this only closes the file

    def gauges(self) -> dict[str, float]:
        counts = self.core.matcher.counts
        return {"stored_experiences": float(self._stored), "new_experiences": float(self.core.new_experiences),
                "pending_outcomes": float(self.core.matcher.pending_outcomes),
                "pending_hindsight": float(self.core.matcher.pending_hindsight), "rounds": float(self._rounds),
                "lora_collapse": float(self.core.collapses),
                "duplicates": float(counts["duplicates"]), "pending_dropped": float(counts["pending_outcomes_dropped"])}


def round_message(version: int, metrics: dict[str, float], published: bool) -> LoraRound:
    """A round's version metrics (actors/lora/core.py: the trainer's match rates, the verdict's collapse alarm, the
    store's size) as the typed message."""
    return LoraRound(version=version, experiences=int(metrics.get("experiences", 0)), published=published,
                     match_rate_before=float(metrics.get("match_rate_before", float("nan"))),
                     match_rate_after=float(metrics.get("match_rate_after", float("nan"))), collapsed=bool(metrics.get("collapse", 0.0)))


def outcome_of(msg: EnvOutcome) -> TradeOutcome:
    return TradeOutcome(env_id=msg.env_id, episode_id=msg.episode_id, trade_id=msg.trade_id, side=msg.side,
                        pnl_usd=msg.pnl_usd, exit_reason=msg.exit_reason,
                        llm_query_ids=tuple(q for q in msg.llm_query_ids if q))


def hindsight_rows(msg: EnvHindsight) -> list[tuple[int, int, HindsightLabel]]:
    """(env id, decision step, label) per row of an env.hindsight batch."""
    return [
        (int(env_id), int(step), HindsightLabel(
            int(msg.actions[row]),
            SideOutcome(float(msg.long_pnl_usd[row]), msg.long_exits[row], int(msg.long_bars[row])),
            SideOutcome(float(msg.short_pnl_usd[row]), msg.short_exits[row], int(msg.short_bars[row]))))
        for row, (env_id, step) in enumerate(zip(msg.env_ids, msg.steps))
    ]


ACTOR = LoraActor
