"""The report's bookkeeping: what the backtest and paper reports explain, kept while the loop runs.

- the decision behind each trade's entry and exit: fusion.decision + risk.verdict of the step, and the
  llm.thought it used (a bounded map query id -> thought, read when the trade opens or closes);
- bars halted per entry-veto rule (risk.verdict ``halts``), counted as ``halted_bars_<rule>``;
- where entries went (``entries_<stage>``, see EntriesFunnel);
- a paper session's market events (md.event), for its report's chart and events table.

Plain Python: it reads the bus's message types but sends nothing.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from actors.common.actions import ACTION_NAMES, BUY, HOLD, NO_ACTION, SELL
from actors.env.explain import EntriesFunnel, VerdictRow, run_history
from actors.env.report import ReportInput, ReportTrade, ThoughtUsed, TradeDecision, write_backtest_report
from actors.env.report.events import window_events
from actors.env.statistics import compute_statistics

if TYPE_CHECKING:
    from actors.common.events import MarketEvent
    from actors.env.batch import BatchStep, EnvBatch
    from bus.messages import FusionDecision, LlmThought, RiskVerdict

MAX_THOUGHTS_KEPT = 4096
"""llm.thought messages remembered by query id (a trade reads its thought when it opens or closes)."""
MAX_EVENTS_KEPT = 5000
"""md.event messages a paper session keeps for its report (the oldest go first)."""
MAX_FUSION_STEPS_KEPT = 8
"""fusion.decision messages kept by step until that step's verdict is executed."""


def action_name(action: int) -> str:
    return ACTION_NAMES[action] if 0 <= action < len(ACTION_NAMES) else "none"


class DecisionBook:
    """Per env: the decisions of the steps that acted on the open trade, the halts of every step played, the
    closed trades with their decisions; for the loop: the last fusion decisions and thoughts."""

    def __init__(self, n_envs: int) -> None:
        self.fusion_by_step: OrderedDict[int, FusionDecision] = OrderedDict()
        self.thoughts: OrderedDict[str, LlmThought] = OrderedDict()
        self.obs_state: dict[int, tuple[bool, bool]] = {}
        """env id -> (flat, an entry allowed) when the step's observation went out."""
        self.verdict_rows: dict[int, VerdictRow] = {}
        self.open_decisions: list[dict[int, TradeDecision]] = [{} for _ in range(n_envs)]
        """Per env: step -> decision, for the steps that acted on the open trade (cleared when it closes)."""
        self.trades: list[ReportTrade] = []
        self.halts: list[list[str]] = [[] for _ in range(n_envs)]
        """Per env, per step it played: the entry-veto rule in force ('' none)."""
        self.funnel = EntriesFunnel()
        self.events: dict[str, MarketEvent] = {}
        """md.event by event id, in arrival order (paper: the feed's events; a backtest reads its dataset's)."""

    # ------------------------------------------------------------------ what arrives

    def keep_fusion(self, decision: FusionDecision) -> None:
        if len(decision.rules) != len(decision.env_ids):
            return
        self.fusion_by_step[decision.step] = decision
        while len(self.fusion_by_step) > MAX_FUSION_STEPS_KEPT:
            self.fusion_by_step.popitem(last=False)

    def keep_thought(self, thought: LlmThought) -> None:
        self.thoughts[thought.query_id] = thought
        while len(self.thoughts) > MAX_THOUGHTS_KEPT:
            self.thoughts.popitem(last=False)

    def keep_event(self, event: MarketEvent) -> None:
        """A published release replaces its calendar line (one event id)."""
        key = event.event_id or f"{event.time_ns}:{event.text}"
        self.events.pop(key, None)
        self.events[key] = event
        while len(self.events) > MAX_EVENTS_KEPT:
            del self.events[next(iter(self.events))]

    def note_observation(self, batch: EnvBatch, env_ids: list[int], masks: np.ndarray) -> None:
        self.obs_state = {env_id: (batch.envs[env_id].position is None, bool(masks[row, BUY] or masks[row, SELL]))
                          for row, env_id in enumerate(env_ids)}

    def note_verdict(self, verdict: RiskVerdict) -> None:
        halts = verdict.halts or [""] * len(verdict.env_ids)
        self.verdict_rows = {
            env_id: VerdictRow(int(action), bool(vetoed), str(reason), str(halt))
            for env_id, action, vetoed, reason, halt in zip(verdict.env_ids, verdict.actions.tolist(), verdict.vetoed, verdict.reasons, halts)
        }

    # ------------------------------------------------------------------ after a step

    def explain_step(self, step_index: int, result: BatchStep) -> None:
        """After a step: halts per env, the entries funnel, and the decisions of steps that acted on a trade."""
        fusion = self.fusion_by_step.get(step_index)
        fusion_rows = {env_id: row for row, env_id in enumerate(fusion.env_ids)} if fusion is not None else {}
        for row, env_id in enumerate(result.env_ids):
            verdict = self.verdict_rows.get(env_id)
            self.halts[env_id].append(verdict.halt if verdict else "")
            executed = int(result.actions[row])
            fusion_row = fusion_rows.get(env_id)
            flat, entry_allowed = self.obs_state.get(env_id, (False, False))
            if flat:
                rl_and_fused = (int(fusion.rl_actions[fusion_row]), int(fusion.actions[fusion_row])) if fusion_row is not None else None
                self.funnel.add(entry_allowed, rl_and_fused, verdict, executed)
            if executed != HOLD:
                self.open_decisions[env_id][step_index] = self.decision(step_index, fusion, fusion_row, verdict)
        self.verdict_rows = {}

    def decision(self, step_index: int, fusion: FusionDecision | None, row: int | None, verdict: VerdictRow | None) -> TradeDecision:
        veto = verdict.reason if verdict and verdict.vetoed else ""
        final = action_name(verdict.action) if verdict else "HOLD (no verdict)"
        if fusion is None or row is None:
            return TradeDecision(step=step_index, rl_action="n/a", rl_confidence=0.0, thought=None, fusion_method="", fusion_rule="",
                                 rl_trust=0.0, llm_trust=0.0, final_action=final, veto_reason=veto)
        return TradeDecision(
            step=step_index, rl_action=action_name(int(fusion.rl_actions[row])), rl_confidence=float(fusion.rl_confidences[row]),
            thought=self._thought_used(fusion, row), fusion_method=fusion.method, fusion_rule=fusion.rules[row],
            rl_trust=float(fusion.rl_trust[row]), llm_trust=float(fusion.llm_trust[row]), final_action=final, veto_reason=veto,
        )

    def _thought_used(self, fusion: FusionDecision, row: int) -> ThoughtUsed | None:
        llm_action = int(fusion.llm_actions[row])
        if llm_action == NO_ACTION:
            return None
        query_id = fusion.llm_query_ids[row] if row < len(fusion.llm_query_ids) else ""
        thought = self.thoughts.get(query_id)
        return ThoughtUsed(
            action=action_name(llm_action), confidence=float(fusion.llm_confidences[row]), staleness_steps=int(fusion.llm_staleness[row]),
            reason=thought.reason if thought is not None else "(thought not received)", query_id=query_id,
            news=tuple(thought.news) if thought is not None else None,
        )

    def keep_trade(self, step_index: int, env_id: int, trade, decision_steps: list[int]) -> None:
        """A closed trade with the decision that opened it and the one of the step it closed on."""
        decisions = self.open_decisions[env_id]
        entry = decisions.get(decision_steps[0]) if decision_steps else None
        exit_decision = decisions.get(step_index)
        if exit_decision is None:  # a stop, target, flat time or liquidation closed it: what the loop decided then
            fusion = self.fusion_by_step.get(step_index)
            row = fusion.env_ids.index(env_id) if fusion is not None and env_id in fusion.env_ids else None
            exit_decision = self.decision(step_index, fusion, row, None)
        self.trades.append(ReportTrade(trade=trade, entry=entry, exit=exit_decision, env_id=env_id))
        self.open_decisions[env_id] = {}

    # ------------------------------------------------------------------ the report

    def halted_bars(self) -> dict[str, float]:
        counts = Counter(halt for halts in self.halts for halt in halts if halt)
        return {f"halted_bars_{rule}": float(count) for rule, count in sorted(counts.items())}

    def report_input(self, batch: EnvBatch, title: str, metrics: dict[str, float], notes: list[str], context: str) -> ReportInput:
        """Everything the backtest report shows; statistics are added by ``backtest_report``."""
        histories = [batch.history(env_id) for env_id in range(len(batch.envs))]
        history = run_history(histories, batch.envs[0].account_config.start_balance)
        # The halt of step k applies to the decision at bar k of the env's history (row 0 is the reset bar);
        # the env's last bar had no decision.
        halts = [halt for env_id, part in enumerate(histories) for halt in (self.halts[env_id] + [""] * len(part.times_ns))[: len(part.times_ns)]]
        evaluations = [record for env_id in range(len(batch.envs)) for record in batch.evaluations(env_id)]
        events = window_events(getattr(batch.envs[0].split.dataset, "events", ()), history.times_ns)  # the news market's, on the played bars
        return ReportInput(
            title=title, bars=history, halts=np.array(halts, dtype=object), trades=list(self.trades), evaluations=evaluations,
            metrics=metrics, notes=list(notes), entries_funnel=self.funnel.as_dict(), context=context, events=events,
        )


def backtest_report(out_dir, data: ReportInput, seed: int) -> dict[str, float]:
    """Honest statistics over the run's bars and trades, merged over ``data.metrics``, then the report files."""
    stats = compute_statistics(data.bars.times_ns, data.bars.equity, data.bars.position, [item.trade for item in data.trades], seed=seed)
    data.metrics = {**data.metrics, **stats.metrics, "bars": float(max(len(data.bars.times_ns) - 1, 0))}
    data.metric_warnings = stats.warnings
    return write_backtest_report(out_dir, data)
