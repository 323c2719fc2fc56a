"""Action names as the reasoner reads and writes them.

The same ids as bus/messages.py (DESIGN.md section 6); repeated here because domain code
does not import the bus. A test checks the two stay equal.
"""

from __future__ import annotations

from collections.abc import Sequence

ACTION_NAMES: tuple[str, ...] = ("HOLD", "BUY", "SELL", "MOVE_SL_TO_BE", "ENABLE_TRAIL", "DISABLE_TRAIL")
HOLD = 0

# Other spellings a model (or the seeds' prompts) may use for the same actions.
ACTION_ALIASES: dict[str, int] = {
    **{name: action for action, name in enumerate(ACTION_NAMES)},
    "MOVE_TO_BE": 3,
    "MOVE_SL_TO_BREAKEVEN": 3,
    "BREAKEVEN": 3,
    "BREAK_EVEN": 3,
    "TRAIL": 4,
    "WAIT": 0,
    "LONG": 1,
    "SHORT": 2,
}


def allowed_actions(mask: Sequence[bool]) -> list[int]:
    """Action ids the mask allows, in id order."""
    if len(mask) != len(ACTION_NAMES):
        raise ValueError(f"action mask must have {len(ACTION_NAMES)} entries, got {len(mask)}")
    return [action for action, allowed in enumerate(mask) if bool(allowed)]


def allowed_names(mask: Sequence[bool]) -> list[str]:
    return [ACTION_NAMES[action] for action in allowed_actions(mask)]
