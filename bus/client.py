"""Bus clients: an asyncio one for actors and a plain synchronous one for scripts and tests."""

from __future__ import annotations

import time
from collections import Counter
from typing import Iterable

import zmq

from bus.broker import BusAddresses
from bus.codec import Decoded, Decoder, Encoder, FrameError, SequenceTracker
from bus.messages import Message


def topic_bytes(sub: type[Message] | str) -> bytes:
    return (sub if isinstance(sub, str) else sub.TOPIC).encode()


PEER_RECONNECT_IVL_MS = 10
"""How soon a subscriber retries an actor's direct lane that is not bound yet, or again after its restart
(libzmq's default is 100 ms: a restarted actor's first messages would be lost for that long)."""


def _configure(sock: zmq.Socket, hwm: int, linger_ms: int, curve=None) -> None:
    sock.setsockopt(zmq.LINGER, linger_ms)
    sock.setsockopt(zmq.SNDHWM, hwm)
    sock.setsockopt(zmq.RCVHWM, hwm)
    if curve is not None:  # before connect: the handshake is negotiated at connection time
        from bus.auth import make_client

        make_client(sock, *curve)


def _connect_subscriber(sub: zmq.Socket, addresses: BusAddresses) -> None:
    """The broker's XPUB and every actor's direct lane (bus.direct)."""
    if addresses.peers:
        sub.setsockopt(zmq.RECONNECT_IVL, PEER_RECONNECT_IVL_MS)
    for address in addresses.subscribe_addresses():
        sub.connect(address)


class Receiver:
    """Decoding, drop counting and gap tracking shared by both clients (and runtime.testing's RecordingBus)."""

    def __init__(self, max_frame_bytes: int) -> None:
        self.decoder = Decoder(max_frame_bytes)
        self.sequences = SequenceTracker()
        self.dropped: Counter[str] = Counter()
        self.received = 0
        self.last_error: FrameError | None = None

    def decode(self, frames: list[bytes]) -> Decoded | None:
        """The decoded message, or None when the frame was dropped (and counted)."""
        self.received += 1
        try:
            decoded = self.decoder.decode(frames)
        except FrameError as exc:
            self.dropped[exc.kind.value] += 1
            self.last_error = exc
            return None
        self.sequences.observe(decoded.sender, decoded.seq, decoded.topic)
        return decoded


class Client(Receiver):
    """What both clients open and close: an encoder, a zmq context, a PUB and a SUB (CURVE on both when the broker
    runs it). The PUB binds the actor's own direct lane when ``addresses.peers`` lists ``name``, else connects to the
    broker; the SUB connects to the broker and to every lane."""

    def __init__(self, addresses: BusAddresses, sender: str, name: str, hwm: int, max_frame_bytes: int, *,
                 pub_linger_ms: int) -> None:
        super().__init__(max_frame_bytes)
        self.encoder = Encoder(sender)
        self.context = zmq.Context()
        curve = addresses.client_keys()  # None unless the broker runs CURVE (bus.json says so)
        self.pub = self.context.socket(zmq.PUB)
        _configure(self.pub, hwm, linger_ms=pub_linger_ms, curve=curve)
        if name and name in addresses.peers:  # libzmq replaces a socket file left by a killed predecessor
            self.pub.bind(addresses.peers[name])
        else:
            self.pub.connect(addresses.xsub)
        self.sub = self.context.socket(zmq.SUB)
        _configure(self.sub, hwm, linger_ms=0, curve=curve)
        _connect_subscriber(self.sub, addresses)

    def close(self) -> None:
        self.sub.close(linger=0)
        self.pub.close()
        self.context.term()


class AsyncBus(Client):
    """The actor's connection: plain zmq sockets driven by the event loop.

    PUB never blocks. SUB is read without zmq.asyncio's per-receive futures: the actor's
    event loop watches the socket's file descriptor and drains every queued frame with
    NOBLOCK (ZMQ_FD is edge-triggered, so reading stops only at EAGAIN).
    """

    def __init__(self, addresses: BusAddresses, sender: str, *, name: str = "", hwm: int = 10000,
                 max_frame_bytes: int = 64 << 20) -> None:
        """``name``: the actor's short name; when ``addresses.peers`` lists it, its PUB binds that direct lane
        instead of connecting to the broker."""
        super().__init__(addresses, sender, name, hwm, max_frame_bytes, pub_linger_ms=1000)  # let the last messages (done, stats) leave on close
        self.lanes = bool(addresses.peers)
        """Frames come on several connections (direct lanes): the actor handles each batch it reads in send-time order."""
        self.sent = 0
        self.hop_timer = None
        """A runtime.hops.HopTimer when TT_PROFILE=hops: publish then times encoding and sending."""
        self.publish_ns = 0
        """With a hop timer: ns spent publishing since the actor last reset it (taken out of its handler's time)."""

    def subscribe(self, subs: Iterable[type[Message] | str]) -> None:
        for sub in subs:
            self.sub.setsockopt(zmq.SUBSCRIBE, topic_bytes(sub))

    def publish(self, msg: Message, subtopic: str = "") -> None:
        timer = self.hop_timer
        if timer is None:
            self.pub.send_multipart(self.encoder.encode(msg, subtopic), copy=True)
        else:
            started = time.thread_time_ns()  # CPU time of this thread: a switch to another process inside send is not send's cost
            frames = self.encoder.encode(msg, subtopic)
            encoded = time.thread_time_ns()
            self.pub.send_multipart(frames, copy=True)
            sent = time.thread_time_ns()
            timer.add(msg.TOPIC, "encode", encoded - started)
            timer.add(msg.TOPIC, "send", sent - encoded)
            self.publish_ns += sent - started
        self.sent += 1

    def poll_frames(self) -> list[bytes] | None:
        """The next queued frames, or None when nothing is waiting (never blocks).

        ZMQ_EVENTS first: a drain ends on an empty socket every time, and a failed recv raises zmq.Again,
        which costs a few times more than asking (it also processes the socket's pending commands, as
        the ZMQ_FD contract asks before waiting on the fd again)."""
        if not self.sub.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            return None
        try:
            return self.sub.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            return None

    @property
    def fd(self) -> int:
        """The SUB socket's ZMQ_FD, for the event loop's reader (edge-triggered: drain with poll_frames)."""
        return self.sub.getsockopt(zmq.FD)


class SyncBus(Client):
    """A blocking client for scripts, tools and tests. Receives always take a timeout."""

    def __init__(self, addresses: BusAddresses, sender: str = "client", *, hwm: int = 10000, max_frame_bytes: int = 64 << 20) -> None:
        super().__init__(addresses, sender, "", hwm, max_frame_bytes, pub_linger_ms=500)
        self.poller = zmq.Poller()
        self.poller.register(self.sub, zmq.POLLIN)

    def subscribe(self, *subs: type[Message] | str, settle_secs: float = 0.2) -> None:
        """Subscribe by message type or topic prefix; waits briefly so the subscription reaches publishers."""
        for sub in subs:
            self.sub.setsockopt(zmq.SUBSCRIBE, topic_bytes(sub))
        if settle_secs:
            time.sleep(settle_secs)

    def unsubscribe(self, *subs: type[Message] | str) -> None:
        """Undo one subscribe() of each (ZMQ counts identical subscriptions)."""
        for sub in subs:
            self.sub.setsockopt(zmq.UNSUBSCRIBE, topic_bytes(sub))

    def publish(self, msg: Message, subtopic: str = "") -> None:
        self.pub.send_multipart(self.encoder.encode(msg, subtopic))

    def send_raw(self, frames: list[bytes]) -> None:
        """Send frames as they are (tests of malformed input)."""
        self.pub.send_multipart(frames)

    def recv_decoded(self, timeout_secs: float = 5.0) -> Decoded:
        deadline = time.monotonic() + timeout_secs
        while True:
            remaining_ms = max(0, int((deadline - time.monotonic()) * 1000))
            if not self.poller.poll(remaining_ms):
                raise TimeoutError(f"no message within {timeout_secs} s")
            decoded = self.decode(self.sub.recv_multipart())
            if decoded is not None:
                return decoded

    def recv(self, kind: type[Message] | None = None, timeout_secs: float = 5.0, where=None) -> Message:
        """The next message (of ``kind``, and matching ``where(msg)`` if given); others are skipped."""
        deadline = time.monotonic() + timeout_secs
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {kind.__name__ if kind else 'message'} within {timeout_secs} s")
            msg = self.recv_decoded(remaining).msg
            if (kind is None or isinstance(msg, kind)) and (where is None or where(msg)):
                return msg

    def __enter__(self) -> "SyncBus":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
