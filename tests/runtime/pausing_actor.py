"""A relay that pauses its reading for 0.5 s when told to: drives the pause_receiving tests."""

import asyncio

from bus.messages import Probe
from runtime.actor import Actor


class PausingRelay(Actor):
    subscriptions = (Probe,)
    subscribe_topics = ("probe.1",)

    async def on_message(self, msg: Probe) -> None:
        if msg.payload == b"pause":
            self.pause_receiving()
            asyncio.get_running_loop().call_later(0.5, self.resume_receiving)
            return
        self.publish(Probe(probe_id=msg.probe_id, hop=0, hops=2, sent_ns=msg.sent_ns), "0")


ACTOR = PausingRelay


class SlowRelay(Actor):
    """Its handler suspends twice (a sleep, then the worker thread) before relaying."""

    subscriptions = (Probe,)
    subscribe_topics = ("probe.1",)

    async def on_message(self, msg: Probe) -> None:
        import time

        await asyncio.sleep(0.02)
        await self.in_worker(time.sleep, 0.01)
        if msg.payload == b"boom":
            raise RuntimeError("handler failed on purpose")
        self.publish(Probe(probe_id=msg.probe_id, hop=0, hops=2, sent_ns=msg.sent_ns), "0")
