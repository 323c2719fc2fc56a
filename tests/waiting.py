"""Waiting on events, not on the clock: a busy machine makes things slower, never wrong."""

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], bool], timeout_secs: float = 60.0, what: str = "the condition") -> None:
    """Poll ``condition`` until it holds; the generous limit only stops a broken test from hanging."""
    deadline = time.monotonic() + timeout_secs
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_secs:.0f} s waiting for {what}")
        time.sleep(0.01)
