from actors.jobs.progress import ProgressView, rate_text
from bus.messages import Progress


def _line(capsys, figures: dict[str, float], steps_per_sec: float = 0.4, steps: int = 21370) -> str:
    view = ProgressView("policy", "train", enabled=True)
    view.update(Progress(actor="policy", steps=steps, total_steps=21464, steps_per_sec=steps_per_sec, figures=figures))
    return capsys.readouterr().err


def test_past_its_budget_the_line_says_the_budget_is_reached_with_no_eta(capsys):
    # Phase 2: the policy's budget is spent while the loop plays on until the LoRA round ends.
    line = _line(capsys, {}, steps=21466)
    assert "21466 steps (budget 21464 reached, finishing), 0.4 steps/s" in line
    assert "21466/21464" not in line and "eta" not in line


def test_a_slow_lockstep_rate_reads_as_a_fraction_not_as_zero_steps_a_second():
    assert rate_text(0.4) == "0.4" and rate_text(2.25) == "2.2" and rate_text(0.0) == "0" and rate_text(712.4) == "712"


def test_a_progress_line_leaves_out_figures_that_have_no_value_yet(capsys):
    line = _line(capsys, {"episodes": 0.0, "mean_episode_return": 0.0, "llm_staleness_max_steps": -1.0, "late_steps": 0.0})

    assert "21370/21464 steps, 0.4 steps/s eta 235s" in line
    assert "mean return" not in line and "staleness max" not in line
    assert "episodes 0" in line and "late steps 0" in line


def test_a_progress_line_shows_the_mean_return_once_an_episode_ended_and_the_staleness_once_a_thought_came(capsys):
    line = _line(capsys, {"episodes": 2.0, "mean_episode_return": -3.5, "llm_staleness_max_steps": 1.0})

    assert "mean return -3.5" in line and "staleness max 1" in line


def test_a_training_summary_without_a_finished_episode_shows_no_mean_return(tmp_path):
    from actors.jobs.common import JobResult
    from actors.jobs.train import training_summary
    from bus.messages import Done
    from runtime.rundir import RunDir

    result = JobResult(0, RunDir(tmp_path))
    result.done["policy"] = Done(actor="policy", reason="timesteps_reached", summary={"num_timesteps": 20580.0, "updates": 11.0})
    result.last_progress["env"] = Progress(actor="env", steps=96, total_steps=96, steps_per_sec=0.4,
                                           figures={"episodes": 0.0, "mean_episode_return": 0.0})

    rows = dict(training_summary(result))

    assert "Mean episode return (reward units)" not in rows and rows["Episodes"] == 0.0 and rows["PPO updates"] == 11.0
    assert not any(key in rows for key in ("episodes", "updates", "num_timesteps"))  # labels, never raw keys


def test_a_summary_table_writes_whole_floats_as_counts_and_others_to_four_digits():
    from actors.jobs.common import format_table

    table = format_table([("Policy timesteps", 51220.0), ("PPO approximate KL", 0.0251345), ("Net P&L ($)", 1234567.891),
                          ("trades", 12), ("run_dir", "/tmp/x")])

    assert "51,220" in table and "e+04" not in table
    assert "0.02513" in table and "1.235e+06" in table and "| 12" not in table and "/tmp/x" in table
