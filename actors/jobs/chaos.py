"""Mode chaos: kill -9 each actor of a running backtest loop in turn and measure what it costs.

The loop (env, policy, fusion, risk; the reasoner with --with-reasoner) runs a paced backtest.
For each actor: SIGKILL, then from the bus and the supervisor's event list:

- detect: the supervisor noticed the death (``exited`` event) - kill time;
- restart: the restarted process's first heartbeat (new pid) - kill time;
- recover: the first healthy risk.verdict after that heartbeat - kill time (healthy: no degraded row;
  with the reasoner killed, also a fusion.decision that used a thought again);
- degraded: verdicts meanwhile with a degraded row (risk decided without fusion: from the proposal or
  HOLD) and fusion decisions taken ``rl_only`` / without a thought;
- lost: steps the env played with HOLD because no verdict came (env.transition timed_out), and for the
  env itself, the loop steps its restart started over from.

The broker is killed last: the supervisor starts it again on the same addresses (its restart is the
supervisor's ``spawned`` event) and every actor's sockets reconnect on their own; the loop pauses
meanwhile (the env holds at its verdict deadline) and resumes.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from actors.jobs.config import load_config
from actors.jobs.presets import BACKTEST, preset_settings
from bus.client import SyncBus
from bus.messages import EnvObs, EnvTransition, FusionDecision, Heartbeat, RiskVerdict
from runtime.liveness import read_process

CHAOS_RUN: dict[str, Any] = {"env.n_envs": 2, "env.step_interval_ms": 50.0, "runtime.spare_start_delay_secs": 0.0}
"""Over BACKTEST, two envs paced at 20 steps/s: a backtest of an untrained, frozen policy long enough to kill everyone
in turn; the spares (runtime.spare_actors) start as soon as the loop runs, and the first kill waits for them."""
LOOP_ACTORS = ["env", "policy", "fusion", "risk"]
RECOVERY_TIMEOUT_SECS = 60.0
SETTLE_SECS = 3.0
"""Healthy running between two kills, so one fault's effects do not count against the next."""
TARGET_DETECT_SECS = 1.5
SPARE_READY_TIMEOUT_SECS = 180.0
"""How long the first kill waits for the spares (runtime.spare_actors) to finish their imports and warm-up."""
SPARE_LOOK_SECS = 0.3
TARGET_RECOVER_SECS = 2.0


def chaos_settings(config_path: str | None = None) -> dict[str, Any]:
    """BACKTEST and CHAOS_RUN as the dotted keys runtime.testing.running_actors lays over ``config_path``."""
    return {**preset_settings([BACKTEST], load_config(config_path)), **CHAOS_RUN}


@dataclass
class FaultResult:
    actor: str
    detect_secs: float = float("nan")
    restart_secs: float = float("nan")
    """Kill -> the new process's first heartbeat."""
    recover_secs: float = float("nan")
    """Kill -> the first healthy decision after the restart."""
    degraded_verdicts: int = 0
    rl_only_decisions: int = 0
    timed_out_steps: int = 0
    steps_restarted: int = 0
    """Env only: the loop step the env was at when killed."""
    resumed_step: int = -1
    """The loop step of the first healthy decision after the restart (env: restored from its checkpoint or not)."""
    recovered: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def lost(self) -> str:
        parts = [f"{self.timed_out_steps} steps HOLD (no verdict)"] if self.timed_out_steps else []
        if self.steps_restarted and 0 <= self.resumed_step < self.steps_restarted:
            parts.append(f"env state: killed at step {self.steps_restarted}, resumed at step {self.resumed_step}")
        return ", ".join(parts) or "nothing"


def _watch_until_recovered(client: SyncBus, rt: Any, result: FaultResult, old_pid: int, killed_at: float, reasoner: bool) -> None:
    """Read the bus after a kill until a healthy decision follows the restarted actor's first heartbeat."""
    restarted_at = None
    deadline = killed_at + RECOVERY_TIMEOUT_SECS
    while time.monotonic() < deadline:
        try:
            msg = client.recv(timeout_secs=0.5)
        except TimeoutError:
            continue
        now = time.monotonic()
        if result.actor == "broker" and restarted_at is None:  # no heartbeat of its own: the supervisor's record
            respawn = next((e.at for e in list(rt.supervisor.events) if e.actor == "broker" and e.kind == "spawned" and e.at > killed_at), None)
            if respawn is not None:
                restarted_at, result.restart_secs = respawn, respawn - killed_at
        if isinstance(msg, Heartbeat) and msg.actor == result.actor and msg.pid != old_pid and restarted_at is None:
            restarted_at = now
            result.restart_secs = now - killed_at
        elif isinstance(msg, EnvTransition):
            result.timed_out_steps += sum(bool(t) for t in msg.timed_out)
        elif isinstance(msg, FusionDecision):
            rl_only = msg.method == "rl_only" or bool(np.all(msg.llm_actions < 0))
            result.rl_only_decisions += int(rl_only and reasoner)
            if restarted_at is not None and result.actor == "reasoner" and not rl_only:
                result.recover_secs, result.recovered = now - killed_at, True
                return
        elif isinstance(msg, RiskVerdict):
            degraded = any(msg.degraded)
            result.degraded_verdicts += int(degraded)
            if restarted_at is not None and not degraded and result.actor != "reasoner":
                result.recover_secs, result.recovered, result.resumed_step = now - killed_at, True, msg.step
                return
    result.notes.append(f"not recovered within {RECOVERY_TIMEOUT_SECS:g} s")


def _detected_at(rt: Any, actor: str, pid: int, timeout_secs: float = 10.0) -> float | None:
    deadline = time.monotonic() + timeout_secs
    while time.monotonic() < deadline:
        for event in list(rt.supervisor.events):
            if event.actor == actor and event.pid == pid and event.kind in ("exited", "silent"):
                return event.at
        time.sleep(0.01)
    return None


def inject_fault(client: SyncBus, rt: Any, actor: str, *, reasoner: bool, last_env_step: int) -> FaultResult:
    result = FaultResult(actor)
    old_pid = rt.pid(actor)
    killed_at = time.monotonic()
    rt.kill(actor)
    _watch_until_recovered(client, rt, result, old_pid, killed_at, reasoner)
    detected = _detected_at(rt, actor, old_pid)
    if detected is not None:
        result.detect_secs = detected - killed_at
    if actor == "env":
        result.steps_restarted = last_env_step
    return result


def _settle(client: SyncBus, seconds: float) -> int:
    """Let the loop run; the last env step seen."""
    last_step = -1
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            msg = client.recv(EnvObs, timeout_secs=max(0.05, deadline - time.monotonic()))
            last_step = msg.step
        except TimeoutError:
            pass
    return last_step


def spare_waiting(pid: int, look_secs: float = SPARE_LOOK_SECS) -> bool:
    """A spare is ready when it waits for its "go": asleep, and no CPU time spent over ``look_secs`` (imports and
    warm-up done)."""
    before = read_process(pid)
    time.sleep(look_secs)
    after = read_process(pid)
    return before is not None and after is not None and after.state == "S" and after.cpu_ticks == before.cpu_ticks


def wait_for_spares(rt: Any, victims: list[str], timeout_secs: float = SPARE_READY_TIMEOUT_SECS) -> list[str]:
    """Wait until every actor of ``victims`` in runtime.spare_actors has a spare that finished its imports and warm-up, so a kill
    measures the restart a settled runtime gets (a spare starts once every actor runs, and imports for seconds).
    Returns the actors whose spare was not ready in time."""
    names = [name for name in rt.supervisor.rt.spare_actors if name in rt.supervisor.actors and name in victims]
    deadline = time.monotonic() + timeout_secs
    while True:
        missing = [name for name in names
                   if (spare := rt.supervisor.actors[name].spare) is None or not spare_waiting(spare.pid)]
        if not missing or time.monotonic() > deadline:
            return missing
        time.sleep(0.2)


def run_chaos(rt: Any, actors: list[str], *, reasoner: bool) -> list[FaultResult]:
    results = []
    with SyncBus(rt.addresses, sender="chaos") as client:
        client.subscribe(Heartbeat, EnvObs, FusionDecision, RiskVerdict, EnvTransition, settle_secs=0.3)
        client.recv(RiskVerdict, timeout_secs=120)  # the loop is deciding
        late = wait_for_spares(rt, actors)
        for actor in actors:
            last_step = _settle(client, SETTLE_SECS)
            result = inject_fault(client, rt, actor, reasoner=reasoner, last_env_step=last_step)
            if actor in late:
                result.notes.append(f"its spare was not ready within {SPARE_READY_TIMEOUT_SECS:g} s")
            results.append(result)
    return results


def table(results: list[FaultResult]) -> str:
    def secs(value: float) -> str:
        return "-" if value != value else f"{value:.2f}"

    lines = [f"{'actor':<10}{'detect s':>9}{'restart s':>10}{'recover s':>10}{'degraded':>9}{'rl_only':>8}  lost",
             "-" * 90]
    for r in results:
        lines.append(f"{r.actor:<10}{secs(r.detect_secs):>9}{secs(r.restart_secs):>10}{secs(r.recover_secs):>10}"
                     f"{r.degraded_verdicts:>9}{r.rl_only_decisions:>8}  {r.lost}" + (f"  ({'; '.join(r.notes)})" if r.notes else ""))
    lines += ["", f"targets: detect <= {TARGET_DETECT_SECS} s, recover <= {TARGET_RECOVER_SECS} s "
              "(recover includes the restart backoff, runtime.restart_backoff_secs, and the actor's start: imports, models)",
              "broker: restarted on the same addresses; sockets reconnect; steps without a verdict meanwhile are HOLD (lost: none)"]
    return "\n".join(lines)


def mode_chaos(args: argparse.Namespace) -> int:
    from actors.jobs.common import check_run_files, user_settings
    from runtime.testing import running_actors

    actors = LOOP_ACTORS + (["reasoner"] if args.with_reasoner else [])
    settings = {**chaos_settings(args.config), **user_settings(args.overrides)}
    check_run_files(load_config(args.config, {**settings, "runtime.actors": actors}))  # a bad file: one line, no actor crash loop
    with running_actors(actors, settings, config_path=args.config, keep_run_dir=True, wait_started_secs=180) as rt:
        print(f"run directory: {rt.run_dir}", flush=True)
        results = run_chaos(rt, [*actors, "broker"], reasoner=args.with_reasoner)
    print(table(results))
    figures = rt.supervisor.supervision_figures()
    print(f"supervisor: {figures['restarts']} restarts ({', '.join(f'{k} {v}' for k, v in figures['restarts_by_process'].items() if v)}), "
          f"{figures['slow']} late heartbeats from slow actors left running")
    return 0 if all(r.recovered for r in results) else 1
