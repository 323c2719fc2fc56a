import numpy as np
import pytest

from actors.common.actions import BUY, ENABLE_TRAIL, HOLD, MOVE_SL_TO_BE, NO_ACTION, SELL
from actors.fusion.config import FusionConfig
from actors.fusion.rules import fuse_llm_only, fuse_rl_only, fuse_rules, legal_action, make_legal
from actors.fusion.thoughts import NO_THOUGHT, UsableThought

CONFIG = FusionConfig()  # llm_weight 0.3, override 0.9 / 0.6, uncertain 0.5


def thought(action: int, confidence: float) -> UsableThought:
    return UsableThought(action=action, confidence=confidence, staleness_steps=1, query_id="q1")


def test_agreement_takes_the_shared_action_even_when_both_are_unsure():
    fused = fuse_rules(BUY, 0.3, thought(BUY, 0.2), CONFIG)
    assert (fused.action, fused.rule) == (BUY, "agreement")


def test_confident_rl_overrides_an_unsure_llm():
    fused = fuse_rules(BUY, 0.91, thought(SELL, 0.59), CONFIG)
    assert (fused.action, fused.rule) == (BUY, "rl_override")


def test_confident_llm_overrides_an_unsure_rl():
    fused = fuse_rules(BUY, 0.59, thought(SELL, 0.91), CONFIG)
    assert (fused.action, fused.rule) == (SELL, "llm_override")


def test_override_needs_the_other_side_strictly_below_its_threshold():
    # LLM at exactly 0.6 is not "below 0.6": no override, the weighted rule decides.
    fused = fuse_rules(BUY, 0.95, thought(SELL, 0.6), CONFIG)
    assert fused.rule == "weighted_rl"


def test_both_uncertain_holds():
    fused = fuse_rules(BUY, 0.49, thought(SELL, 0.49), CONFIG)
    assert (fused.action, fused.rule) == (HOLD, "uncertain_hold")


def test_one_side_at_the_uncertainty_threshold_is_not_uncertain():
    fused = fuse_rules(BUY, 0.5, thought(SELL, 0.49), CONFIG)
    assert fused.rule != "uncertain_hold"


def test_weighted_rule_follows_rl_at_default_llm_weight():
    # 0.7 * 0.6 = 0.42 > 0.3 * 0.85 = 0.255
    fused = fuse_rules(BUY, 0.6, thought(SELL, 0.85), CONFIG)
    assert (fused.action, fused.rule) == (BUY, "weighted_rl")
    assert fused.rl_trust == pytest.approx(0.42 / (0.42 + 0.255))


def test_weighted_rule_follows_the_llm_when_its_weight_is_high():
    config = FusionConfig(llm_weight=0.8)
    # 0.2 * 0.6 = 0.12 < 0.8 * 0.85 = 0.68
    fused = fuse_rules(BUY, 0.6, thought(SELL, 0.85), config)
    assert (fused.action, fused.rule) == (SELL, "weighted_llm")


def test_no_usable_thought_fuses_as_rl_only():
    fused = fuse_rules(SELL, 0.2, NO_THOUGHT, CONFIG)
    assert (fused.action, fused.rule, fused.llm_trust) == (SELL, "no_thought", 0.0)


def test_rl_only_ignores_the_thought_and_llm_only_falls_back_to_rl_without_one():
    assert fuse_rl_only(BUY).action == BUY
    assert fuse_llm_only(BUY, thought(SELL, 0.1)).action == SELL
    assert fuse_llm_only(BUY, NO_THOUGHT).action == BUY


def test_a_masked_rule_choice_falls_back_to_rl_then_hold():
    only_hold_and_be = np.array([True, False, False, True, False, False])
    fused = fuse_rules(MOVE_SL_TO_BE, 0.2, thought(BUY, 0.95), CONFIG)  # llm_override -> BUY, masked
    legal = make_legal(fused, only_hold_and_be, MOVE_SL_TO_BE)
    assert (legal.action, legal.rule) == (MOVE_SL_TO_BE, "llm_override+masked")
    assert legal_action(ENABLE_TRAIL, only_hold_and_be, rl_action=SELL) == HOLD


def test_an_all_false_mask_returns_the_rl_action():
    assert legal_action(BUY, np.zeros(6, dtype=bool), rl_action=SELL) == SELL


def test_config_rejects_an_unknown_method_naming_the_key():
    with pytest.raises(ValueError, match="fusion.method"):
        FusionConfig(method="vote")
    assert NO_ACTION == -1
