from types import SimpleNamespace

import pytest

from actors.common.instruments import INSTRUMENTS, resolve_instrument


def settings(symbol: str, tick_size: float = 0.0, multiplier: float = 0.0, commission: float = -1.0, slippage: float = -1.0):
    return SimpleNamespace(symbol=symbol, tick_size=tick_size, multiplier=multiplier, commission_per_side=commission,
                           slippage_ticks=slippage)


def test_a_built_in_symbol_resolves_to_its_row():
    spec = resolve_instrument(settings(" nq "))
    assert spec == INSTRUMENTS["NQ"] and spec.tick_value == 5.0


def test_an_override_replaces_only_its_field():
    spec = resolve_instrument(settings("ES", commission=1.0))
    assert spec.commission_per_side == 1.0 and spec.multiplier == INSTRUMENTS["ES"].multiplier


def test_an_unknown_symbol_needs_its_tick_size_and_multiplier():
    with pytest.raises(ValueError, match="instrument.tick_size"):
        resolve_instrument(settings("XYZ"))
    spec = resolve_instrument(settings("XYZ", tick_size=0.5, multiplier=10.0))
    assert (spec.commission_per_side, spec.slippage_ticks, spec.slippage_points) == (0.0, 1.0, 0.5)
