"""Multi-host benchmark (``bin/bench multihost``): decision latency with actors on two hosts vs one.

Two "hosts" are two network namespaces on this machine joined by a veth pair (``ip netns``; needs
root). Host A runs the broker with a CURVE tcp bus (``bin/run run``); host B runs ``bin/run join``.
The figure is the env's own: env.obs published -> its risk.verdict received
(decision_latency_p50_us / p99), over a paced backtest of a frozen, untrained policy.

Layouts (every one over the same CURVE tcp bus, so only the placement differs):

- same_host: broker + env, policy, fusion, risk on A; nothing joins.
- cross_host: broker + env on A; policy, fusion, risk join from B: each of the loop's four hops
  crosses the link twice (publisher -> broker -> subscriber).
- reasoner_remote: broker + env, policy, fusion, risk on A; the reasoner joins from B (the test's
  layout: the reasoner is not on the decision path, so the latency should match same_host).

``--delay-us`` adds a one-way delay to the veth link (tc netem) to stand in for a LAN hop; a veth
pair in one kernel alone costs microseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.bench.common import machine_line

ROOT = Path(__file__).resolve().parents[2]
HOST_A_IP, HOST_B_IP = "10.77.0.1", "10.77.0.2"
XSUB_PORT, XPUB_PORT = 47001, 47002
"""Fixed ports are safe: each namespace has its own network stack."""
LOOP_ACTORS = ["env", "policy", "fusion", "risk"]
LAYOUTS = {
    "same_host": (LOOP_ACTORS, []),
    "cross_host": (["env"], ["policy", "fusion", "risk"]),
    "reasoner_remote": (LOOP_ACTORS, ["reasoner"]),
}
"""layout -> (actors on A with the broker, actors joining from B)."""
LOOP_SETTINGS = {
    "env.mode": "backtest", "env.split": "test", "env.n_envs": 1, "policy.learn": False, "fusion.learn": False,
    "reasoner.mode": "single_shot",
}
JOIN_STOP_TIMEOUT_SECS = 30.0
UNTIL_POLL_SECS = 0.2


def netns_unavailable_reason() -> str:
    """Why two network namespaces cannot be made here ("" when they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    if shutil.which("ip") is None:
        return "iproute2's ip command is missing"
    probe = f"tt-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ""


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@dataclass(frozen=True)
class TwoHosts:
    a: str
    """Namespace of host A (broker)."""
    b: str
    """Namespace of host B (joins)."""

    def exec_prefix(self, ns: str) -> list[str]:
        return ["ip", "netns", "exec", ns]


@contextmanager
def two_hosts(delay_us: int = 0):
    """Two namespaces joined by a veth pair (A 10.77.0.1, B 10.77.0.2); removed in any case on exit."""
    tag = f"{os.getpid() % 100000}"
    hosts = TwoHosts(a=f"tt-a-{tag}", b=f"tt-b-{tag}")
    veth_a, veth_b = f"tta{tag}", f"ttb{tag}"
    try:
        _ip("netns", "add", hosts.a)
        _ip("netns", "add", hosts.b)
        _ip("link", "add", veth_a, "type", "veth", "peer", "name", veth_b)
        for ns, dev, address in ((hosts.a, veth_a, HOST_A_IP), (hosts.b, veth_b, HOST_B_IP)):
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            if delay_us:
                _add_delay(ns, dev, delay_us)
        yield hosts
    finally:  # deleting a namespace deletes its end of the veth pair, and with it the pair
        for ns in (hosts.a, hosts.b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _add_delay(ns: str, dev: str, delay_us: int) -> None:
    done = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "netem", "delay", f"{delay_us}us"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"--delay-us needs tc netem (the sch_netem kernel module): {done.stderr.strip()}")


def _overrides(settings: dict) -> list[str]:
    args = []
    for key, value in settings.items():
        args += ["--set", f"{key}={json.dumps(value)}"]
    return args


def curve_settings(keys: Path) -> dict:
    return {"bus.transport": "tcp", "bus.host": HOST_A_IP, "bus.xsub_port": XSUB_PORT, "bus.xpub_port": XPUB_PORT,
            "bus.curve_server_secret_key_file": str(keys / "server.key_secret"),
            "bus.curve_authorized_clients_dir": str(keys / "authorized_clients"),
            "bus.curve_client_secret_key_file": str(keys / "client1.key_secret")}


@dataclass
class LoopRun:
    metrics: dict
    """Host A's env report (metrics.json): query_rate, decision_latency_p50_us, ..."""
    main_code: int
    join_code: int | None
    """None: nothing joined."""
    join_output: str
    main_dir: Path
    join_dir: Path


def run_two_host_loop(hosts: TwoHosts, work: Path, actors_a: list[str], actors_b: list[str], duration_secs: float,
                      settings: dict, until: Callable[[Path], bool] | None = None) -> LoopRun:
    """Host B joins (if it has actors), host A runs the loop for ``duration_secs``; B stops on A's shutdown.

    ``until``: a condition on host A's run directory; once it holds, host A is stopped as by Ctrl-C (a clean stop,
    its report written), so a test waits for what it checks rather than for the whole duration, its upper bound."""
    from bus.auth import create_keys

    keys = work / "keys"
    if not keys.is_dir():
        create_keys(keys, clients=2)
    main_dir, join_dir = work / "host-a", work / "host-b"
    shutil.rmtree(main_dir, ignore_errors=True)
    shutil.rmtree(join_dir, ignore_errors=True)
    bin_run = [str(ROOT / "bin" / "run")]
    joiner = None
    if actors_b:
        join_cmd = [*hosts.exec_prefix(hosts.b), *bin_run, "join", "--quiet", "--run-dir", str(join_dir),
                    "--join", f"tcp://{HOST_A_IP}:{XSUB_PORT},{XPUB_PORT}", "--server-key", str(keys / "server.key"),
                    "--client-key", str(keys / "client2.key_secret"), *_overrides({**settings, "runtime.actors": actors_b})]
        joiner = subprocess.Popen(join_cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        main_cmd = [*hosts.exec_prefix(hosts.a), *bin_run, "run", "--quiet", "--run-dir", str(main_dir),
                    "--duration-secs", str(duration_secs),
                    *_overrides({**settings, **curve_settings(keys), "runtime.actors": actors_a})]
        main = _run_host_a(main_cmd, main_dir, duration_secs, until)
        join_code, join_output = None, ""
        if joiner is not None:
            join_output, _ = joiner.communicate(timeout=JOIN_STOP_TIMEOUT_SECS)
            join_code = joiner.returncode
    finally:
        if joiner is not None and joiner.poll() is None:
            joiner.terminate()  # its supervisor stops its actors in order
            try:
                joiner.wait(timeout=JOIN_STOP_TIMEOUT_SECS)
            except subprocess.TimeoutExpired:
                joiner.kill()
    metrics_file = main_dir / "backtest" / "metrics.json"
    if main.returncode != 0 or not metrics_file.is_file():
        raise RuntimeError(f"host A's run failed (code {main.returncode}): {main.stderr[-2000:]}")
    return LoopRun(json.loads(metrics_file.read_text()), main.returncode, join_code, join_output, main_dir, join_dir)


def _run_host_a(main_cmd: list[str], main_dir: Path, duration_secs: float,
                until: Callable[[Path], bool] | None) -> subprocess.CompletedProcess:
    if until is None:
        return subprocess.run(main_cmd, cwd=ROOT, capture_output=True, text=True, timeout=duration_secs + 120)
    with subprocess.Popen(main_cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as main:
        deadline = time.monotonic() + duration_secs
        while main.poll() is None and time.monotonic() < deadline and not until(main_dir):
            time.sleep(UNTIL_POLL_SECS)
        if main.poll() is None:
            main.send_signal(signal.SIGINT)  # `ip netns exec` execs bin/run: the signal reaches the supervisor
        stdout, stderr = main.communicate(timeout=120)
        return subprocess.CompletedProcess(main_cmd, main.returncode, stdout, stderr)


def measure(layouts: list[str], duration_secs: float, step_interval_ms: float, delay_us: int) -> list[tuple]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="tt-multihost-") as tmp, two_hosts(delay_us) as hosts:
        for name in layouts:
            actors_a, actors_b = LAYOUTS[name]
            settings = {**LOOP_SETTINGS, "env.step_interval_ms": step_interval_ms}
            run = run_two_host_loop(hosts, Path(tmp), actors_a, actors_b, duration_secs, settings)
            m = run.metrics
            rows.append((name, "+".join(actors_a), "+".join(actors_b) or "-", int(m.get("loop_steps") or 0),
                         m.get("decision_latency_p50_us"), m.get("decision_latency_p99_us"), m.get("query_rate")))
    return rows


def print_rows(rows: list[tuple], delay_us: int) -> None:
    header = ("layout", "host A (broker)", "host B (joined)", "steps", "p50 us", "p99 us", "query rate")
    text = [[str(c) if not isinstance(c, float) else f"{c:,.0f}" if c > 1 else f"{c:.3f}" for c in row] for row in rows]
    widths = [max(len(r[i]) for r in [list(header), *text]) for i in range(len(header))]
    print(f"\nenv.obs -> risk.verdict latency, CURVE tcp bus, two network namespaces, link delay {delay_us} us one way ({machine_line()})")
    for row in [list(header), ["-" * w for w in widths], *text]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/bench multihost", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layouts", default="same_host,cross_host", help=f"comma-separated, of: {', '.join(LAYOUTS)}")
    parser.add_argument("--duration-secs", type=float, default=40.0, help="host A's run per layout (start-up included)")
    parser.add_argument("--step-interval-ms", type=float, default=50.0, help="env pace (0 = full speed)")
    parser.add_argument("--delay-us", type=int, default=0, help="one-way delay on the veth link (tc netem), e.g. 250 for a LAN")
    args = parser.parse_args(argv)
    reason = netns_unavailable_reason()
    if reason:
        print(f"bin/bench multihost: {reason}", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        rows = measure(args.layouts.split(","), args.duration_secs, args.step_interval_ms, args.delay_us)
    except RuntimeError as exc:
        print(f"bin/bench multihost: {exc}", file=sys.stderr)
        return 1
    print_rows(rows, args.delay_us)
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
