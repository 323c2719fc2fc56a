import json

import pytest

from bus.messages import Probe
from runtime.tail import LineFilter, LogFollower, main, parse_since, render
from runtime.testing import running_actors


def write_log(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def make_run(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    write_log(logs / "env.jsonl", [
        {"timestamp": "2026-01-01T00:00:01Z", "level": "info", "actor": "env", "event": "step", "n": 1},
        {"timestamp": "2026-01-01T00:00:03Z", "level": "warning", "actor": "env", "event": "verdict_timeout"},
    ])
    write_log(logs / "policy.jsonl", [
        {"timestamp": "2026-01-01T00:00:02Z", "level": "info", "actor": "policy", "event": "ppo_update", "approx_kl": 0.01},
    ])
    (tmp_path / "config.toml").write_text("")
    return tmp_path


def test_logs_of_all_actors_are_merged_in_time_order(tmp_path):
    records = LogFollower(make_run(tmp_path) / "logs").read_new()
    assert [r["event"] for r in records] == ["step", "ppo_update", "verdict_timeout"]


def test_follower_returns_only_new_complete_lines(tmp_path):
    run = make_run(tmp_path)
    follower = LogFollower(run / "logs")
    follower.read_new()
    with open(run / "logs" / "env.jsonl", "a") as fh:
        fh.write('{"timestamp": "2026-01-01T00:00:04Z", "event": "half"')
    assert follower.read_new() == []
    with open(run / "logs" / "env.jsonl", "a") as fh:
        fh.write(', "actor": "env"}\nnot json\n')
    events = [r["event"] for r in follower.read_new()]
    assert "half" in events and "unparsable_log_line" in events


def test_filters_by_actor_event_glob_level_and_time():
    rec = {"timestamp": "2026-01-01T00:00:02Z", "level": "info", "actor": "policy", "event": "ppo_update"}
    assert LineFilter(["policy"], ["ppo_*"], 20, None).accepts(rec)
    assert not LineFilter(["env"], [], 0, None).accepts(rec)
    assert not LineFilter([], ["veto*"], 0, None).accepts(rec)
    assert not LineFilter([], [], 30, None).accepts(rec)
    assert not LineFilter([], [], 0, parse_since("2026-01-01T00:00:03Z")).accepts(rec)


def test_cli_prints_filtered_json_lines(tmp_path, capsys):
    run = make_run(tmp_path)
    assert main([str(run), "--no-follow", "--json", "--level", "warning"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [json.loads(l)["event"] for l in lines] == ["verdict_timeout"]
    assert "approx_kl=0.01" in render({"event": "ppo_update", "approx_kl": 0.01}, colour=False, actor_colours={})


def test_missing_run_directory_is_a_clear_error(tmp_path, capsys):
    assert main(["--runs-dir", str(tmp_path / "none"), "--no-follow"]) == 2
    assert "no run directory" in capsys.readouterr().err


@pytest.mark.slow
def test_bus_mode_prints_decoded_live_messages(capsys):
    import threading

    with running_actors(["runtime.probes:Relay1"]) as rt:
        def publish_later():
            import time
            time.sleep(1.0)
            rt.client.publish(Probe(probe_id=5, hop=1, hops=2, sent_ns=0), "1")

        threading.Thread(target=publish_later).start()
        assert main([str(rt.run_dir), "--bus", "--topic", "probe.0", "--count", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["type"] == "Probe" and out["body"]["probe_id"] == 5 and out["sender"].startswith("relay1:")
