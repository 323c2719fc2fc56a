"""Bad frames for fuzzing the bus: every way a frame can be wrong, mixed with replays of valid ones.

``FrameFuzzer.frames()`` yields ``(kind, frames)`` pairs drawn at random from ``FUZZ_KINDS``. Nothing
it makes decodes as a fresh, valid decision-loop message (that would be a forged decision, not a bad
frame): every frame is either malformed in some way or a verbatim replay of a frame captured from the
running loop (``replayed_seq``: an old step, an old sequence number, which actors must ignore).
A ``Shutdown`` is never generated, valid or not decodable as one.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterator

import msgspec
import numpy as np

from bus.codec import NDARRAY_EXT, _enc_hook
from bus.messages import N_ACTIONS, OBS_DIM, MarketContext

# Topics the decision-loop actors subscribe (plus the heartbeats every actor reads).
TARGET_TOPICS = ("env.obs", "policy.proposal", "fusion.decision", "risk.verdict", "env.transition", "llm.thought",
                 "md.bar", "sys.heartbeat", "env.outcome")
# The loop messages each topic should carry, for frames that are well-formed envelopes with a bad body.
TYPE_OF_TOPIC = {"env.obs": "EnvObs", "policy.proposal": "PolicyProposal", "fusion.decision": "FusionDecision",
                 "risk.verdict": "RiskVerdict", "env.transition": "EnvTransition", "llm.thought": "LlmThought",
                 "md.bar": "Bar", "sys.heartbeat": "Heartbeat", "env.outcome": "EnvOutcome"}
MAX_REPLAY_FRAMES = 256
FUZZ_SENDER = "fuzz"


def envelope(type_name: str, body: bytes, *, version: int = 1, sender: str = FUZZ_SENDER, seq: int = 1) -> bytes:
    return msgspec.msgpack.encode([type_name, version, sender, seq, 0, msgspec.Raw(body)])


def pack(value) -> bytes:
    return msgspec.msgpack.encode(value, enc_hook=_enc_hook)


def sample_context() -> MarketContext:
    return MarketContext(symbol="NQ", time_et="10:00", price=100.0, trend="up", rsi=50.0, adx=20.0, atr=1.0, momentum=0.0,
                         vwap_distance_pct=0.0, support=99.0, resistance=101.0, pattern="none", volume_trend="flat",
                         volatility_regime=1.0, position=0, contracts=0, entry_price=0.0, unrealized_pnl=0.0,
                         bars_in_position=0, trail_on=False, stop_at_break_even=False, consecutive_losses=0, win_rate=0.5,
                         balance=50000.0, drawdown_buffer=2500.0, trailing_limit=2500.0, daily_pnl=0.0, minutes_to_close=300.0)


def obs_body(n: int, obs: np.ndarray | None = None, masks: np.ndarray | None = None, step: int = 10**9) -> dict:
    """An EnvObs body as a dict (so it can be broken in ways the struct would refuse). Its step is far
    in the future, so even a body that decoded would answer no step the loop plays."""
    return {
        "env_ids": list(range(n)), "episode_ids": [0] * n, "step": step,
        "obs": np.zeros((n, OBS_DIM), np.float32) if obs is None else obs,
        "masks": np.ones((n, N_ACTIONS), bool) if masks is None else masks,
        "contexts": [msgspec.structs.asdict(sample_context())] * n,
    }


class FrameFuzzer:
    """Random bad frames; ``capture`` valid frames first so ``replayed_seq`` has something to replay."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.captured: deque[list[bytes]] = deque(maxlen=MAX_REPLAY_FRAMES)
        self.kinds: dict[str, Callable[[], list[bytes]]] = {
            "random_bytes": self.random_bytes,
            "truncated": self.truncated,
            "huge_length": self.huge_length,
            "wrong_types": self.wrong_types,
            "non_finite": self.non_finite,
            "wrong_shape": self.wrong_shape,
            "unknown_topic": self.unknown_topic,
            "replayed_seq": self.replayed_seq,
        }

    def capture(self, frames: list[bytes]) -> None:
        self.captured.append([bytes(f) for f in frames])

    def frames(self, count: int) -> Iterator[tuple[str, list[bytes]]]:
        names = list(self.kinds)
        for _ in range(count):
            kind = self.rng.choice(names)
            yield kind, self.kinds[kind]()

    # ------------------------------------------------------------------ kinds

    def _topic(self) -> str:
        return self.rng.choice(TARGET_TOPICS)

    def random_bytes(self) -> list[bytes]:
        size = self.rng.choice((0, 1, 2, 5, 17, 100, 1000, 5000))
        frames = [self._topic().encode(), self.rng.randbytes(size)]
        if self.rng.random() < 0.1:  # wrong frame count too
            frames = frames[:1] if self.rng.random() < 0.5 else [*frames, b"extra"]
        return frames

    def _valid_obs_frame(self) -> bytes:
        n = self.rng.randint(1, 4)
        return envelope("EnvObs", pack(obs_body(n)))

    def truncated(self) -> list[bytes]:
        payload = self._valid_obs_frame()
        return [b"env.obs", payload[: self.rng.randrange(len(payload))]]

    def huge_length(self) -> list[bytes]:
        """Headers that declare far more data than the frame holds (a naive decoder would allocate it)."""
        choice = self.rng.randrange(5)
        if choice == 0:  # array32 of 4 G elements
            return [self._topic().encode(), b"\xdd\xff\xff\xff\xff" + b"\x01" * 8]
        if choice == 1:  # bin32 of 4 GB inside a valid envelope
            return [b"env.obs", envelope("EnvObs", b"\xc6\xff\xff\xff\xf0" + b"\x00" * 16)]
        if choice == 2:  # str32 type name of 4 GB
            return [self._topic().encode(), b"\x96\xdb\xff\xff\xff\xff" + b"x" * 8]
        if choice == 3:  # an array extension whose shape declares 2^62 elements
            header = msgspec.msgpack.encode(("<f4", [1 << 31, 1 << 31]))
            ext = msgspec.msgpack.Ext(NDARRAY_EXT, bytes((len(header),)) + header + b"\x00" * 64)
            return [b"env.obs", envelope("EnvObs", pack({**obs_body(1), "obs": ext}))]
        # an array extension whose dims overflow int64
        header = msgspec.msgpack.encode(("<f4", [(1 << 64) - 1, 3]))
        ext = msgspec.msgpack.Ext(NDARRAY_EXT, bytes((len(header),)) + header + b"\x00" * 12)
        return [b"env.obs", envelope("EnvObs", pack({**obs_body(1), "obs": ext}))]

    def wrong_types(self) -> list[bytes]:
        topic = self._topic()
        type_name = TYPE_OF_TOPIC[topic]
        body = self.rng.choice([
            {"env_ids": "zero", "step": "one"},
            [1, 2, 3],
            {"actor": 5, "pid": "x", "uptime_secs": None},
            {**obs_body(2), "step": [1]},
            {**obs_body(2), "contexts": [1, 2]},
            {**obs_body(2), "obs": msgspec.msgpack.Ext(7, b"\x00")},  # an unknown extension
            {**obs_body(2), "obs": msgspec.msgpack.Ext(NDARRAY_EXT, b"\x05" + pack(("|O", [2])) + b"\x00" * 16)},  # object dtype
            None,
        ])
        version = 1 if self.rng.random() < 0.9 else 99
        return [topic.encode(), envelope(type_name, pack(body), version=version)]

    def non_finite(self) -> list[bytes]:
        n = self.rng.randint(1, 4)
        bad = self.rng.choice((np.nan, np.inf, -np.inf))
        if self.rng.random() < 0.5:
            obs = np.zeros((n, OBS_DIM), np.float32)
            obs[self.rng.randrange(n), self.rng.randrange(OBS_DIM)] = bad
            return [b"env.obs", envelope("EnvObs", pack(obs_body(n, obs=obs)))]
        probs = np.full((n, N_ACTIONS), 1 / N_ACTIONS, np.float32)
        probs[0, 0] = bad
        body = {"env_ids": list(range(n)), "step": 10**9, "actions": np.zeros(n, np.int64),
                "confidences": np.ones(n, np.float32), "probs": probs, "values": np.zeros(n, np.float32)}
        return [b"policy.proposal", envelope("PolicyProposal", pack(body))]

    def wrong_shape(self) -> list[bytes]:
        n = self.rng.randint(1, 4)
        choice = self.rng.randrange(3)
        if choice == 0:
            body = obs_body(n, obs=np.zeros((n, self.rng.choice((1, 100, OBS_DIM + 1))), np.float32))
        elif choice == 1:
            body = obs_body(n, masks=np.ones((n + 1, N_ACTIONS), bool))
        else:
            body = obs_body(n, obs=np.zeros((n, OBS_DIM), np.float64))  # wrong dtype
        return [b"env.obs", envelope("EnvObs", pack(body))]

    def unknown_topic(self) -> list[bytes]:
        choice = self.rng.randrange(3)
        if choice == 0:  # a topic nobody subscribes
            return [b"zz.unknown." + str(self.rng.randrange(100)).encode(), self._valid_obs_frame()]
        if choice == 1:  # a subscribed prefix, but not the type's topic (env.obs -> env.obsolete)
            return [self.rng.choice((b"env.obsolete", b"policy.proposals", b"risk.verdictX")), self._valid_obs_frame()]
        return [self._topic().encode(), envelope("NoSuchMessage", pack({"x": 1}))]

    def replayed_seq(self) -> list[bytes]:
        """A frame seen on the bus earlier, sent again verbatim (same sender, old sequence number, old step)."""
        if not self.captured:
            return self.unknown_topic()
        return list(self.rng.choice(self.captured))


FUZZ_KINDS = tuple(FrameFuzzer().kinds)


def is_replayable(frames: list[bytes]) -> bool:
    """Frames worth replaying: loop messages (never sys.*, so no replayed shutdown)."""
    return len(frames) == 2 and not bytes(frames[0]).startswith(b"sys.")

