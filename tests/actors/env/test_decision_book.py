"""The report's bookkeeping (actors/env/decision_book.py), plain: no process, no bus."""

import numpy as np

from actors.common.actions import BUY, NO_ACTION
from actors.env.decision_book import MAX_FUSION_STEPS_KEPT, MAX_THOUGHTS_KEPT, DecisionBook
from actors.env.trading import Trade
from bus.messages import FusionDecision, LlmThought


def fusion(step: int, llm_action: int = BUY, query_id: str = "q1") -> FusionDecision:
    one = lambda value, dtype=np.float64: np.array([value], dtype=dtype)  # noqa: E731
    return FusionDecision(env_ids=[0], step=step, actions=one(BUY, np.int64), method="rules", rules=["agree"],
                          rl_actions=one(BUY, np.int64), rl_confidences=one(0.7), llm_actions=one(llm_action, np.int64),
                          llm_confidences=one(0.6), llm_staleness=one(1, np.int64), llm_query_ids=[query_id],
                          rl_trust=one(0.5), llm_trust=one(0.5))


def thought(query_id: str, reason: str = "trend up") -> LlmThought:
    return LlmThought(env_id=0, episode_id=0, step_seen=1, query_id=query_id, action=BUY, confidence=0.6, mode="single_shot", reason=reason)


def trade() -> Trade:
    return Trade(trade_id=1, side=1, contracts=1, entry_bar=4, exit_bar=5, entry_ns=0, exit_ns=60, entry_price=100.0, exit_price=101.0,
                 pnl_usd=20.0, commission_usd=5.0, bars_held=1, exit_reason="target", mae_points=0.0, mfe_points=1.0)


def test_a_trade_closed_by_its_target_reads_the_fusion_decision_of_its_exit_step_and_the_thought_behind_it():
    book = DecisionBook(n_envs=1)
    book.keep_thought(thought("q1"))
    book.keep_fusion(fusion(step=5))

    book.keep_trade(step_index=5, env_id=0, trade=trade(), decision_steps=[])

    [kept] = book.trades
    assert kept.entry is None and kept.exit.final_action == "HOLD (no verdict)" and kept.exit.rl_action == "BUY"
    assert kept.exit.thought.reason == "trend up" and kept.exit.thought.staleness_steps == 1
    assert book.open_decisions == [{}]


def test_a_decision_without_a_thought_says_so_and_one_whose_thought_never_came_names_that():
    book = DecisionBook(n_envs=1)

    assert book.decision(3, fusion(step=3, llm_action=NO_ACTION), 0, None).thought is None
    assert book.decision(3, fusion(step=3, query_id="lost"), 0, None).thought.reason == "(thought not received)"
    assert book.decision(3, None, None, None).rl_action == "n/a"


def test_the_kept_thoughts_and_fusion_decisions_are_bounded_oldest_first():
    book = DecisionBook(n_envs=1)
    for index in range(MAX_THOUGHTS_KEPT + 3):
        book.keep_thought(thought(f"q{index}"))
    for step in range(MAX_FUSION_STEPS_KEPT + 3):
        book.keep_fusion(fusion(step))

    assert len(book.thoughts) == MAX_THOUGHTS_KEPT and "q0" not in book.thoughts
    assert list(book.fusion_by_step) == list(range(3, MAX_FUSION_STEPS_KEPT + 3))
