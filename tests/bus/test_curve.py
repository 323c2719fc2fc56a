"""CURVE on a tcp bus: authorised clients talk, others are rejected and logged; no pickle, no secret in a log."""

import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
import structlog
import zmq.auth

from actors.jobs.config import load_config
from bus.auth import CLIENT_KEY_FILE_ENV, CurveKeyError, create_keys, load_key_pair
from bus.broker import Broker, BusAddresses, CurveServer, bind_addresses
from bus.client import SyncBus
from bus.messages import Probe
from config.tree import ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def keys(tmp_path):
    made = create_keys(tmp_path / "keys", clients=1)
    (tmp_path / "elsewhere").mkdir()
    _, stranger = zmq.auth.create_certificates(str(tmp_path / "elsewhere"), "stranger")  # a key pair nobody authorised
    return {**made, "stranger": Path(stranger), "authorized": tmp_path / "keys" / "authorized_clients"}


@pytest.fixture
def curve_broker(keys):
    curve = CurveServer.from_files(str(keys["server"]), str(keys["authorized"]), str(keys["client1"]))
    with structlog.testing.capture_logs() as logs:
        broker = Broker(bind_addresses("tcp", "127.0.0.1", 0, 0, None), curve=curve, log=structlog.get_logger("broker"))
        stop = threading.Event()
        thread = threading.Thread(target=broker.serve_until, args=(stop,), daemon=True)
        thread.start()
        try:
            yield broker, logs
        finally:
            stop.set()
            thread.join(10)


def exchange_probe(addresses: BusAddresses, timeout_secs: float) -> Probe:
    with SyncBus(addresses, "sender") as sender, SyncBus(addresses, "receiver") as receiver:
        receiver.subscribe(Probe, settle_secs=0.5)
        deadline = time.monotonic() + timeout_secs
        while True:  # PUB drops until its handshake is done: repeat until one arrives
            sender.publish(Probe(probe_id=1, hop=0, hops=1, sent_ns=0))
            try:
                return receiver.recv(Probe, timeout_secs=0.3)
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise


def assert_hears_nothing(listener: SyncBus, publisher: SyncBus, probe_id: int) -> None:
    """``listener`` subscribes, ``publisher`` sends five probes; none of them may reach the listener."""
    listener.subscribe(Probe, settle_secs=0.5)
    for _ in range(5):
        publisher.publish(Probe(probe_id=probe_id, hop=0, hops=1, sent_ns=0))
        time.sleep(0.1)

    with pytest.raises(TimeoutError):
        listener.recv(Probe, timeout_secs=1.0)


def test_an_authorised_client_exchanges_messages_over_tcp_with_curve(curve_broker):
    broker, logs = curve_broker

    probe = exchange_probe(broker.addresses, timeout_secs=10)

    assert probe.probe_id == 1
    assert broker.addresses.server_key and broker.addresses.xsub.startswith("tcp://127.0.0.1:")
    assert any(e["event"] == "bus_client_accepted" for e in logs)


def test_an_unauthorised_client_gets_nothing_and_is_logged(curve_broker, keys, monkeypatch):
    broker, logs = curve_broker
    with SyncBus(broker.addresses, "insider") as insider:
        monkeypatch.setenv(CLIENT_KEY_FILE_ENV, str(keys["stranger"]))
        with SyncBus(broker.addresses, "stranger") as stranger:
            assert_hears_nothing(stranger, insider, probe_id=2)

    rejected = [e for e in logs if e["event"] == "bus_client_rejected"]
    assert rejected and rejected[0]["client_key"] == load_key_pair(keys["stranger"], what="t").public.decode()
    assert broker.zap.rejected >= 1


def test_a_client_without_keys_cannot_read_a_curve_bus(curve_broker):
    broker, _ = curve_broker
    plain = replace(broker.addresses, server_key="", client_key_file="")
    with SyncBus(broker.addresses, "insider") as insider, SyncBus(plain, "plain") as outsider:
        assert_hears_nothing(outsider, insider, probe_id=3)


def test_no_secret_key_appears_in_any_log_event(curve_broker, keys):
    broker, logs = curve_broker

    exchange_probe(broker.addresses, timeout_secs=10)

    text = repr(logs)
    for name in ("server", "client1"):
        secret = load_key_pair(keys[name], what="t").secret
        assert secret.decode() not in text
        assert secret.decode() not in repr(load_key_pair(keys[name], what="t"))


def test_exchange_api_keys_from_the_environment_are_never_logged(monkeypatch):
    from actors.feed.sources import make_exchange

    monkeypatch.setenv("TT_TEST_KEY", "key-5ecret-value")
    monkeypatch.setenv("TT_TEST_SECRET", "secret-5ecret-value")
    with structlog.testing.capture_logs() as logs:
        try:
            make_exchange("binance", api_key_env="TT_TEST_KEY", secret_env="TT_TEST_SECRET")
        except Exception:  # noqa: BLE001 - no network here; only the logs matter
            pass

    assert "5ecret" not in repr(logs)


def test_a_missing_key_file_is_an_error_that_names_it(tmp_path):
    with pytest.raises(CurveKeyError, match="bus.curve_server_secret_key_file: no key file"):
        CurveServer.from_files(str(tmp_path / "nope.key_secret"), str(tmp_path))


def test_non_loopback_tcp_is_allowed_only_with_curve_keys(keys):
    with pytest.raises(ConfigError):
        load_config(overrides={"bus.transport": "tcp", "bus.host": "0.0.0.0"})
    with pytest.raises(ConfigError) as info:
        load_config(overrides={"bus.transport": "tcp", "bus.host": "0.0.0.0", "bus.curve_server_secret_key_file": str(keys["server"])})
    assert info.value.key == "bus.curve_authorized_clients_dir"

    config = load_config(overrides={
        "bus.transport": "tcp", "bus.host": "0.0.0.0", "bus.curve_server_secret_key_file": str(keys["server"]),
        "bus.curve_authorized_clients_dir": str(keys["authorized"]), "bus.curve_client_secret_key_file": str(keys["client1"]),
    })

    assert config.bus.curve and config.bus.host == "0.0.0.0"


def test_nothing_on_the_bus_path_uses_pickle():
    sources = [*ROOT.glob("bus/*.py"), ROOT / "runtime" / "actor.py", ROOT / "runtime" / "entry.py", ROOT / "runtime" / "supervisor.py"]
    pattern = re.compile(r"\bpickle\b|_pyobj\b|recv_serialized|send_serialized|allow_pickle\s*=\s*True")

    offenders = [f"{path.relative_to(ROOT)}:{n}" for path in sources for n, line in enumerate(path.read_text().splitlines(), 1)
                 if pattern.search(line) and not line.lstrip().startswith(("#", '"'))]

    assert offenders == []


@pytest.mark.slow
def test_a_runtime_with_curve_on_tcp_carries_messages_between_its_actor_processes(keys):
    from runtime.testing import running_actors

    settings = {"bus.transport": "tcp", "bus.curve_server_secret_key_file": str(keys["server"]),
                "bus.curve_authorized_clients_dir": str(keys["authorized"]), "bus.curve_client_secret_key_file": str(keys["client1"])}
    with running_actors(["runtime.probes:Relay1"], settings) as rt:
        rt.client.subscribe("probe.0", settle_secs=0.5)

        rt.client.publish(Probe(probe_id=9, hop=1, hops=2, sent_ns=0), "1")

        assert rt.client.recv(Probe, timeout_secs=10, where=lambda m: m.probe_id == 9).hop == 0
        assert BusAddresses.read(rt.run_dir).server_key
