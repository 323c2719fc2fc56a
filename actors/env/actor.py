"""The env actor: hosts env.n_envs environments on the bus.

Loop: publish ``env.obs`` for step N; on the ``risk.verdict`` for step N, step every env
with its action, publish ``env.transition``, an ``env.outcome`` per closed trade, an
``env.episode`` per finished episode, then ``env.obs`` for N+1. Verdicts for any other
step are counted and ignored. Without a verdict by ``env.verdict_deadline_ms`` every env
holds (counted as ``verdict_timeouts``, ``timed_out`` in the transition), so the loop
never stalls. ``fusion.decision`` messages only feed the decision statistics of the
report (agreement, query rate, LLM confidence, trust).

In backtest mode the actor also keeps what the report explains (actors/env/report/):
- the decision behind each trade's entry and exit: fusion.decision + risk.verdict of the step, and
  the llm.thought it used (a bounded map query id -> thought, read when the trade opens or closes);
- bars halted per entry-veto rule (risk.verdict ``halts``), counted as ``halted_bars_<rule>``;
- where entries went (``entries_<stage>``, see EntriesFunnel), named in a sentence when few trades happened.

Backtest mode writes a report into <run_dir>/<env.report_dir> after the pass and calls
``done("backtest_complete", metrics)``; ``env.max_steps`` > 0 ends any mode the same way.
Train mode writes the metrics of its finished episodes into <run_dir>/train_report when
it stops.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable

import numpy as np

from actors.common.actions import ACTION_NAMES, BUY, HOLD, NO_ACTION, SELL
from actors.common.decisions import DecisionStats
from actors.env import checkpoint as account_checkpoint
from actors.env.batch import BatchStep, EnvBatch
from actors.env.env import FuturesTradingEnv
from actors.env.explain import EntriesFunnel, VerdictRow, run_history
from actors.env.factory import load_dataset
from actors.env.hindsight import HindsightBook, LabelledStep, hindsight_book
from actors.env.instruments import resolve_instrument
from actors.env.pacing import LagStats, ThoughtGate
from actors.env.report import ReportInput, ReportTrade, ThoughtUsed, TradeDecision, entries_sentence, write_backtest_report, write_report
from actors.env.statistics import MIN_TRADES, compute_statistics
from bus.messages import EnvEpisode, EnvHindsight, EnvObs, EnvOutcome, EnvTransition, FusionDecision, Heartbeat, LlmThought, MarketContext, RiskVerdict
from runtime.actor import Actor
from runtime.rate import StepRate

TRAIN_REPORT_DIR = "train_report"
"""Run sub-directory for the metrics of training episodes (backtests use env.report_dir)."""
DECISION_LATENCY_WINDOW = 4096
"""Recent decisions behind the latency percentiles."""
START_SETTLE_SECS = 0.2
"""Pause after every peer's first heartbeat so the last subscriptions have crossed the broker."""
MAX_THOUGHTS_KEPT = 4096
"""llm.thought messages remembered by query id (a trade reads its thought when it opens or closes)."""
MAX_FUSION_STEPS_KEPT = 8
"""fusion.decision messages kept by step until that step's verdict is executed."""
CHECKPOINT_DIR = "env_state"
"""Run sub-directory of the account checkpoints (actors/env/checkpoint.py), one file per env actor."""


def _action_name(action: int) -> str:
    return ACTION_NAMES[action] if 0 <= action < len(ACTION_NAMES) else "none"


class EnvActor(Actor):
    # Heartbeats tell a peer's restart (a new pid): the pending observation is then re-sent (_on_heartbeat).
    subscriptions = (RiskVerdict, FusionDecision, LlmThought, Heartbeat)
    hindsight: HindsightBook | None = None
    """Labels decision steps once their horizon is played (env.publish_hindsight, actors/env/hindsight.py)."""

    def __new__(cls, *args, **kwargs):
        # env.mode = "paper" follows a feed instead of a data file: its shell is actors/env/paper_actor.py.
        config = kwargs.get("config")
        if cls is EnvActor and config is not None and config.env.mode == "paper":
            from actors.env.paper_actor import PaperEnvActor

            cls = PaperEnvActor
        return super().__new__(cls)

    async def on_start(self) -> None:
        cfg = self.config.env
        if cfg.mode != "backtest" and not cfg.thought_lag_steps:
            # fusion.decision and llm.thought only feed the backtest report and lockstep: training skips the wake-ups.
            self.subscriptions = (RiskVerdict, Heartbeat)
        self.gate = ThoughtGate(cfg.thought_lag_steps, cfg.thought_wait_deadline_ms / 1000.0) if cfg.thought_lag_steps else None
        self.lag = LagStats(cfg.thought_lag_steps)
        self._gate_deadline: asyncio.TimerHandle | None = None
        dataset = await self.in_worker(load_dataset, self.config)
        instrument = resolve_instrument(self.config.instrument)
        split = dataset.split(cfg.split)
        envs = [FuturesTradingEnv(split, instrument, self.config.account, cfg) for _ in range(cfg.n_envs)]
        self.batch = EnvBatch(envs, mode=cfg.mode, seed=self.config.run.seed)
        self.batch.reset()
        self.hindsight = hindsight_book(self.config, instrument, split.dataset.lists)
        self.decisions = DecisionStats()
        self.step_index = 0
        self.env_steps = 0
        self.finished = False
        self._awaiting: list[int] = []
        self._deadline_secs = cfg.verdict_deadline_ms / 1000.0
        self._deadline_at = float("inf")
        self._obs_sent_ns = 0
        self._last_obs_at = 0.0
        self._step_interval_secs = cfg.step_interval_ms / 1000.0
        self._decision_latency_ns: deque[int] = deque(maxlen=DECISION_LATENCY_WINDOW)
        self._explain = cfg.mode == "backtest"
        self._fusion_by_step: OrderedDict[int, FusionDecision] = OrderedDict()
        self._thoughts: OrderedDict[str, LlmThought] = OrderedDict()
        self._obs_state: dict[int, tuple[bool, bool]] = {}
        """env id -> (flat, an entry allowed) when the step's observation went out."""
        self._verdict_rows: dict[int, VerdictRow] = {}
        self._open_decisions: list[dict[int, TradeDecision]] = [{} for _ in envs]
        """Per env: step -> decision, for the steps that acted on the open trade (cleared when it closes)."""
        self._report_trades: list[ReportTrade] = []
        self._halts: list[list[str]] = [[] for _ in envs]
        """Per env, per step it played: the entry-veto rule in force ('' none)."""
        self.funnel = EntriesFunnel()
        self.data_notes: list[str] = list(getattr(dataset, "warnings", ()) or ())
        self._started = time.monotonic()
        self._loop_started = self._started
        """When the first observation went out: the wall time of the loop (thought_wait_share) counts from it."""
        self._total_steps = self._planned_env_steps()
        self._peer_pids: dict[str, int] = {}
        self._resend_delay_secs = cfg.resend_obs_delay_ms / 1000.0
        self._retry_secs = cfg.verdict_retry_ms / 1000.0
        self._retry_at = float("inf")
        self._retry_step = -1
        """When the observation of _retry_step goes out once more if its verdict has not come (_watch_retry)."""
        self._last_obs: EnvObs | None = None
        self._flatten_env_ids: set[int] = set()
        self._restore_checkpoint()
        self.log.info("env_ready", source=dataset.source, split=cfg.split, bars=split.n_bars, n_envs=cfg.n_envs, mode=cfg.mode,
                      **({f"repaired_{k}": v for k, v in dataset.repair.as_dict().items()} if dataset.repair else {}))
        self.spawn(self._begin(), "begin")
        self.spawn(self._watch_deadline(), "verdict_deadline")
        if self._retry_secs > 0:
            self.spawn(self._watch_retry(), "verdict_retry")
        self.spawn(self._report_progress(), "progress")

    # ------------------------------------------------------------------ account checkpoint (actors/env/checkpoint.py)

    _fingerprint: str | None = None
    _checkpoint_writer: account_checkpoint.CheckpointWriter | None = None

    @property
    def _checkpoint_path(self):
        return self.run_dir / CHECKPOINT_DIR / f"{self.name}.json"

    def _checkpoint_fingerprint(self) -> str:
        cfg = self.config.env
        return account_checkpoint.fingerprint({
            "mode": cfg.mode, "split": cfg.split, "n_envs": cfg.n_envs, "episode_bars": cfg.episode_bars, "seed": self.config.run.seed,
            "account": self.config.account, "instrument": self.config.instrument, "data": self.config.data,
        })

    def _restore_checkpoint(self) -> None:
        """A restart inside the same run goes on from the checkpoint: the drawdown floor never resets."""
        state = account_checkpoint.read(self._checkpoint_path, self._checkpoint_fingerprint())
        if state is None:
            return
        open_ids = account_checkpoint.restore(self.batch, state)
        self.step_index, self.env_steps = int(state["step_index"]), int(state["env_steps"])
        if self.config.env.restart_position == "flatten":
            self._flatten_env_ids = set(open_ids)  # closed at the next bar's open by the step's action (_advance)
        self.counters["restarts_restored"] += 1
        self.log.warning("env_restored", step=self.step_index, open_positions=open_ids, restart_position=self.config.env.restart_position,
                         balances=[round(env.account.balance, 2) for env in self.batch.envs], peaks=[round(env.account.peak, 2) for env in self.batch.envs])
        if self.batch.finished:
            self.finished = True
            self.spawn(self._finish("backtest_complete"), "finish")

    def _save_checkpoint(self, step_index: int) -> None:
        if self._fingerprint is None:  # the settings do not change within a process
            self._fingerprint = self._checkpoint_fingerprint()
        state = account_checkpoint.capture(self.batch, step_index, self.env_steps, self._fingerprint)
        if self._checkpoint_writer is None:
            self._checkpoint_writer = account_checkpoint.CheckpointWriter(self._checkpoint_path)
        self._checkpoint_writer.submit(state)

    def _checkpoint_due(self, step_index: int, result=None) -> bool:
        """Every checkpoint_every_steps, and on any step that closed a trade: a restart replays at most a few
        steps, never a published trade. Writing every step at full speed cost a third of the loop's pace."""
        every = self.config.env.checkpoint_every_steps
        if self.config.env.mode == "paper" or every <= 0:
            return False
        traded = result is not None and bool(result.closed_trades)
        return traded or step_index % every == 0

    def _flatten_actions(self, env_ids: list[int], actions: np.ndarray) -> np.ndarray:
        """restart_position = flatten: the first step after the restart closes the restored positions at the bar's open."""
        actions = actions.copy()
        for row, env_id in enumerate(env_ids):
            position = self.batch.envs[env_id].position
            if env_id in self._flatten_env_ids and position is not None:
                actions[row] = SELL if position.side > 0 else BUY
                self.counters["positions_flattened_at_restart"] += 1
        self._flatten_env_ids = set()
        return actions

    def _planned_env_steps(self) -> int:
        cfg = self.config.env
        if cfg.max_steps:
            return cfg.max_steps * cfg.n_envs
        if cfg.mode == "backtest":
            split = self.batch.envs[0].split
            return (split.stop - 1 - split.start) // cfg.n_envs * cfg.n_envs
        return 0

    async def _begin(self) -> None:
        # A heartbeat means a peer finished on_start and subscribed: the first observation goes
        # out when the whole loop can answer it, not into a deadline-driven HOLD.
        if self.counters["restarts_restored"] and self.loop_peers():
            # A restart mid-run: the peers are up and subscribed long since; one heartbeat from any of them shows
            # this process's own subscriptions are in place (no settle, no wait for the slowest heartbeat).
            waits = [asyncio.ensure_future(self.wait_for_peers([peer], self.config.runtime.startup_grace_secs)) for peer in self.loop_peers()]
            _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for wait in pending:
                wait.cancel()
        else:
            missing = await self.wait_for_peers(self.loop_peers(), self.config.runtime.startup_grace_secs)
            if missing:
                self.log.warning("peers_not_started", missing=missing)
            await asyncio.sleep(START_SETTLE_SECS)
        self._loop_started = time.monotonic()
        self._publish_obs()

    # ------------------------------------------------------------------ messages

    async def on_message(self, msg) -> None:
        match msg:
            case RiskVerdict():
                self._on_verdict(msg)
            case FusionDecision():
                arrays = (msg.rl_actions, msg.llm_actions, msg.llm_confidences, msg.llm_staleness, msg.rl_trust, msg.llm_trust)
                if all(array.shape == (len(msg.env_ids),) for array in arrays):
                    self.decisions.add_fusion(*arrays)
                    self.lag.add(msg.llm_staleness)
                    self._keep_fusion(msg)
                else:
                    self.counters["bad_decisions"] += 1
            case Heartbeat():
                self._on_heartbeat(msg)
            case LlmThought():
                if self.gate is not None and self.gate.record(msg.env_id, msg.step_seen, time.monotonic()):
                    self._thoughts_arrived()
                if self._explain and msg.query_id:
                    self._thoughts[msg.query_id] = msg
                    while len(self._thoughts) > MAX_THOUGHTS_KEPT:
                        self._thoughts.popitem(last=False)

    def _on_heartbeat(self, beat: Heartbeat) -> None:
        """A loop peer beating from a new pid restarted: it lost the pending observation, so it goes out again
        (fusion, risk and policy answer a step once; a re-sent one gets the same answer) rather than the loop
        waiting out verdict_deadline_ms."""
        previous = self._peer_pids.get(beat.actor)
        self._peer_pids[beat.actor] = beat.pid
        if previous is None or previous == beat.pid or beat.actor == self.name or beat.actor not in self.loop_peers():
            return
        self.log.info("peer_restarted", peer=beat.actor, pid=beat.pid, step=self.step_index)
        asyncio.get_running_loop().call_later(self._resend_delay_secs, self._resend_obs, self.step_index)

    def _resend_obs(self, step: int) -> None:
        if self.finished or step != self.step_index or not self._awaiting or self._last_obs is None or self._last_obs.step != step:
            return  # the step was answered meanwhile
        self.publish(self._last_obs)
        self._deadline_at = time.monotonic() + self._deadline_secs
        self.counters["obs_resent"] += 1

    def _keep_fusion(self, decision: FusionDecision) -> None:
        if not self._explain or len(decision.rules) != len(decision.env_ids):
            return
        self._fusion_by_step[decision.step] = decision
        while len(self._fusion_by_step) > MAX_FUSION_STEPS_KEPT:
            self._fusion_by_step.popitem(last=False)

    def _on_verdict(self, verdict: RiskVerdict) -> None:
        if self.finished or verdict.step != self.step_index or not self._awaiting:
            # Idempotent per step: a duplicate (re-sent obs, replayed frame) or stale verdict never trades again.
            self.counters["verdicts_ignored"] += 1
            return
        if verdict.actions.shape != (len(verdict.env_ids),) or not np.issubdtype(verdict.actions.dtype, np.integer):
            self.counters["bad_verdicts"] += 1
            return
        by_env = dict(zip(verdict.env_ids, verdict.actions.tolist()))
        query_by_env = dict(zip(verdict.env_ids, verdict.llm_query_ids)) if verdict.llm_query_ids else {}
        missing = [env_id for env_id in self._awaiting if env_id not in by_env]
        if missing:
            self.counters["verdict_missing_envs"] += len(missing)
        actions = np.array([by_env.get(env_id, 0) for env_id in self._awaiting], dtype=np.int64)
        query_ids = [query_by_env.get(env_id, "") for env_id in self._awaiting]
        self.decisions.add_verdict(verdict.vetoed)
        self._decision_latency_ns.append(time.monotonic_ns() - self._obs_sent_ns)
        if self._explain:
            halts = verdict.halts or [""] * len(verdict.env_ids)
            self._verdict_rows = {
                env_id: VerdictRow(int(action), bool(vetoed), str(reason), str(halt))
                for env_id, action, vetoed, reason, halt in zip(verdict.env_ids, verdict.actions.tolist(), verdict.vetoed, verdict.reasons, halts)
            }
        self._advance(actions, query_ids, timed_out=False)

    @staticmethod
    async def _sleep_until(due_at: Callable[[], float], max_nap_secs: float) -> None:
        """Until ``due_at()`` (re-read after every nap of at most ``max_nap_secs``: each step moves it)."""
        while (remaining := due_at() - time.monotonic()) > 0:
            await asyncio.sleep(min(remaining, max_nap_secs))

    async def _watch_deadline(self) -> None:
        while True:
            await self._sleep_until(lambda: self._deadline_at, self._deadline_secs)
            self._deadline_at = float("inf")
            if self._awaiting and not self.finished:
                self.counters["verdict_timeouts"] += 1
                self.log.warning("verdict_timeout", step=self.step_index, deadline_ms=self.config.env.verdict_deadline_ms)
                self._advance(np.zeros(len(self._awaiting), dtype=np.int64), [""] * len(self._awaiting), timed_out=True)

    async def _watch_retry(self) -> None:
        # One task for every step's retry, not a timer per observation: at full speed the loop publishes
        # hundreds of observations a second and nearly all are answered long before verdict_retry_ms.
        while True:
            await self._sleep_until(lambda: self._retry_at, self._retry_secs)
            step, self._retry_at = self._retry_step, float("inf")
            self._resend_obs(step)  # a no-op when the step was answered meanwhile

    # ------------------------------------------------------------------ the loop

    def _advance(self, actions: np.ndarray, query_ids: list[str], timed_out: bool) -> None:
        env_ids = self._awaiting
        self._awaiting = []
        self._deadline_at = float("inf")
        if self._flatten_env_ids:
            actions = self._flatten_actions(env_ids, actions)
        result = self.batch.step(env_ids, actions, self.step_index, query_ids)
        self.env_steps += len(env_ids)
        if self._checkpoint_due(self.step_index + 1, result):
            # Before the step's messages go out: a trade published is never played again after a restart.
            self._save_checkpoint(self.step_index + 1)
        if result.illegal_actions:
            self.counters["illegal_actions"] += result.illegal_actions
        if self._explain:
            self._explain_step(result)
        self._publish_step(result, timed_out)
        if self.hindsight is not None:
            self._publish_hindsight(result.env_ids)
        self.step_index += 1
        max_steps = self.config.env.max_steps
        if self.batch.finished or (max_steps and self.step_index >= max_steps):
            self.finished = True
            self.spawn(self._finish("backtest_complete" if self.batch.finished else "max_steps"), "finish")
            return
        if self.gate is not None and not self.gate.begin(self.step_index, self.batch.active_ids(), time.monotonic()):
            # Lockstep: the observation waits for its thoughts (_thoughts_arrived) or the deadline (_thoughts_late).
            self._gate_deadline = asyncio.get_running_loop().call_later(self.gate.deadline_secs, self._thoughts_late)
            return
        self._publish_obs_when_due()

    def _thoughts_arrived(self) -> None:
        if self._gate_deadline is not None:
            self._gate_deadline.cancel()
            self._gate_deadline = None
        self._publish_obs_when_due()

    def _thoughts_late(self) -> None:
        self._gate_deadline = None
        missing = self.gate.expire(time.monotonic())
        if self.finished or not missing:
            return
        self.log.warning("thoughts_late", step=self.step_index, missing_env_ids=missing, deadline_ms=self.config.env.thought_wait_deadline_ms)
        self._publish_obs_when_due()

    def _publish_obs_when_due(self) -> None:
        delay_secs = self._last_obs_at + self._step_interval_secs - time.monotonic()
        if delay_secs > 0:  # paced (env.step_interval_ms): the next bar comes when it is due
            asyncio.get_running_loop().call_later(delay_secs, self._publish_obs)
        else:
            self._publish_obs()

    def _publish_obs(self) -> None:
        self._last_obs_at = time.monotonic()
        env_ids = self.batch.active_ids()
        obs, masks = self.batch.observations(env_ids)
        if self._explain:
            self._obs_state = {env_id: (self.batch.envs[env_id].position is None, bool(masks[row, BUY] or masks[row, SELL]))
                               for row, env_id in enumerate(env_ids)}
        contexts = [MarketContext(**context) for context in self.batch.contexts(env_ids)]
        self._last_obs = EnvObs(env_ids=env_ids, episode_ids=self.batch.episode_ids(env_ids), step=self.step_index, obs=obs, masks=masks, contexts=contexts)
        self.publish(self._last_obs)
        if self.hindsight is not None:
            self.hindsight.record_steps(env_ids, self.batch.episode_ids(env_ids), self.step_index, [self.batch.envs[e].bar for e in env_ids])
        self._awaiting = env_ids
        self._obs_sent_ns = time.monotonic_ns()
        self._deadline_at = time.monotonic() + self._deadline_secs
        if self._retry_secs > 0:  # a lost frame (a broker restarting) costs this long, not the whole deadline
            self._retry_at, self._retry_step = time.monotonic() + self._retry_secs, self.step_index  # _watch_retry

    def _publish_step(self, result: BatchStep, timed_out: bool) -> None:
        self.publish(EnvTransition(
            env_ids=result.env_ids, step=self.step_index, actions=result.actions, rewards=result.rewards,
            terminated=result.terminated, truncated=result.truncated, terminal_obs=result.terminal_obs,
            timed_out=[timed_out] * len(result.env_ids),
        ))
        for closed in result.closed_trades:
            trade = closed.trade
            self.counters["trades"] += 1
            if self._explain:
                self._keep_trade(closed.env_id, trade, closed.decision_steps)
            self.publish(EnvOutcome(
                env_id=closed.env_id, episode_id=closed.episode_id, trade_id=trade.trade_id, side=trade.side,
                contracts=trade.contracts, entry_ns=trade.entry_ns, exit_ns=trade.exit_ns, entry_price=trade.entry_price,
                exit_price=trade.exit_price, pnl_usd=trade.pnl_usd, bars_held=trade.bars_held, exit_reason=trade.exit_reason,
                decision_steps=closed.decision_steps, llm_query_ids=closed.llm_query_ids,
            ))
        for episode in result.finished_episodes:
            self.counters["episodes"] += 1
            if self._explain:
                self._open_decisions[episode.env_id] = {}
            if episode.metrics.get("apex_violations", 0.0) > 0:
                self.counters["drawdown_breaches"] += 1
            self.publish(EnvEpisode(env_id=episode.env_id, episode_id=episode.episode_id, steps=episode.steps,
                                    episode_return=episode.episode_return, metrics=episode.metrics))

    def _publish_hindsight(self, env_ids: list[int]) -> None:
        labelled = self.hindsight.mature({e: (self.batch.envs[e].episode_id, self.batch.envs[e].bar) for e in env_ids})
        if labelled:
            self.counters["hindsight_labels"] += len(labelled)
            self.publish(hindsight_message(labelled))

    # ------------------------------------------------------------------ explaining (backtest)

    def _explain_step(self, result: BatchStep) -> None:
        """After a step: halts per env, the entries funnel, and the decisions of steps that acted on a trade."""
        fusion = self._fusion_by_step.get(self.step_index)
        fusion_rows = {env_id: row for row, env_id in enumerate(fusion.env_ids)} if fusion is not None else {}
        for row, env_id in enumerate(result.env_ids):
            verdict = self._verdict_rows.get(env_id)
            self._halts[env_id].append(verdict.halt if verdict else "")
            executed = int(result.actions[row])
            fusion_row = fusion_rows.get(env_id)
            flat, entry_allowed = self._obs_state.get(env_id, (False, False))
            if flat:
                rl_and_fused = (int(fusion.rl_actions[fusion_row]), int(fusion.actions[fusion_row])) if fusion_row is not None else None
                self.funnel.add(entry_allowed, rl_and_fused, verdict, executed)
            if executed != HOLD:
                self._open_decisions[env_id][self.step_index] = self._decision(env_id, fusion, fusion_row, verdict)
        self._verdict_rows = {}

    def _decision(self, env_id: int, fusion: FusionDecision | None, row: int | None, verdict: VerdictRow | None) -> TradeDecision:
        veto = verdict.reason if verdict and verdict.vetoed else ""
        final = _action_name(verdict.action) if verdict else "HOLD (no verdict)"
        if fusion is None or row is None:
            return TradeDecision(step=self.step_index, rl_action="n/a", rl_confidence=0.0, thought=None, fusion_method="", fusion_rule="",
                                 rl_trust=0.0, llm_trust=0.0, final_action=final, veto_reason=veto)
        return TradeDecision(
            step=self.step_index, rl_action=_action_name(int(fusion.rl_actions[row])), rl_confidence=float(fusion.rl_confidences[row]),
            thought=self._thought_used(fusion, row), fusion_method=fusion.method, fusion_rule=fusion.rules[row],
            rl_trust=float(fusion.rl_trust[row]), llm_trust=float(fusion.llm_trust[row]), final_action=final, veto_reason=veto,
        )

    def _thought_used(self, fusion: FusionDecision, row: int) -> ThoughtUsed | None:
        llm_action = int(fusion.llm_actions[row])
        if llm_action == NO_ACTION:
            return None
        query_id = fusion.llm_query_ids[row] if row < len(fusion.llm_query_ids) else ""
        thought = self._thoughts.get(query_id)
        return ThoughtUsed(
            action=_action_name(llm_action), confidence=float(fusion.llm_confidences[row]), staleness_steps=int(fusion.llm_staleness[row]),
            reason=thought.reason if thought is not None else "(thought not received)", query_id=query_id,
        )

    def _keep_trade(self, env_id: int, trade, decision_steps: list[int]) -> None:
        """A closed trade with the decision that opened it and the one of the step it closed on."""
        decisions = self._open_decisions[env_id]
        entry = decisions.get(decision_steps[0]) if decision_steps else None
        exit_decision = decisions.get(self.step_index)
        if exit_decision is None:  # a stop, target, flat time or liquidation closed it: what the loop decided then
            fusion = self._fusion_by_step.get(self.step_index)
            row = fusion.env_ids.index(env_id) if fusion is not None and env_id in fusion.env_ids else None
            exit_decision = self._decision(env_id, fusion, row, None)
        self._report_trades.append(ReportTrade(trade=trade, entry=entry, exit=exit_decision, env_id=env_id))
        self._open_decisions[env_id] = {}

    def halted_bars(self) -> dict[str, float]:
        counts = Counter(halt for halts in self._halts for halt in halts if halt)
        return {f"halted_bars_{rule}": float(count) for rule, count in sorted(counts.items())}

    def report_input(self, title: str, metrics: dict[str, float]) -> ReportInput:
        """Everything the backtest report shows; statistics are added by ``backtest_report``."""
        histories = [self.batch.history(env_id) for env_id in range(len(self.batch.envs))]
        history = run_history(histories, self.batch.envs[0].account_config.start_balance)
        # The halt of step k applies to the decision at bar k of the env's history (row 0 is the reset bar);
        # the env's last bar had no decision.
        halts = [halt for env_id, part in enumerate(histories) for halt in (self._halts[env_id] + [""] * len(part.times_ns))[: len(part.times_ns)]]
        evaluations = [record for env_id in range(len(self.batch.envs)) for record in self.batch.evaluations(env_id)]
        funnel = self.funnel.as_dict()
        cfg = self.config.env
        context = (f"{self.config.instrument.symbol}, split {cfg.split}, mode {cfg.mode}, account {self.config.account.name}, "
                   f"{cfg.n_envs} env(s), {self.step_index} loop steps.")
        return ReportInput(
            title=title, bars=history, halts=np.array(halts, dtype=object), trades=list(self._report_trades), evaluations=evaluations,
            metrics=metrics, notes=list(self.data_notes), entries_funnel=funnel, context=context,
        )

    # ------------------------------------------------------------------ ending

    def decision_latency_us(self) -> dict[str, float]:
        """env.obs published -> its risk.verdict received: what one decision of the loop costs in time."""
        if not self._decision_latency_ns:
            return {}
        p50, p99 = np.percentile(np.asarray(self._decision_latency_ns, dtype=np.float64) / 1e3, [50, 99])
        return {"decision_latency_p50_us": float(p50), "decision_latency_p99_us": float(p99)}

    def summary(self) -> dict[str, float]:
        metrics, _, _ = self.batch.run_summary()
        decisions = self.decisions.summary()
        if not self.decisions.decisions:  # no fusion actor: its figures would read as zeros, not as absent
            decisions = {key: value for key, value in decisions.items() if key == "veto_rate"}
        return {**metrics, **decisions, **self.lag_figures(), **self.decision_latency_us(), "loop_steps": float(self.step_index),
                "verdict_timeouts": float(self.counters["verdict_timeouts"]), "illegal_actions": float(self.counters["illegal_actions"])}

    async def _write_report(self, title: str, sub_dir: str) -> dict[str, float]:
        summary = self.summary()
        out_dir = self.run_dir / sub_dir
        if self._explain:
            summary = {**summary, **self.batch.evaluation_summary(), **self.halted_bars(),
                       **{f"entries_{stage}": value for stage, value in self.funnel.as_dict().items()}}
            summary = await self.in_worker(backtest_report, out_dir, self.report_input(title, summary), self.config.run.seed)
            if summary.get("trades", 0.0) < MIN_TRADES:
                self.log.warning("few_trades", trades=summary.get("trades", 0.0), entries=entries_sentence(self.funnel.as_dict()))
        else:
            _, equity_curve, trades = self.batch.run_summary()
            notes = f"{self.config.instrument.symbol}, split {self.config.env.split}, mode {self.config.env.mode}, {self.config.env.n_envs} env(s), {self.step_index} loop steps."
            await self.in_worker(write_report, out_dir, equity_curve, trades, summary, title, notes)
        self.log.info("report_written", path=str(out_dir))
        return summary

    async def _finish(self, reason: str) -> None:
        if self.hindsight is not None and (labelled := self.hindsight.label_all()):
            # Before sys.done: whoever scores decisions against hindsight gets the last steps' labels too.
            self.counters["hindsight_labels"] += len(labelled)
            self.publish(hindsight_message(labelled))
        summary = await self._write_report(*self._report_title_and_dir())
        self.done(reason, summary)

    def _report_title_and_dir(self) -> tuple[str, str]:
        if self.config.env.mode == "backtest":
            return "Backtest", self.config.env.report_dir
        return "Training episodes", TRAIN_REPORT_DIR

    async def on_stop(self) -> None:
        if not self.finished and hasattr(self, "batch") and self.config.env.mode != "paper":
            self._save_checkpoint(self.step_index)
        if self._checkpoint_writer is not None:  # the last state, on disk before the process ends
            self._checkpoint_writer.close()
        if not self.finished and hasattr(self, "batch") and self._has_results():
            title, sub_dir = self._report_title_and_dir()
            await self._write_report(f"{title} (stopped early)", sub_dir)

    def _has_results(self) -> bool:
        # A backtest's one evaluation may still be open: its bars are results all the same.
        return any(metrics.episodes for metrics in self.batch.run_metrics) or (self._explain and self.step_index > 0)

    # ------------------------------------------------------------------ figures

    async def _report_progress(self) -> None:
        meter = StepRate(self.env_steps)
        while True:
            await asyncio.sleep(self.config.env.progress_interval_secs)
            self.progress(self.env_steps, self._total_steps, meter.rate(self.env_steps), self._figures())

    def _figures(self) -> dict[str, float]:
        returns = self.batch.recent_returns
        return {
            "mean_episode_return": float(np.mean(returns)) if returns else 0.0,
            "episodes": float(self.counters["episodes"]),
            "loop_steps": float(self.step_index),
            "verdict_timeouts": float(self.counters["verdict_timeouts"]),
            **self.lag_figures(),
        }

    def lag_figures(self) -> dict[str, float]:
        """The LLM's part in the decisions (actors/env/pacing.py): the share with a thought at most K steps old,
        staleness extremes; in lockstep also late steps and the time the loop waited for thoughts."""
        figures = self.lag.figures()
        if figures:
            figures["llm_staleness_steps"] = self.decisions.summary()["llm_staleness_steps"]
        if self.gate is not None:
            figures.update(self.gate.figures(time.monotonic() - self._loop_started))
        return figures

    def gauges(self) -> dict[str, float]:
        # Names must differ from the counters' (episodes, verdict_timeouts): the stats log merges both.
        if not hasattr(self, "batch"):
            return {}
        elapsed = max(time.monotonic() - self._started, 1e-9)
        returns = self.batch.recent_returns
        return {
            "mean_episode_return": float(np.mean(returns)) if returns else 0.0,
            "loop_step": float(self.step_index),
            "env_steps_per_sec": self.env_steps / elapsed,
            **self.decision_latency_us(),
        }


def backtest_report(out_dir, data: ReportInput, seed: int) -> dict[str, float]:
    """Honest statistics over the run's bars and trades, merged over ``data.metrics``, then the report files."""
    stats = compute_statistics(data.bars.times_ns, data.bars.equity, data.bars.position, [item.trade for item in data.trades], seed=seed)
    data.metrics = {**data.metrics, **stats.metrics, "bars": float(max(len(data.bars.times_ns) - 1, 0))}
    data.metric_warnings = stats.warnings
    return write_backtest_report(out_dir, data)


def hindsight_message(labelled: list[LabelledStep]) -> EnvHindsight:
    decisions, labels = [item.decision for item in labelled], [item.label for item in labelled]
    return EnvHindsight(
        env_ids=[d.env_id for d in decisions], episode_ids=[d.episode_id for d in decisions], steps=[d.step for d in decisions],
        actions=np.array([label.action for label in labels], dtype=np.int64),
        long_pnl_usd=np.array([label.long.pnl_usd for label in labels]), short_pnl_usd=np.array([label.short.pnl_usd for label in labels]),
        long_exits=[label.long.exit for label in labels], short_exits=[label.short.exit for label in labels],
        long_bars=np.array([label.long.bars_held for label in labels], dtype=np.int64),
        short_bars=np.array([label.short.bars_held for label in labels], dtype=np.int64),
    )


ACTOR = EnvActor
