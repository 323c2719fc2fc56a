"""What actors besides the env read of [env]: the decision loop's width, mode, trade size and paper warm-up.

A declared view, not the env's section: an actor's settings list ``env: LoopShape`` and get these four keys
of [env] (the others are ignored there; the job validated the whole section before the run started). The
fields mirror actors/env/config.py EnvConfig, types and defaults; tests/config/test_actor_settings.py holds
them equal. Imports nothing but msgspec and config.checks.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from config.checks import PositiveCount


class LoopShape(msgspec.Struct, frozen=True, kw_only=True):
    n_envs: PositiveCount = 4
    """Environments the env actor hosts: the width of every batch on the bus (the policy sizes its buffer by it)."""
    mode: str = "train"
    """train | backtest | paper: risk leaves its vetoes out in training unless risk.vetoes_while_training."""
    contracts_per_trade: PositiveCount = 1
    """Contracts an entry opens: risk's guard sizes its loss checks by it."""
    paper_warmup_bars: Annotated[int, msgspec.Meta(ge=20)] = 210
    """paper: bars the env warms its features on; a replay feed publishes as many as history (feed.warmup_bars = -1)."""
