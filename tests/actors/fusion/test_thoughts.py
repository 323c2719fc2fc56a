import pytest

from actors.common.actions import BUY, SELL
from actors.fusion.thoughts import NO_THOUGHT, Thought, ThoughtBook, ThoughtsReceived


def make_thought(step_seen: int, action: int = BUY, confidence: float = 0.8, episode_id: int = 0,
                 env_id: int = 0) -> Thought:
    return Thought(env_id=env_id, episode_id=episode_id, step_seen=step_seen, query_id=f"q{step_seen}",
                   action=action, confidence=confidence)


def test_a_thought_k_steps_old_is_used_and_one_step_older_is_not():
    book = ThoughtBook(max_staleness_steps=5, confidence_decay_per_step=0.0)
    book.add(make_thought(step_seen=10))
    assert book.usable(env_id=0, episode_id=0, step=15).staleness_steps == 5
    assert book.usable(env_id=0, episode_id=0, step=16) is NO_THOUGHT


def test_confidence_decays_with_age():
    book = ThoughtBook(max_staleness_steps=10, confidence_decay_per_step=0.1)
    book.add(make_thought(step_seen=10, confidence=0.8))
    assert book.usable(0, 0, 10).confidence == pytest.approx(0.8)
    assert book.usable(0, 0, 13).confidence == pytest.approx(0.8 * 0.9 ** 3)


def test_an_older_thought_arriving_late_does_not_replace_a_newer_one():
    book = ThoughtBook(max_staleness_steps=10, confidence_decay_per_step=0.0)
    assert book.add(make_thought(step_seen=12, action=SELL))
    assert not book.add(make_thought(step_seen=11, action=BUY))
    assert book.usable(0, 0, 13).action == SELL


def test_a_thought_about_another_episode_or_a_later_step_is_not_used():
    book = ThoughtBook(max_staleness_steps=10, confidence_decay_per_step=0.0)
    book.add(make_thought(step_seen=10, episode_id=3))
    assert book.usable(0, episode_id=4, step=11) is NO_THOUGHT
    assert book.usable(0, episode_id=3, step=9) is NO_THOUGHT


def carried(step_seen: int, step_built: int, confidence: float = 0.8) -> Thought:
    """The reasoner's answer to a quiet bar (think_on = news): published for ``step_seen``, built on ``step_built``."""
    return Thought(env_id=0, episode_id=0, step_seen=step_seen, query_id=f"c{step_seen}", action=BUY, confidence=confidence,
                   step_built=step_built)


def test_a_carried_answer_is_aged_from_the_step_its_prompt_read_and_counted_when_too_stale():
    """Issue 51: a thought built on bar 5 carried to bar 20 is 15 bars old there, past K = 10: no thought, counted."""
    book = ThoughtBook(max_staleness_steps=10, confidence_decay_per_step=0.1)
    book.add(carried(step_seen=20, step_built=5))
    assert book.usable(0, 0, 20) is NO_THOUGHT
    assert (book.too_stale, book.too_stale_carried) == (1, 1)
    book.add(carried(step_seen=21, step_built=14))  # a younger one: used, at its real age, its confidence decayed for it
    usable = book.usable(0, 0, 21)
    assert usable.staleness_steps == 7 and usable.confidence == pytest.approx(0.8 * 0.9 ** 7)
    assert (book.too_stale, book.too_stale_carried) == (1, 1)
    book.add(make_thought(step_seen=30))  # a fresh thought grown too old counts as stale, not as carried
    assert book.usable(0, 0, 41) is NO_THOUGHT and (book.too_stale, book.too_stale_carried) == (2, 1)


def test_a_thought_without_step_built_is_aged_from_step_seen():
    thought = make_thought(step_seen=12)
    assert thought.step_built == -1 and thought.built_on == 12 and not thought.carried and thought.age_at(15) == 3


def test_thoughts_are_kept_per_env():
    book = ThoughtBook(max_staleness_steps=10, confidence_decay_per_step=0.0)
    book.add(make_thought(step_seen=10, env_id=1, action=SELL))
    assert book.usable(0, 0, 11) is NO_THOUGHT
    assert book.usable(1, 0, 11).action == SELL


def test_thoughts_received_names_the_envs_whose_named_thought_has_not_come():
    received = ThoughtsReceived()
    received.record(env_id=0, step_seen=4)
    received.record(env_id=0, step_seen=2)  # an older one arriving late changes nothing
    received.record(env_id=1, step_seen=3)
    assert received.missing([0, 1], [4, 4]) == [1]
    assert received.missing([0, 1], [4, -1]) == []  # -1: the env had no thought for env 1 either
    assert received.missing([0, 1], []) == []  # no dependency named
    received.clear()
    assert received.missing([0, 1], [0, 0]) == [0, 1]
