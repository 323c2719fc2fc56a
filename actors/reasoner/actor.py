"""The reasoner actor: thinks about the newest market state all the time, never blocks stepping.

- env.obs: every env's newest observation is kept (older ones are replaced: conflation);
- a think loop picks the next env round robin, answers from the thought cache or runs
  the model in the worker thread (the event loop keeps receiving and heartbeating),
  and publishes llm.thought;
- lora.adapter: the newest adapter is loaded between two thoughts; pending observations
  stay pending meanwhile, so no decision is dropped;
- policy.proposal: the policy's confidence, for the selective query policy (only then subscribed).
"""

from __future__ import annotations

import asyncio
import os

import msgspec

from actors.reasoner.core import FinishedThought, ReasonerCore
from actors.reasoner.engine import EngineError, build_engine
from bus.messages import ACTION_NAMES, N_ACTIONS, EnvObs, LlmThought, LoraAdapter, PolicyProposal
from runtime.actor import Actor

MAX_FAILURE_BACKOFF_SECS = 10.0


class ReasonerActor(Actor):
    subscriptions = (EnvObs, PolicyProposal, LoraAdapter)

    def __init__(self, **kwargs) -> None:
        # Only the selective query policy reads the policy's confidence; otherwise do not
        # decode a policy.proposal per step in the process that needs its CPU for the model.
        if kwargs["config"].reasoner.query_policy != "selective":
            self.subscriptions = (EnvObs, LoraAdapter)
        super().__init__(**kwargs)

    async def on_start(self) -> None:
        config = self.config.reasoner
        if config.process_nice:
            self._lower_priority(config.process_nice)
        self._wake = asyncio.Event()
        self._failures_in_a_row = 0
        engine = await self.in_worker(build_engine, config)
        self.core = ReasonerCore(config, engine, query_id_prefix=str(os.getpid()))
        self.log.info(
            "reasoner_ready",
            backend=config.backend,
            model=getattr(engine, "model_path", config.http_base_url),
            mode=config.mode,
            query_policy=config.query_policy,
            adapter_version=engine.adapter_version,
        )
        self._thinking = self.spawn(self._think_loop(), "think")
        self.spawn(self._stats_log_loop(), "reasoner_stats")

    def _lower_priority(self, nice: int) -> None:
        """Let the decision loop win the CPU: raise this process's nice value and its autogroup's.

        Called before the worker thread exists (Linux niceness is per thread and inherited by
        new threads). The runtime starts every actor in its own session, and with autogroup
        scheduling (the Linux default) CPU is shared between sessions first: without the
        autogroup's nice a niced actor still gets a full share against each loop actor.
        """
        os.nice(nice)
        try:
            with open("/proc/self/autogroup", "w") as autogroup:
                autogroup.write(str(nice))
            applied = "process+autogroup"
        except OSError:  # no autogroup support (not Linux, or disabled): the process nice value still applies
            applied = "process"
        self.log.info("priority_lowered", nice=nice, applied=applied)

    async def on_message(self, msg) -> None:
        match msg:
            case EnvObs():
                self._on_obs(msg)
            case PolicyProposal():
                for env_id, confidence in zip(msg.env_ids, msg.confidences.tolist()):
                    self.core.policy.note_rl_confidence(env_id, confidence)
            case LoraAdapter():
                self.log.info("adapter_announced", version=msg.version, path=msg.path)
                self.core.request_adapter(msg.path, msg.version)
                self._wake.set()

    def _on_obs(self, obs: EnvObs) -> None:
        n = len(obs.env_ids)
        if (obs.masks.shape != (n, N_ACTIONS) or obs.obs.ndim != 2 or obs.obs.shape[0] != n
                or len(obs.contexts) != n or len(obs.episode_ids) != n):
            self.counters["bad_obs"] += 1
            self.log.warning("bad_obs", step=obs.step, n_envs=n, masks_shape=list(obs.masks.shape))
            return
        for i, env_id in enumerate(obs.env_ids):
            accepted = self.core.observe(
                env_id=env_id,
                episode_id=obs.episode_ids[i],
                step=obs.step,
                obs=obs.obs[i],
                mask=obs.masks[i].tolist(),
                context=msgspec.structs.asdict(obs.contexts[i]),
            )
            self.counters["obs_accepted" if accepted else "obs_skipped_by_policy"] += 1
        self._wake.set()

    # ------------------------------------------------------------------ thinking

    async def _think_loop(self) -> None:
        while True:
            await self._swap_adapter_if_announced()
            request = self.core.next_request()
            if request is None:
                # No await between the empty check and clear(): an obs cannot slip in between.
                self._wake.clear()
                await self._wake.wait()
                continue
            cached = self.core.from_cache(request)
            if cached is not None:
                self._publish(cached)
                continue
            # Do not wake for every observation while generating: they queue in ZMQ and, on resume,
            # conflation keeps only the newest per env (it is all the next thought needs).
            self.pause_receiving()
            try:
                thought = await self.in_worker(self.core.think, request)
            except EngineError as exc:
                self.resume_receiving()
                await self._after_failure(exc, request.env_id)
                continue
            self.resume_receiving()
            self._failures_in_a_row = 0
            self._publish(self.core.finish(request, thought))
            await self._rest_after(thought.latency_ms / 1000.0)

    async def _rest_after(self, busy_secs: float) -> None:
        """Idle long enough that generating stays within max_busy_fraction of wall time."""
        fraction = self.config.reasoner.max_busy_fraction
        if fraction < 1.0:
            await asyncio.sleep(busy_secs * (1.0 - fraction) / fraction)

    async def _after_failure(self, exc: EngineError, env_id: int) -> None:
        """Count, log, and back off (a server that is down should not be hammered)."""
        self.core.failed()
        self.counters["think_failures"] += 1
        self._failures_in_a_row += 1
        backoff_secs = min(0.5 * 2 ** (self._failures_in_a_row - 1), MAX_FAILURE_BACKOFF_SECS)
        self.log.warning("think_failed", env_id=env_id, error=str(exc)[:300], backoff_secs=backoff_secs)
        await asyncio.sleep(backoff_secs)

    async def _swap_adapter_if_announced(self) -> None:
        request = self.core.take_adapter_request()
        if request is None:
            return
        try:
            await self.in_worker(self.core.swap_adapter, request)
        except EngineError as exc:
            self.counters["adapter_failures"] += 1
            self.log.error("adapter_load_failed", version=request.version, path=request.path, error=str(exc)[:300])
            return
        self.counters["adapters_loaded"] += 1
        self.log.info("adapter_loaded", version=request.version, path=request.path)

    def _publish(self, finished: FinishedThought) -> None:
        thought = finished.thought
        message = thought_message(finished)
        self.publish(message)
        self.log.info("thought", env_id=message.env_id, step_seen=message.step_seen, query_id=message.query_id,
                      action=ACTION_NAMES[message.action], confidence=round(message.confidence, 3), reason=message.reason[:120],
                      latency_ms=round(message.latency_ms), cached=message.cached, fallback=message.fallback)
        self.counters["thoughts_cached" if thought.cached else "thoughts_generated"] += 1
        if thought.fallback:
            self.counters["parse_fallbacks"] += 1

    # ------------------------------------------------------------------ stop and stats

    async def _stats_log_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.reasoner.stats_interval_secs)
            self.log.info("reasoner_stats", **{k: round(v, 4) for k, v in self.core.gauges().items()})

    async def on_stop(self) -> None:
        core = getattr(self, "core", None)
        if core is None:
            return
        self._thinking.cancel()  # no new thought starts; one in flight finishes in the worker
        # Through the worker: the model closes after a thought in flight, never under it.
        await self.in_worker(core.close)

    def gauges(self) -> dict[str, float]:
        core = getattr(self, "core", None)
        return core.gauges() if core is not None else {}


def thought_message(finished: FinishedThought) -> LlmThought:
    thought, request = finished.thought, finished.request
    return LlmThought(
        env_id=request.env_id,
        episode_id=request.episode_id,
        step_seen=request.step,
        query_id=finished.query_id,
        action=thought.action,
        confidence=float(thought.confidence),
        mode=thought.mode,
        analysis=thought.analysis,
        options=thought.options,
        risks=thought.risks,
        decision=thought.decision,
        reason=thought.reason,
        # A cached thought cost no model work: no latency, no tokens.
        latency_ms=0.0 if thought.cached else thought.latency_ms,
        prompt_tokens=0 if thought.cached else thought.prompt_tokens,
        generated_tokens=0 if thought.cached else thought.generated_tokens,
        adapter_version=thought.adapter_version,
        cached=thought.cached,
        fallback=thought.fallback,
    )


ACTOR = ReasonerActor
