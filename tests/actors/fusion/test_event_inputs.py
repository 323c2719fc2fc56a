"""fusion.event_inputs: the network reads whether the latest thought read a new event and how long ago, so hindsight
teaches it to trust a reader around events and not elsewhere.

The drill's reader is right 9 times in 10 on a step 5 minutes after an event (it read the headline) and 35 in 100
elsewhere (it leans the wrong way on quiet bars). Without the event inputs the network can only follow it
everywhere or nowhere; with them, out of sample, it follows near events only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actors.common.actions import BUY, SELL
from actors.common.events import MarketEvent
from actors.fusion.fuser import Fuser
from actors.fusion.network import EVENT_INPUT_DIM, INPUT_DIM, FusionLearner, event_inputs, fusion_input
from actors.fusion.thoughts import UsableThought
from tests.actors.fusion import trust_drill
from tests.contexts import market_context

FIRST_SESSION = 19_000
"""Each drill step is a day of its own (session id FIRST_SESSION + step), at 10:05 ET."""


def test_the_event_numbers_say_read_or_not_how_recent_a_release_due_and_the_risk_read():
    assert event_inputs(1, 5, None, 60).tolist() == pytest.approx([1.0, 1 - 5 / 60, 0.0, 0.0])
    assert event_inputs(8, 5, None, 60)[0] == 0.0  # the thought is older than the event: it did not read it
    assert event_inputs(-1, 5, 30, 60).tolist() == pytest.approx([0.0, 1 - 5 / 60, 0.5, 0.0])  # no thought at all
    assert event_inputs(1, None, None, 60).tolist() == [0.0, 0.0, 0.0, 0.0]
    assert event_inputs(1, 60, None, 60).tolist() == [0.0, 0.0, 0.0, 0.0]  # out of the window: no news
    assert [event_inputs(1, None, None, 60, level)[3] for level in (-1, 0, 1, 2)] == [0.0, 0.0, 0.5, 1.0]


def test_the_fuser_reads_the_newest_risk_read_while_its_minutes_last():
    from bus.messages import LlmThought

    fuser = Fuser(trust_drill.small_network(event_inputs=True))

    def thought(step: int, level: int, minutes: int) -> LlmThought:
        return LlmThought(env_id=0, episode_id=0, step_seen=step, query_id=f"q{step}", action=BUY, confidence=0.6,
                          mode="single_shot", risk_level=level, risk_minutes=minutes)

    assert fuser.risk_level(0, 10) == -1
    fuser.add_thought(thought(10, 2, 5))
    assert [fuser.risk_level(0, step) for step in (9, 10, 15, 16)] == [-1, 2, 2, -1]
    fuser.add_thought(thought(8, 1, 30))  # older: ignored
    assert fuser.risk_level(0, 12) == 2
    fuser.add_thought(thought(12, 0, 0))
    assert fuser.risk_level(0, 12) == 0 and fuser.risk_level(1, 12) == -1


def test_the_fuser_reads_the_events_on_the_decisions_clock_and_puts_them_last():
    fuser = Fuser(trust_drill.small_network(event_inputs=True))
    fuser.add_event(_event_on(7))
    context = market_context(session_id=FIRST_SESSION + 7, time_et="10:05")
    row = fuser.news_inputs(context, UsableThought(BUY, 0.7, 1, "q"))
    assert row.tolist() == pytest.approx([1.0, 1 - 5 / 60, 0.0, 0.0])
    assert fuser.news_inputs(market_context(session_id=FIRST_SESSION + 8, time_et="10:05"), UsableThought(BUY, 0.7, 1, "q")).sum() == 0
    wide = fusion_input(BUY, 0.7, SELL, 0.5, context, news=row)
    assert wide.shape == (INPUT_DIM + EVENT_INPUT_DIM,) and wide[-EVENT_INPUT_DIM:].tolist() == pytest.approx(row.tolist())
    assert fuser.event_counts == {"decisions_near_event": 1, "decisions_thought_read_event": 1}


def test_a_saved_network_must_be_loaded_with_the_event_setting_it_was_trained_with(tmp_path):
    path = FusionLearner(trust_drill.small_network(event_inputs=True)).save(tmp_path)
    with pytest.raises(ValueError, match="gives 20"):
        FusionLearner(trust_drill.small_network()).load(path)


def _event_on(step: int) -> MarketEvent:
    date = pd.Timestamp("1970-01-01") + pd.Timedelta(days=FIRST_SESSION + step)
    stamp = (date + pd.Timedelta(hours=10)).tz_localize("America/New_York").tz_convert("UTC")
    return MarketEvent(time_ns=int(stamp.value), kind="headline", text="Nvidia beats earnings estimates", event_id=f"e{step}")


def _drill(event_inputs_on: bool, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    steps = [*trust_drill.LEARN_STEPS, *trust_drill.TEST_STEPS]
    near = {step: bool(rng.random() < 0.5) for step in steps}
    order = iter(steps)

    def reader(rng: np.random.Generator) -> trust_drill.DrillStep:
        step = next(order)
        winner = int(rng.choice([BUY, SELL]))
        right = 0.9 if near[step] else 0.35
        says = winner if rng.random() < right else (SELL if winner == BUY else BUY)
        return trust_drill.DrillStep(market_context(session_id=FIRST_SESSION + step, time_et="10:05"), winner, says)

    config = trust_drill.small_network(event_inputs=event_inputs_on)
    fuser = Fuser(config)
    for step in steps:
        if near[step]:
            fuser.add_event(_event_on(step))
    trust_drill.play(fuser, rng, trust_drill.LEARN_STEPS, reader)
    frozen = Fuser(type(config)(**{**{f: getattr(config, f) for f in config.__struct_fields__}, "learn": False}), learner=fuser.learner)
    frozen.events = fuser.events
    test = trust_drill.play(frozen, rng, trust_drill.TEST_STEPS, reader)
    test["near"] = np.array([near[step] for step in trust_drill.TEST_STEPS])
    return test


@pytest.mark.slow
def test_with_the_event_inputs_it_trusts_the_reader_around_events_and_not_elsewhere():
    with_events, without = _drill(True, seed=0), _drill(False, seed=0)
    near = with_events["near"]
    followed = with_events["fused"] != 0.0
    assert followed[near].mean() > 0.8 and followed[~near].mean() < 0.3
    gain, half = trust_drill.mean_and_half_width(with_events["fused"] - without["fused"])
    assert gain - half > 0  # out of sample, reading the news pays more than trusting the reader blindly
