"""The typed configuration: the root ``Config``, the composition root of every section.

The runtime's own sections (run, bus, runtime, logging) are runtime/settings.py's; each actor package owns
its section struct(s) in ``actors/<x>/config.py`` (those modules import nothing but msgspec, the stdlib and
config.checks). ``Config`` lists them statically; the jobs (actors/jobs/) load it, validate the whole tree and
write it to the run directory. Nothing in runtime/ imports this module: an actor process reads its own
settings (``Actor.settings_type``) from the run directory. All structs are frozen, keyword-only and forbid
unknown fields, so a typo in a key is an error that names it.
"""

from __future__ import annotations

import msgspec

from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.dashboard.config import DashboardConfig
from actors.env.config import DataConfig, EnvConfig
from actors.feed.config import FeedConfig
from actors.fusion.config import FusionConfig
from actors.lora.config import LoraConfig
from actors.policy.config import PolicyConfig
from actors.reasoner.config import ReasonerConfig
from actors.risk.config import RiskConfig
from runtime.settings import (  # noqa: F401  (re-exported: the sections' old home)
    BusConfig,
    LoggingConfig,
    RunConfig,
    RuntimeConfig,
    RuntimeSettings,
    is_loopback,
)


class Config(RuntimeSettings, kw_only=True, forbid_unknown_fields=True):
    """The root configuration: one attribute per section (config.env.n_envs, config.bus.transport, ...).

    Order is the order of config/default.toml. A section appears here when its actor exists.
    """

    # run, bus, runtime, logging: RuntimeSettings' fields, first
    instrument: InstrumentConfig = msgspec.field(default_factory=InstrumentConfig)
    account: AccountConfig = msgspec.field(default_factory=AccountConfig)
    data: DataConfig = msgspec.field(default_factory=DataConfig)
    env: EnvConfig = msgspec.field(default_factory=EnvConfig)
    policy: PolicyConfig = msgspec.field(default_factory=PolicyConfig)
    reasoner: ReasonerConfig = msgspec.field(default_factory=ReasonerConfig)
    fusion: FusionConfig = msgspec.field(default_factory=FusionConfig)
    risk: RiskConfig = msgspec.field(default_factory=RiskConfig)
    lora: LoraConfig = msgspec.field(default_factory=LoraConfig)
    feed: FeedConfig = msgspec.field(default_factory=FeedConfig)
    dashboard: DashboardConfig = msgspec.field(default_factory=DashboardConfig)


SECTIONS: tuple[str, ...] = Config.__struct_fields__
"""The section names, in the order of config/default.toml."""
