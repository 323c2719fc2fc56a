"""Waiting on events, not on the clock: a busy machine makes things slower, never wrong."""

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout_secs: float = 60.0, what: str = "the condition", poll_secs: float = 0.01) -> T:
    """Poll ``condition`` until it returns something true, and return that; the generous limit only stops a
    broken test from hanging."""
    deadline = time.monotonic() + timeout_secs
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_secs:g} s waiting for {what}")
        time.sleep(poll_secs)
    return value
