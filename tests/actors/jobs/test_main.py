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


def test_the_hybrid_phase_runs_the_lora_trainer_unless_told_not_to(tmp_path):
    from actors import LORA
    from actors.jobs.lora import LEARN_IN_RUN, published_adapter_settings
    from actors.lora import VersionBook

    args = build_parser().parse_args(["main"])
    config = configure(args, {**hybrid_settings(args, tmp_path / "1-train"), **LEARN_IN_RUN})
    assert config.lora.enabled and LORA in config.runtime.actors
    assert not build_parser().parse_args(["main"]).no_lora and build_parser().parse_args(["main", "--no-lora"]).no_lora

    # phase 4 runs on the newest published version; none published -> the base model
    book = VersionBook(tmp_path / "run" / "lora" / "versions")
    assert published_adapter_settings(config, tmp_path / "run") == {}
    adapter = tmp_path / "adapter.gguf"
    adapter.write_bytes(b"GGUF")
    book.record(book.next_version(), adapter, {"match_rate_after": 0.5}, published=True)
    settings = published_adapter_settings(config, tmp_path / "run")
    assert settings["reasoner.lora_version"] == 1 and settings["reasoner.lora_path"].endswith("adapter.gguf")
