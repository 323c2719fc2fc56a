"""evaluate --gate-walk's floors: the keyword and oracle arms, their pairs with none, blackout and the LLM, and their
tables fitted on the training days only (a hand-made news market whose shocks are followed by a burst, whose calm
headlines are not)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from actors.common.events import MarketEvent
from actors.common.synthetic import BARS_PER_SESSION
from actors.jobs.evaluation import lockstep_walk
from actors.jobs.evaluation.lockstep_walk import GATES, event_gate_settings, gate_walk, walk_lines
from actors.risk.config import RiskConfig
from tests.actors.jobs.evaluation.test_lockstep_walk import _report

DAYS, TRAIN_DAYS = 12, 10
SHOCK_BAR, CALM_BAR, BURST_BARS = 100, 250, 30
MINUTE = 60 * 10**9


def _market():
    """12 sessions: each day a CPI release whose figure reads a shock (then BURST_BARS bars ten times as wide) and a
    calm headline; on the last 3 training days and the test days also a headline worded calm whose TRUE surprise is a
    shock (then a burst): the keyword rule reads it as the calm ones (mostly calm on the training days), the oracle not."""
    rng = np.random.default_rng(3)
    n = DAYS * BARS_PER_SESSION
    scale = np.full(n, 0.1)
    events, bars, surprise = [], [], []
    for day in range(DAYS):
        start = day * BARS_PER_SESSION
        shock = MarketEvent(time_ns=(start + SHOCK_BAR) * MINUTE, kind="release", importance="high", name="CPI y/y",
                            text="CPI y/y", actual=3.6, consensus=3.1, event_id=f"cpi{day}")
        calm = MarketEvent(time_ns=(start + CALM_BAR) * MINUTE, kind="headline", importance="low",
                           text="Acme results as expected", event_id=f"calm{day}")
        day_events = [(shock, SHOCK_BAR, 3.0), (calm, CALM_BAR, 0.1)]
        if day >= TRAIN_DAYS - 3:
            hidden = MarketEvent(time_ns=(start + 320) * MINUTE, kind="headline", importance="low",
                                 text="Acme update as expected", event_id=f"hidden{day}")
            day_events.append((hidden, 320, 3.0))
        for event, bar, z in day_events:
            events.append(event), bars.append(start + bar), surprise.append(z)
            if z > 2:
                scale[start + bar + 1:start + bar + 1 + BURST_BARS] = 1.0
    close = 100.0 + np.cumsum(rng.normal(0, scale))
    wick = np.abs(rng.normal(0, scale))
    return SimpleNamespace(high=close + wick, low=close - wick, close=close, events=tuple(events),
                           session_starts=np.arange(DAYS) * BARS_PER_SESSION,
                           event_truth={"event_bar": np.array(bars), "surprise": np.array(surprise), "text_sign": np.ones(len(bars)),
                                        "template_held_out": np.zeros(len(bars), bool)})


def test_the_floors_tables_are_fitted_on_the_training_days_and_the_oracle_knows_what_the_words_hide():
    fitted = event_gate_settings(_market(), (0, TRAIN_DAYS), TRAIN_DAYS)
    assert fitted["risk.keyword_gate_keys"] == ["high:shock"]  # the calm headline's reading is not dangerous
    assert fitted["risk.oracle_gate_event_ids"] == ["cpi10", "hidden10", "cpi11", "hidden11"]  # the test days' only
    RiskConfig(keyword_gate_keys=fitted["risk.keyword_gate_keys"], oracle_gate_event_ids=fitted["risk.oracle_gate_event_ids"])


def test_the_keyword_and_oracle_arms_are_paired_with_none_blackout_and_the_llm(monkeypatch):
    monkeypatch.setattr(lockstep_walk, "REPS", 200)  # the pairs, not the intervals' precision
    assert list(GATES) == ["none", "blackout", "keyword", "oracle", "llm"]
    assert GATES["keyword"][1]["risk.keyword_gate_enabled"] and GATES["oracle"][1]["risk.oracle_gate_enabled"]
    assert "reasoner.risk_read" not in GATES["keyword"][1] and GATES["oracle"][1]["env.thought_lag_steps"] == 0  # no model
    days = [f"2024-01-{d:02d}" for d in range(2, 22)]
    base = {day: [(-1) ** i * 100.0] for i, day in enumerate(days)}
    arms = {name: (_report(base), name, {}, 1.0) for name in ("none", "blackout", "keyword", "oracle")}
    assert set(gate_walk({"none": arms["none"], "keyword": arms["keyword"]}, 100, "ckpt").pairs) == {"keyword-none"}
    walk = gate_walk({**arms, "llm": (_report({day: [0.0] for day in days}), "l", {}, 1.0)}, 100, "ckpt")
    assert set(walk.pairs) == {"llm-keyword", "llm-oracle", "llm-blackout", "llm-none", "keyword-blackout", "keyword-none",
                               "oracle-blackout", "oracle-none", "oracle-keyword", "blackout-none"}
    assert walk.pairs["llm-keyword"]["net_pnl_usd"]["value"] == 0.0 - sum(pnl for (pnl,) in base.values())
    text = "\n".join(walk_lines(walk))
    assert "| llm minus keyword |" in text and "| oracle minus none |" in text and GATES["oracle"][0] in text
