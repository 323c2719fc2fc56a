"""The lockstep backtest's printed parts (actors/jobs/lockstep.py)."""

from actors.jobs.lockstep import format_thought
from bus.messages import LlmThought


def test_a_thought_is_printed_as_its_four_steps_and_the_action():
    thought = LlmThought(env_id=0, episode_id=0, step_seen=5, query_id="1-1", action=1, confidence=0.8, mode="four_step",
                         analysis="Up  trend.", options="BUY or HOLD", risks="a reversal", decision="BUY | 0.8 | trend")

    text = format_thought(thought)

    assert "analyse: Up trend." in text and "risks: a reversal" in text and "-> BUY with confidence 0.80" in text
