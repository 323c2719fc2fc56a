"""Direct lanes (bus.direct): an actor's messages go from its own socket to each subscriber, not through the broker."""

import json
import os
import signal
from pathlib import Path

import pytest

from bus.broker import BusAddresses, bind_addresses
from bus.messages import Done, Heartbeat
from runtime.testing import running_actors


def test_with_ipc_each_direct_actor_gets_its_own_address_in_the_socket_dir(tmp_path):
    addresses = bind_addresses("ipc", "127.0.0.1", 0, 0, tmp_path, ["env", "policy"])
    assert set(addresses.peers) == {"env", "policy"}
    assert all(address.startswith(f"ipc://{tmp_path}/") for address in addresses.peers.values())
    assert len(set(addresses.peers.values()) | {addresses.xsub, addresses.xpub}) == 4
    assert addresses.subscribe_addresses() == [addresses.xpub, *addresses.peers.values()]


def test_a_peer_address_too_long_for_a_unix_socket_is_refused_with_the_fix(tmp_path):
    deep = tmp_path / ("d" * 60)
    with pytest.raises(ValueError, match="bus.socket_dir"):
        bind_addresses("ipc", "127.0.0.1", 0, 0, deep, ["a_long_actor_name_" * 3])


def test_the_peers_survive_bus_json_and_an_old_bus_json_reads_as_no_peers(tmp_path):
    addresses = BusAddresses("ipc:///tmp/x.in", "ipc:///tmp/x.out", peers={"env": "ipc:///tmp/x.env"})
    addresses.write(tmp_path)
    assert BusAddresses.read(tmp_path) == addresses
    (tmp_path / "bus.json").write_text(json.dumps({"xsub": "ipc:///tmp/x.in", "xpub": "ipc:///tmp/x.out"}))
    assert BusAddresses.read(tmp_path).peers == {}


@pytest.mark.parametrize(("overrides", "direct"), [({}, True), ({"bus.direct": False}, False),
                                                   ({"bus.direct": True, "bus.transport": "tcp"}, False)])
def test_the_runtime_lists_a_lane_per_actor_only_with_ipc_and_direct_on(overrides, direct):
    with running_actors(["runtime.probes:Relay1", "runtime.probes:Relay2"], overrides) as rt:
        assert set(BusAddresses.read(rt.run_dir).peers) == ({"relay1", "relay2"} if direct else set())


@pytest.mark.slow
def test_actors_keep_talking_to_each_other_and_to_tools_while_the_broker_is_frozen(monkeypatch):
    # 2,000 round trips take seconds; the pinger starts them a second after every hop is up, and the broker is
    # frozen before that, so every probe, and the pinger's sys.done, can only have gone by the direct lanes.
    monkeypatch.setenv("TT_PROBE_COUNT", "2000")
    monkeypatch.setenv("TT_PROBE_HOPS", "3")
    monkeypatch.setenv("TT_PROBE_WARMUP", "10")
    actors = ["runtime.probes:Pinger", "runtime.probes:Relay1", "runtime.probes:Relay2"]
    with running_actors(actors, {"runtime.heartbeat_liveness": 1000, "bus.direct": True}) as rt:
        rt.client.subscribe(Done, Heartbeat, settle_secs=0)
        broker = rt.pid("broker")
        os.kill(broker, signal.SIGSTOP)
        try:
            assert not (rt.run_dir / "probe.json").exists(), "the probes ran before the broker was frozen"
            done = rt.client.recv(Done, timeout_secs=120)
            beat = rt.client.recv(Heartbeat, timeout_secs=30)
        finally:
            os.kill(broker, signal.SIGCONT)
        assert done.actor == "pinger" and done.reason == "probes_complete"
        assert beat.actor in {"pinger", "relay1", "relay2"}
        rtts = json.loads(Path(rt.run_dir / "probe.json").read_text())["rtts_ns"]
        assert len(rtts) == 2000
