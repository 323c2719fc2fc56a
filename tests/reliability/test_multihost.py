"""More than one machine: host A (broker + env, policy, fusion, risk) and host B (the reasoner, joined
with ``bin/run join``) in two network namespaces joined by a veth pair, over a CURVE tcp bus."""

import json

import pytest

from bus.broker import BusAddresses
from runtime.rundir import JoinTargetError, join_addresses
from tests.bench.bench_multihost import LOOP_ACTORS, LOOP_SETTINGS, netns_unavailable_reason, run_two_host_loop, two_hosts

LOCKSTEP = {"env.thought_lag_steps": 1, "env.thought_wait_deadline_ms": 20000.0, "env.step_interval_ms": 50.0,
            "reasoner.process_nice": 0, "runtime.stats_interval_secs": 0.5}
"""Each step waits for the remote reasoner's thought of the step before (the loop runs at its pace). Not niced:
on a shared 2-core machine a nice-19 reasoner can starve, and in lockstep the loop waits for it anyway. Stats every
half second: the test stops the loop once fusion's stats show the remote thoughts."""
LOOP_SECS = 45.0
"""The upper bound of host A's run: it stops as soon as fusion has taken THOUGHTS thoughts from host B."""
THOUGHTS = 2


# ---------------------------------------------------------------- where the broker is


def test_join_reads_the_broker_addresses_and_server_key_from_a_copied_bus_json(tmp_path):
    BusAddresses("tcp://10.0.0.1:5555", "tcp://10.0.0.1:5556", server_key="k" * 40, client_key_file="/a/client1.key_secret").write(tmp_path)

    addresses = join_addresses(str(tmp_path / "bus.json"))

    assert (addresses.xsub, addresses.xpub, addresses.server_key) == ("tcp://10.0.0.1:5555", "tcp://10.0.0.1:5556", "k" * 40)


def test_join_takes_an_address_with_both_ports_and_the_server_key_given_apart():
    addresses = join_addresses("tcp://10.0.0.1:5555,5556", server_key="k" * 40)

    assert addresses == BusAddresses("tcp://10.0.0.1:5555", "tcp://10.0.0.1:5556", server_key="k" * 40)


def test_join_refuses_a_broker_bound_to_all_interfaces_and_says_to_name_the_host(tmp_path):
    BusAddresses("tcp://0.0.0.0:5555", "tcp://0.0.0.0:5556").write(tmp_path)

    with pytest.raises(JoinTargetError, match="name the host"):
        join_addresses(str(tmp_path))


def test_join_refuses_an_ipc_bus_which_no_other_host_reaches(tmp_path):
    (tmp_path / "bus.json").write_text(json.dumps({"xsub": "ipc:///tmp/x.in", "xpub": "ipc:///tmp/x.out"}))

    with pytest.raises(JoinTargetError, match="no other host can reach"):
        join_addresses(str(tmp_path))


def test_bin_run_with_join_alone_means_the_join_mode(monkeypatch):
    from actors.jobs import cli

    modes = []
    monkeypatch.setattr(cli, "run_mode", lambda args: modes.append(args.mode) or 0)

    cli.main(["--join", "tcp://10.0.0.1:1,2"])

    assert modes == ["join"]


# ---------------------------------------------------------------- two hosts


@pytest.mark.slow
def test_a_reasoner_on_another_host_feeds_the_decision_loop_and_stops_with_the_main_runtime(tmp_path):
    reason = netns_unavailable_reason()
    if reason:
        pytest.skip(f"two hosts need network namespaces: {reason}")

    with two_hosts() as hosts:  # removes both namespaces in any case
        run = run_two_host_loop(hosts, tmp_path, LOOP_ACTORS, ["reasoner"], LOOP_SECS, {**LOOP_SETTINGS, **LOCKSTEP},
                                until=lambda main_dir: fusion_thoughts(main_dir) >= THOUGHTS)

    metrics = run.metrics
    assert metrics["loop_steps"] > 0
    assert metrics["query_rate"] > 0, f"no thought from host B reached fusion on host A: {metrics}"
    assert run.join_code == 0 and "remote_shutdown" in run.join_output, run.join_output


def fusion_thoughts(main_dir) -> float:
    """The thoughts host A's fusion has taken, from its latest stats line (0 before any)."""
    log = main_dir / "logs" / "fusion.jsonl"
    thoughts = 0.0
    for line in log.read_text().splitlines() if log.is_file() else []:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the line being written
        if entry.get("event") == "stats":
            thoughts = max(thoughts, float(entry.get("thoughts", 0.0)))
    return thoughts
