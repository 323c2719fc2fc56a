"""The jobs' side of run.reproducible: an exact step budget for the env, no free-running reasoner, and which jobs
turn it on."""

from __future__ import annotations

from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.fingerprint import without_free_running_reasoner
from actors.jobs.presets import BACKTEST, LOCKSTEP, PAPER, REPRODUCIBLE, TRAIN
from actors.jobs.train import both_done, exact_budget
from bus.messages import Done


def config(*presets, **settings):
    return configure(build_parser().parse_args(["train"]), settings, list(presets))


def test_a_reproducible_training_stops_its_loop_one_observation_after_the_policys_budget():
    trained = exact_budget(config(TRAIN, REPRODUCIBLE, **{"policy.total_timesteps": 4096, "env.n_envs": 4}))
    assert trained.env.max_steps == 4096 // 4 + 1  # the extra observation closes the last rollout
    odd = exact_budget(config(TRAIN, REPRODUCIBLE, **{"policy.total_timesteps": 4098, "env.n_envs": 4}))
    assert odd.env.max_steps == 1025 + 1
    # left alone: the mode off, an open-ended budget, a frozen policy, a max_steps the user set
    assert exact_budget(config(TRAIN, **{"policy.total_timesteps": 4096})).env.max_steps == 0
    assert exact_budget(config(TRAIN, REPRODUCIBLE, **{"policy.total_timesteps": 0})).env.max_steps == 0
    assert exact_budget(config(BACKTEST, REPRODUCIBLE)).env.max_steps == 0
    assert exact_budget(config(TRAIN, REPRODUCIBLE, **{"env.max_steps": 7})).env.max_steps == 7


def test_a_resumed_training_budgets_only_the_steps_still_to_go(tmp_path):
    from actors.policy.checkpoint import write_checkpoint
    from actors.policy.config import PolicyConfig
    from actors.policy.learner import OnlineMaskablePPO

    learner = OnlineMaskablePPO(PolicyConfig(n_steps=4, batch_size=4, net_arch=(8,)), 2)
    learner.model.num_timesteps = 1000
    write_checkpoint(tmp_path, 1000, learner.checkpoint())
    resumed = exact_budget(config(TRAIN, REPRODUCIBLE, **{"policy.total_timesteps": 1048, "env.n_envs": 2,
                                                         "policy.resume_from": str(tmp_path)}))
    assert resumed.env.max_steps == 24 + 1


def test_a_reproducible_run_leaves_out_a_free_running_reasoner_and_keeps_one_in_lockstep():
    assert "reasoner" not in without_free_running_reasoner(config(TRAIN, REPRODUCIBLE)).runtime.actors
    assert "reasoner" in without_free_running_reasoner(config(BACKTEST, LOCKSTEP, REPRODUCIBLE)).runtime.actors
    assert "reasoner" in without_free_running_reasoner(config(PAPER)).runtime.actors  # paper: asynchronous, as it was


def test_an_exact_budget_run_stops_when_both_the_policy_and_the_env_are_done():
    stop = both_done("policy", "env")
    assert not stop(Done(actor="policy", reason="timesteps_reached"))
    assert not stop(Done(actor="fusion", reason="x"))
    assert stop(Done(actor="env", reason="max_steps"))
