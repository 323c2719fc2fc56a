"""Build datasets and envs from the env's settings (EnvSettings; the jobs pass their root Config, which has the same sections), cached per process.

``make_env(config, split, seed)`` is what plain-SB3 baselines and the env actor use;
the dataset (bars + features) is computed once per process and shared by every env.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from actors.common.market_settings import AccountConfig
from actors.env.config import DataConfig
from actors.common.bar_join import load_bar_files
from actors.env.datafit import check_fit
from actors.env.dataset import Dataset
from actors.env.session_features import release_times_ns
from actors.env.env import FuturesTradingEnv
from actors.env.regime_model import read_regime_model
from actors.common.instruments import resolve_instrument
from actors.common.markets import MarketRequest, make_market

if TYPE_CHECKING:
    from actors.env.config import EnvSettings

_CACHE: dict[tuple, Dataset] = {}


def _data_seed(config: EnvSettings) -> int:
    seed = config.data.seed
    return config.run.seed if seed < 0 and hasattr(config, "run") else max(seed, 0)


def build_dataset(
    data: DataConfig, account: AccountConfig, seed: int, tick_size: float = 0.25, path: str | None = None, symbol: str = "NQ",
) -> Dataset:
    """A fresh (uncached) dataset from the [data] section, or from ``path`` when given."""
    flat_minute = account.flat_minute_of_day
    regime = read_regime_model(data.regime_model_path) if data.regime_model_path else None  # None: fit on the training split
    if path or data.source == "file":
        source = path or data.path
        frame, report = load_bar_files(bar_paths(source), timezone=data.timezone, dayfirst=data.dayfirst)
        fit = check_fit(frame, source=source, symbol=symbol, tick_size=tick_size, flat_minute_of_day=flat_minute)
        dataset = Dataset.from_frame(frame, flat_minute, data.train_fraction, data.validation_fraction, source=source, repair=report,
                                     regime_model=regime)
        dataset.warnings = fit.warnings
        return dataset
    request = MarketRequest(data.synthetic_days, seed, data.synthetic_start_price, data.synthetic_start_date, tick_size, settings=data)
    market = make_market(data.scenario, request)  # the registered market (actors/common/markets.py)
    source = f"synthetic({data.scenario}, seed={seed}, days={data.synthetic_days})"
    dataset = Dataset.from_frame(market.bars, flat_minute, data.train_fraction, data.validation_fraction, source=source,
                                 regime_model=regime, releases=release_times_ns(getattr(market, "events", ())))
    dataset.hidden_regime = market.regime
    dataset.events = getattr(market, "events", ())
    if dataset.events:
        dataset.event_truth = {"event_bar": market.event_bar, "surprise": market.surprise, "text_sign": market.text_sign,
                               "template_held_out": getattr(market, "template_held_out", ())}
    return dataset


def bar_paths(source: str) -> list[str]:
    """The files of ``data.path``: one path, or several joined by the path separator (``a.csv:b.csv`` on Linux, as
    ``bin/run evaluate --market a.csv b.csv`` writes them), read into one calendar by actors/common/bar_join.py."""
    return [part for part in source.split(os.pathsep) if part]


def load_dataset(config: EnvSettings, path: str | None = None) -> Dataset:
    """The dataset the root config describes, computed once per process (``path`` overrides [data])."""
    seed = _data_seed(config)
    instrument = resolve_instrument(config.instrument)
    key = (config.data, config.account.flat_time_et, seed, instrument.tick_size, path, instrument.symbol)
    if key not in _CACHE:
        _CACHE[key] = build_dataset(config.data, config.account, seed, instrument.tick_size, path, instrument.symbol)
    return _CACHE[key]


def make_env(config: EnvSettings, split: str = "train", seed: int = 0, path: str | None = None) -> FuturesTradingEnv:
    """A ready env over ``split`` of the configured data; ``seed`` seeds its episode starts."""
    dataset = load_dataset(config, path)
    env = FuturesTradingEnv(dataset.split(split), resolve_instrument(config.instrument), config.account, config.env)
    env.reset(seed=seed)
    return env
