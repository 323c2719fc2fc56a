"""The reasoner actor: thinks about the newest market state all the time, never blocks stepping.

- env.obs: every env's newest observation is kept (older ones are replaced: conflation);
- a think loop takes the newest obs of every env waiting (round robin, at most
  reasoner.max_batch_sequences), answers from the thought cache where it can, thinks for
  the rest in ONE worker call (one llama.cpp batch, or concurrent HTTP requests; the event
  loop keeps receiving and heartbeating) and publishes one llm.thought per env;
- lora.adapter: the newest adapter is swapped in on the live llama.cpp context (no model reload)
  between two thoughts; pending observations stay pending meanwhile, so no decision is dropped,
  and each thought carries the adapter version it was made under; a missing or corrupt adapter
  is logged (adapter_load_failed) and the previous one stays;
- md.event: kept in the core's event book; each env's prompt shows the news of its own bar clock (the last
  reasoner.news_window_minutes, releases due within news_horizon_minutes), and with reasoner.think_on = news an
  observation is thought about only when something new arrived for its env (actors/reasoner/news_trigger.py),
  and a quiet bar is answered at once by the env's latest thought (cached, published for that bar with the step its
  prompt was built on, LlmThought.step_built: fusion ages it from there);
- policy.proposal: the policy's confidence, for the selective query policy (only then subscribed);
- sys.shutdown: the generation in flight is aborted after its current token (no thought published),
  then the model is closed, well within the supervisor's grace period.
"""

from __future__ import annotations

import asyncio
import os
import time

import msgspec

from actors.reasoner.config import ReasonerSettings
from actors.reasoner.core import FinishedThought, ReasonerCore
from actors.reasoner.engine import EngineError
from actors.reasoner.engines import build_engine
from bus.messages import ACTION_NAMES, EnvObs, Event, LlmThought, LoraAdapter, PolicyProposal
from runtime.actor import Actor

MAX_FAILURE_BACKOFF_SECS = 10.0
BUS_PEEK_SECS = 0.25
"""While generating, the bus is read this often (not per message): a sys.shutdown must get through."""


class ReasonerActor(Actor):
    settings_type = ReasonerSettings
    subscriptions = (EnvObs, PolicyProposal, LoraAdapter, Event)

    def __init__(self, **kwargs) -> None:
        # Only the selective query policy reads the policy's confidence; otherwise do not
        # decode a policy.proposal per step in the process that needs its CPU for the model.
        if kwargs["config"].reasoner.query_policy != "selective":
            self.subscriptions = (EnvObs, LoraAdapter, Event)
        super().__init__(**kwargs)

    async def on_start(self) -> None:
        config = self.config.reasoner
        if config.process_nice:
            self._lower_priority(config.process_nice)
        self._check_threads_fit(config.n_threads)
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

    def _check_threads_fit(self, n_threads: int) -> None:
        """Under runtime.cpu_placement = split the process holds runtime.llm_cpus CPUs: more llama.cpp threads than
        that take turns on them, each thought slower than with fewer threads."""
        held = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
        if held and n_threads > held:
            self.log.warning("threads_exceed_cpus", n_threads=n_threads, cpus=held,
                             hint="raise runtime.llm_cpus, lower reasoner.n_threads, or set runtime.cpu_placement = 'off'")

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
            case Event():  # read into the prompts of the envs whose clock has passed it (actors/common/llm/news.py)
                self.counters["events_new" if self.core.note_event(msg) else "events_repeated"] += 1
            case LoraAdapter():
                self.log.info("adapter_announced", version=msg.version, path=msg.path)
                self.core.request_adapter(msg.path, msg.version)
                self._wake.set()

    def _on_obs(self, obs: EnvObs) -> None:
        # The batch's shapes were checked where it was decoded (bus/messages.py).
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
            if not accepted and (carried := self.core.carry(env_id, obs.episode_ids[i], obs.step)) is not None:
                self._publish(carried)  # think_on = news: the latest thought answers a quiet bar
        self._wake.set()

    # ------------------------------------------------------------------ thinking

    async def _think_loop(self) -> None:
        while True:
            await self._swap_adapter_if_announced()
            requests = self.core.next_requests()
            if not requests:
                # No await between the empty check and clear(): an obs cannot slip in between.
                self._wake.clear()
                await self._wake.wait()
                continue
            to_think = []
            for request in requests:
                cached = self.core.from_cache(request)
                if cached is not None:
                    self._publish(cached)
                else:
                    to_think.append(request)
            if to_think:
                await self._think(to_think)

    async def _think(self, requests: list) -> None:
        """Every waiting env's newest obs in one worker call (one batch); one llm.thought per env."""
        try:
            thoughts = await self._in_worker_reading_now_and_then(self.core.think_many, requests)
        except EngineError as exc:
            await self._after_failure(exc, [request.env_id for request in requests])
            return
        self._failures_in_a_row = 0
        if not thoughts:  # aborted: the actor is stopping, nothing half-made is published
            return
        for request, thought in zip(requests, thoughts):
            self._publish(self.core.finish(request, thought))
        await self._rest_after(max(thought.latency_ms for thought in thoughts) / 1000.0)

    async def _in_worker_reading_now_and_then(self, fn, *args):
        """``in_worker(fn, *args)`` with the bus read only every BUS_PEEK_SECS meanwhile.

        Not waking for every observation while generating saves the loop's CPU (they queue in ZMQ
        and conflation keeps the newest per env); but a sys.shutdown queued behind them must be
        read within the grace period, so that on_stop can abort the generation."""
        self.pause_receiving()
        work = asyncio.ensure_future(self.in_worker(fn, *args))
        try:
            while True:
                done, _ = await asyncio.wait({work}, timeout=BUS_PEEK_SECS)
                if done:
                    return work.result()
                self.resume_receiving()
                await asyncio.sleep(0)  # the loop drains what queued (resume_receiving scheduled it)
                self.pause_receiving()
        finally:
            if not work.done():  # cancelled (stopping): the worker's aborted call just ends, unawaited
                work.cancel()
            self.resume_receiving()

    async def _rest_after(self, busy_secs: float) -> None:
        """Idle long enough that generating stays within max_busy_fraction of wall time."""
        fraction = self.config.reasoner.max_busy_fraction
        if fraction < 1.0:
            await asyncio.sleep(busy_secs * (1.0 - fraction) / fraction)

    async def _after_failure(self, exc: EngineError, env_ids: list[int]) -> None:
        """Count, log, and back off (a server that is down should not be hammered)."""
        self.core.failed(env_ids)
        self.counters["think_failures"] += 1
        self._failures_in_a_row += 1
        backoff_secs = min(0.5 * 2 ** (self._failures_in_a_row - 1), MAX_FAILURE_BACKOFF_SECS)
        self.log.warning("think_failed", env_ids=env_ids, error=str(exc)[:300], backoff_secs=backoff_secs)
        await asyncio.sleep(backoff_secs)

    async def _swap_adapter_if_announced(self) -> None:
        request = self.core.take_adapter_request()
        if request is None:
            return
        started = time.perf_counter()
        try:
            await self.in_worker(self.core.swap_adapter, request)
        except EngineError as exc:  # missing or corrupt file: the previous adapter stays in use
            self.counters["adapter_failures"] += 1
            self.log.error("adapter_load_failed", version=request.version, path=request.path,
                           kept_version=self.core.engine.adapter_version, error=str(exc)[:300])
            return
        self.counters["adapters_loaded"] += 1
        self.log.info("adapter_loaded", version=request.version, path=request.path,
                      swap_ms=round((time.perf_counter() - started) * 1000.0, 1))

    def _publish(self, finished: FinishedThought) -> None:
        thought = finished.thought
        message = thought_message(finished)
        self.publish(message)
        self.log.info("thought", env_id=message.env_id, step_seen=message.step_seen, step_built=message.step_built, query_id=message.query_id,
                      action=ACTION_NAMES[message.action], confidence=round(message.confidence, 3), reason=message.reason[:120],
                      latency_ms=round(message.latency_ms), cpu_ms=0 if thought.cached else round(thought.cpu_secs * 1000.0),
                      cached=message.cached, memo=message.memo, fallback=message.fallback,
                      **({"risk": message.risk_level, "risk_minutes": message.risk_minutes} if message.risk_level >= 0 else {}))
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
        # First, before any await: a generation in the worker stops after its current token, so
        # the close below does not wait behind a whole thought (and the supervisor's SIGTERM).
        core.abort()
        self._thinking.cancel()  # no new thought starts
        self.log.info("reasoner_stats", final=True, **{k: round(v, 4) for k, v in core.gauges().items()})  # the run's whole figures
        # Through the worker: the model closes after the aborted call has returned, never under it.
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
        step_built=finished.step_built,  # a carried answer keeps the step its prompt read: its real age
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
        memo=thought.memo,
        fallback=thought.fallback,
        news=list(thought.news),
        news_ids=list(thought.news_ids),
        risk_level=thought.risk_level,
        risk_minutes=thought.risk_minutes,
    )


ACTOR = ReasonerActor
