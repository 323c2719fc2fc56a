"""The risk actor: exactly one risk.verdict per env.obs step.

env.outcome is read only to count each env's closed trades per episode (the win-rate
rule waits for risk.min_trades_for_win_rate of them; halts re-arm on a new trade).
Entry vetoes are halts that end (actors/risk/halts.py), updated once per env per step;
the rule in force goes out in RiskVerdict.halts.

The verdict comes from the step's fusion.decision through the risk rules; if no decision
arrived within risk.fusion_deadline_ms of the observation, from the RL proposal alone
(HOLD when that is missing too), marked degraded. Veto counts by rule are in sys.stats.
"""

from __future__ import annotations

import asyncio

from actors.common.instruments import resolve_instrument
from actors.risk.config import RiskSettings
from actors.risk.halts import Halts
from actors.risk.rules import AccountLimits, EpisodeTrades, RiskRules
from actors.risk.verdicts import Verdict, VerdictBook
from bus.messages import EnvObs, EnvOutcome, FusionDecision, PolicyProposal, RiskVerdict
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

    def _on_obs(self, obs: EnvObs) -> None:
        if self.book.env_restarted(obs.step):
            # Steps went backwards: the env actor restarted, its episodes count from 0 again.
            self.trades = EpisodeTrades()
            self.halts.reset()
        trades = [self.trades.count(e, p) for e, p in zip(obs.env_ids, obs.episode_ids, strict=True)]
        halts = [self.halts.update(env_id, obs.step, context, episode, trades[row])
                 for row, (env_id, context, episode) in enumerate(zip(obs.env_ids, obs.contexts, obs.episode_ids, strict=True))]
        for rule in halts:
            if rule:
                self.counters[f"halted_{rule}"] += 1
        verdict = self.book.add_obs(obs.step, obs.env_ids, obs.masks, obs.contexts, trades, halts)
        if verdict is not None:
            self._publish(verdict)
            return
        self._cancel_timer(obs.step)
        self._timers[obs.step] = asyncio.get_running_loop().call_later(self._deadline_secs, self._deadline, obs.step)

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
        for env_id, reason in zip(verdict.env_ids, verdict.reasons, strict=True):
            if reason:
                self.log.debug("veto", rule=reason, env_id=env_id, step=verdict.step)

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
