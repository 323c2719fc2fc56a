"""A test actor that reads the bus too slowly: it sleeps per message, as a consumer stuck in slow work would."""

from __future__ import annotations

import asyncio

from bus.messages import EnvObs, Message, Probe
from runtime.actor import Actor

SECS_PER_MESSAGE = 0.05
"""20 messages/s: far below what the loop and the test's flood publish."""


class SlowConsumer(Actor):
    """Subscribes to env.obs and probes and handles one message per ``SECS_PER_MESSAGE``.

    The sleep suspends the handler, so reading stops (frames queue in ZMQ up to the high-water marks)
    while the heartbeat keeps going: the supervisor sees a slow actor, not a silent one."""

    subscriptions = (EnvObs, Probe)

    async def on_message(self, msg: Message) -> None:
        self.counters["handled"] += 1
        await asyncio.sleep(SECS_PER_MESSAGE)
