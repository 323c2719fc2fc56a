"""Faults: one actor reads far slower than the bus delivers; the high-water marks bound its memory and
every message it misses shows up as a counted sequence gap, never a silent loss."""

import time

import pytest

from actors.jobs.chaos import LOOP_ACTORS
from actors.jobs.soak import read_rss_kb
from bus.client import SyncBus
from bus.messages import Probe, RiskVerdict, Stats
from runtime.testing import running_actors

pytestmark = pytest.mark.slow

HWM = 100
"""Messages per queue (the slow actor's SUB and the broker's XPUB pipe to it): low, so 20 s fill them."""
FLOOD_SECS = 20.0
PAYLOAD_BYTES = 32 * 1024
FLOOD_INTERVAL_SECS = 0.002
"""Up to ~500 fat probes/s (~16 MB/s, ~300 MB over the flood) on top of the loop's env.obs at full speed."""
MAX_RSS_GROWTH_MB = 40.0
"""Two full queues of HWM frames (~6.5 MB) plus the allocator's slack; an unbounded queue would grow by
what was published minus what was handled, hundreds of MB."""
SETTINGS = {
    "env.mode": "train", "env.split": "test", "env.n_envs": 2, "env.step_interval_ms": 0.0,
    "policy.learn": False, "fusion.learn": False,
    "bus.send_hwm": HWM, "bus.recv_hwm": HWM, "runtime.stats_interval_secs": 1.0,
    # The flood is a tool's, so it comes through the broker. On direct lanes the slow actor's socket also reads the
    # five actors' lanes, fair-queued: it reads the flood's pipe a sixth of the time and learns of a lost probe only
    # when it reads a later one, so at the end most losses are not yet known (83 counted of 8,255 missed; memory
    # stayed bounded, 50 -> 58 MB). Through the broker alone every loss is known by then.
    "bus.direct": False,
}
SLOW = "tests.reliability.slow_actor:SlowConsumer"


def _flood(client: SyncBus, pid: int) -> tuple[int, list[float], int]:
    """Publish fat probes for FLOOD_SECS; (probes sent, the slow process's RSS in MB each second, verdicts seen)."""
    payload = b"x" * PAYLOAD_BYTES
    sent, rss_mb, verdicts = 0, [read_rss_kb(pid) / 1024.0], 0
    started = next_sample = time.monotonic()
    while (now := time.monotonic()) < started + FLOOD_SECS:
        client.publish(Probe(probe_id=sent, hop=0, hops=1, sent_ns=time.monotonic_ns(), payload=payload))
        sent += 1
        if now >= next_sample:
            rss_mb.append(read_rss_kb(pid) / 1024.0)
            next_sample += 1.0
        verdicts += _count_verdicts(client)
        time.sleep(FLOOD_INTERVAL_SECS)
    return sent, rss_mb, verdicts


def _count_verdicts(client: SyncBus) -> int:
    """The verdicts queued for the (fast) test client: the loop keeps deciding at full speed."""
    count = 0
    while client.poller.poll(0):
        decoded = client.decode(client.sub.recv_multipart())
        count += decoded is not None and isinstance(decoded.msg, RiskVerdict)
    return count


def _slow_stats(client: SyncBus) -> Stats:
    """The slow actor's next sys.stats after the flood (its stats task runs while the handler sleeps, so it is current)."""
    client.subscribe(Stats, settle_secs=0.2)
    return client.recv(Stats, timeout_secs=10, where=lambda m: m.actor == "slowconsumer")


def test_a_slow_subscriber_stays_bounded_in_memory_and_counts_what_it_missed():
    with running_actors([*LOOP_ACTORS, SLOW], SETTINGS) as rt:
        with SyncBus(rt.addresses, sender="flood", hwm=HWM) as client:
            client.subscribe(RiskVerdict, settle_secs=0.3)
            sent, rss_mb, verdicts = _flood(client, rt.pid("slowconsumer"))
            stats = _slow_stats(client)
        restarts = [e for e in rt.supervisor.events if e.actor == "slowconsumer" and e.kind == "exited"]

    growth_mb = max(rss_mb) - rss_mb[0]
    handled, gaps = stats.counters.get("handled", 0), stats.counters["seq_gaps"]
    summary = f"sent {sent} probes, slow handled {handled}, seq_gaps {gaps}, RSS MB {rss_mb[0]:.1f} -> max {max(rss_mb):.1f}"
    assert sent * PAYLOAD_BYTES > 100 * 2**20, summary
    assert growth_mb < MAX_RSS_GROWTH_MB, summary
    assert handled < sent / 5, "the consumer really was slow: " + summary
    # A loss is counted when a later message of its sender arrives: at the last stats (up to a second old, ~450
    # probes) the losses behind the frames still queued are not known yet. Measured: 0.44 to over 0.5 of the missed.
    assert gaps >= (sent - handled) / 4, "what it missed is counted as sequence gaps: " + summary
    assert verdicts > 0, "the loop kept deciding while one subscriber lagged"
    assert not restarts, "a slow actor keeps its heartbeat: the supervisor does not restart it"
