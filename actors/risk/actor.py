"""The risk actor: exactly one risk.verdict per env.obs step.

env.outcome is read only to count each env's closed trades per episode (the win-rate
rule waits for risk.min_trades_for_win_rate of them; halts re-arm on a new trade).
Entry vetoes are halts that end (actors/risk/halts.py), updated once per env per step;
the rule in force goes out in RiskVerdict.halts.

The verdict comes from the step's fusion.decision through the risk rules; if no decision
arrived within risk.fusion_deadline_ms of the observation, from the RL proposal alone
(HOLD when that is missing too), marked degraded. Veto counts by rule are in sys.stats.

With risk.news_blackout_enabled, md.event's high-importance releases and md.bar's clock drive the prop-firm
news rule (actors/risk/news.py), laid over the halts: entries blocked in the window are counted
veto_news_blackout / veto_news_flat and logged news_entry_blocked; each window's start is logged news_rule_in_force.
With risk.keyword_gate_enabled / risk.oracle_gate_enabled, the floors of the LLM's gate (actors/risk/event_gates.py)
read md.event on the same clock: counted veto_keyword_risk / veto_oracle_risk and keyword_risk_windows /
oracle_risk_windows (the windows that came into force).
"""

from __future__ import annotations

import asyncio

from actors.common.actions import BUY, SELL
from actors.common.instruments import resolve_instrument
from actors.risk.config import RiskSettings
from actors.risk import event_gates
from actors.risk.halts import Halts
from actors.risk.news import NEWS_RULES, BarClock, InForce, NewsRule, overlay
from actors.risk.thought_gate import ThoughtRiskGate
from actors.risk.rules import AccountLimits, EpisodeTrades, RiskRules
from actors.risk.verdicts import Verdict, VerdictBook
from bus.messages import Bar, EnvObs, EnvOutcome, Event, FusionDecision, LlmThought, PolicyProposal, RiskVerdict
from runtime.actor import Actor
from runtime.logs import RateLimiter


class RiskActor(Actor):
    settings_type = RiskSettings
    subscriptions = (EnvObs, PolicyProposal, FusionDecision, EnvOutcome)

    async def on_start(self) -> None:
        limits = account_limits(self.config)
        risk = self.config.risk.for_env_mode(self.config.env.mode)
        rules = RiskRules(risk, limits)
        self.book = VerdictBook(rules, risk.max_pending_steps, counts=self.counters)
        self.halts = Halts(risk, rules)
        self._deadline_secs = self.config.risk.fusion_deadline_ms / 1000.0
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self.trades = EpisodeTrades()
        self._deadline_log = RateLimiter(self.config.logging.rate_limit_secs)
        self.log.info("risk_limits", vetoes=risk.veto_enabled, **{k: getattr(limits, k) for k in limits.__slots__})
        self.news: NewsRule | None = None
        self._news_in_force: InForce | None = None
        if risk.news_blackout_enabled:
            self.news = NewsRule(risk.news_blackout_before_mins, risk.news_blackout_after_mins, risk.news_flat_before)
            self.subscriptions = (*self.subscriptions, Event, Bar)
            self.log.info("news_rule", before_mins=risk.news_blackout_before_mins, after_mins=risk.news_blackout_after_mins,
                          flat_before=risk.news_flat_before)
        self.event_gates = self._event_gates(risk)
        self.thought_gate: ThoughtRiskGate | None = None
        if risk.thought_risk_gate != "off":
            self.thought_gate = ThoughtRiskGate(risk.thought_risk_gate, risk.thought_risk_min_level)
            self.subscriptions = (*self.subscriptions, LlmThought)
            self.log.info("thought_risk_gate", mode=risk.thought_risk_gate, min_level=risk.thought_risk_min_level)

    def _event_gates(self, risk) -> list[event_gates.EventGate]:
        """The keyword and oracle gates configured, on the news rule's clock (md.bar) or their own."""
        gates = []
        if risk.keyword_gate_enabled:
            gates.append(event_gates.keyword_gate(risk.event_gate_minutes, risk.keyword_gate_keys))
        if risk.oracle_gate_enabled:
            gates.append(event_gates.oracle_gate(risk.event_gate_minutes, risk.oracle_gate_event_ids))
        for gate in gates:
            self.log.info("event_gate", rule=gate.rule, minutes=risk.event_gate_minutes,
                          keys=list(risk.keyword_gate_keys) if gate.rule == event_gates.KEYWORD_RISK else len(risk.oracle_gate_event_ids))
        self.clock = self.news.clock if self.news is not None else BarClock()
        if gates and self.news is None:
            self.subscriptions = (*self.subscriptions, Event, Bar)
        return gates

    async def on_message(self, msg) -> None:
        match msg:
            case EnvObs():
                self._on_obs(msg)
            # Batch shapes were checked where the messages were decoded (bus/messages.py).
            case PolicyProposal():
                self.book.add_proposal(msg.step, msg.env_ids, msg.actions)
            case FusionDecision():
                self._publish(self.book.add_decision(msg.step, msg.env_ids, msg.actions, msg.llm_query_ids))
            case EnvOutcome():
                # The env publishes a step's outcomes before the next env.obs, so counts are current.
                self.trades.record(msg.env_id, msg.episode_id)
            case Event():
                self._on_event(msg)
            case Bar():
                self.clock.on_bar(msg.start_ns)
            case LlmThought() if self.thought_gate is not None:
                if self.thought_gate.add(msg):
                    self.counters["thought_risk_reads"] += 1

    def _on_event(self, event: Event) -> None:
        for gate in self.event_gates:
            gate.add(event)
        release = self.news.add(event) if self.news is not None else None
        if release is not None:
            self.counters["news_releases"] += 1
            self.log.info("news_release", name=release.name, time_ns=release.time_ns, event_id=release.event_id, source=event.source)

    def _event_overlay(self, halts: list[str]) -> list[str]:
        """The keyword / oracle gates laid over the halts at the market's now (the newest md.bar's end)."""
        now_ns = self.clock.now_ns()
        in_force = []
        for gate in self.event_gates:
            acted = gate.acted
            key = gate.in_force(now_ns)
            if gate.acted > acted:
                self.counters[f"{gate.rule}_windows"] += 1
                self.log.info("event_gate_in_force", rule=gate.rule, event_id=key, now_ns=now_ns)
            if key:
                in_force.append(gate.rule)
            gate.forget_before(now_ns)
        return event_gates.overlay(halts, in_force)

    def _on_obs(self, obs: EnvObs) -> None:
        if self.book.env_restarted(obs.step):
            # Steps went backwards: the env actor restarted, its episodes count from 0 again.
            self.trades = EpisodeTrades()
            self.halts.reset()
        trades = [self.trades.count(e, p) for e, p in zip(obs.env_ids, obs.episode_ids, strict=True)]
        halts = [self.halts.update(env_id, obs.step, context, episode, trades[row])
                 for row, (env_id, context, episode) in enumerate(zip(obs.env_ids, obs.contexts, obs.episode_ids, strict=True))]
        if self.news is not None:
            halts = self._news_overlay(halts, [context.position for context in obs.contexts], obs.step)
        if self.event_gates:
            halts = self._event_overlay(halts)
        if self.thought_gate is not None:
            halts = self.thought_gate.overlay(halts, list(obs.env_ids), [context.position for context in obs.contexts], obs.step)
        for rule in halts:
            if rule:
                self.counters[f"halted_{rule}"] += 1
        verdict = self.book.add_obs(obs.step, obs.env_ids, obs.masks, obs.contexts, trades, halts)
        if verdict is not None:
            self._publish(verdict)
            return
        self._cancel_timer(obs.step)
        self._timers[obs.step] = asyncio.get_running_loop().call_later(self._deadline_secs, self._deadline, obs.step)

    def _news_overlay(self, halts: list[str], positions: list[int], step: int) -> list[str]:
        """The news rule laid over the halts at the market's now (the newest md.bar's end)."""
        if not self.news.clock.started and not self.counters["news_wall_clock"]:
            self.log.warning("news_rule_wall_clock", reason="no md.bar seen: the wall clock stands in for the market's")
        self.counters["news_wall_clock"] += int(not self.news.clock.started)
        now_ns = self.news.clock.now_ns()
        in_force = self.news.in_force(now_ns)
        if in_force != self._news_in_force and in_force is not None:
            self.log.info("news_rule_in_force", rule=in_force.rule, release=in_force.release.name,
                          release_time_ns=in_force.release.time_ns, now_ns=now_ns, step=step)
        self._news_in_force = in_force
        self.news.forget_before(now_ns)
        if in_force is not None:
            self.counters["news_steps"] += 1
        return overlay(halts, positions, in_force)

    def _deadline(self, step: int) -> None:
        self._timers.pop(step, None)
        verdict = self.book.deadline(step)
        if verdict is not None:
            allowed, suppressed = self._deadline_log.allow("deadline")
            if allowed:
                self.log.warning("fusion_deadline_passed", step=step, source=verdict.source, suppressed=suppressed)
        self._publish(verdict)

    def _publish(self, verdict: Verdict | None) -> None:
        if verdict is None:
            return
        self._cancel_timer(verdict.step)
        self.publish(RiskVerdict(env_ids=verdict.env_ids, step=verdict.step, actions=verdict.actions,
                                 vetoed=verdict.vetoed, reasons=verdict.reasons, degraded=verdict.degraded,
                                 llm_query_ids=verdict.llm_query_ids, halts=verdict.halts))
        for env_id, reason, action in zip(verdict.env_ids, verdict.reasons, verdict.actions, strict=True):
            if reason in NEWS_RULES:
                self._count_news_veto(reason, env_id, verdict.step, flattened=int(action) in (BUY, SELL))
            elif reason:
                self.log.debug("veto", rule=reason, env_id=env_id, step=verdict.step)

    def _count_news_veto(self, rule: str, env_id: int, step: int, flattened: bool) -> None:
        """The news rule's cost: each entry it blocked (news_entries_blocked) or position it closed (news_flattened)."""
        event = "news_flattened" if flattened else "news_entry_blocked"
        self.counters["news_flattened" if flattened else "news_entries_blocked"] += 1
        release = self._news_in_force.release if self._news_in_force is not None else None
        self.log.info(event, rule=rule, env_id=env_id, step=step, release=release.name if release else "",
                      release_time_ns=release.time_ns if release else 0)

    def _cancel_timer(self, step: int) -> None:
        timer = self._timers.pop(step, None)
        if timer is not None:
            timer.cancel()

    async def on_stop(self) -> None:
        for step in list(self._timers):
            self._cancel_timer(step)

    def gauges(self) -> dict[str, float]:
        env_decisions = max(self.counters["env_decisions"], 1)
        verdicts = max(self.counters["verdicts"], 1)
        figures = {"veto_rate": self.counters["vetoes"] / env_decisions,
                   "degraded_rate": self.counters["degraded_verdicts"] / verdicts,
                   "pending_timers": float(len(self._timers))}
        for key, count in list(self.counters.items()):
            if key.startswith("veto_") and key != "veto_rate":
                figures[f"{key}_rate"] = count / env_decisions
        return figures


def account_limits(config: RiskSettings) -> AccountLimits:
    """The guard's numbers from [account], [instrument] and the trade size of [env]."""
    instrument = resolve_instrument(config.instrument)
    return AccountLimits(
        daily_loss_limit_usd=config.account.daily_loss_limit,
        multiplier=instrument.multiplier,
        tick_value=instrument.tick_value,
        commission_per_side=instrument.commission_per_side,
        slippage_ticks=instrument.slippage_ticks,
        entry_contracts=min(config.env.contracts_per_trade, config.account.max_contracts),
    )


ACTOR = RiskActor
