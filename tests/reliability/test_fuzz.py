"""Bad frames: the codec drops every fuzz kind without raising anything but FrameError, and a running
decision loop survives a few thousand of them (same pids, drops counted, verdicts still flowing)."""

import numpy as np
import pytest

from actors.jobs.fuzz import LOOP_ACTORS, LOOP_SETTINGS, fuzz_loop
from bus.client import SyncBus
from bus.codec import Decoder, DropKind, Encoder, FrameError, SequenceTracker
from bus.fuzz import FUZZ_KINDS, FrameFuzzer
from bus.messages import Bar
from runtime.testing import running_actors


@pytest.mark.parametrize("kind", FUZZ_KINDS)
def test_every_fuzz_kind_is_dropped_as_a_frame_error(kind):
    fuzzer, decoder = FrameFuzzer(seed=3), Decoder()

    for _ in range(300):
        with pytest.raises(FrameError):
            decoder.decode(fuzzer.kinds[kind]())


def test_obs_with_nan_is_dropped_on_decode_as_non_finite():
    fuzzer = FrameFuzzer(seed=1)
    kinds = set()

    for _ in range(50):
        try:
            Decoder().decode(fuzzer.non_finite())
        except FrameError as exc:
            kinds.add(exc.kind)

    assert kinds == {DropKind.NON_FINITE}


def test_a_bar_with_an_infinite_price_is_dropped_but_its_sender_does_not_fail():
    frames = Encoder("feed").encode(Bar(symbol="NQ", start_ns=0, open=1.0, high=np.inf, low=1.0, close=1.0, volume=1.0, source="t"))

    with pytest.raises(FrameError) as info:
        Decoder().decode(list(frames))

    assert info.value.kind is DropKind.NON_FINITE and "Bar.high" in info.value.detail


def test_non_utf8_strings_and_absurd_array_dims_are_malformed_frames_not_crashes():
    fuzzer = FrameFuzzer(seed=5)

    for _ in range(200):
        with pytest.raises(FrameError):
            Decoder().decode(fuzzer.huge_length())
    with pytest.raises(FrameError):
        Decoder().decode([b"env.obs", b"\x96\xa2\xff\xfe\x01\xa1x\x01\x00\xc0"])


def test_the_sequence_tracker_forgets_old_senders_beyond_its_bound():
    tracker = SequenceTracker()

    for index in range(SequenceTracker.MAX_KEYS + 100):
        tracker.observe(f"sender{index}", 1)

    assert len(tracker._last) == SequenceTracker.MAX_KEYS


@pytest.mark.slow
def test_the_decision_loop_survives_thousands_of_bad_frames_and_keeps_deciding():
    with running_actors(LOOP_ACTORS, LOOP_SETTINGS) as rt:
        with SyncBus(rt.addresses, sender="fuzz-watch") as client:
            report = fuzz_loop(client, lambda: {name: rt.pid(name) for name in rt.supervisor.actors}, 4000, seed=7)

    assert all(report.survived.values()), report.table()
    assert report.verdicts_during > 0 and report.verdicts_after > 0, report.table()
    assert sum(report.sent.values()) == 4000
    assert all(sum(report.dropped.get(name, {}).values()) > 0 for name in LOOP_ACTORS), report.table()
    assert report.dropped["risk"].get("non_finite", 0) > 0
