"""The floors of the LLM's gate: the keyword gate (the keyword risk rule reads md.event's words) and the oracle gate (the
events whose true tier and size are dangerous) stand aside from the event's time for event_gate_minutes, on the
market's clock, and only then; in the gates' unit and in the risk actor fed md.event and md.bar."""

import math

import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.common.events import MarketEvent
from actors.risk.config import RiskConfig, live_refusal
from actors.risk.event_gates import KEYWORD_RISK, ORACLE_RISK, keyword_gate, keyword_reading, oracle_gate, overlay
from actors.risk.event_gates import event_key
from bus.messages import Event
from runtime.testing import actor_harness
from tests.actors.risk.test_news import MINUTE, T, decide

KEYS = ("high:large", "low:shock")


def cpi(actual: float, event_id: str = "cpi") -> MarketEvent:
    """A CPI y/y release (its consensus 3.1, its typical surprise 0.2): the figure against it in units of its typical surprise reads the size."""
    return MarketEvent(time_ns=T, kind="release", importance="high", name="CPI y/y", text="CPI y/y", actual=actual,
                       consensus=3.1, event_id=event_id)


def headline(text: str, at: int = T, event_id: str = "h1") -> MarketEvent:
    return MarketEvent(time_ns=at, kind="headline", importance="low", text=text, event_id=event_id)


def test_the_keyword_reading_is_the_keyword_rules_tier_and_size():
    assert keyword_reading(cpi(3.1)) == "high:in_line"
    assert keyword_reading(cpi(3.6)) == "high:shock"
    assert keyword_reading(headline("Acme shares plunge after a stunning loss")) == "low:shock"
    assert keyword_reading(headline("Acme beats as expected")) == "low:in_line"
    assert keyword_reading(headline("Fed's Powell speaks, unexpected cut")) == "medium:large"


def test_the_keyword_gate_holds_from_the_event_for_its_minutes_and_only_after_a_dangerous_reading():
    gate = keyword_gate(15, ("high:shock", "low:shock"))
    gate.add(cpi(3.1))  # in line: no window
    gate.add(headline("Acme beats as expected", T + 60 * MINUTE))
    assert not any(gate.in_force(T + m * MINUTE) for m in range(-5, 80))
    gate.add(cpi(3.6))  # the same release, its figure now a shock
    assert gate.in_force(T - 1) == "" and gate.in_force(T) == "cpi" and gate.in_force(T + 15 * MINUTE - 1) == "cpi"
    assert gate.in_force(T + 15 * MINUTE) == "" and gate.acted == 1
    gate.add(cpi(3.1))  # a later message of the id says in line: its window closes
    assert gate.in_force(T + MINUTE) == ""


def test_the_oracle_gate_holds_only_after_the_events_it_was_told_of():
    gate = oracle_gate(10, ["synthetic:headline:7"])
    gate.add(headline("Acme shares plunge after a stunning loss", event_id="synthetic:headline:3"))  # words say shock: no matter
    assert gate.in_force(T + MINUTE) == ""
    gate.add(headline("Acme beats as expected", event_id="synthetic:headline:7"))  # words say calm: the truth decides
    assert gate.in_force(T) and gate.in_force(T + 10 * MINUTE - 1) and not gate.in_force(T + 10 * MINUTE)
    assert event_key(MarketEvent(time_ns=5, kind="headline", text="x")) == "x@5"


def test_the_overlay_keeps_another_halt_and_names_the_gate_elsewhere():
    assert overlay(["", "win_rate"], [KEYWORD_RISK, ORACLE_RISK]) == [KEYWORD_RISK, "win_rate"]
    assert overlay(["", ""], []) == ["", ""]


@pytest.mark.parametrize("key", ["huge:shock", "high:enormous", "high"])
def test_a_bad_keyword_key_is_refused_by_name(key):
    with pytest.raises(ValueError, match="risk.keyword_gate_keys"):
        RiskConfig(keyword_gate_keys=[key])


def test_a_live_run_refuses_the_oracle_gate_and_takes_the_keyword_gate():
    assert "risk.oracle_gate_enabled" in live_refusal(RiskConfig(oracle_gate_enabled=True))
    assert live_refusal(RiskConfig(keyword_gate_enabled=True)) == ""


def _event(event: MarketEvent) -> Event:
    return Event(**{f: getattr(event, f) for f in event.__struct_fields__}, source="synthetic:news")


async def test_the_risk_actor_stands_aside_after_a_dangerous_reading_for_its_minutes_and_counts_it():
    overrides = {"risk.keyword_gate_enabled": True, "risk.keyword_gate_keys": list(KEYS), "risk.event_gate_minutes": 5,
                 "env.mode": "backtest", "risk.veto_enabled": False}
    async with actor_harness("risk", overrides) as h:
        await h.deliver(_event(cpi(math.nan)), _event(headline("Acme beats as expected", T + 20 * MINUTE, "calm")))
        before = await decide(h, 1, T - MINUTE, BUY)  # the announcement (no figure) reads high:modest: not dangerous
        await h.deliver(_event(cpi(3.4)))  # the release: large
        inside = await decide(h, 2, T + MINUTE, BUY)
        exits = await decide(h, 3, T + 2 * MINUTE, SELL, position=1)
        last = await decide(h, 4, T + 4 * MINUTE, BUY)  # the clock: the newest bar's end
        after = await decide(h, 5, T + 5 * MINUTE, BUY)
        calm = await decide(h, 6, T + 21 * MINUTE, BUY)
        counters = dict(h.actor.counters)
    assert (before.actions.tolist(), before.reasons) == ([BUY], [""])
    assert (inside.actions.tolist(), inside.reasons, inside.halts) == ([HOLD], [KEYWORD_RISK], [KEYWORD_RISK])
    assert (exits.actions.tolist(), exits.reasons) == ([SELL], [""])
    assert (last.actions.tolist(), last.reasons) == ([HOLD], [KEYWORD_RISK])
    assert (after.actions.tolist(), after.reasons) == ([BUY], [""])
    assert (calm.actions.tolist(), calm.reasons) == ([BUY], [""])
    assert counters["veto_keyword_risk"] == 2 and counters["keyword_risk_windows"] == 1


async def test_the_risk_actor_oracle_gate_follows_the_ids_not_the_words_and_both_are_off_by_default():
    overrides = {"risk.oracle_gate_enabled": True, "risk.oracle_gate_event_ids": ["calm"], "env.mode": "backtest",
                 "risk.veto_enabled": False}
    async with actor_harness("risk", overrides) as h:
        await h.deliver(_event(headline("Acme shares plunge after a stunning loss", T, "loud")),
                        _event(headline("Acme beats as expected", T + 20 * MINUTE, "calm")))
        loud = await decide(h, 1, T + MINUTE, BUY)
        calm = await decide(h, 2, T + 21 * MINUTE, BUY)
        assert h.actor.counters["oracle_risk_windows"] == 1
    assert (loud.actions.tolist(), loud.reasons) == ([BUY], [""])
    assert (calm.actions.tolist(), calm.reasons) == ([HOLD], [ORACLE_RISK])
    async with actor_harness("risk", {"env.mode": "backtest", "risk.veto_enabled": False}) as h:
        await h.deliver(_event(cpi(3.6)))
        verdict = await decide(h, 1, T + MINUTE, BUY)
    assert (verdict.actions.tolist(), verdict.reasons) == ([BUY], [""])
