"""What one drain reads is handled in send-time order: with direct lanes each sender has its own connection."""

from __future__ import annotations

from bus.codec import Encoder
from bus.messages import Probe
from runtime.actor import Actor
from runtime.testing import actor_harness


class OrderRecorder(Actor):
    subscriptions = (Probe,)

    async def on_start(self) -> None:
        self.seen: list[int] = []

    async def on_message(self, msg: Probe) -> None:
        self.seen.append(msg.probe_id)


def probe_frames(encoder: Encoder, probe_id: int) -> list[bytes]:
    return list(encoder.encode(Probe(probe_id=probe_id, hop=1, hops=2, sent_ns=0), "1"))


async def test_a_frame_sent_earlier_on_another_lane_is_handled_before_one_read_ahead_of_it():
    reasoner, policy = Encoder("reasoner:1"), Encoder("policy:2")
    thought = probe_frames(reasoner, 1)  # sent first (its envelope's send time is earlier) ...
    proposal = probe_frames(policy, 2)
    async with actor_harness(OrderRecorder) as h:
        h.bus.feed(proposal)  # ... but its lane is read second
        h.bus.feed(thought)
        await h.settle()
        assert h.actor.seen == [1, 2]


async def test_one_senders_frames_keep_their_order_and_a_lone_frame_is_handled_at_once():
    env = Encoder("env:3")
    frames = [probe_frames(env, probe_id) for probe_id in (5, 6, 7)]
    async with actor_harness(OrderRecorder) as h:
        for f in frames:
            h.bus.feed(f)
        await h.settle()
        h.bus.feed(probe_frames(env, 8))
        await h.settle()
        assert h.actor.seen == [5, 6, 7, 8]
