"""Mode main: the original design's two phases in one job, then two backtests, all in one directory.

1. ``1-train``: RL at full speed (policy, fusion, risk; no LLM), the original design's phase 1.
2. ``2-hybrid``: the policy continues in lockstep (env.thought_lag_steps = 1): the LLM thinks about
   every step of every environment while the loop handles the previous one, so it takes part in
   every decision and in the PPO updates (so the thoughts shape what the policy learns), for a few hundred steps.
3. ``3-backtest``: the trained policy on the held-out test days at full speed (no thoughts arrive in
   time at that pace: the report says so through its query rate). Of phase 1's and phase 2's policies it is
   the one whose decisions net more on the validation days (``choose_policy``), and its evidence table adds
   the decisions alone (no risk stage, whose halts depend on the path) against the best momentum rule, with an
   interval. Its test days go into the trials ledger, and its deflated Sharpe counts every policy trial there on the
   market, as evaluate's does (actors/jobs/main_ledger.py); it prints evaluate's success table (actors/jobs/main_evidence.py) and the market's
   calibration beside real NQ.
4. ``4-lockstep-backtest``: a slice of the test days in lockstep, where every decision has a thought.

In phase 2 the LoRA trainer actor runs beside the loop (``--no-lora`` leaves it out): it stores each
thought with its hindsight label (and closed trades), trains a first round once 48 are in while the loop
goes on, and publishes the adapter when its held-out match rate is not worse; the reasoner swaps it in,
so the phase's last thoughts and phase 4's reasoner run on it. Phase 2 ends after that round.

Each stage prints what it measured; ``--run-dir DIR`` holds the four stage directories.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from actors import ENV, FUSION, POLICY, RISK
from actors.jobs.backtest import backtest_settings, print_backtest, run_backtest, trained_fusion_settings
from actors.jobs.common import configure, format_table
from actors.jobs.config import Config
from actors.jobs.presets import BACKTEST, LOCKSTEP, REPRODUCIBLE, TRAIN
from actors.jobs.lora import FirstRoundWatch, learn_in_run_config, published_adapter_settings, run_round_rows, versions_book
from actors.jobs.evaluation.backtest_evidence import backtest_evidence_rows, choose_on_validation, play_floors
from actors.env.factory import load_dataset
from actors.jobs.inputs import check_option_files
from actors.jobs.evaluation.calibration import market_lines
from actors.jobs.lockstep import lockstep_backtest
from actors.jobs.train import MAIN_STAGES, exact_budget, policy_checkpoint, run_training, train_settings, training_summary
from actors.jobs.evaluate import evidence_lines, success_lines
from actors.jobs.main_evidence import phase3_success_rows, success_summary
from actors.jobs.evaluation.ledger import current_commit, ledger_path, read_trials_or_stop
from actors.jobs.backtest_ledger import backtest_session_pnl
from actors.jobs.main_ledger import record_phase3
from actors.policy import checkpoint_steps, latest_checkpoint
from bus.messages import LlmThought, LoraAdapter
from runtime.supervisor import EXIT_OK

MAIN_TRAINING = {"policy.total_timesteps": 51200, "policy.n_steps": 512}
"""Phase 1: 50k env steps in rollouts of 512 x n_envs (25 PPO updates, about two minutes through the actors on 2 cores):
the regimes-market sweeps (docs/experiments/README.md) found +$178 a day out of sample at 50k steps on 500 training days and
+$345 at 100k, against momentum's +$263."""
MAIN_DATA = {"data.synthetic_days": 300}
"""The default job's market: 300 synthetic days (210 to train on, 45 held out for the backtests). On 42 training days
(the 60-day default) a policy memorises the days' noise instead of the regimes (docs/experiments/README.md)."""
LONG_TRAINING = {"policy.total_timesteps": 102_400, "policy.n_steps": 2048}
"""--long: phase 1 trains 100k env steps in full rollouts of 2048 x n_envs ..."""
LONG_DATA = {"data.synthetic_days": 700}
"""... on 700 synthetic days (490 to train on, 105 held out). In the regimes-market sweeps on 500 training days the
out-of-sample P&L peaked near 100k steps (+$249..+$345 a day over 3 seeds, momentum +$263, oracle +$825) and fell
with more (+$216 at 200k, +$167 at 400k on seed 0): more steps fit the training days' noise."""
RL_ONLY = {"fusion.method": "rl_only", "runtime.actors": [ENV, POLICY, FUSION, RISK]}
HYBRID_ENVS = 2
HYBRID_LOOP_STEPS = 24
"""Phase 2 length in loop steps (x HYBRID_ENVS env steps, one thought each: about 3 s a thought on 2 cores with the
LoRA trainer on the other core)."""
HYBRID_ROLLOUT = {"env.n_envs": HYBRID_ENVS, "policy.rollout_from_checkpoint": False, "policy.n_steps": 16, "policy.batch_size": 32,
                  "policy.n_epochs": 4}
"""Phase 2 updates every 16 steps per env, so its lockstep steps make PPO updates with the LLM in them."""
HYBRID = (TRAIN, LOCKSTEP, REPRODUCIBLE)
"""Phase 2's presets: the policy keeps learning, the LLM in every decision, one seed one result."""
MAIN_MARKET_HISTORY = 96
MAIN_MARKET_HELD_OUT = 24
MAIN_LORA = {"lora.steps_per_round": 6, "lora.publish_from_step": HYBRID_LOOP_STEPS}
"""Phase 2's trainer starts with 96 hindsight-labelled prompts of the training days and judges a round of 6 steps on 24
prompts of later days, so its first round starts at once, not after the hour of bars the run's own first labels wait
for (the hindsight horizon), and ends at about the time the loop's 48 thoughts do (phase 2 took 3.3 minutes from a fresh clone
on 2 cores; with 12 steps, 32 prompts and 96 thoughts it took 5). 24 prompts show the mechanism, not a gain: ``bin/bench lora --market regimes`` measures that on 300.
lora.publish_from_step holds the adapter until the policy's lockstep budget is played: the reasoner swaps it in at that step
whatever the trainer's pace, so the phase's policy does not depend on when the round ended (the thoughts after it,
which the round's watch waits for, are on the adapter)."""
LOCKSTEP_BACKTEST_STEPS = 30
"""Phase 4 length in decisions (the first 30 minutes of the test days)."""
# The reasoner keeps reasoner.n_threads (1) in phase 4 too. On an idle 2-core machine 2 threads made a single-shot
# thought 1.3 s instead of 2.3 s, but with any other process on the cores llama.cpp's threads wait for each other:
# beside a niced benchmark a thought took 34-85 s.


def main_root(args: argparse.Namespace, base: Config) -> Path:
    """--run-dir, else runs/<timestamp>-<name>: one directory holding the job's stages."""
    name = base.run.name or "main"
    return Path(args.run_dir) if args.run_dir else Path(base.run.runs_dir) / f"{time.strftime('%Y%m%d-%H%M%S')}-{name}"


def phase1_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Phase 1's training budget: the default's, --long's, then --timesteps."""
    return {**(LONG_TRAINING if getattr(args, "long", False) else MAIN_TRAINING), **train_settings(args)}


def data_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The data every phase shares (--long: a longer synthetic history)."""
    return dict(LONG_DATA) if getattr(args, "long", False) else dict(MAIN_DATA)


def phase1_steps_reached(args: argparse.Namespace, phase1_run: Path) -> int:
    """Where phase 1's policy stopped: its newest checkpoint's step count (in a reproducible run exactly the budget; with
    run.reproducible off past it, by what the loop served before the runtime stopped: 20,480 -> 21,368 at 4 envs); the
    configured budget when no checkpoint is there yet."""
    checkpoint = latest_checkpoint(phase1_run)
    reached = checkpoint_steps(checkpoint) if checkpoint is not None else None
    return reached if reached is not None else int(phase1_settings(args)["policy.total_timesteps"])


def hybrid_settings(args: argparse.Namespace, phase1_run: Path, n_envs: int = HYBRID_ENVS) -> dict[str, Any]:
    """Phase 2, laid over the HYBRID presets: resume phase 1's policy and keep learning with the LLM in lockstep.

    Its budget counts on from where phase 1 stopped: a total below the resumed step count would end
    the policy's training at the first transition, with no PPO update that had the LLM in it."""
    settings = {**train_settings(args), **HYBRID_ROLLOUT}
    phase1_steps = phase1_steps_reached(args, phase1_run)
    settings.update({
        "policy.resume_from": str(phase1_run),
        "policy.total_timesteps": phase1_steps + HYBRID_LOOP_STEPS * n_envs,
    })
    return settings


PHASE1_POLICY, PHASE2_POLICY = "phase 1 policy", "phase 2 policy (after the lockstep updates)"


def choose_policy(args: argparse.Namespace, data: dict[str, Any], candidates: dict[str, Path | None]) -> tuple[Path, tuple[str, Path] | None]:
    """The checkpoint the backtests play: of phase 1's and phase 2's policies, the one whose decisions net more on
    the validation days without the risk stage (the test days stay unseen), and the other as (label, path) for the evidence table. With
    --data (the whole file is the test) or a missing checkpoint there is nothing to choose: phase 2's."""
    present = {name: path for name, path in candidates.items() if path is not None}
    if args.data is not None or len(present) < 2:
        return present.get(PHASE2_POLICY) or next(iter(present.values())), None
    config = configure(args, {**data, **backtest_settings(present[PHASE2_POLICY], None)}, [BACKTEST, REPRODUCIBLE])
    chosen, rows = choose_on_validation(config, present)
    print()
    print(format_table(rows, "the policy the backtests play: the one whose decisions net more on the validation days (no risk stage; the test days stay unseen)"))
    other = next(name for name in present if name != chosen)
    return present[chosen], (other, present[other])


def mode_main(args: argparse.Namespace) -> int:
    data = data_settings(args)
    base = configure(args, data)
    check_option_files(args, data)  # phase 3 tests on --data: a broken file stops the job now, not after the training
    root = main_root(args, base)
    read_trials_or_stop(ledger_path(base.run), "main")  # a corrupt trials ledger stops the job now, not after its training
    commit = current_commit()

    train_config = exact_budget(configure(args, {**data, **phase1_settings(args), **RL_ONLY}, [TRAIN, REPRODUCIBLE]))
    train = run_training(train_config, args, root / MAIN_STAGES["train"])
    print(format_table(training_summary(train), "phase 1: RL training at full speed"))

    learn = not getattr(args, "no_lora", False)
    phase2 = {**data, **MAIN_TRAINING, **hybrid_settings(args, train.run_dir.path), **MAIN_LORA}
    held_out = MAIN_MARKET_HELD_OUT if getattr(args, "market_history", None) is None else None  # --market-history: 300
    hybrid_config = (learn_in_run_config(args, phase2, root, HYBRID, MAIN_MARKET_HISTORY, held_out)
                     if learn else exact_budget(configure(args, phase2, HYBRID)))
    watch = FirstRoundWatch()
    hybrid = run_training(hybrid_config, args, root / MAIN_STAGES["hybrid"], watch=(LlmThought, LoraAdapter), stop_when=watch if learn else None)
    print()
    rows = training_summary(hybrid) + (run_round_rows(versions_book(hybrid_config, hybrid.run_dir.path), watch) if learn else [])
    print(format_table(rows, f"phase 2: hybrid training in lockstep, {HYBRID_LOOP_STEPS} steps with the LLM in every decision"
                             + (", the LoRA trainer beside it" if learn else "")))

    lora = published_adapter_settings(hybrid_config, hybrid.run_dir.path) if learn else {}
    candidates = {PHASE1_POLICY: latest_checkpoint(train.run_dir.path), PHASE2_POLICY: policy_checkpoint(hybrid.run_dir.path)}
    checkpoint, other_policy = choose_policy(args, data, candidates)
    fusion = trained_fusion_settings(hybrid.run_dir.path)
    backtest_config = configure(args, {**data, **backtest_settings(checkpoint, args.data), **fusion}, [BACKTEST, REPRODUCIBLE])
    result, metrics = run_backtest(backtest_config, args, root / MAIN_STAGES["backtest"])
    print()
    print_backtest(result, metrics, backtest_config)
    session_pnl = backtest_session_pnl(result.run_dir.path, backtest_config)
    chosen = next((name for name, path in candidates.items() if path == checkpoint), PHASE2_POLICY)
    trials = record_phase3(backtest_config, train_config, session_pnl, checkpoint, chosen, commit)
    floors = play_floors(backtest_config)
    print()
    print(format_table(backtest_evidence_rows(backtest_config, metrics, session_pnl, other_policy, policy_checkpoint=checkpoint,
                                              deflation=trials, floors=floors),
                       "evidence: the same test bars played by the floors and the oracle (same env, costs, risk rules)"))
    print()
    print("\n".join(evidence_lines(trials)))
    print("\nsuccess table (the seeds' targets, as bin/run evaluate reports them):\n")
    print("\n".join(success_lines(success_summary(phase3_success_rows(metrics, floors[1].get("oracle"), trials)))))
    print()
    print("\n".join(market_lines(backtest_config, load_dataset(backtest_config))))

    lockstep_backtest(args, {**data, **backtest_settings(checkpoint, args.data), **fusion, **lora}, root / MAIN_STAGES["lockstep"],
                      LOCKSTEP_BACKTEST_STEPS, extra=[("full-speed backtest query rate, for comparison", metrics.get("query_rate", 0.0))])
    print(f"\nall stages: {root.resolve()}")
    return EXIT_OK
