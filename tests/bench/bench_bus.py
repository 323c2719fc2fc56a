"""Bus benchmark (``bin/bench bus``): the project's bus beside raw pyzmq, measured in one run.

1. Throughput of a ~300-byte message: project codec through the broker vs raw PUB/SUB bytes.
2. Ping-pong round trip between two actors, each way its baseline:
   - direct lanes (``bus.direct = true``) vs raw synchronous pyzmq ping-pong between two
     processes whose PUB and SUB sockets connect to each other;
   - through the broker (``bus.direct = false``, the default) vs raw pyzmq ping-pong through an XSUB/XPUB proxy.
3. Round trip through 4 actor hops (A->B->C->D->A), the decision-loop shape, both ways.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time

import zmq

from bus.broker import Broker, BusAddresses
from bus.client import SyncBus
from bus.codec import Encoder
from bus.messages import Probe
from tests.bench.common import percentiles_us, print_table

PAYLOAD = b"x" * 240  # + envelope and fields = about 300 bytes on the wire


def _ipc(tag: str) -> str:
    return f"ipc://{tempfile.gettempdir()}/ttb-{os.getpid()}-{tag}"


# ------------------------------------------------------------------ throughput


def _project_publisher(addresses: BusAddresses, count: int, start: mp.Event) -> None:
    client = SyncBus(addresses, sender="bench-pub", hwm=count + 10)
    start.wait()
    for i in range(count):
        client.publish(Probe(probe_id=i, hop=1, hops=2, sent_ns=0, payload=PAYLOAD))
    client.close()


def _raw_publisher(address: str, frames: list[bytes], count: int, start: mp.Event) -> None:
    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    pub.setsockopt(zmq.SNDHWM, count + 10)
    pub.connect(address)
    start.wait()
    for _ in range(count):
        pub.send_multipart(frames)
    pub.close(linger=5000)
    ctx.term()


def _serve_broker(addresses: BusAddresses, ready: mp.Event, stop: mp.Event) -> None:
    import threading

    broker = Broker(addresses, hwm=1_000_000)
    ready.set()
    stop_flag = threading.Event()
    threading.Thread(target=lambda: (stop.wait(), stop_flag.set()), daemon=True).start()
    broker.serve_until(stop_flag)


def _receive(sub_recv, count: int, timeout_secs: float = 30.0) -> tuple[int, float]:
    """Receive up to ``count`` messages; (received, seconds from first to last)."""
    got = 0
    first = last = 0.0
    deadline = time.monotonic() + timeout_secs
    while got < count and time.monotonic() < deadline:
        if sub_recv():
            last = time.perf_counter()
            if got == 0:
                first = last
            got += 1
    return got, max(last - first, 1e-9)


def throughput_project(count: int) -> tuple[float, int]:
    addresses = BusAddresses(_ipc("tin"), _ipc("tout"))
    ready, stop, start = mp.Event(), mp.Event(), mp.Event()
    broker = mp.Process(target=_serve_broker, args=(addresses, ready, stop))
    broker.start()
    ready.wait(10)
    client = SyncBus(addresses, sender="bench-sub", hwm=count + 10)
    client.subscribe(Probe, settle_secs=0.5)
    pub = mp.Process(target=_project_publisher, args=(addresses, count, start))
    pub.start()
    time.sleep(0.5)
    start.set()

    def recv_one() -> bool:
        try:
            client.recv_decoded(timeout_secs=2.0)
            return True
        except TimeoutError:
            return False

    got, secs = _receive(recv_one, count)
    pub.join()
    client.close()
    stop.set()
    broker.join(5)
    return got / secs, got


def throughput_raw(count: int) -> tuple[float, int]:
    frames = list(Encoder("bench").encode(Probe(probe_id=1, hop=1, hops=2, sent_ns=0, payload=PAYLOAD)))
    address = _ipc("raw")
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.RCVHWM, count + 10)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.bind(address)
    start = mp.Event()
    pub = mp.Process(target=_raw_publisher, args=(address, frames, count, start))
    pub.start()
    time.sleep(0.5)
    start.set()
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)

    def recv_one() -> bool:
        if sub.poll(2000):
            sub.recv_multipart()
            return True
        return False

    got, secs = _receive(recv_one, count)
    pub.join()
    sub.close(linger=0)
    ctx.term()
    return got / secs, got


# ------------------------------------------------------------------ ping-pong


def _raw_ponger(pub_address: str, sub_address: str, count: int, bind_pub: bool = False) -> None:
    """Answers each ping with a pong: its PUB connects to the proxy's XSUB (or binds its own address, direct), its SUB
    connects to ``sub_address``."""
    ctx = zmq.Context()
    pub, sub = ctx.socket(zmq.PUB), ctx.socket(zmq.SUB)
    pub.bind(pub_address) if bind_pub else pub.connect(pub_address)
    sub.connect(sub_address)
    sub.setsockopt(zmq.SUBSCRIBE, b"ping")
    for _ in range(count):
        _topic, body = sub.recv_multipart()
        pub.send_multipart([b"pong", body])
    pub.close(linger=1000)
    sub.close(linger=0)
    ctx.term()


def _time_pingpong(pub: zmq.Socket, sub: zmq.Socket, count: int, warmup: int) -> list[int]:
    """Round trips in ns after ``warmup``, once a first ping has come back (both subscriptions through)."""
    sub.setsockopt(zmq.RCVTIMEO, 200)
    body = b"x" * 300
    while True:  # wait until both subscriptions are through
        pub.send_multipart([b"ping", body])
        try:
            sub.recv_multipart()
            break
        except zmq.Again:
            continue
    while True:  # drain duplicates of the warm-up pings
        try:
            sub.recv_multipart()
        except zmq.Again:
            break
    sub.setsockopt(zmq.RCVTIMEO, 5000)
    rtts = []
    for i in range(count + warmup):
        t0 = time.monotonic_ns()
        pub.send_multipart([b"ping", body])
        sub.recv_multipart()
        if i >= warmup:
            rtts.append(time.monotonic_ns() - t0)
    return rtts


def _pinger(pub_address: str, sub_address: str, count: int, warmup: int, *, direct: bool) -> list[int]:
    """Raw round trips against a _raw_ponger: through a proxy (both connect to its XSUB / XPUB) or direct (each binds
    its PUB and connects its SUB to the other's)."""
    ctx = zmq.Context()
    pub, sub = ctx.socket(zmq.PUB), ctx.socket(zmq.SUB)
    pub.bind(pub_address) if direct else pub.connect(pub_address)
    pong_pub, pong_sub = (sub_address, pub_address) if direct else (pub_address, sub_address)
    ponger = mp.Process(target=_raw_ponger, args=(pong_pub, pong_sub, count + warmup + 1000, direct))
    ponger.start()
    sub.connect(sub_address)
    sub.setsockopt(zmq.SUBSCRIBE, b"pong")
    rtts = _time_pingpong(pub, sub, count, warmup)
    ponger.terminate()
    pub.close(linger=0)
    sub.close(linger=0)
    ctx.term()
    return rtts


def pingpong_raw(count: int, warmup: int) -> list[int]:
    addresses = BusAddresses(_ipc("pin"), _ipc("pout"))
    ready, stop = mp.Event(), mp.Event()
    broker = mp.Process(target=_serve_broker, args=(addresses, ready, stop))
    broker.start()
    ready.wait(10)
    rtts = _pinger(addresses.xsub, addresses.xpub, count, warmup, direct=False)
    stop.set()
    broker.join(5)
    return rtts


def pingpong_raw_direct(count: int, warmup: int) -> list[int]:
    """Raw pyzmq, no proxy: the direct lanes' shape."""
    return _pinger(_ipc("dping"), _ipc("dpong"), count, warmup, direct=True)


def ring_project(hops: int, count: int, warmup: int, direct: bool = True) -> list[int]:
    from bus.messages import Done
    from runtime.testing import running_actors

    os.environ.update(TT_PROBE_COUNT=str(count), TT_PROBE_HOPS=str(hops), TT_PROBE_WARMUP=str(warmup))
    actors = ["runtime.probes:Pinger"] + [f"runtime.probes:Relay{k}" for k in range(1, hops)]
    with running_actors(actors, {"runtime.stats_interval_secs": 60.0, "bus.direct": direct}) as rt:
        rt.client.subscribe(Done, settle_secs=0)
        rt.client.recv(Done, timeout_secs=120)
        return json.loads((rt.run_dir / "probe.json").read_text())["rtts_ns"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/bench bus", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=200_000, help="messages for the throughput test")
    parser.add_argument("--round-trips", type=int, default=3000, help="round trips for the latency tests")
    args = parser.parse_args(argv)
    mp.set_start_method("spawn", force=True)

    raw_rate, raw_got = throughput_raw(args.messages)
    proj_rate, proj_got = throughput_project(args.messages)
    raw_direct = percentiles_us(pingpong_raw_direct(args.round_trips, warmup=200))
    raw_proxy = percentiles_us(pingpong_raw(args.round_trips, warmup=200))
    direct = percentiles_us(ring_project(2, args.round_trips, warmup=200, direct=True))
    brokered = percentiles_us(ring_project(2, args.round_trips, warmup=200, direct=False))
    ring_direct = percentiles_us(ring_project(4, args.round_trips, warmup=200, direct=True))
    ring_brokered = percentiles_us(ring_project(4, args.round_trips, warmup=200, direct=False))
    size = len(Encoder("bench").encode(Probe(probe_id=1, hop=1, hops=2, sent_ns=0, payload=PAYLOAD))[1])
    rows = [(f"throughput msgs/s (received {proj_got}/{raw_got})", f"{proj_rate:,.0f}", f"{raw_rate:,.0f} raw PUB/SUB",
             f"{proj_rate / raw_rate:.2f}x", ">= 0.5x")]
    for way, (p50, p99), (raw50, raw99), raw_name in (("direct lanes", direct, raw_direct, "raw direct"),
                                                      ("via the broker", brokered, raw_proxy, "raw via proxy")):
        rows += [(f"ping-pong p50 us, {way}", f"{p50:.0f}", f"{raw50:.0f} {raw_name}", f"{p50 / raw50:.2f}x", "<= 1.3x"),
                 (f"ping-pong p99 us, {way}", f"{p99:.0f}", f"{raw99:.0f} {raw_name}", f"{p99 / raw99:.2f}x", "")]
    for way, (r50, r99) in (("direct lanes", ring_direct), ("via the broker", ring_brokered)):
        rows += [(f"4-hop ring p50 us, {way}", f"{r50:.0f}", "-", "-", "<= 1000"), (f"4-hop ring p99 us, {way}", f"{r99:.0f}", "-", "-", "")]
    print_table(f"bus benchmark ({size}-byte payload frames)", rows)

if __name__ == "__main__":
    main()
