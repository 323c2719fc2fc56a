"""The wire format: ``[topic, payload]`` frames, payload = msgpack envelope.

Envelope (a msgpack array): ``[type, schema_version, sender, seq, sent_ns, body]`` where
body is the msgpack of the message struct. numpy arrays are msgpack extension type 1:
``u8 header length + msgpack([dtype, shape]) + raw bytes`` (never pickled, never lists of floats).

Decoding is defensive. Each way a frame can be bad is a ``DropKind``; ``decode`` raises
``FrameError(kind)`` and the receiving side counts it and carries on.
"""

from __future__ import annotations

import math
import time
from enum import Enum
from typing import Any

import msgspec
import numpy as np

from bus.messages import MESSAGE_TYPES, Message

NDARRAY_EXT = 1
# Only plain numeric dtypes may be decoded: never object arrays.
ALLOWED_DTYPES = frozenset(
    np.dtype(t).str for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")
)
DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_ARRAY_DIM = 1 << 32
"""Larger dimensions are refused before their product is taken (it would overflow int64)."""


class DropKind(str, Enum):
    FRAME_COUNT = "frame_count"
    """Not exactly two frames (topic, payload)."""
    OVERSIZE = "oversize"
    """Payload larger than the configured limit: not unpacked."""
    MALFORMED = "malformed"
    """Not a msgpack envelope."""
    UNKNOWN_TYPE = "unknown_type"
    SCHEMA_VERSION = "schema_version"
    FIELD_TYPE = "field_type"
    """Body does not match the struct (missing field, wrong type, bad array)."""
    TOPIC_MISMATCH = "topic_mismatch"
    """Topic frame is neither the message type's topic nor a sub-topic of it."""
    NON_FINITE = "non_finite"
    """NaN or infinity in a number the receiver computes with (observations, probabilities, prices)."""


class FrameError(Exception):
    def __init__(self, kind: DropKind, detail: str) -> None:
        super().__init__(f"{kind.value}: {detail}")
        self.kind = kind
        self.detail = detail


class Envelope(msgspec.Struct, frozen=True, array_like=True):
    type: str
    version: int
    sender: str
    seq: int
    sent_ns: int
    body: msgspec.Raw


_HEADER_CACHE: dict[bytes, tuple[np.dtype, tuple[int, ...], int]] = {}
_PREFIX_CACHE: dict[tuple[str, tuple[int, ...]], bytes] = {}
_HEADER_CACHE_MAX = 1024


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        key = (arr.dtype.str, arr.shape)
        prefix = _PREFIX_CACHE.get(key)
        if prefix is None:
            header = msgspec.msgpack.encode(key)
            prefix = bytes((len(header),)) + header
            if len(_PREFIX_CACHE) < _HEADER_CACHE_MAX:
                _PREFIX_CACHE[key] = prefix
        return msgspec.msgpack.Ext(NDARRAY_EXT, prefix + arr.tobytes())
    if isinstance(obj, np.generic):
        return obj.item()
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


_HEADER_DECODER = msgspec.msgpack.Decoder(tuple[str, list[int]])

# Fields that must hold finite numbers when they arrive. Checked on decode only, not in the structs'
# __post_init__ (which also runs in the sender): a NaN from a broken producer or a forged frame is a
# counted drop at the receiver, never a crash of the producer. FusionDecision is absent on purpose:
# its trust scores are NaN where no thought was used.
FINITE_FIELDS: dict[str, tuple[str, ...]] = {
    "EnvObs": ("obs",),
    "PolicyProposal": ("confidences", "probs", "values"),
    "EnvTransition": ("rewards", "terminal_obs"),
    "Bar": ("open", "high", "low", "close", "volume"),
    "LlmThought": ("confidence",),
}


def first_non_finite(msg: Message, fields: tuple[str, ...]) -> str | None:
    """The first of ``fields`` holding NaN or an infinity, or None."""
    for field in fields:
        value = getattr(msg, field)
        if isinstance(value, np.ndarray):
            if value.dtype.kind == "f" and not np.isfinite(value).all():
                return field
        elif isinstance(value, float) and not math.isfinite(value):
            return field
    return None


def _parse_header(header: bytes) -> tuple[np.dtype, tuple[int, ...], int]:
    """(dtype, shape, byte count) of an array header; validated once per distinct header (they repeat)."""
    cached = _HEADER_CACHE.get(header)
    if cached is not None:
        return cached
    dtype_str, shape = _HEADER_DECODER.decode(header)
    if dtype_str not in ALLOWED_DTYPES:
        raise ValueError(f"array dtype {dtype_str!r} not allowed")
    if len(shape) > 8 or any(dim < 0 or dim > MAX_ARRAY_DIM for dim in shape):
        raise ValueError(f"bad array shape {shape}")
    dtype = np.dtype(dtype_str)
    parsed = (dtype, tuple(shape), math.prod(shape) * dtype.itemsize)
    if len(_HEADER_CACHE) < _HEADER_CACHE_MAX:
        _HEADER_CACHE[header] = parsed
    return parsed


def _ext_hook(code: int, data: memoryview) -> Any:
    if code != NDARRAY_EXT:
        raise ValueError(f"unknown msgpack extension type {code}")
    if len(data) < 1:
        raise ValueError("empty array extension")
    header_end = 1 + data[0]  # first byte: length of the msgpack [dtype, shape] header
    dtype, shape, expected = _parse_header(data[1:header_end].tobytes())
    if expected != len(data) - header_end:
        raise ValueError(f"array of shape {list(shape)} {dtype.str} needs {expected} bytes, got {len(data) - header_end}")
    # A read-only view of the frame's bytes in its shape, built in one call (frombuffer + reshape took twice as long).
    return np.ndarray(shape, dtype, data, header_end)


def _dec_hook(expected: type, obj: Any) -> Any:
    if expected is np.ndarray and isinstance(obj, np.ndarray):
        return obj
    raise TypeError(f"expected {getattr(expected, '__name__', expected)}, got {type(obj).__name__}")


class Encoder:
    """Encodes messages of one sender, numbering them."""

    def __init__(self, sender: str) -> None:
        self.sender = sender
        self._seq: dict[str, int] = {}
        self._encoder = msgspec.msgpack.Encoder(enc_hook=_enc_hook)

    def encode(self, msg: Message, subtopic: str = "") -> tuple[bytes, bytes]:
        """(topic, payload); ``subtopic`` narrows the topic (``probe`` -> ``probe.2``) for prefix subscribers.

        Sequence numbers count per topic, so a subscriber of some topics sees gaps only when it lost messages.
        """
        topic = f"{msg.TOPIC}.{subtopic}" if subtopic else msg.TOPIC
        seq = self._seq[topic] = self._seq.get(topic, 0) + 1
        body = self._encoder.encode(msg)
        envelope = Envelope(type(msg).__name__, msg.SCHEMA_VERSION, self.sender, seq, time.monotonic_ns(), msgspec.Raw(body))
        return topic.encode(), self._encoder.encode(envelope)


class Decoded(msgspec.Struct, frozen=True):
    msg: Message
    topic: bytes
    sender: str
    seq: int
    sent_ns: int


class Decoder:
    """Validating decoder for every message type."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.time_validation = False
        """Set by the hop timer (runtime/hops.py): ``last_validate_ns`` then holds the finite checks' time."""
        self.last_validate_ns = 0
        self._envelope = msgspec.msgpack.Decoder(Envelope)
        self._bodies = {
            name: msgspec.msgpack.Decoder(cls, ext_hook=_ext_hook, dec_hook=_dec_hook) for name, cls in MESSAGE_TYPES.items()
        }

    def decode(self, frames: list[bytes]) -> Decoded:
        if len(frames) != 2:
            raise FrameError(DropKind.FRAME_COUNT, f"{len(frames)} frames")
        topic, payload = frames
        if len(payload) > self.max_frame_bytes:
            raise FrameError(DropKind.OVERSIZE, f"{len(payload)} bytes > {self.max_frame_bytes}")
        try:
            env = self._envelope.decode(payload)
        except Exception as exc:  # noqa: BLE001 - msgspec errors, and a UnicodeDecodeError for a non-UTF-8 string
            raise FrameError(DropKind.MALFORMED, str(exc)[:200]) from None
        body_decoder = self._bodies.get(env.type)
        if body_decoder is None:
            raise FrameError(DropKind.UNKNOWN_TYPE, env.type[:64])
        cls = MESSAGE_TYPES[env.type]
        if env.version != cls.SCHEMA_VERSION:
            raise FrameError(DropKind.SCHEMA_VERSION, f"{env.type} v{env.version}, expected v{cls.SCHEMA_VERSION}")
        topic = bytes(topic)
        expected = cls.TOPIC.encode()
        if topic != expected and not topic.startswith(expected + b"."):
            raise FrameError(DropKind.TOPIC_MISMATCH, f"{topic[:64]!r} for {env.type}")
        try:
            msg = body_decoder.decode(env.body)
        except Exception as exc:  # noqa: BLE001 - msgspec errors, ext_hook's ValueError, an OverflowError from absurd dims: all a bad frame
            raise FrameError(DropKind.FIELD_TYPE, f"{env.type}: {exc}") from None
        finite_fields = FINITE_FIELDS.get(env.type)
        if finite_fields is not None:
            started = time.thread_time_ns() if self.time_validation else 0
            bad = first_non_finite(msg, finite_fields)
            if started:
                self.last_validate_ns = time.thread_time_ns() - started
            if bad is not None:
                raise FrameError(DropKind.NON_FINITE, f"{env.type}.{bad}")
        elif self.time_validation:
            self.last_validate_ns = 0
        return Decoded(msg, topic, env.sender, env.seq, env.sent_ns)


class SequenceTracker:
    """Counts sequence gaps per sender and topic (messages lost under high-water marks)."""

    MAX_KEYS = 4096
    """Senders x topics remembered; beyond it the oldest is forgotten (a peer inventing senders cannot grow memory)."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, bytes], int] = {}
        self.gaps = 0

    def observe(self, sender: str, seq: int, topic: bytes = b"") -> int:
        key = (sender, topic)
        last = self._last.get(key)
        if last is None and len(self._last) >= self.MAX_KEYS:
            del self._last[next(iter(self._last))]
        self._last[key] = seq
        if last is None or seq <= last:
            return 0  # first message from this sender (we may have joined late) or a restarted sender
        missing = seq - last - 1
        self.gaps += missing
        return missing
