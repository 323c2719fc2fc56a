"""Action ids as the risk domain code sees them.

The same numbers as bus/messages.py (DESIGN.md section 6); repeated here because domain
code imports nothing from bus/. A test keeps the two in step.
"""

HOLD, BUY, SELL, MOVE_SL_TO_BE, ENABLE_TRAIL, DISABLE_TRAIL = range(6)
N_ACTIONS = 6
NO_ACTION = -1


def is_entry(action: int, position: int) -> bool:
    """What a veto blocks (seed 002): opening a position (BUY/SELL while flat) or letting one run on a trail.

    In a position the env reads the opposite of BUY/SELL as "close it" (a signal exit):
    an exit is never an entry.
    """
    return action == ENABLE_TRAIL or (position == 0 and action in (BUY, SELL))


def closing_action(position: int) -> int:
    """The action that flattens a position: SELL closes a long, BUY a short."""
    return SELL if position > 0 else BUY
