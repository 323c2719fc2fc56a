"""The reasoner without the bus: conflation, query policy, cache, thinking, adapters, figures.

The actor shell calls the cheap methods on its event loop and the two blocking ones
(``think``, ``swap_adapter``) through its worker thread. Only ``think`` and
``swap_adapter`` touch the engine, and the shell never runs them at the same time, so
an adapter swap always falls between two thoughts.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from actors.common.events import MarketEvent
from actors.common.llm.news import EventBook, context_minute, event_text, news_line, news_read
from actors.reasoner.cache import ThoughtCache
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import ChatEngine
from actors.reasoner.news_trigger import NewsTrigger
from actors.reasoner.pending import PendingObservations, ThoughtRequest
from actors.reasoner.query_policy import QueryPolicy
from actors.reasoner.stats import ReasonerStats
from actors.reasoner.thinker import Thinker
from actors.reasoner.thought import Thought


@dataclass(frozen=True, slots=True)
class FinishedThought:
    request: ThoughtRequest
    """What it answers (``request.step``: the bar it is published for)."""
    thought: Thought
    query_id: str
    step_built: int
    """The step whose market state its prompt read: ``request.step``, or earlier for an answer carried to a quiet bar."""


class AdapterRequest(NamedTuple):
    """An announced adapter; the worker swaps it in between two thoughts."""

    path: str
    version: int


class ReasonerCore:
    def __init__(
        self,
        config: ReasonerConfig,
        engine: ChatEngine,
        *,
        query_id_prefix: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.thinker = Thinker(engine, config)
        self.pending = PendingObservations()
        self.policy = QueryPolicy(config)
        self.events = EventBook()
        """Every md.event received; each env reads it on its own bar clock (actors/common/llm/news.py)."""
        self.trigger = (NewsTrigger(config.think_every_bars, on_position=config.think_on == "news")
                        if config.think_on in ("news", "events") else None)
        self._news_shape = (config.news_window_minutes, config.news_horizon_minutes, config.news_max_items)
        self.thoughts_with_news = 0
        self._latest: dict[int, tuple[int, int, Thought]] = {}
        """env -> (episode, step seen, thought) of its newest thought from the model or the cache (not a carried one)."""
        self._busy_envs: set[int] = set()
        """Envs with an accepted observation not yet answered: nothing is carried for them meanwhile."""
        self.carried = 0
        self._carried_age_bars = 0
        self.max_carried_age_bars = 0
        self.cache = (
            ThoughtCache(
                max_entries=config.cache_size,
                decimals=config.cache_decimals,
                ttl_secs=config.cache_ttl_secs,
                confidence_decay=config.cache_confidence_decay,
                min_confidence=config.cache_min_confidence,
                clock=clock,
            )
            if config.cache_enabled
            else None
        )
        self.stats = ReasonerStats(window=config.latency_window, clock=clock)
        self.max_batch = config.max_batch_sequences
        self._query_ids = (f"{query_id_prefix}-{n}" for n in itertools.count(1))
        self._adapter_request: AdapterRequest | None = None
        self._aborted = threading.Event()
        self.skipped_by_policy = 0

    @property
    def engine(self) -> ChatEngine:
        return self.thinker.engine

    # ---- event-loop side (cheap)

    def observe(
        self,
        *,
        env_id: int,
        episode_id: int,
        step: int,
        obs: np.ndarray,
        mask: Sequence[bool],
        context: Mapping[str, Any],
    ) -> bool:
        """Offer one env's observation; True when it now waits for a thought."""
        self.stats.observed(1)
        now = context_minute(context) if len(self.events) else None
        if self.trigger is not None:
            newest = self.events.newest_visible_minute(now) if now is not None else None
            latest = self._latest.get(env_id)
            if latest is not None and latest[0] != episode_id and env_id not in self._busy_envs:
                self.trigger.forget(env_id)  # a new episode has no thought to carry: its first bar is thought about
            reason = self.trigger.reason_to_think(env_id, step, context, newest)
        else:
            reason = self.policy.reason_to_think(env_id, step, context)
        if not reason:
            self.skipped_by_policy += 1
            return False
        news = news_line(self.events, now, *self._news_shape)
        if news:
            context = {**context, "news": news}
        window, _, max_items = self._news_shape
        read = news_read(self.events, now, window, max_items)  # the events news_line printed, newest first
        self._busy_envs.add(env_id)
        self.pending.put(
            ThoughtRequest(
                env_id=env_id,
                episode_id=episode_id,
                step=step,
                obs=np.array(obs, dtype=np.float32, copy=True),
                mask=tuple(bool(m) for m in mask),
                context=dict(context),
                news=tuple((event.event_id, event_text(event)) for _, event in read),
            )
        )
        return True

    def carry(self, env_id: int, episode_id: int, step: int) -> FinishedThought | None:
        """think_on = news, a quiet bar: the env's latest thought answers it again (marked cached: no model work), so
        each decision has the latest thought and a lockstep loop waits for the model only when something new
        arrived. None while the env's own thought is under way (it will be newer), in another episode, or before
        its first thought. It keeps the step its prompt was built on (``step_built``), so fusion ages it from there
        and its staleness bound applies; its age in bars (this step against that one) is counted here too."""
        latest = self._latest.get(env_id)
        if self.trigger is None or env_id in self._busy_envs or latest is None or latest[0] != episode_id or step < latest[1]:
            return None
        age = step - latest[1]
        self.carried += 1
        self._carried_age_bars += age
        self.max_carried_age_bars = max(self.max_carried_age_bars, age)
        request = ThoughtRequest(env_id=env_id, episode_id=episode_id, step=step, obs=np.zeros(0, np.float32), mask=(), context={})
        return FinishedThought(request, dataclasses.replace(latest[2], cached=True), next(self._query_ids), step_built=latest[1])

    def note_event(self, event: MarketEvent) -> bool:
        """An md.event: kept for the prompts (and the news trigger); True when it is new to the book."""
        return self.events.add(event)

    def next_request(self) -> ThoughtRequest | None:
        return self.pending.pop_next()

    def next_requests(self) -> list[ThoughtRequest]:
        """The newest request of every env waiting (round robin, at most max_batch_sequences)."""
        requests = []
        while len(requests) < self.max_batch and (request := self.pending.pop_next()) is not None:
            requests.append(request)
        return requests

    def from_cache(self, request: ThoughtRequest) -> FinishedThought | None:
        """A reused thought for this state (confidence decayed), or None: the model must think."""
        if self.cache is None:
            return None
        thought = self.cache.get(self._cache_key(request))
        return None if thought is None else self._finish(request, thought)

    def finish(self, request: ThoughtRequest, thought: Thought) -> FinishedThought:
        """Record a model thought (cache, figures) and give it its query id."""
        if self.cache is not None:
            self.cache.put(self._cache_key(request), thought)
        return self._finish(request, thought)

    def failed(self, env_ids: Sequence[int] = ()) -> None:
        self.stats.failed()
        self._busy_envs.difference_update(env_ids)

    def request_adapter(self, path: str, version: int) -> None:
        """Remember the newest adapter; it is loaded before the next thought."""
        newest = max(self.engine.adapter_version, self._adapter_request.version if self._adapter_request else 0)
        if version > newest:
            self._adapter_request = AdapterRequest(path, version)

    def take_adapter_request(self) -> AdapterRequest | None:
        request, self._adapter_request = self._adapter_request, None
        return request

    def gauges(self) -> dict[str, float]:
        figures = self.stats.gauges()
        figures.update(
            cache_hit_rate=self.cache.hit_rate() if self.cache is not None else 0.0,
            thought_memo_hits=float(memo.hits) if (memo := self.thinker.memo) is not None else 0.0,
            thought_memo_hit_rate=memo.hit_rate() if memo is not None else 0.0,
            parse_fallbacks=float(self.thinker.parser.fallbacks),
            reason_contradicts_action=float(self.thinker.parser.counts["reason_contradicts_action"]),
            risk_read_missing=float(self.thinker.parser.counts["risk_read_missing"]),  # reasoner.risk_read: answers without one
            pending_envs=float(len(self.pending)),
            obs_replaced=float(self.pending.replaced),
            skipped_by_policy=float(self.skipped_by_policy),
            adapter_version=float(self.engine.adapter_version),
            events_received=float(self.events.received),
            thoughts_with_news=float(self.thoughts_with_news),
        )
        if self.trigger is not None:  # why thoughts were asked for (think_on = news), the quiet bars, the carried answers' age
            figures.update({f"think_on_{reason}": float(count) for reason, count in self.trigger.counts.items()})
            figures.update(thoughts_carried=float(self.carried), max_carried_age_bars=float(self.max_carried_age_bars),
                           mean_carried_age_bars=self._carried_age_bars / self.carried if self.carried else 0.0)
        return figures

    # ---- worker side (blocking)

    def think(self, request: ThoughtRequest) -> Thought:
        return self.thinker.think(request.context, request.mask)

    def think_many(self, requests: list[ThoughtRequest]) -> list[Thought]:
        """One thought per request, all envs' steps served together where the engine can; [] once aborted."""
        if self._aborted.is_set():
            return []
        return self.thinker.think_many([(request.context, request.mask) for request in requests])

    def swap_adapter(self, request: AdapterRequest) -> None:
        if not self._aborted.is_set():
            self.engine.load_adapter(request.path, request.version)

    def abort(self) -> None:
        """Stop thinking now (any thread): a generation in flight ends after its current token and
        yields no thought, later calls return at once. The shutdown's first move."""
        self._aborted.set()
        abort_engine = getattr(self.engine, "abort", None)  # a ChatEngine without it just finishes its call
        if abort_engine is not None:
            abort_engine()

    def close(self) -> None:
        self.engine.close()

    # ---- internals

    def _finish(self, request: ThoughtRequest, thought: Thought) -> FinishedThought:
        # The events this request's prompt read (a cached or memo thought was made from the same news line: its key holds it).
        thought = dataclasses.replace(thought, news=tuple(text for _, text in request.news),
                                      news_ids=tuple(event_id for event_id, _ in request.news))
        self.stats.published_thought(thought)
        self.thoughts_with_news += bool(request.context.get("news"))
        self._busy_envs.discard(request.env_id)
        self._latest[request.env_id] = (request.episode_id, request.step, thought)
        return FinishedThought(request, thought, next(self._query_ids), step_built=request.step)

    def _cache_key(self, request: ThoughtRequest) -> tuple:
        assert self.cache is not None
        # The news line is part of the state: the same bars with a new headline are not the same question.
        return (*self.cache.key(request.obs, request.mask, int(request.context.get("position", 0))), request.context.get("news", ""))
