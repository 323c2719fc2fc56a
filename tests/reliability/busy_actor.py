"""Test actors busy in their worker thread (as the reasoner is while it generates) when the run stops."""

from __future__ import annotations

import threading
import time

from bus.messages import Heartbeat
from runtime.actor import Actor

TOKEN_SECS = 0.01


class AbortingWorker(Actor):
    """Generates 'tokens' in its worker until told to abort: on_stop sets the flag the worker checks between tokens."""

    subscriptions = (Heartbeat,)

    async def on_start(self) -> None:
        self.abort = threading.Event()
        self.spawn(self.in_worker(self.generate), "generate")

    def generate(self) -> int:
        tokens = 0
        while not self.abort.is_set():  # the check a llama.cpp stopping criterion makes per token
            time.sleep(TOKEN_SECS)
            tokens += 1
        return tokens

    async def on_stop(self) -> None:
        self.abort.set()


class StubbornWorker(AbortingWorker):
    """Never aborts: what the reasoner does today."""

    async def on_stop(self) -> None:
        pass
