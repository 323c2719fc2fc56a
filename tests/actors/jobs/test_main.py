"""The main job's printed parts."""

from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.main import HYBRID_LOOP_STEPS, format_thought, hybrid_settings, main_root
from bus.messages import LlmThought


def test_a_thought_is_printed_as_its_four_steps_and_the_action():
    thought = LlmThought(env_id=0, episode_id=0, step_seen=5, query_id="1-1", action=1, confidence=0.8, mode="four_step",
                         analysis="Up  trend.", options="BUY or HOLD", risks="a reversal", decision="BUY | 0.8 | trend")

    text = format_thought(thought)

    assert "analyse: Up trend." in text and "risks: a reversal" in text and "-> BUY with confidence 0.80" in text


def test_the_hybrid_phase_resumes_phase_one_in_lockstep_with_short_rollouts(tmp_path):
    args = build_parser().parse_args(["main", "--timesteps", "4096"])

    settings = hybrid_settings(args, tmp_path / "1-train", n_envs=4)

    assert settings["policy.resume_from"] == str(tmp_path / "1-train")
    assert settings["policy.total_timesteps"] == 4096 + HYBRID_LOOP_STEPS * 4
    assert settings["env.thought_lag_steps"] == 1 and settings["policy.rollout_from_checkpoint"] is False
    assert settings["policy.n_steps"] * 4 <= HYBRID_LOOP_STEPS * 4  # at least one PPO update with the LLM in it


def test_main_keeps_its_stages_in_the_run_dir_the_user_gave(tmp_path):
    args = build_parser().parse_args(["main", "--run-dir", str(tmp_path / "mine")])

    assert main_root(args, configure(args)) == tmp_path / "mine"
