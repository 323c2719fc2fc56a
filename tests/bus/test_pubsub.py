"""Pub/sub across real processes through the broker."""

import time

import pytest

from bus.messages import Probe, Stats
from runtime.testing import running_actors

pytestmark = pytest.mark.slow


def ping(client, probe_id: int, timeout_secs: float = 10.0) -> Probe:
    client.publish(Probe(probe_id=probe_id, hop=1, hops=2, sent_ns=time.monotonic_ns()), "1")
    return client.recv(Probe, timeout_secs=timeout_secs, where=lambda m: m.probe_id == probe_id)


@pytest.mark.parametrize("transport", ["ipc", "tcp"])
def test_a_message_crosses_two_processes_and_comes_back(transport):
    with running_actors(["runtime.probes:Relay1"], {"bus.transport": transport}) as rt:
        assert rt.addresses.xsub.startswith(f"{transport}://")
        rt.client.subscribe("probe.0", settle_secs=0.5)
        reply = ping(rt.client, 1)
        assert reply.hop == 0 and reply.hops == 2


def test_malformed_frames_are_dropped_and_counted_while_good_frames_flow():
    with running_actors(["runtime.probes:Relay1"], {"runtime.stats_interval_secs": 0.3}) as rt:
        rt.client.subscribe("probe.0", Stats, settle_secs=0.5)
        assert ping(rt.client, 1).probe_id == 1
        rt.client.send_raw([b"probe.1", b"\xc1garbage"])
        rt.client.send_raw([b"probe.1"])
        rt.client.send_raw([b"probe.1", b"\x96\xa9NoSuchMsg\x01\xa1s\x01\x00\x80"])
        assert ping(rt.client, 2).probe_id == 2  # still serving
        stats = rt.client.recv(Stats, timeout_secs=10, where=lambda s: s.actor == "relay1" and s.counters.get("dropped", 0) >= 3)
        assert stats.counters["dropped_malformed"] == 1
        assert stats.counters["dropped_frame_count"] == 1
        assert stats.counters["dropped_unknown_type"] == 1
        log = (rt.run_dir / "logs" / "relay1.jsonl").read_text()
        assert '"event": "frame_dropped"' in log
