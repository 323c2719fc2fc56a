"""Action ids and names: the one place they are defined (docs/architecture.md, environment facts).

bus/messages.py, the env, the policy, fusion, risk and the reasoner all read them here.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum


class Action(IntEnum):
    HOLD = 0
    BUY = 1
    SELL = 2
    MOVE_SL_TO_BE = 3
    ENABLE_TRAIL = 4
    DISABLE_TRAIL = 5


ACTION_NAMES: tuple[str, ...] = tuple(action.name for action in Action)
N_ACTIONS = len(Action)
NO_ACTION = -1
"""An "absent" action in arrays (no thought, no proposal)."""
OBS_DIM = 261
"""Width of one observation row (actors/env/features.py lays it out)."""
OBS_WINDOW_BARS, OBS_BAR_FEATURES = 20, 11
"""The row opens with a window of this many bars (oldest first) of this many features each (actors/env/features.py)."""

HOLD, BUY, SELL, MOVE_SL_TO_BE, ENABLE_TRAIL, DISABLE_TRAIL = (int(action) for action in Action)


def allowed_actions(mask: Sequence[bool]) -> list[int]:
    """Action ids the mask allows, in id order; ValueError for a mask that is not one entry per action."""
    if len(mask) != N_ACTIONS:
        raise ValueError(f"action mask must have {N_ACTIONS} entries, got {len(mask)}")
    return [action for action, allowed in enumerate(mask) if bool(allowed)]


def flat_mask(mask: Sequence[bool]) -> bool:
    """No position: both entries are allowed. In a position only the closing side is (a short allows BUY, to close it,
    when env.management_actions is false), so one entry allowed is not flat."""
    return bool(mask[BUY]) and bool(mask[SELL])


def legal_or_hold(action: int, mask: Sequence[bool], *, fallback: int | None = None) -> int:
    """The one rule that turns an action the mask forbids into one it allows.

    In order, the first that applies:
      1. ``action``, if the mask allows it;
      2. ``fallback``, if given and allowed: the caller's second choice (fusion passes RL's action);
      3. HOLD, if allowed;
      4. the lowest allowed id;
      5. the mask allows nothing (a broken env): ``fallback`` if given, else ``action`` unchanged,
         the least surprising answer; nothing legal exists to pick.
    Out-of-range ids (NO_ACTION included) are never allowed.
    """
    for candidate in (action, fallback, HOLD):
        if candidate is not None and _allowed(candidate, mask):
            return int(candidate)
    lowest = next((a for a in range(len(mask)) if mask[a]), None)
    if lowest is not None:
        return lowest
    return int(fallback if fallback is not None else action)


def _allowed(action: int, mask: Sequence[bool]) -> bool:
    return 0 <= action < len(mask) and bool(mask[action])


def is_entry(action: int, position: int) -> bool:
    """What a veto blocks: opening a position (BUY/SELL while flat) or letting one run on a trail.

    In a position the env reads the opposite of BUY/SELL as "close it" (a signal exit):
    an exit is never an entry.
    """
    return action == ENABLE_TRAIL or (position == 0 and action in (BUY, SELL))


def closing_action(position: int) -> int:
    """The action that flattens a position: SELL closes a long, BUY a short."""
    return SELL if position > 0 else BUY
