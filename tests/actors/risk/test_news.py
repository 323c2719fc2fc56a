"""The prop-firm news rule: entries vetoed around a high-importance release, allowed outside, exits always allowed,
a headline blocks nothing; in the rule's unit and in the risk actor fed md.event and md.bar."""

import numpy as np
import pandas as pd
from structlog.testing import capture_logs

from actors.common.actions import BUY, HOLD, SELL
from actors.common.events import MarketEvent
from actors.risk.config import RiskConfig
from actors.risk.news import NEWS_BLACKOUT, NEWS_FLAT, NewsRule, overlay
from actors.risk.rules import RiskRules
from bus.messages import OBS_DIM, Bar, EnvObs, Event, RiskVerdict
from runtime.testing import actor_harness
from tests.actors.risk.risk_inputs import FLAT_MASK, LONG_MASK, NQ_LIMITS, context
from tests.actors.risk.test_actor import decision

MINUTE = 60 * 10**9
T = pd.Timestamp("2024-03-12T12:30Z").value


def release(importance: str = "high", kind: str = "release", at: int = T, event_id: str = "cpi") -> MarketEvent:
    return MarketEvent(time_ns=at, kind=kind, importance=importance, name="CPI m/m", text="CPI m/m", event_id=event_id)


def test_the_window_runs_from_before_to_after_the_release_and_nothing_else_counts():
    rule = NewsRule(before_mins=2, after_mins=2)
    assert rule.add(release()) is not None and rule.add(release()) is None  # announced, then out: one window
    assert rule.add(release("medium", event_id="ppi")) is None and rule.add(release(kind="headline", event_id="h")) is None
    assert rule.in_force(T - 2 * MINUTE - 1) is None
    assert rule.in_force(T - 2 * MINUTE).rule == NEWS_BLACKOUT
    assert rule.in_force(T + 2 * MINUTE - 1).rule == NEWS_BLACKOUT and rule.in_force(T + 2 * MINUTE) is None
    flat = NewsRule(before_mins=2, after_mins=2, flat_before=True)
    flat.add(release())
    assert flat.in_force(T - MINUTE).rule == NEWS_FLAT and flat.in_force(T).rule == NEWS_BLACKOUT


def test_overlay_keeps_another_halt_for_a_flat_env_and_makes_a_position_close_before_the_release():
    rule = NewsRule(2, 2, flat_before=True)
    rule.add(release())
    assert overlay(["", "win_rate", ""], [0, 0, 1], rule.in_force(T - MINUTE)) == [NEWS_FLAT, "win_rate", NEWS_FLAT]
    assert overlay(["", "win_rate"], [0, 1], rule.in_force(T)) == [NEWS_BLACKOUT, "win_rate"]
    assert overlay(["", ""], [0, 1], None) == ["", ""]


def test_rules_block_entries_pass_exits_and_close_positions_under_news_flat():
    rules = RiskRules(RiskConfig(), NQ_LIMITS)
    assert rules.review(BUY, FLAT_MASK, context(), halt=NEWS_BLACKOUT).reason == NEWS_BLACKOUT
    exit_long = rules.review(SELL, LONG_MASK, context(position=1, contracts=1), halt=NEWS_BLACKOUT)
    assert (exit_long.action, exit_long.reason) == (SELL, "")
    held = rules.review(HOLD, LONG_MASK, context(position=1, contracts=1), halt=NEWS_FLAT)
    assert (held.action, held.reason) == (SELL, NEWS_FLAT)
    assert rules.review(BUY, FLAT_MASK, context(), halt=NEWS_FLAT).reason == NEWS_FLAT


def bar(clock_ns: int) -> Bar:
    """The bar that closes at ``clock_ns`` (1-minute bars)."""
    return Bar(symbol="NQ", start_ns=clock_ns - MINUTE, open=1.0, high=1.0, low=1.0, close=1.0, volume=1.0, source="test")


def obs(step: int, position: int = 0) -> EnvObs:
    mask = LONG_MASK if position else FLAT_MASK
    return EnvObs(env_ids=[0], episode_ids=[0], step=step, obs=np.zeros((1, OBS_DIM), dtype=np.float32),
                  masks=mask[None, :].copy(), contexts=[context(position=position, contracts=abs(position), recent_net_pnl=0.0)])


async def decide(h, step: int, clock_ns: int, action: int, position: int = 0) -> RiskVerdict:
    await h.deliver(bar(clock_ns - MINUTE), bar(clock_ns))  # two bars: the clock learns their spacing
    await h.deliver(obs(step, position), decision(step, [action]))
    return await h.recv(RiskVerdict, where=lambda v: v.step == step)


async def test_risk_actor_vetoes_entries_in_the_window_only_counts_and_logs_them():
    overrides = {"risk.news_blackout_enabled": True, "env.mode": "backtest", "risk.veto_enabled": False}
    with capture_logs() as logs:
        async with actor_harness("risk", overrides) as h:
            await h.deliver(Event(**_fields(release()), source="calendar:cal.csv"),
                            Event(**_fields(release("high", "headline", T + 30 * MINUTE, "h1")), source="rss:x"))
            before = await decide(h, 1, T - 3 * MINUTE, BUY)
            inside = await decide(h, 2, T - 2 * MINUTE, BUY)
            after = await decide(h, 3, T + MINUTE, SELL)
            exits = await decide(h, 4, T, SELL, position=1)
            outside = await decide(h, 5, T + 2 * MINUTE, BUY)
            headline = await decide(h, 6, T + 30 * MINUTE, BUY)
            counters = dict(h.actor.counters)
    assert (before.actions.tolist(), before.reasons) == ([BUY], [""])
    assert (inside.actions.tolist(), inside.reasons, inside.halts) == ([HOLD], [NEWS_BLACKOUT], [NEWS_BLACKOUT])
    assert (after.actions.tolist(), after.reasons) == ([HOLD], [NEWS_BLACKOUT])
    assert (exits.actions.tolist(), exits.reasons) == ([SELL], [""])
    assert (outside.actions.tolist(), outside.reasons) == ([BUY], [""])
    assert (headline.actions.tolist(), headline.reasons) == ([BUY], [""])
    assert counters["veto_news_blackout"] == 2 and counters["news_entries_blocked"] == 2 and counters["news_releases"] == 1
    blocked = [e for e in logs if e["event"] == "news_entry_blocked"]
    assert [(e["step"], e["release"], e["release_time_ns"]) for e in blocked] == [(2, "CPI m/m", T), (3, "CPI m/m", T)]


async def test_risk_actor_with_news_flat_before_closes_a_position_before_the_release():
    overrides = {"risk.news_blackout_enabled": True, "risk.news_flat_before": True, "env.mode": "backtest", "risk.veto_enabled": False}
    async with actor_harness("risk", overrides) as h:
        await h.deliver(Event(**_fields(release()), source="calendar:cal.csv"))
        flattened = await decide(h, 1, T - MINUTE, HOLD, position=1)
        assert (flattened.actions.tolist(), flattened.reasons) == ([SELL], [NEWS_FLAT])
        assert h.actor.counters["news_flattened"] == 1


async def test_the_rule_is_off_by_default():
    async with actor_harness("risk", {"env.mode": "backtest", "risk.veto_enabled": False}) as h:
        await h.deliver(Event(**_fields(release()), source="calendar:cal.csv"))
        verdict = await decide(h, 1, T, BUY)
    assert (verdict.actions.tolist(), verdict.reasons) == ([BUY], [""])


def _fields(event: MarketEvent) -> dict:
    return {f: getattr(event, f) for f in event.__struct_fields__}
