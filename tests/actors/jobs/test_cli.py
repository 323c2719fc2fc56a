"""bin/run as a user runs it: a command line per mode, its help, and errors that stop it before or at start (real processes)."""

import subprocess
from pathlib import Path

import pytest

from actors.jobs.cli import MODES, build_parser, mode_parser
from actors.jobs.train import MAIN_BACKTEST_STAGE, policy_checkpoint
from actors.jobs.common import JobError

ROOT = Path(__file__).resolve().parents[3]
SHARED = ("--config", "--set", "--run-dir", "--duration-secs", "--quiet")


def bin_run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "run"), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_the_help_lists_every_mode_and_each_modes_help_its_own_options_and_the_shared_ones():
    assert all(mode in build_parser().format_help() for mode in MODES)
    backtest = mode_parser("backtest").format_help()
    assert all(word in backtest for word in ("--model", "--data", "--dashboard", *SHARED))
    assert "--timesteps" not in backtest and "--frames" not in backtest
    for mode in MODES:
        assert all(word in mode_parser(mode).format_help() for word in SHARED), mode


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_shared_options_work_with_every_mode(mode):
    args = build_parser().parse_args([mode, "--config", "c.toml", "--set", "env.n_envs=2", "--set", "run.seed=3", "--run-dir", "r",
                                      "--duration-secs", "5", "--quiet"])
    assert (args.mode, args.config, args.overrides, args.run_dir, args.duration_secs, args.quiet) == (
        mode, Path("c.toml"), ["env.n_envs=2", "run.seed=3"], Path("r"), 5.0, True)


def test_no_mode_is_main_and_join_alone_is_the_join_mode():
    parse = build_parser().parse_args
    assert parse([]).mode == "main" and parse(["--timesteps", "64"]).timesteps == 64
    assert parse(["--join", "tcp://10.0.0.1:1,2"]).mode == "join"


def test_a_mode_reads_another_modes_options_at_their_defaults():
    args = build_parser().parse_args(["backtest", "--model", "m.zip"])
    assert (args.model, args.timesteps, args.frames, args.lockstep) == (Path("m.zip"), None, 100_000, False)


def test_a_flag_of_another_mode_is_an_error_that_names_the_mode(capsys):
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["backtest", "--timesteps", "5"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert "--timesteps is not an option of backtest" in err and "main, train, ablation" in err


def test_an_unknown_flag_and_a_mode_after_the_options_are_errors_that_say_what_to_do(capsys):
    for argv, says in ((["evaluate", "--nope"], "evaluate: unknown option --nope"),
                       (["--config", "c.toml", "backtest"], "the mode comes first (bin/run backtest ...)")):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)
        assert says in capsys.readouterr().err


def test_the_folder_of_a_main_run_gives_the_policy_it_chose_and_says_which(tmp_path, capsys):
    run = tmp_path / "main-run"
    chosen = run / "1-train" / "checkpoints" / "policy_000064.zip"
    chosen.parent.mkdir(parents=True)
    chosen.write_bytes(b"")
    (run / MAIN_BACKTEST_STAGE).mkdir()
    (run / MAIN_BACKTEST_STAGE / "config.toml").write_text(f'[policy]\nmodel_path = "{chosen}"\n')

    assert policy_checkpoint(run) == chosen
    assert str(chosen) in capsys.readouterr().err


def test_a_main_run_that_chose_no_policy_yet_names_its_stages(tmp_path):
    run = tmp_path / "main-run"
    (run / "2-hybrid" / "checkpoints").mkdir(parents=True)
    (run / "2-hybrid" / "checkpoints" / "policy_000128.zip").write_bytes(b"")

    with pytest.raises(JobError, match="no policy checkpoint in .*2-hybrid"):
        policy_checkpoint(run)


def test_bin_run_mode_help_and_a_misplaced_flag_from_a_real_process():
    assert "--model" in bin_run("backtest", "--help").stdout
    done = bin_run("backtest", "--frames", "3")
    assert done.returncode == 2 and "--frames is not an option of backtest (it is one of fuzz)" in done.stderr


def test_unknown_config_key_stops_bin_run_with_the_key_named(tmp_path):
    done = bin_run("run", "--set", "env.n_env=2", "--run-dir", str(tmp_path / "r"))
    assert done.returncode == 2 and "env.n_env" in done.stderr


def test_backtest_without_a_checkpoint_is_a_clear_error(tmp_path):
    done = bin_run("backtest", "--model", str(tmp_path), "--run-dir", str(tmp_path / "r"))
    assert done.returncode == 1 and "no policy checkpoint" in done.stderr


def test_a_broken_data_file_stops_bin_run_before_any_process_with_file_row_and_column(tmp_path):
    bars = tmp_path / "bars.csv"
    bars.write_text("time,open,high,low,close,volume\n2024-01-02 09:30,1,2,0.5,1.5,10\nnot a time,x,2,1,1,1\n")
    done = bin_run("run", "--set", "data.source='file'", "--set", f"data.path='{bars}'", "--run-dir", str(tmp_path / "r"))
    assert done.returncode == 1
    assert str(bars) in done.stderr and "row 2" in done.stderr and "'time'" in done.stderr
    assert not (tmp_path / "r").exists()
