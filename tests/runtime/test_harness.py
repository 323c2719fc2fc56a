"""The in-process harness: one actor in the test's event loop, the real codec, a recording bus."""

from __future__ import annotations

import asyncio
import time

import pytest
from structlog.testing import capture_logs

from bus.messages import Heartbeat, Probe, Shutdown
from runtime.actor import Actor
from runtime.probes import Relay1
from runtime.testing import actor_harness


def probe(hop: int = 1, probe_id: int = 7) -> Probe:
    return Probe(probe_id=probe_id, hop=hop, hops=3, sent_ns=0, payload=b"x")


class SlowRelay(Actor):
    """Relays after awaiting its worker thread: a handler that suspends."""

    subscriptions = (Probe,)

    async def on_message(self, msg: Probe) -> None:
        await self.in_worker(lambda: None)
        await asyncio.sleep(0.01)
        self.publish(Probe(probe_id=msg.probe_id, hop=0, hops=msg.hops, sent_ns=msg.sent_ns, payload=b""), "0")


class CatchingRelay(Actor):
    """Awaits a worker that raises, catches it, and relays the error's text: the handler sees the exception."""

    subscriptions = (Probe,)

    async def on_message(self, msg: Probe) -> None:
        try:
            await self.in_worker(self._fail)
        except ValueError as exc:
            self.publish(Probe(probe_id=msg.probe_id, hop=0, hops=msg.hops, sent_ns=msg.sent_ns, payload=str(exc).encode()), "0")

    @staticmethod
    def _fail() -> None:
        raise ValueError("worker failed")


class SlowSyncRelay(Actor):
    """A plain handler that takes 2 ms a message: slower than a backlog arrives."""

    subscriptions = (Probe,)

    def on_message(self, msg: Probe) -> None:
        time.sleep(0.002)
        self.publish(Probe(probe_id=msg.probe_id, hop=0, hops=msg.hops, sent_ns=msg.sent_ns, payload=b""), "0")


class FailingActor(Actor):
    subscriptions = (Probe,)

    async def on_message(self, msg: Probe) -> None:
        raise RuntimeError("boom")


async def test_a_message_goes_through_the_codec_into_the_handler_and_its_answer_is_recorded_typed():
    async with actor_harness(Relay1) as h:
        h.send(probe(hop=1), "1")
        await h.settle()

        answer = await h.recv(Probe)
        assert answer.probe_id == 7 and answer.hop == 2
        assert [record.topic for record in h.published if isinstance(record.msg, Probe)] == [b"probe.2"]
        assert h.actor.stats().counters["msgs_in"] == 1


async def test_frames_of_topics_the_actor_did_not_subscribe_never_reach_it():
    async with actor_harness(Relay1) as h:
        delivered = h.send(probe(hop=2), "2")
        await h.settle()

        assert delivered is False
        assert h.messages(Probe) == []


async def test_a_malformed_frame_is_dropped_counted_and_logged_and_the_actor_carries_on():
    with capture_logs() as logs:
        async with actor_harness(Relay1) as h:
            h.send_raw([b"probe.1", b"\xc1 not msgpack"])
            h.send(probe(hop=1), "1")
            await h.settle()

            assert h.dropped == {"malformed": 1}
            assert (await h.recv(Probe)).hop == 2
    dropped = [entry for entry in logs if entry["event"] == "frame_dropped"]
    assert len(dropped) == 1 and dropped[0]["kind"] == "malformed" and dropped[0]["log_level"] == "warning"


async def test_settle_waits_for_a_handler_that_suspends_and_messages_queue_behind_it():
    async with actor_harness(SlowRelay) as h:
        await h.deliver(probe(probe_id=1), probe(probe_id=2))

        assert [answer.probe_id for answer in h.messages(Probe)] == [1, 2]


async def test_a_suspended_handler_gets_the_exception_of_what_it_awaited_and_carries_on():
    async with actor_harness(CatchingRelay) as h:
        await h.deliver(probe(probe_id=1), probe(probe_id=2))

        assert [(answer.probe_id, answer.payload) for answer in h.messages(Probe)] == [(1, b"worker failed"), (2, b"worker failed")]
        assert h.exit_code is None


async def test_recv_keeps_messages_that_do_not_match_for_later_calls():
    async with actor_harness(Relay1) as h:
        h.send(probe(probe_id=1), "1")
        h.send(probe(probe_id=2), "1")
        await h.settle()

        second = await h.recv(Probe, where=lambda m: m.probe_id == 2)
        first = await h.recv(Probe)
        assert (first.probe_id, second.probe_id) == (1, 2)
        with pytest.raises(TimeoutError):
            await h.recv(Probe, timeout_secs=0.05)


async def test_the_actor_heartbeats_and_a_shutdown_message_stops_it_cleanly():
    async with actor_harness(Relay1) as h:
        await h.recv(Heartbeat)
        await h.deliver(Shutdown(reason="test_over"))

        assert await asyncio.wait_for(h.stop(), 5) == 0


async def test_an_actor_working_through_a_long_backlog_keeps_heartbeating():
    # The reniced reasoner beside a full-speed backtest handled env.obs slower than they came, never left its
    # drain loop, sent no heartbeat and was restarted as silent in every main job.
    async with actor_harness(SlowSyncRelay, {"runtime.heartbeat_interval_secs": 0.05}) as h:
        await h.recv(Heartbeat)
        for probe_id in range(400):  # 0.8 s of handling, queued at once
            h.send(probe(probe_id=probe_id), "1")
        await h.settle(timeout_secs=120)

        kinds = [type(record.msg) for record in h.published]
        first_relay, last_relay = kinds.index(Probe), len(kinds) - 1 - kinds[::-1].index(Probe)
        assert kinds.count(Probe) == 400
        assert Heartbeat in kinds[first_relay:last_relay], "no heartbeat while the backlog was handled"


async def test_a_failing_handler_stops_the_actor_with_exit_code_1_and_logs_the_failure():
    with capture_logs() as logs:
        async with actor_harness(FailingActor) as h:
            await h.deliver(probe())
            await asyncio.sleep(0.01)

            assert h.exit_code == 1
    assert any(entry["event"] == "handler_failed" and entry["message_type"] == "Probe" for entry in logs)
