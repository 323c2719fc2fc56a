"""The market registry (actors/common/markets.py): every market has every part, and one registered in a test alone
reaches the config check, the configuration reference, the env factory and ``bin/run evaluate --help``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from actors.common.market_settings import AccountConfig
from actors.common.markets import Market, MarketRequest, SyntheticMarket, make_market, market, market_names, markets, register, unregister
from actors.common.synthetic import generate_market
from actors.env.config import DataConfig
from actors.env.factory import build_dataset
from actors.jobs.cli import mode_parser
from actors.jobs.evaluate import market_settings
from tests.docs.docs_reference_module import load

BUILT_IN = ("regimes", "null", "realistic", "realistic_null", "news", "news_null")


def test_the_built_in_markets_are_registered_in_order():
    assert market_names()[: len(BUILT_IN)] == BUILT_IN


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_registered_market_has_every_part_and_a_registered_twin(name):
    item = market(name)
    assert item.name == name and item.help.strip() and item.calibration.strip() and callable(item.make_bars)
    twins = {other.null_twin for other in markets().values()}
    if item.null_twin is None:
        assert name in twins, f"{name} has no null twin and is no market's twin"
    else:
        assert market(item.null_twin).null_twin is None, "a twin is itself a null market"


@pytest.mark.parametrize("name", [name for name in BUILT_IN if market(name).null_twin])
def test_a_market_and_its_twin_share_the_seeds_calendar_and_differ_in_prices(name):
    request = MarketRequest(days=2, seed=3)
    planted, twin = make_market(name, request), make_market(market(name).null_twin, request)
    assert len(planted.bars) == 2 * 390 and planted.bars.index.equals(twin.bars.index)
    assert not np.array_equal(planted.bars["close"].to_numpy(), twin.bars["close"].to_numpy())


TOY_LIFT = 1_000.0


def _toy_bars(request: MarketRequest) -> SyntheticMarket:
    """The null market of the seed lifted by TOY_LIFT points (bars the factory and the features take as they are)."""
    base = generate_market(request.days, request.seed, request.start_price, request.start_date, request.tick_size, "null")
    prices = ["open", "high", "low", "close"]
    return SyntheticMarket(base.bars.assign(**{column: base.bars[column] + TOY_LIFT for column in prices}), base.regime, base.scenario)


TOY = Market(name="toy_lifted", help="the null market 1000 points higher (a test's toy)", calibration="none: a toy",
             make_bars=_toy_bars, null_twin=None)


@pytest.fixture
def toy():
    register(TOY)
    yield TOY
    unregister(TOY.name)


@pytest.mark.parametrize("part", ["name", "help", "calibration"])
def test_a_market_lacking_a_part_is_refused_naming_it(part):
    with pytest.raises(ValueError, match=part if part != "name" else "lacks"):
        register(replace(TOY, **{part: " "}))
    assert TOY.name not in market_names()


def test_a_second_market_of_one_name_is_refused():
    with pytest.raises(ValueError, match="registered twice"):
        register(replace(market("regimes"), help="another regimes"))


def test_an_unknown_market_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown market 'nope'; choose one of regimes | null"):
        market("nope")
    with pytest.raises(ValueError, match="data.scenario: must be one of"):
        DataConfig(scenario="nope")


def test_a_market_registered_alone_reaches_the_config_the_reference_the_factory_and_the_help(toy):
    help_text = " ".join(mode_parser("evaluate").format_help().split())
    assert "toy_lifted: the null market 1000 points higher" in help_text
    assert "`toy_lifted`: the null market 1000 points higher" in load().config_page()
    dataset = build_dataset(DataConfig(scenario="toy_lifted", synthetic_days=6), AccountConfig(), seed=0)
    null = make_market("null", MarketRequest(days=6, seed=0, tick_size=0.25)).bars
    assert len(dataset) == 6 * 390 and np.allclose(dataset.close, null["close"].to_numpy() + TOY_LIFT)
    assert market_settings(["toy_lifted"], 6)["data.scenario"] == "toy_lifted"
