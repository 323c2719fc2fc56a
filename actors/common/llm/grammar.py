"""GBNF grammar for the decide step: only allowed actions, a confidence in [0, 1], a short reason.

Generated under this grammar, even a 135M-parameter model cannot break the format
``ACTION | 0.73 | reason``; the parser still checks every answer (an HTTP server may
ignore the grammar). With ``risk_read`` (reasoner.risk_read) the answer also says how dangerous the next
minutes are, before its reason: ``ACTION | 0.73 | ELEVATED 15 | reason`` (RISK_LEVELS: CALM, or ELEVATED /
EXTREME and for how many minutes, 1-99).
"""

from __future__ import annotations

from collections.abc import Sequence

from actors.common.actions import ACTION_NAMES, HOLD, allowed_actions

MAX_REASON_CHARS = 120
RISK_RULE = 'risk ::= " CALM" | " ELEVATED " minutes | " EXTREME " minutes'
MINUTES_RULE = 'minutes ::= [1-9] | [1-9] [0-9]'


def decision_grammar(mask: Sequence[bool], risk_read: bool = False) -> str:
    """GBNF text admitting ``ACTION | confidence | reason`` with ACTION among the allowed ones.

    A mask that allows nothing still yields a valid grammar (HOLD only): the decide step
    must always produce an answer, and risk/env treat HOLD as the safe no-op.
    """
    names = [ACTION_NAMES[action] for action in allowed_actions(mask)] or [ACTION_NAMES[HOLD]]
    action_rule = " | ".join(f'"{name}"' for name in names)
    # The risk read's words carry their leading space, as the reason's first word does (at_reason_start).
    root = ['root ::= action " | " confidence " |" risk " |" reason', RISK_RULE, MINUTES_RULE] if risk_read else [
        'root ::= action " | " confidence " |" reason']
    return "\n".join(
        [
            # The separator before the reason ends at "|": the space belongs to the reason's first
            # token, as in the model's vocabulary (" Strong" is one token). Forcing "| " then a
            # letter made the model continue with a mid-word piece ("inance", "ipsilon").
            *root,
            f"action ::= {action_rule}",
            # Two decimals, 0.00 .. 1.00: nothing outside [0, 1] is expressible.
            'confidence ::= "0." [0-9] [0-9] | "1.00"',
            # One line of text starting with a space-prefixed word (a tiny model otherwise babbles
            # digits); the parser strips the space.
            f'reason ::= " " [a-zA-Z] [^|\\n]{{0,{MAX_REASON_CHARS - 2}}}',
            "",
        ]
    )


def at_reason_start(generated: str) -> bool:
    """True when a decision generated so far has just ended its separator before the reason.

    The engines forbid whitespace-only tokens at this point: the model, steered away from
    the digits it would babble, otherwise picks a lone " " and continues mid-word.
    """
    if not generated.endswith("|"):
        return False
    fields = generated.split("|")[:-1]
    return len(fields) == 2 or (len(fields) == 3 and fields[2].strip().split(" ")[0] in ("CALM", "ELEVATED", "EXTREME"))
