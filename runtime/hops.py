"""Where a message's time goes on the bus, per topic and stage (``TT_PROFILE=hops``, for ``bin/bench loop``).

Each actor times its own side of every message. ``transit`` is wall time, from the envelope's ``sent_ns``
(the monotonic clock: one clock for all processes of a host); every other stage is the CPU time of the
thread that ran it (``time.thread_time_ns``), so a switch to another process in the middle of a stage is
not counted as that stage's cost. That matters when the loop shares one core (runtime.cpu_placement =
split): a send call there often returns only after the receiver has run.

- sender: ``encode`` (body and envelope to bytes), ``send`` (the PUB socket's send call);
- receiver: ``transit`` (``sent_ns`` to the frame leaving the SUB socket: the envelope's encoding,
  the send call, the broker when the sender has no direct lane, the receiver's wake-up, and any wait for a core
  or while it handled something else),
  ``decode`` (msgpack into the typed struct, which checks every field's type), ``validate`` (the
  finite-number checks), ``handler`` (``on_message``, less the time of the messages it publishes).

Off (the default), the hot path pays one ``is None`` test per stage. On, an actor logs a
``hop_profile`` event at stop: per topic and stage, the sample count and p50 / p90 / p99 in µs.
"""

from __future__ import annotations

import os
from collections import defaultdict

import numpy as np

MAX_SAMPLES = 200_000
"""Per topic and stage; later samples are not kept (a benchmark run is shorter)."""
STAGES = ("encode", "send", "transit", "decode", "validate", "handler")


def hops_enabled() -> bool:
    """TT_PROFILE holds ``hops`` (it also names actors to run under cProfile: runtime/entry.py)."""
    return "hops" in os.environ.get("TT_PROFILE", "").split(",")


class HopTimer:
    """Samples in ns by (topic, stage)."""

    def __init__(self) -> None:
        self.samples: defaultdict[tuple[str, str], list[int]] = defaultdict(list)

    def add(self, topic: str, stage: str, ns: int) -> None:
        samples = self.samples[(topic, stage)]
        if len(samples) < MAX_SAMPLES:
            samples.append(ns)

    def summary(self) -> dict[str, dict[str, dict[str, float]]]:
        """topic -> stage -> {count, p50_us, p90_us, p99_us}."""
        out: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
        for (topic, stage), samples in sorted(self.samples.items()):
            p50, p90, p99 = np.percentile(np.asarray(samples, dtype=np.float64) / 1e3, [50, 90, 99])
            out[topic][stage] = {"count": float(len(samples)), "p50_us": round(float(p50), 2), "p90_us": round(float(p90), 2),
                                 "p99_us": round(float(p99), 2)}
        return dict(out)
