import math

import msgspec
import numpy as np

from actors.common.actions import BUY, HOLD, N_ACTIONS, NO_ACTION, SELL
from actors.jobs.evaluation.decision_sources import SourceBook, score_sources
from actors.jobs.evaluation.decision_sources import _Decision as D
from bus.messages import EnvHindsight, EnvObs, FusionDecision
from tests.bus.samples import sample_struct

FLAT_MASK = [True, True, True, False, False, False]
IN_POSITION_MASK = [True, False, False, True, True, False]


def test_fusion_accuracy_counts_only_the_contested_decisions_where_exactly_one_source_was_right():
    decisions = {
        (0, 1): D(fused=BUY, rl=BUY, llm=SELL),    # contested, RL right, fusion chose RL: hit
        (0, 2): D(fused=BUY, rl=BUY, llm=SELL),    # contested, LLM right, fusion chose RL: miss
        (0, 3): D(fused=HOLD, rl=HOLD, llm=HOLD),  # agreement: not contested
        (0, 4): D(fused=BUY, rl=BUY, llm=SELL),    # both wrong (label HOLD): not contested
        (0, 5): D(fused=BUY, rl=BUY, llm=NO_ACTION),  # no thought: not scored at all
        (0, 6): D(fused=SELL, rl=HOLD, llm=SELL),  # in a position: not scored
    }
    labels = {(0, 1): BUY, (0, 2): SELL, (0, 3): HOLD, (0, 4): HOLD, (0, 5): BUY, (0, 6): SELL}
    flat = {key: key != (0, 6) for key in decisions}

    scores = score_sources(decisions, labels, flat)

    assert scores.decisions == 4
    assert (scores.chose_right_source.hits, scores.chose_right_source.n) == (1, 2)
    assert (scores.rl.hits, scores.llm.hits, scores.fused.hits, scores.agreement.hits) == (2, 2, 2, 1)
    assert scores.label_mix == {"HOLD": 2, "BUY": 1, "SELL": 1}
    low, high = scores.chose_right_source.interval
    assert low < 0.5 < high  # one of two is no evidence either way


def test_nothing_to_score_is_reported_as_not_available_never_as_zero():
    scores = score_sources({}, {}, {})

    assert scores.decisions == 0 and math.isnan(scores.llm.value) and scores.better_single_source == "n/a"
    rows = dict(scores.rows())
    assert rows["RL advice = hindsight label"] == "n/a (no such decision)"
    assert scores.to_json()["llm"]["value"] is None


def _obs(step: int, masks: list[list[bool]]) -> EnvObs:
    sample = sample_struct(EnvObs)
    return msgspec.structs.replace(sample, step=step, env_ids=[0, 1], masks=np.array(masks, dtype=bool))


def test_the_book_joins_decisions_flat_flags_and_labels_that_arrive_as_bus_messages_in_any_order():
    book = SourceBook()
    fused = msgspec.structs.replace(sample_struct(FusionDecision), env_ids=[0, 1], step=5, actions=np.array([BUY, HOLD]),
                                rl_actions=np.array([BUY, HOLD]), llm_actions=np.array([SELL, HOLD]))
    label = msgspec.structs.replace(sample_struct(EnvHindsight), env_ids=[0, 1], steps=[5, 5], actions=np.array([BUY, SELL]))

    for msg in (label, fused, _obs(5, [FLAT_MASK, IN_POSITION_MASK])):
        book.add(msg)
    scores = book.scores()

    assert N_ACTIONS == 6 and scores.decisions == 1  # env 1 was in a position
    assert scores.in_position == 1 and scores.to_json()["in_position"] == 1
    assert dict(scores.rows())["decisions in a position (not scored: the policy's advice there is hold or close, not a side)"] == "1"
    assert (scores.chose_right_source.hits, scores.chose_right_source.n) == (1, 1)
    assert scores.better_single_source == "RL"


def test_fused_minus_rl_is_paired_on_the_same_decisions_and_pools_by_its_counts():
    from actors.jobs.evaluation.decision_sources import pooled

    decisions = {(0, k): D(fused=BUY, rl=HOLD, llm=BUY) for k in range(6)}  # fusion followed the LLM
    labels = {(0, k): (BUY if k < 4 else HOLD) for k in range(6)}  # right 4 times (RL wrong), wrong twice (RL right)
    flat = {key: True for key in decisions}

    paired = score_sources(decisions, labels, flat).fused_vs_rl

    assert (paired.gained, paired.lost, paired.n) == (4, 2, 6) and math.isclose(paired.value, 2 / 6)
    low, high = paired.interval
    assert low < 2 / 6 < high and low < 0  # six decisions: no evidence of a gain
    both = pooled([score_sources(decisions, labels, flat)] * 2)
    assert (both.fused_vs_rl.gained, both.fused_vs_rl.lost, both.fused_vs_rl.n) == (8, 4, 12)
    assert both.to_json()["fused_vs_rl"]["n"] == 12 and "fused minus RL advice (paired, same decisions)" in dict(both.rows())


def test_a_short_position_is_not_flat_though_buy_is_allowed_there_to_close_it():
    book = SourceBook()
    short_mask = [True, True, False, False, False, False]  # env.management_actions = false, short: BUY closes it
    fused = msgspec.structs.replace(sample_struct(FusionDecision), env_ids=[0, 1], step=5, actions=np.array([HOLD, HOLD]),
                                    rl_actions=np.array([HOLD, HOLD]), llm_actions=np.array([SELL, SELL]))
    label = msgspec.structs.replace(sample_struct(EnvHindsight), env_ids=[0, 1], steps=[5, 5], actions=np.array([SELL, SELL]))

    for msg in (_obs(5, [FLAT_MASK, short_mask]), fused, label):
        book.add(msg)

    assert book.scores().decisions == 1  # env 0 only


def test_hindsight_dollars_weigh_what_each_source_would_have_made_and_pool_by_their_sums():
    from actors.jobs.evaluation.decision_sources import pooled

    # Fusion followed the LLM's SELL where RL held: right twice for +$300, wrong once for -$250.
    decisions = {(0, k): D(fused=SELL, rl=HOLD, llm=SELL) for k in range(3)}
    labels = {(0, 0): SELL, (0, 1): SELL, (0, 2): BUY}
    sides = {(0, 0): (-320.0, 300.0), (0, 1): (-310.0, 300.0), (0, 2): (280.0, -250.0)}
    flat = {key: True for key in decisions}

    scores = score_sources(decisions, labels, flat, sides)

    assert math.isclose(scores.fused_vs_rl_usd.value, 350.0 / 3) and scores.fused_vs_rl_usd.n == 3
    assert [round(scores.mean_usd(s), 2) for s in ("fused", "rl", "llm")] == [116.67, 0.0, 116.67]
    low, high = scores.fused_vs_rl_usd.interval
    assert low < 0 < high  # three decisions: no evidence
    both = pooled([scores] * 40)
    low, high = both.fused_vs_rl_usd.interval
    assert both.fused_vs_rl_usd.n == 120 and math.isclose(both.fused_vs_rl_usd.value, 350.0 / 3) and low > 0
    assert both.to_json()["mean_usd"]["rl"] == 0.0
    rows = dict(both.rows())
    # no trend words given: the trend word's advice is HOLD, worth nothing
    assert rows["hindsight $ a decision: fused / RL / LLM / the trend word alone (one contract, costs paid)"] == "+116.7 / +0.0 / +116.7 / +0.0"


def test_the_book_keeps_each_steps_hindsight_dollars():
    book = SourceBook()
    fused = msgspec.structs.replace(sample_struct(FusionDecision), env_ids=[0, 1], step=5, actions=np.array([SELL, HOLD]),
                                    rl_actions=np.array([HOLD, HOLD]), llm_actions=np.array([SELL, SELL]))
    label = msgspec.structs.replace(sample_struct(EnvHindsight), env_ids=[0, 1], steps=[5, 5], actions=np.array([SELL, SELL]),
                                    long_pnl_usd=np.array([-100.0, -100.0]), short_pnl_usd=np.array([90.0, 90.0]))
    for msg in (_obs(5, [FLAT_MASK, FLAT_MASK]), fused, label):
        book.add(msg)

    scores = book.scores()
    assert scores.fused_vs_rl_usd.n == 2 and math.isclose(scores.fused_vs_rl_usd.value, 45.0)


def test_the_trend_word_alone_is_priced_beside_the_sources_whatever_order_the_messages_come_in():
    book = SourceBook()
    obs = _obs(5, [FLAT_MASK, FLAT_MASK])
    contexts = [msgspec.structs.replace(obs.contexts[0], trend=word) for word in ("down", "sideways")]
    obs = msgspec.structs.replace(obs, contexts=contexts)
    fused = msgspec.structs.replace(sample_struct(FusionDecision), env_ids=[0, 1], step=5, actions=np.array([HOLD, HOLD]),
                                    rl_actions=np.array([HOLD, HOLD]), llm_actions=np.array([BUY, BUY]))
    label = msgspec.structs.replace(sample_struct(EnvHindsight), env_ids=[0, 1], steps=[5, 5], actions=np.array([SELL, BUY]),
                                    long_pnl_usd=np.array([-100.0, 60.0]), short_pnl_usd=np.array([90.0, -70.0]))
    for msg in (fused, label, obs):  # the decision before its observation (direct lanes)
        book.add(msg)

    scores = book.scores()

    assert scores.decisions == 2
    assert scores.mean_usd("trend") == 45.0  # a short where the word said down (+90), nothing where sideways
    assert scores.mean_usd("llm") == -20.0 and scores.to_json()["mean_usd"]["trend"] == 45.0
