"""Action ids as the risk domain code sees them.

The same numbers as bus/messages.py (DESIGN.md section 6); repeated here because domain
code imports nothing from bus/. A test keeps the two in step.
"""

HOLD, BUY, SELL, MOVE_SL_TO_BE, ENABLE_TRAIL, DISABLE_TRAIL = range(6)
N_ACTIONS = 6
NO_ACTION = -1

ENTRY_ACTIONS = frozenset({BUY, SELL, ENABLE_TRAIL})
"""What a veto blocks (seed 002): opening a position, or letting one run on a trail."""
