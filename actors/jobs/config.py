"""The root ``Config``, the composition root of every section, and its loading: the jobs' settings.

The runtime's own sections (run, bus, runtime, logging) are runtime/settings.py's; each actor package owns
its section struct(s) in ``actors/<x>/config.py`` (those modules import nothing but msgspec, the stdlib and
config.checks). ``Config`` lists them statically; the jobs load it (default.toml, then the user's file, then
``--set section.key=value``; the merging and the errors are config/tree.py's), validate the whole tree and write
it to the run directory. It lives with the jobs, the only code that brings several actors together: nothing below
them imports it, and an actor process reads its own settings (``Actor.settings_type``) from the run directory.
All structs are frozen, keyword-only and forbid unknown fields, so a typo in a key is an error that names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

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
from config import tree
from runtime.settings import RuntimeSettings


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


def validate(config_tree: Mapping[str, Any], sources: Mapping[str, str]) -> Config:
    return tree.validate(config_tree, sources, Config)


def load_config(path: str | Path | None = None, overrides: Mapping[str, Any] | list[str] | None = None) -> Config:
    """Default config, then ``path``, then overrides (``{"env.n_envs": 2}`` or ``["env.n_envs=2"]``)."""
    return tree.load_settings(Config, path, overrides)


def load_resolved(path: str | Path) -> Config:
    """Read a run directory's resolved config (already merged) and validate it."""
    return tree.load_resolved(path, Config)
