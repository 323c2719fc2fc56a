"""actors/common/seen.py: the bounded memory the feed and the dashboard drop resends with."""

import pytest

from actors.common.seen import SeenKeys


def test_a_key_is_new_once_and_a_repeat_is_not():
    seen = SeenKeys(3)
    assert seen.first_time("a") and seen.first_time(("b", 1))
    assert not seen.first_time("a") and not seen.first_time(("b", 1))
    assert len(seen) == 2


def test_past_its_bound_the_oldest_key_is_forgotten_and_reads_as_new_again():
    seen = SeenKeys(2)
    for key in ("a", "b", "c"):
        assert seen.first_time(key)
    assert "a" not in seen and "b" in seen and "c" in seen and len(seen) == 2
    assert seen.first_time("a")  # forgotten, so new again


def test_a_memory_of_no_keys_is_refused():
    with pytest.raises(ValueError, match="max_keys=0"):
        SeenKeys(0)


def test_a_forgotten_key_is_new_once_more_and_clear_forgets_all():
    seen = SeenKeys(4)
    seen.first_time("a"), seen.first_time("b")
    seen.forget("a")
    seen.forget("never met")  # nothing to forget is no error
    assert seen.first_time("a") and not seen.first_time("b")
    seen.clear()
    assert len(seen) == 0 and seen.first_time("b")
