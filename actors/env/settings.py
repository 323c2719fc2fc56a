"""What the env actor reads (every shell: train, backtest, paper): the runtime's sections, the shared
[instrument] and [account], its own [data] and [env], and two declared views of other actors' sections:
whether the LoRA trainer wants hindsight labels and how they are cut (LoraLabelsView), and the fusion's
staleness bound the paper summary counts thoughts against (FusionStalenessView).

A view is decoded from its section with the other keys ignored (the job validated the whole section);
its fields mirror the owner's, types and defaults (tests/config/test_actor_settings.py holds them equal).
"""

from __future__ import annotations

import msgspec

from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import DataConfig, EnvConfig
from config.checks import Count, Positive, PositiveCount
from runtime.settings import RuntimeSettings


class LoraLabelsView(msgspec.Struct, frozen=True, kw_only=True):
    """Of [lora]: a trainer that learns from hindsight labels makes the env publish them (actors/env/hindsight.py)."""

    enabled: bool = False
    labels: str = "trades_hindsight"
    hindsight_horizon_bars: PositiveCount = 60
    hindsight_stop_atr: Positive = 3.0
    hindsight_target_atr: Positive = 3.0


class FusionStalenessView(msgspec.Struct, frozen=True, kw_only=True):
    """Of [fusion]: the oldest thought fusion uses, in steps (the paper summary's thought accounting), and whether a
    learning fusion network is taught by hindsight labels (then the env publishes them: actors/env/hindsight.py)."""

    max_staleness_steps: Count = 10
    method: str = "rules"
    learn: bool = True
    hindsight_lessons: bool = True


class EnvSettings(RuntimeSettings, kw_only=True):
    """Every shell's (the factory in actors/env/actor.py decodes one settings type for all of them)."""

    instrument: InstrumentConfig = msgspec.field(default_factory=InstrumentConfig)
    account: AccountConfig = msgspec.field(default_factory=AccountConfig)
    """The shared sections (actors/common/market_settings.py)."""
    data: DataConfig = msgspec.field(default_factory=DataConfig)
    env: EnvConfig = msgspec.field(default_factory=EnvConfig)
    fusion: FusionStalenessView = FusionStalenessView()  # a view: a frozen value
    """Of [fusion] only max_staleness_steps and what decides its hindsight lessons."""
    lora: LoraLabelsView = LoraLabelsView()
    """Of [lora] only what the hindsight labels need."""
