"""The main job's printed parts."""

from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.main import HYBRID, HYBRID_LOOP_STEPS, MAIN_LORA, MAIN_MARKET_HELD_OUT, MAIN_MARKET_HISTORY, LONG_TRAINING, data_settings, hybrid_settings, main_root, phase1_settings


def test_the_hybrid_phase_resumes_phase_one_in_lockstep_with_short_rollouts(tmp_path):
    args = build_parser().parse_args(["main", "--timesteps", "4096"])

    settings = hybrid_settings(args, tmp_path / "1-train", n_envs=4)

    assert settings["policy.resume_from"] == str(tmp_path / "1-train")
    assert settings["policy.total_timesteps"] == 4096 + HYBRID_LOOP_STEPS * 4
    assert settings["policy.rollout_from_checkpoint"] is False
    config = configure(args, settings, HYBRID)
    assert config.env.thought_lag_steps == 1 and config.policy.learn and config.env.split == "train"
    assert settings["policy.n_steps"] * 4 <= HYBRID_LOOP_STEPS * 4  # at least one PPO update with the LLM in it


def test_the_hybrid_phase_counts_its_budget_from_where_phase_one_stopped_not_from_its_configured_total(tmp_path):
    # PPO collects whole rollouts, so phase 1 stops past its budget; a total below that ends training at once.
    args = build_parser().parse_args(["main", "--timesteps", "20480"])
    (tmp_path / "1-train" / "checkpoints").mkdir(parents=True)
    (tmp_path / "1-train" / "checkpoints" / "policy_000000021368.zip").write_bytes(b"")

    settings = hybrid_settings(args, tmp_path / "1-train", n_envs=2)

    assert settings["policy.total_timesteps"] == 21368 + HYBRID_LOOP_STEPS * 2


def test_main_trains_50k_steps_on_300_days_long_100k_on_700_and_the_hybrid_phase_follows_it(tmp_path):
    default, long = build_parser().parse_args(["main"]), build_parser().parse_args(["main", "--long"])

    assert phase1_settings(default)["policy.total_timesteps"] == 51200
    assert configure(default, data_settings(default)).data.synthetic_days == 300
    assert phase1_settings(long)["policy.total_timesteps"] == LONG_TRAINING["policy.total_timesteps"] == 102_400
    assert configure(long, data_settings(long)).data.synthetic_days == 700
    assert hybrid_settings(long, tmp_path, n_envs=2)["policy.total_timesteps"] == 102_400 + HYBRID_LOOP_STEPS * 2
    assert phase1_settings(build_parser().parse_args(["main", "--long", "--timesteps", "5000"]))["policy.total_timesteps"] == 5000


def test_main_keeps_its_stages_in_the_run_dir_the_user_gave(tmp_path):
    args = build_parser().parse_args(["main", "--run-dir", str(tmp_path / "mine")])

    assert main_root(args, configure(args)) == tmp_path / "mine"


def test_the_hybrid_phase_runs_the_lora_trainer_unless_told_not_to(tmp_path):
    from actors import LORA
    from actors.jobs.lora import LEARN_IN_RUN, learn_in_run_config, published_adapter_settings
    from actors.lora import VersionBook, read_experiences_file

    args = build_parser().parse_args(["main"])
    config = learn_in_run_config(args, hybrid_settings(args, tmp_path / "1-train"), tmp_path, HYBRID)
    assert config.lora.enabled and LORA in config.runtime.actors and not config.lora.seed_experiences_path
    assert config.env.thought_lag_steps == 1

    # --market-history N: the trainer starts with N prompts of the training days, up, down and sideways, every label,
    # and at least 300 of later, held-out days, every one of them evaluated
    seeded_args = build_parser().parse_args(["main", "--market-history", "150"])
    seeded = learn_in_run_config(seeded_args, hybrid_settings(seeded_args, tmp_path / "1-train"), tmp_path)
    history = read_experiences_file(seeded.lora.seed_experiences_path)
    training = [e for e in history if not e.meta["held_out"]]
    assert len(training) == 150 and len(history) - 150 == 300 and len({e.id for e in history}) == len(history)
    assert seeded.lora.max_eval_examples == len(history) - 150
    assert {e.target.split(" | ")[2].split(",")[0] for e in training} >= {"uptrend", "downtrend", "sideways"}
    assert {e.action for e in training} == {0, 1, 2}
    assert not build_parser().parse_args(["main"]).no_lora and build_parser().parse_args(["main", "--no-lora"]).no_lora

    # main's own seed (no --market-history): a small history whose round can start at once, judged on MAIN_MARKET_HELD_OUT
    small = learn_in_run_config(args, hybrid_settings(args, tmp_path / "1-train"), tmp_path / "small", HYBRID,
                                MAIN_MARKET_HISTORY, MAIN_MARKET_HELD_OUT)
    history = read_experiences_file(small.lora.seed_experiences_path)
    held = [e for e in history if e.meta["held_out"]]
    assert len(history) - len(held) == MAIN_MARKET_HISTORY and len(held) == MAIN_MARKET_HELD_OUT
    assert small.lora.max_eval_examples == MAIN_MARKET_HELD_OUT
    shorter = learn_in_run_config(args, {**hybrid_settings(args, tmp_path / "1-train"), **MAIN_LORA}, tmp_path / "short", HYBRID)
    assert shorter.lora.steps_per_round == MAIN_LORA["lora.steps_per_round"]  # the caller's settings win over LEARN_IN_RUN
    assert len(held) + LEARN_IN_RUN["lora.experiences_per_round"] <= len(history)  # the first round needs no run thought

    # phase 4 runs on the newest published version; none published -> the base model
    book = VersionBook(tmp_path / "run" / "lora" / "versions")
    assert published_adapter_settings(config, tmp_path / "run") == {}
    adapter = tmp_path / "adapter.gguf"
    adapter.write_bytes(b"GGUF")
    book.record(book.next_version(), adapter, {"match_rate_after": 0.5}, published=True)
    settings = published_adapter_settings(config, tmp_path / "run")
    assert settings["reasoner.lora_version"] == 1 and settings["reasoner.lora_path"].endswith("adapter.gguf")


def test_with_the_users_own_data_or_one_checkpoint_there_is_nothing_to_choose(tmp_path, capsys):
    """--data FILE: the whole file is the test, with no validation days to choose on; a phase that left no
    checkpoint leaves one candidate. Either way phase 2's (or the only) checkpoint is played, with no other row."""
    from actors.jobs.main import PHASE1_POLICY, PHASE2_POLICY, choose_policy

    phase1, phase2 = tmp_path / "p1.zip", tmp_path / "p2.zip"
    own_data = build_parser().parse_args(["main", "--data", str(tmp_path / "bars.csv")])
    assert choose_policy(own_data, {}, {PHASE1_POLICY: phase1, PHASE2_POLICY: phase2}) == (phase2, None)

    default = build_parser().parse_args(["main"])
    assert choose_policy(default, {}, {PHASE1_POLICY: phase1, PHASE2_POLICY: None}) == (phase1, None)
    assert capsys.readouterr().out == ""  # nothing was played, so no choice table
