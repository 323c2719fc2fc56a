import numpy as np
import pytest

from actors.common.actions import (
    ACTION_NAMES, BUY, DISABLE_TRAIL, ENABLE_TRAIL, HOLD, MOVE_SL_TO_BE, N_ACTIONS, NO_ACTION, SELL, Action,
    allowed_actions, closing_action, is_entry, legal_or_hold,
)


def mask(*allowed: int) -> np.ndarray:
    row = np.zeros(N_ACTIONS, dtype=bool)
    row[list(allowed)] = True
    return row


def test_action_ids_and_names_follow_the_design():
    assert [(int(a), a.name) for a in Action] == [(0, "HOLD"), (1, "BUY"), (2, "SELL"), (3, "MOVE_SL_TO_BE"),
                                                  (4, "ENABLE_TRAIL"), (5, "DISABLE_TRAIL")]
    assert ACTION_NAMES == tuple(a.name for a in Action) and N_ACTIONS == 6
    assert (HOLD, BUY, SELL, MOVE_SL_TO_BE, ENABLE_TRAIL, DISABLE_TRAIL) == tuple(range(6))
    assert NO_ACTION not in range(N_ACTIONS)


def test_a_legal_action_stays():
    assert legal_or_hold(BUY, mask(HOLD, BUY)) == BUY
    assert legal_or_hold(BUY, mask(HOLD, BUY), fallback=SELL) == BUY


def test_an_illegal_action_becomes_hold():
    assert legal_or_hold(ENABLE_TRAIL, mask(HOLD, MOVE_SL_TO_BE)) == HOLD


def test_the_fallback_comes_before_hold_when_it_is_legal():
    assert legal_or_hold(ENABLE_TRAIL, mask(HOLD, SELL), fallback=SELL) == SELL
    assert legal_or_hold(ENABLE_TRAIL, mask(HOLD, MOVE_SL_TO_BE), fallback=SELL) == HOLD


def test_without_hold_the_lowest_legal_action_is_taken():
    assert legal_or_hold(BUY, mask(MOVE_SL_TO_BE, DISABLE_TRAIL)) == MOVE_SL_TO_BE


def test_when_nothing_is_legal_the_fallback_or_else_the_action_comes_back_unchanged():
    assert legal_or_hold(BUY, mask()) == BUY
    assert legal_or_hold(BUY, mask(), fallback=SELL) == SELL


@pytest.mark.parametrize("action", [NO_ACTION, N_ACTIONS, 99])
def test_an_out_of_range_action_is_never_legal(action):
    assert legal_or_hold(action, [True] * N_ACTIONS) == HOLD


def test_the_rule_reads_lists_and_arrays_alike():
    assert legal_or_hold(SELL, [False, True, False, False, False, False]) == legal_or_hold(SELL, mask(BUY)) == BUY


def test_allowed_actions_lists_the_mask_in_id_order():
    assert allowed_actions(mask(SELL, HOLD, ENABLE_TRAIL)) == [HOLD, SELL, ENABLE_TRAIL]


def test_a_mask_of_the_wrong_length_is_rejected():
    with pytest.raises(ValueError, match="6 entries"):
        allowed_actions([True, False])


def test_entries_are_opening_trades_and_trailing():
    assert is_entry(BUY, 0) and is_entry(SELL, 0) and is_entry(ENABLE_TRAIL, 1)
    assert not is_entry(SELL, 1) and not is_entry(BUY, -1)  # exits
    assert not is_entry(HOLD, 0) and not is_entry(MOVE_SL_TO_BE, 1) and not is_entry(DISABLE_TRAIL, 1)


def test_the_closing_action_is_the_opposite_side():
    assert closing_action(1) == SELL and closing_action(-2) == BUY


def test_flat_means_both_entries_allowed_and_a_short_that_may_buy_to_close_is_not_flat():
    from actors.common.actions import flat_mask

    assert flat_mask([True, True, True, False, False, False])
    assert not flat_mask([True, True, False, False, False, False])  # short: BUY closes it
    assert not flat_mask([True, False, True, True, True, False])  # long
