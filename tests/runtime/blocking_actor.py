"""A relay whose handler blocks its event loop when told to (no heartbeat meanwhile): computing (``busy``: CPU time
grows, the supervisor must see a slow actor) or asleep (``hang``: no progress, the supervisor must see a silent one).
The payload names the seconds: ``busy:3``, ``hang:30``."""

import time

from bus.messages import Probe
from runtime.actor import Actor


class BlockingRelay(Actor):
    subscriptions = (Probe,)
    subscribe_topics = ("probe.1",)

    def on_message(self, msg: Probe) -> None:  # plain: a block here holds the loop, heartbeats included
        kind, _, secs = msg.payload.decode().partition(":")
        end = time.monotonic() + float(secs or 0)
        if kind == "busy":
            while time.monotonic() < end:
                sum(range(10_000))
        elif kind == "hang":
            time.sleep(float(secs))
        self.publish(Probe(probe_id=msg.probe_id, hop=0, hops=2, sent_ns=msg.sent_ns), "0")


ACTOR = BlockingRelay
