"""Small deterministic fixtures: hand-made bar frames and envs over them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import pytest

from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import EnvConfig
from actors.env.dataset import Dataset
from actors.env.env import FuturesTradingEnv
from actors.common.instruments import resolve_instrument


def bars_frame(rows: Sequence[tuple[float, float, float, float]], start_et: str = "2024-03-04 10:00", volume: float = 1000.0) -> pd.DataFrame:
    """1-minute bars from (open, high, low, close) rows, starting at ``start_et`` US/Eastern."""
    index = pd.date_range(pd.Timestamp(start_et, tz="America/New_York"), periods=len(rows), freq="1min").tz_convert("UTC")
    frame = pd.DataFrame(rows, columns=["open", "high", "low", "close"], index=pd.DatetimeIndex(index, name="timestamp"), dtype=float)
    frame["volume"] = volume
    return frame


def flat_rows(n: int, price: float = 20_000.0, half_range: float = 5.0) -> list[tuple[float, float, float, float]]:
    return [(price, price + half_range, price - half_range, price)] * n


@pytest.fixture
def env_over() -> Callable[..., FuturesTradingEnv]:
    """Build an env over a hand-made frame (split 'all', no warm-up), with EnvConfig / AccountConfig overrides."""

    def build(frame: pd.DataFrame, account: AccountConfig | None = None, symbol: str = "NQ", **env_overrides) -> FuturesTradingEnv:
        account = account or AccountConfig()
        dataset = Dataset.from_frame(frame, account.flat_minute_of_day, source="test", warmup_bars=0)
        settings = {"episode_bars": max(20, len(frame) - 2), **env_overrides}
        env = FuturesTradingEnv(dataset.split("all"), resolve_instrument(InstrumentConfig(symbol=symbol)), account, EnvConfig(**settings))
        env.reset(seed=0, options={"start": 0, "n_bars": len(frame) - 1})
        return env

    return build


def play(env: FuturesTradingEnv, actions: Sequence[int]) -> list[tuple[np.ndarray, float, bool, bool, dict]]:
    """Step through ``actions``, stopping at the end of the episode."""
    results = []
    for action in actions:
        results.append(env.step(action))
        if results[-1][2] or results[-1][3]:
            break
    return results


@pytest.fixture(scope="session")
def synthetic_dataset() -> Dataset:
    from actors.common.synthetic import generate_bars

    return Dataset.from_frame(generate_bars(8, seed=3), AccountConfig().flat_minute_of_day, source="synthetic-8d")


@pytest.fixture
def make_bars() -> Callable[..., pd.DataFrame]:
    return bars_frame


@pytest.fixture
def flat_bars() -> Callable[..., list]:
    return flat_rows


@pytest.fixture
def play_actions() -> Callable[..., list]:
    return play
