import msgspec
import numpy as np
import pytest

from bus.client import Receiver
from bus.codec import Decoder, DropKind, Encoder, FrameError, SequenceTracker
from bus.messages import ALL_MESSAGES, EnvObs, EnvTransition, FusionDecision, PolicyProposal, Probe, RiskVerdict
from tests.bus.samples import ragged_frames, sample_struct


def assert_same(a, b):
    for field in a.__struct_fields__:
        x, y = getattr(a, field), getattr(b, field)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), field
        else:
            assert x == y, field


@pytest.mark.parametrize("cls", ALL_MESSAGES, ids=lambda c: c.__name__)
def test_every_message_type_round_trips(cls):
    msg = sample_struct(cls)
    topic, payload = Encoder("test:1").encode(msg)
    decoded = Decoder().decode([topic, payload])
    assert topic == cls.TOPIC.encode()
    assert type(decoded.msg) is cls
    assert_same(msg, decoded.msg)
    assert decoded.sender == "test:1" and decoded.seq == 1


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "uint8"])
def test_arrays_keep_dtype_and_shape(dtype):
    arr = (np.arange(12) % 3).astype(dtype).reshape(2, 6)
    msg = PolicyProposal(env_ids=[0, 1], step=1, actions=arr[:, 0], confidences=arr[:, 1], probs=arr, values=arr.T[2])
    out = Decoder().decode(list(Encoder("s").encode(msg))).msg
    assert out.probs.dtype == np.dtype(dtype) and out.probs.shape == (2, 6) and np.array_equal(out.probs, arr)
    assert out.actions.dtype == np.dtype(dtype) and np.array_equal(out.values, arr.T[2])


def good_frames(**kw):
    return list(Encoder("s").encode(Probe(probe_id=1, hop=1, hops=2, sent_ns=0, **kw)))


def envelope(type_="Probe", version=1, body=None):
    body = body if body is not None else msgspec.msgpack.encode({"probe_id": 1, "hop": 1, "hops": 2, "sent_ns": 0})
    return msgspec.msgpack.encode([type_, version, "s", 1, 0, msgspec.Raw(body)])


BAD_FRAMES = {
    DropKind.FRAME_COUNT: [b"probe"],
    DropKind.MALFORMED: [b"probe", b"\xc1\xc1 not msgpack"],
    DropKind.UNKNOWN_TYPE: [b"probe", envelope(type_="NoSuchMessage")],
    DropKind.SCHEMA_VERSION: [b"probe", envelope(version=99)],
    DropKind.FIELD_TYPE: [b"probe", envelope(body=msgspec.msgpack.encode({"probe_id": "one", "hop": 1, "hops": 2, "sent_ns": 0}))],
    DropKind.TOPIC_MISMATCH: [b"env.obs", envelope()],
}


@pytest.mark.parametrize("kind", list(BAD_FRAMES), ids=lambda k: k.value)
def test_each_kind_of_bad_frame_is_named(kind):
    with pytest.raises(FrameError) as info:
        Decoder().decode(BAD_FRAMES[kind])
    assert info.value.kind is kind


def test_oversize_frame_is_refused_before_unpacking():
    frames = good_frames(payload=b"x" * 2000)
    with pytest.raises(FrameError) as info:
        Decoder(max_frame_bytes=1000).decode(frames)
    assert info.value.kind is DropKind.OVERSIZE


def test_array_with_lying_shape_or_object_dtype_is_a_field_error():
    enc = msgspec.msgpack.Encoder()
    for header in (enc.encode(("<f4", [1000])), enc.encode(("|O", [2]))):
        ext = msgspec.msgpack.Ext(1, bytes((len(header),)) + header + b"\x00" * 8)
        body = enc.encode({"env_ids": [0], "step": 1, "actions": ext, "confidences": ext, "probs": ext, "values": ext})
        with pytest.raises(FrameError) as info:
            Decoder().decode([b"policy.proposal", envelope("PolicyProposal", 1, body)])
        assert info.value.kind is DropKind.FIELD_TYPE


def test_subtopics_are_accepted_for_prefix_routing():
    topic, payload = Encoder("s").encode(Probe(probe_id=1, hop=2, hops=3, sent_ns=0), "2")
    assert topic == b"probe.2"
    assert Decoder().decode([topic, payload]).msg.hop == 2


def test_sequence_gaps_are_counted_per_sender():
    seq = SequenceTracker()
    for sender, n in [("a", 1), ("a", 2), ("b", 5), ("a", 5), ("b", 6), ("a", 6)]:
        seq.observe(sender, n)
    assert seq.gaps == 2  # a skipped 3 and 4; b joined at 5 (late join is not a gap)


def test_sequence_numbers_count_per_topic_so_partial_subscribers_see_no_false_gaps():
    enc, dec, seq = Encoder("s"), Decoder(), SequenceTracker()
    frames = [enc.encode(Probe(probe_id=i, hop=i % 2, hops=2, sent_ns=0), str(i % 2)) for i in range(6)]
    for topic, payload in frames:
        if topic == b"probe.1":  # a subscriber of probe.1 only
            d = dec.decode([topic, payload])
            seq.observe(d.sender, d.seq, d.topic)
    assert seq.gaps == 0
    d = dec.decode(list(frames[5]))
    assert d.seq == 3 and d.topic == b"probe.1"


def test_decoded_arrays_are_read_only_views_of_the_frame():
    obs = np.ones((2, 261), np.float32)
    msg = sample_struct(EnvObs)
    msg = EnvObs(env_ids=[0, 1], episode_ids=[0, 0], step=3, obs=obs, masks=np.ones((2, 6), bool), contexts=msg.contexts)
    out = Decoder().decode(list(Encoder("s").encode(msg))).msg
    assert out.obs.shape == (2, 261) and not out.obs.flags.writeable


def ragged(cls, **changes):
    return ragged_frames(sample_struct(cls), **changes)


RAGGED_BATCHES = {
    "EnvObs obs width": (EnvObs, {"obs": np.zeros((2, 260), np.float32)}),
    "EnvObs obs dtype": (EnvObs, {"obs": np.zeros((2, 261), np.float64)}),
    "EnvObs masks width": (EnvObs, {"masks": np.ones((2, 5), bool)}),
    "EnvObs masks dtype": (EnvObs, {"masks": np.ones((2, 6), np.int8)}),
    "EnvObs episode_ids": (EnvObs, {"episode_ids": [0]}),
    "EnvObs contexts": (EnvObs, {"contexts": []}),
    "PolicyProposal actions": (PolicyProposal, {"actions": np.zeros(3, np.int64)}),
    "PolicyProposal probs": (PolicyProposal, {"probs": np.zeros((2, 5), np.float32)}),
    "FusionDecision llm_actions": (FusionDecision, {"llm_actions": np.zeros(1, np.int64)}),
    "FusionDecision rules": (FusionDecision, {"rules": ["agreement"]}),
    "RiskVerdict actions": (RiskVerdict, {"actions": np.zeros((2, 1), np.int64)}),
    "RiskVerdict reasons": (RiskVerdict, {"reasons": [""]}),
    "RiskVerdict halts": (RiskVerdict, {"halts": [""] * 3}),
    "EnvTransition rewards": (EnvTransition, {"rewards": np.zeros(1, np.float32)}),
    "EnvTransition terminal_obs": (EnvTransition, {"terminal_obs": np.zeros((2, 6), np.float32)}),
    "EnvTransition timed_out": (EnvTransition, {"timed_out": [True]}),
}


@pytest.mark.parametrize("case", list(RAGGED_BATCHES))
def test_a_ragged_batch_is_a_dropped_and_counted_frame(case):
    cls, changes = RAGGED_BATCHES[case]
    receiver = Receiver(max_frame_bytes=1 << 20)
    assert receiver.decode(ragged(cls, **changes)) is None
    assert receiver.dropped == {"field_type": 1}
    field = next(iter(changes))
    assert f"{cls.__name__}.{field}" in receiver.last_error.detail


def test_optional_per_env_lists_may_be_empty():
    frames = ragged(RiskVerdict, llm_query_ids=[], halts=[])
    assert Decoder().decode(frames).msg.halts == []
    assert Decoder().decode(ragged(EnvTransition, timed_out=[])).msg.timed_out == []


def test_a_ragged_batch_cannot_be_built():
    with pytest.raises(ValueError, match="PolicyProposal.values: shape"):
        PolicyProposal(env_ids=[0, 1], step=1, actions=np.zeros(2), confidences=np.zeros(2), probs=np.zeros((2, 6)),
                       values=np.zeros(1))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, "both infinities", "largest finite"])
@pytest.mark.parametrize("field", ["confidences", "probs", "values"])
def test_a_proposal_with_nan_or_an_infinity_is_dropped_as_non_finite_and_huge_finite_values_pass(field, bad):
    msg = sample_struct(PolicyProposal)
    array = getattr(msg, field).copy()
    if bad == "both infinities":  # their float64 sum is NaN, not a finite number
        array.flat[0], array.flat[-1] = np.inf, -np.inf
    elif bad == "largest finite":  # summed in float64: no overflow, so not mistaken for an infinity
        array[...] = np.finfo(np.float32).max
    else:
        array.flat[-1] = bad
    frames = list(Encoder("test:1").encode(msgspec.structs.replace(msg, **{field: array})))
    if bad == "largest finite":
        assert np.array_equal(getattr(Decoder().decode(frames).msg, field), array)
        return
    with pytest.raises(FrameError) as info:
        Decoder().decode(frames)
    assert info.value.kind is DropKind.NON_FINITE and field in info.value.detail
