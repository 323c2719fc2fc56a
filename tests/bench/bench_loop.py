"""Decision-loop benchmark (``bin/bench loop``).

Project: env, policy, reasoner (always on), fusion and risk in real processes. Per decision
latency is what the env actor measures from publishing each ``env.obs`` to receiving its
``risk.verdict`` (no observer on the hot topics); steps/s over the whole run, start-up included.

Baseline: the same decision logic called in one process (policy propose -> fusion ->
risk -> env step), no bus, no LLM. The difference of the p50 latencies is the per-decision
overhead of the process split.

Placement (``--placement``, both by default): each measurement with runtime.cpu_placement = split (the loop's
processes on every CPU but the last, the reasoner on it: runtime/placement.py) and off (the scheduler places them).

Per hop (``--hops``, on by default): a second run with ``TT_PROFILE=hops`` (runtime/hops.py), where
every actor times its side of each message. The table gives, per message and receiver, the p50 µs of
each stage (the thread's CPU time, except transit): encode and send at the sender; transit + wake-up (the receiver's transit from the
envelope's send time to the frame leaving its socket, less the sender's send call: libzmq's I/O
threads, the broker's forwarding when ``bus.direct`` is off, the receiver's wake-up, and any wait
while it was busy with another message); decode
(typed msgpack), validate (finite checks) and handler at the receiver. The critical path is
env.obs -> policy -> fusion -> risk -> env; the other rows run beside it on the same 2 cores.

The env's own work per verdict (``--no-env-work`` leaves it out): what the env actor does between a risk.verdict and
the next env.obs, replayed in one process and timed with the thread's CPU clock (tests/bench/loop_env_work.py).

Training (on by default, ``--no-training`` leaves it out): training steps/s of the loop beside the one-process
baseline measured in the same run (tests/bench/loop_training.py).

``--dashboard``: the cost of a dashboard attached to the bus. One running loop (no reasoner, frozen policy),
``--repeats`` pairs of windows, first without a dashboard and then with one. Per case it gives the median ratio of the
pairs' steps/s, each pair's ratio, and the CPU time per step of the loop's processes (actors and broker) and of the
dashboard (from /proc). The pairs share one loop because its rate varies more between starts than a dashboard costs.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from actors.jobs.config import load_config
from bus.messages import MarketContext
from runtime.settings import CPU_PLACEMENTS
from tests.bench.common import percentiles_us, print_table
from tests.bench.loop_env_work import env_work_rows
from tests.bench.loop_training import training_rows

FROZEN = {"policy.learn": False, "env.mode": "train", "env.split": "train"}
STARTUP_GRACE_SECS = 170.0
"""The env's wait for its peers' first heartbeats (runtime.startup_grace_secs), under running_actors' 180 s."""
EXTRA: dict = {}


def project_loop(steps: int, n_envs: int, with_reasoner: bool, hops: bool = False) -> dict:
    """Figures from the env actor itself (obs published -> verdict received), so no observer adds wake-ups;
    ``hops``: with every actor timing its stages (TT_PROFILE=hops), their ``hop_profile`` under "hops"."""
    from bus.messages import Done
    from runtime.testing import running_actors

    actors = ["env", "policy", "fusion", "risk"] + (["reasoner"] if with_reasoner else [])
    # The env waits for every peer, the reasoner included, however long its start takes on a loaded machine: after the
    # default 30 s it would go on without it, and a short run could end before the bench subscribed to sys.done.
    settings = {**FROZEN, "env.n_envs": n_envs, "env.max_steps": steps, "runtime.stats_interval_secs": 60.0,
                "runtime.startup_grace_secs": STARTUP_GRACE_SECS, **EXTRA}
    saved = os.environ.get("TT_PROFILE")
    if hops:
        os.environ["TT_PROFILE"] = ",".join(filter(None, [saved, "hops"]))
    try:
        with running_actors(actors, settings, keep_run_dir=True) as rt:
            rt.client.subscribe(Done, settle_secs=0)
            started = time.perf_counter()
            done = rt.client.recv(Done, timeout_secs=600, where=lambda d: d.actor == "env")
            elapsed = time.perf_counter() - started
            rt.stop()
            thoughts = _final_counter(rt.run_dir / "logs" / "reasoner.jsonl", "thoughts_generated") if with_reasoner else 0.0
            profiles = {actor: _hop_profile(rt.run_dir / "logs" / f"{actor}.jsonl") for actor in actors} if hops else {}
    finally:
        if saved is None:
            os.environ.pop("TT_PROFILE", None)
        else:
            os.environ["TT_PROFILE"] = saved
    summary = done.summary
    return {
        "steps_per_sec": summary["loop_steps"] / elapsed,
        "p50_us": summary["decision_latency_p50_us"],
        "p99_us": summary["decision_latency_p99_us"],
        "thoughts": thoughts,
        "hops": profiles,
    }


def _hop_profile(log_file: Path) -> dict:
    """The actor's last ``hop_profile`` event (topic -> stage -> figures), {} when it logged none."""
    hops: dict = {}
    for line in log_file.read_text().splitlines():
        if '"hop_profile"' in line:
            hops = json.loads(line).get("hops", {})
    return hops


CRITICAL_PATH = (("env.obs", "env", "policy"), ("policy.proposal", "policy", "fusion"), ("fusion.decision", "fusion", "risk"),
                 ("risk.verdict", "risk", "env"))
BESIDE = (("env.obs", "env", "fusion"), ("env.obs", "env", "risk"), ("env.obs", "env", "reasoner"), ("policy.proposal", "policy", "risk"),
          ("risk.verdict", "risk", "policy"), ("env.transition", "env", "policy"), ("llm.thought", "reasoner", "fusion"))


def hop_rows(profiles: dict, measured_p50_us: float, baseline_p50_us: float) -> tuple[list[tuple], list[str]]:
    """Rows of the per-hop table (p50 µs per stage) and a closing line per check."""
    rows, path_total = [], 0.0
    for group, hops in (("critical path", CRITICAL_PATH), ("beside it", BESIDE)):
        for topic, sender, receiver in hops:
            sent = profiles.get(sender, {}).get(topic, {})
            got = profiles.get(receiver, {}).get(topic, {})
            if not got:
                continue
            p50 = {stage: figures["p50_us"] for stage, figures in {**sent, **got}.items()}
            broker = max(p50.get("transit", 0.0) - p50.get("send", 0.0), 0.0)
            stages = [p50.get("encode", 0.0), p50.get("send", 0.0), broker, p50.get("decode", 0.0), p50.get("validate", 0.0), p50.get("handler", 0.0)]
            total = sum(stages)
            if group == "critical path":
                path_total += total
            rows.append((f"{topic} {sender}->{receiver}", *(f"{v:,.1f}" for v in stages), f"{total:,.1f}", f"{int(got.get('handler', got.get('decode', {})).get('count', 0)):,}"))
    notes = [f"critical path, sum of the stages' p50: {path_total:,.0f} us; measured obs->verdict p50 in this run {measured_p50_us:,.0f} us; "
             f"one-process baseline {baseline_p50_us:,.0f} us (ratio {measured_p50_us / max(baseline_p50_us, 1e-9):.2f}x)"]
    return rows, notes


def print_hop_table(title: str, rows: list[tuple], notes: list[str]) -> None:
    header = ("message sender->receiver", "encode", "send", "transit+wake", "decode", "validate", "handler", "sum", "msgs")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    for note in notes:
        print(note)
    print(flush=True)


def _final_counter(log_file, key: str) -> float:
    import json

    value = 0.0
    for line in log_file.read_text().splitlines():
        record = json.loads(line)
        value = float(record.get(key, value))
    return value


def in_process_loop(steps: int, n_envs: int) -> dict[str, float]:
    """The same decision logic, called directly."""
    from actors.env.batch import EnvBatch
    from actors.env.env import FuturesTradingEnv
    from actors.env.factory import load_dataset
    from actors.common.instruments import resolve_instrument
    from actors.fusion.fuser import Fuser
    from actors.policy.learner import OnlineMaskablePPO
    from actors.risk.actor import account_limits
    from actors.risk.rules import RiskRules
    from actors.risk.verdicts import VerdictBook

    config = load_config(overrides={**FROZEN, "env.n_envs": n_envs})
    dataset = load_dataset(config)
    instrument = resolve_instrument(config.instrument)
    envs = [FuturesTradingEnv(dataset.split("train"), instrument, config.account, config.env) for _ in range(n_envs)]
    batch = EnvBatch(envs, mode="train", seed=0)
    batch.reset()
    learner = OnlineMaskablePPO(config.policy, n_envs)
    fuser = Fuser(config.fusion)
    book = VerdictBook(RiskRules(config.risk, account_limits(config)), config.risk.max_pending_steps)
    decision_ns: list[int] = []
    started = time.perf_counter()
    for step in range(steps):
        env_ids = batch.active_ids()
        obs, masks = batch.observations(env_ids)
        contexts = [MarketContext(**c) for c in batch.contexts(env_ids)]
        t0 = time.monotonic_ns()
        proposal = learner.propose(obs, masks, step)
        fused = fuser.fuse(step, env_ids, batch.episode_ids(env_ids), proposal.actions, proposal.confidences, masks, contexts)
        book.add_obs(step, env_ids, masks, contexts, None)
        book.add_proposal(step, env_ids, proposal.actions)
        verdict = book.add_decision(step, env_ids, fused.actions, fused.llm_query_ids)
        decision_ns.append(time.monotonic_ns() - t0)
        batch.step(env_ids, verdict.actions, step)
    elapsed = time.perf_counter() - started
    p50, p99 = percentiles_us(decision_ns[20:])
    return {"steps_per_sec": steps / elapsed, "p50_us": p50, "p99_us": p99}


DASHBOARD_SETTLE_SECS = 3.0
"""After the dashboard says it is up (or has stopped), wait this long before a window: its start (Bokeh's import) and
its exit are not what the loop pays while a page is attached."""


def _cpu_secs(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes have used so far, from /proc (Linux)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    return total / os.sysconf("SC_CLK_TCK")


def _window(client, window_secs: float, loop_pids: list[int], dashboard_pid: int | None) -> dict[str, float]:
    """Over ``window_secs``: env steps/s (from the env's sys.progress; those queued before are dropped), and the CPU
    the loop's processes (actors and broker) and the dashboard used per step."""
    from bus.messages import Progress

    while client.poller.poll(0):
        client.sub.recv_multipart()
    first = client.recv(Progress, timeout_secs=30, where=lambda p: p.actor == "env")
    started, loop_cpu = time.monotonic(), _cpu_secs(loop_pids)
    dashboard_cpu = _cpu_secs([dashboard_pid]) if dashboard_pid else 0.0
    while True:
        last = client.recv(Progress, timeout_secs=30, where=lambda p: p.actor == "env")
        if time.monotonic() - started >= window_secs:
            break
    steps, secs = last.steps - first.steps, time.monotonic() - started
    return {"rate": steps / secs, "loop_us": (_cpu_secs(loop_pids) - loop_cpu) / steps * 1e6,
            "dashboard_us": (_cpu_secs([dashboard_pid]) - dashboard_cpu) / steps * 1e6 if dashboard_pid else 0.0}


def _start_dashboard(run_dir: Path):
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "actors.dashboard", "--bus", str(run_dir / "bus.json"), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if not process.stdout.readline().startswith("dashboard: "):
        raise RuntimeError("the dashboard did not start")
    return process


def paired_windows(n_envs: int, window_secs: float, repeats: int) -> list[tuple[dict, dict]]:
    """One running loop, ``repeats`` pairs of windows: without a dashboard, then with one attached to its bus (no
    browser: the page's cost is the dashboard process's own). Pairs in one runtime, because the loop's rate differs
    far more from one start to the next (where the scheduler puts its processes on 2 cores) than a dashboard costs."""
    from bus.messages import Progress
    from runtime.testing import running_actors

    settings = {**FROZEN, "env.n_envs": n_envs, "env.max_steps": 0, "runtime.stats_interval_secs": 60.0, **EXTRA}
    actors = ["env", "policy", "fusion", "risk"]
    # No reasoner: its thoughts add few messages, and on a busy 2-core machine its start-up made runs fail (60 s).
    pairs = []
    with running_actors(actors, settings, wait_started_secs=180) as rt:
        loop_pids = [rt.pid(name) for name in [*actors, "broker"]]
        rt.client.subscribe(Progress, settle_secs=0)
        time.sleep(DASHBOARD_SETTLE_SECS)  # past start-up
        for _ in range(repeats):
            without = _window(rt.client, window_secs, loop_pids, None)
            process = _start_dashboard(rt.run_dir)
            try:
                time.sleep(DASHBOARD_SETTLE_SECS)
                pairs.append((without, _window(rt.client, window_secs, loop_pids, process.pid)))
            finally:
                process.terminate()
                process.wait(timeout=10)
            time.sleep(DASHBOARD_SETTLE_SECS)
    return pairs


def dashboard_rows(n_envs_list: list[int], window_secs: float, repeats: int) -> list[tuple]:
    import numpy as np

    rows = []
    for n_envs in n_envs_list:
        pairs = paired_windows(n_envs, window_secs, repeats)
        mean = {key: [float(np.mean([pair[i][key] for pair in pairs])) for i in (0, 1)] for key in ("rate", "loop_us", "dashboard_us")}
        ratios = np.array([with_["rate"] / without["rate"] for without, with_ in pairs])
        (loop_without, loop_with), dashboard_us = mean["loop_us"], mean["dashboard_us"][1]
        cpu_ratio = loop_without / (loop_with + dashboard_us)
        rows += [(f"{n_envs} env(s): env steps/s with the dashboard", f"{mean['rate'][1]:,.0f}", f"{mean['rate'][0]:,.0f} without",
                  f"{np.median(ratios):.3f}x", ">= 0.95x"),
                 (f"{n_envs} env(s): ratio of each pair", " ".join(f"{r:.3f}" for r in ratios), f"min {ratios.min():.3f}, max {ratios.max():.3f}", "-", ""),
                 (f"{n_envs} env(s): CPU per step, loop + dashboard (us)", f"{loop_with:,.0f} + {dashboard_us:,.0f}", f"{loop_without:,.0f} without",
                  f"{cpu_ratio:.3f}x", ">= 0.95x")]
    return rows


def loop_rows(case: str, proj: dict, base: dict) -> list[tuple]:
    overhead = proj["p50_us"] - base["p50_us"]
    return [
        (f"{case}: loop steps/s", f"{proj['steps_per_sec']:,.0f}", f"{base['steps_per_sec']:,.0f} one process", f"{proj['steps_per_sec'] / base['steps_per_sec']:.2f}x", ""),
        (f"{case}: obs->verdict p50 us", f"{proj['p50_us']:.0f}", f"{base['p50_us']:.0f} one process", f"{proj['p50_us'] / base['p50_us']:.2f}x", "<= 1000"),
        (f"{case}: obs->verdict p99 us", f"{proj['p99_us']:.0f}", f"{base['p99_us']:.0f} one process", f"{proj['p99_us'] / base['p99_us']:.2f}x", "<= 3000"),
        (f"{case}: process-split overhead", f"{overhead:.0f} us/decision", "-", "-", "stated"),
        (f"{case}: thoughts during run", f"{proj['thoughts']:.0f}", "-", "-", ""),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/bench loop", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="loop steps per measurement")
    parser.add_argument("--n-envs", type=int, nargs="+", default=[1, 4], help="environment counts to measure")
    parser.add_argument("--dashboard", action="store_true", help="instead: the loop's steady steps/s with and without a dashboard "
                        "process attached to its bus (bin/run dashboard --bus)")
    parser.add_argument("--window-secs", type=float, default=10.0, help="--dashboard: seconds each rate is measured over")
    parser.add_argument("--repeats", type=int, default=4, help="--dashboard: pairs of windows (without, with) in one running loop")
    parser.add_argument("--no-hops", dest="hops", action="store_false", help="leave out the per-hop run (TT_PROFILE=hops)")
    parser.add_argument("--placement", nargs="+", choices=CPU_PLACEMENTS, default=list(CPU_PLACEMENTS),
                        help="runtime.cpu_placement values to measure, each beside the same baseline (split: the loop's "
                        "processes on their own CPUs, the reasoner on the last; off: the scheduler places them)")
    parser.add_argument("--no-reasoner", dest="reasoner", action="store_false",
                        help="leave the reasoner out (on a loaded machine its nice-19 start can miss runtime.startup_grace_secs)")
    parser.add_argument("--no-env-work", dest="env_work", action="store_false",
                        help="leave out the env's own work per verdict replayed in one process (tests/bench/loop_env_work.py)")
    parser.add_argument("--no-training", dest="training", action="store_false",
                        help="leave out training steps/s (tests/bench/loop_training.py: the actor loop learning beside "
                        "MaskablePPO.learn() over DummyVecEnv and SubprocVecEnv in one run)")
    parser.add_argument("--train-n-steps", type=int, default=256, help="training: PPO rollout steps per env")
    parser.add_argument("--train-rollouts", type=int, default=2, help="training: PPO rollouts per measurement")
    lanes = parser.add_mutually_exclusive_group()
    lanes.add_argument("--direct", action="store_true", help="direct lanes (bus.direct = true, the default): no broker in a hop")
    lanes.add_argument("--broker", action="store_true", help="every hop through the broker (bus.direct = false)")
    args = parser.parse_args(argv)
    EXTRA["bus.direct"] = not args.broker
    if args.dashboard:
        print_table("decision loop at full speed with a dashboard attached: env + policy + fusion + risk (frozen policy)",
                    dashboard_rows(args.n_envs, args.window_secs, args.repeats))
        return
    rows, hop_tables = [], []
    for n_envs in args.n_envs:
        base = in_process_loop(args.steps, n_envs)
        for placement in args.placement:
            EXTRA["runtime.cpu_placement"] = placement
            case = f"{n_envs} env(s), {placement}"
            proj = project_loop(args.steps, n_envs, with_reasoner=args.reasoner)
            if args.hops:
                profiled = project_loop(args.steps, n_envs, with_reasoner=args.reasoner, hops=True)
                hop_tables.append((f"{case}: where obs->verdict time goes, p50 us per stage (TT_PROFILE=hops run: obs->verdict p50 "
                                   f"{profiled['p50_us']:,.0f} us, p99 {profiled['p99_us']:,.0f} us)", *hop_rows(profiled["hops"], profiled["p50_us"], base["p50_us"])))
            rows += loop_rows(case, proj, base)
    lanes = "through the broker" if args.broker else "direct lanes"
    print_table(f"decision loop: env + policy + fusion + risk, {'reasoner always on' if args.reasoner else 'no reasoner'} (frozen policy), {lanes}", rows)
    for title, hop_table, notes in hop_tables:
        print_hop_table(title, hop_table, notes)
    if args.env_work:
        print_table("the env's work between a verdict and the next observation, replayed in one process (thread CPU time: "
                    "step, checkpoint when due, env.transition, the next env.obs)", env_work_rows(args.steps, args.n_envs))
    if args.training:
        print_table(f"training steps/s: the decision loop learning (env + policy + fusion + risk) beside MaskablePPO.learn() in one "
                    f"process; n_steps={args.train_n_steps}, {args.train_rollouts} rollouts", training_rows(args.n_envs, args.train_n_steps, args.train_rollouts))


if __name__ == "__main__":
    main()
