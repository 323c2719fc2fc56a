"""Bad input to bin/run dashboard: each case gives a clear error, and the address rules."""

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from actors.dashboard.config import DashboardConfig
from actors.dashboard.server import build_parser, listen_on, run_dashboard, serve, settings_of, start_server
from actors.dashboard.source import DashboardError, resolve_target, run_dirs
from actors.dashboard.state import DashboardState

ROOT = Path(__file__).resolve().parents[3]


def test_an_unknown_run_directory_is_a_clear_error(tmp_path, capsys):
    assert run_dashboard(tmp_path / "nope", None, DashboardConfig(port=0)) == 2
    assert "no such run directory" in capsys.readouterr().err


def test_a_directory_that_is_no_run_is_a_clear_error(tmp_path):
    with pytest.raises(DashboardError, match="not a run directory"):
        resolve_target(tmp_path, None)


def test_a_missing_bus_json_is_a_clear_error(tmp_path):
    with pytest.raises(DashboardError, match="no such bus.json"):
        resolve_target(None, tmp_path / "bus.json")


def test_a_dead_bus_is_a_clear_error(tmp_path):
    (tmp_path / "bus.json").write_text(json.dumps({"xsub": f"ipc://{tmp_path}/xsub", "xpub": f"ipc://{tmp_path}/xpub"}))
    target = resolve_target(None, tmp_path / "bus.json")
    with pytest.raises(DashboardError, match="no message on the bus .* its runtime is not running"):
        serve(target, listen_on("127.0.0.1", 0), DashboardConfig(attach_timeout_secs=0.5))


def test_a_port_in_use_is_a_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(DashboardError, match=f"port {taken.getsockname()[1]} on 127.0.0.1 is in use"):
            start_server(DashboardState(), listen_on("127.0.0.1", taken.getsockname()[1]))


def test_loopback_needs_no_token_and_any_other_address_gets_one():
    assert listen_on("127.0.0.1", 0).token == ""
    wide = listen_on("0.0.0.0", 0)
    assert len(wide.token) >= 20 and wide.url().endswith(f"?token={wide.token}")


def test_stage_directories_are_followed_in_the_order_they_were_made(tmp_path):
    for name in ("1-train", "2-hybrid"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.toml").write_text("")
    assert [p.name for p in run_dirs(tmp_path)][-1] == "2-hybrid"


def test_bin_run_dashboard_says_what_is_wrong_with_a_run_directory(tmp_path):
    result = subprocess.run([str(ROOT / "bin" / "run"), "dashboard", "--run", str(tmp_path / "missing")], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2
    assert "bin/run dashboard:" in result.stderr and "no such run directory" in result.stderr


def test_the_settings_come_from_the_jobs_dashboard_section_and_the_flags_override_them():
    passed = settings_of(build_parser().parse_args(["--settings", '{"port": 0, "update_ms": 250}', "--host", "::1"]))
    assert (passed.host, passed.port, passed.update_ms) == ("::1", 0, 250)
    assert settings_of(build_parser().parse_args(["--port", "0"])) == DashboardConfig(port=0)


def test_default_toml_holds_the_dashboard_sections_defaults():
    from actors.jobs.config import load_config

    assert load_config().dashboard == DashboardConfig()  # python -m actors.dashboard without --settings uses these


def test_bin_run_dashboard_reads_the_section_with_config_and_set_and_its_flags_over_them(tmp_path, monkeypatch):
    from actors.jobs import dashboard as job
    from actors.jobs.cli import main

    seen = {}
    monkeypatch.setattr("actors.dashboard.server.run_dashboard", lambda run, bus, settings, **kwargs: seen.update(settings=settings) or 0)
    mine = tmp_path / "mine.toml"
    mine.write_text("[dashboard]\nport = 9000\nupdate_ms = 1000\nhost = '0.0.0.0'\n")
    assert main(["dashboard", "--config", str(mine), "--set", "dashboard.hot_steps_per_sec=5", "--port", "0", "--run", str(tmp_path)]) == 0
    settings = seen["settings"]
    assert (settings.host, settings.port, settings.update_ms, settings.hot_steps_per_sec) == ("0.0.0.0", 0, 1000, 5.0)
    assert job.market_history  # what bin/run's dashboard rebuilds a finished backtest's bars with


@pytest.mark.parametrize("override, key", [("dashboard.prot=1", "dashboard.prot"), ("dashboard.update_ms=10", "dashboard.update_ms"),
                                           ("dashboard.hot_keep=500", "dashboard.hot_keep")])
def test_a_bad_dashboard_key_is_an_error_naming_it(override, key, tmp_path, capsys):
    from actors.jobs.cli import main

    assert main(["dashboard", "--run", str(tmp_path), "--set", override]) == 2
    assert key in capsys.readouterr().err
