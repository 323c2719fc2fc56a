"""Probe actors: a ring of hops that relays ``Probe`` messages, for latency benchmarks and health checks.

Hop 0 (``Pinger``) sends ``probe.1``; hop k relays to ``probe.<k+1>``, the last back to
``probe.0``. The pinger records each round trip and writes ``probe.json`` to the run
directory when it has done ``PROBE_COUNT`` round trips (environment variables set by the
benchmark), then announces ``sys.done``.
"""

from __future__ import annotations

import json
import os
import time
from typing import ClassVar

from bus.messages import Probe
from runtime.actor import Actor


class Relay(Actor):
    hop: ClassVar[int] = 1
    subscriptions = (Probe,)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.subscribe_topics = (f"probe.{cls.hop}",)

    async def on_message(self, msg: Probe) -> None:
        next_hop = (msg.hop + 1) % msg.hops
        self.publish(Probe(probe_id=msg.probe_id, hop=next_hop, hops=msg.hops, sent_ns=msg.sent_ns, payload=msg.payload), str(next_hop))


class Relay1(Relay):
    hop = 1


class Relay2(Relay):
    hop = 2


class Relay3(Relay):
    hop = 3


class Pinger(Relay):
    """Hop 0: starts probes one at a time and times each round trip."""

    hop = 0

    async def on_start(self) -> None:
        self.count = int(os.environ.get("TT_PROBE_COUNT", "1000"))
        self.hops = int(os.environ.get("TT_PROBE_HOPS", "2"))
        self.warmup = int(os.environ.get("TT_PROBE_WARMUP", "100"))
        self.payload = b"x" * int(os.environ.get("TT_PROBE_PAYLOAD_BYTES", "200"))
        self.rtts_ns: list[int] = []
        self.sent = 0
        self.spawn(self._kick(), "kick")

    async def _kick(self) -> None:
        import asyncio

        # Every hop started (a heartbeat comes after its subscriptions; on a busy machine a relay can start seconds
        # after the pinger, and a probe sent before is lost for good), then a moment for the subscriptions to settle.
        await self.wait_for_peers(self.loop_peers(), timeout_secs=300.0)
        await asyncio.sleep(1.0)
        self._send()

    def _send(self) -> None:
        self.sent += 1
        self.publish(Probe(probe_id=self.sent, hop=1, hops=self.hops, sent_ns=time.monotonic_ns(), payload=self.payload), "1")

    async def on_message(self, msg: Probe) -> None:
        if msg.probe_id != self.sent:
            return
        if self.sent > self.warmup:
            self.rtts_ns.append(time.monotonic_ns() - msg.sent_ns)
        if len(self.rtts_ns) >= self.count:
            (self.run_dir / "probe.json").write_text(json.dumps({"hops": self.hops, "rtts_ns": self.rtts_ns}))
            self.done("probes_complete", {"round_trips": float(len(self.rtts_ns))})
            return
        self._send()
