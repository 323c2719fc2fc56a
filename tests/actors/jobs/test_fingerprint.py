"""fingerprint.json: what made a run's figures, and whether the run was reproducible (read from its logs)."""

from __future__ import annotations

import json

from actors.jobs.config import load_config
from actors.jobs.fingerprint import add_to_metrics, fingerprint, run_reproducibility, verdict_line, write_fingerprint


def write_log(path, *records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def test_the_fingerprint_names_code_config_seed_packages_and_threads():
    config = load_config(None, {"run.seed": 7, "policy.torch_threads": 1})
    print_ = fingerprint(config)
    assert len(print_["commit"]) == 40 or print_["commit"] == "unknown"
    assert print_["dirty"] in (True, False, None) and len(print_["code"]) == 64
    assert print_["seed"] == 7 and print_["config_hash"] == fingerprint(load_config(None, {"run.seed": 8}))["config_hash"]
    assert print_["config_hash"] != fingerprint(load_config(None, {"policy.torch_threads": 2}))["config_hash"]
    assert print_["packages"]["torch"] != "absent" and print_["packages"]["numpy"] != "absent"
    assert print_["threads"]["policy.torch_threads"] == 1 and "reasoner.n_threads" in print_["threads"]


def test_a_quiet_run_is_reproducible_and_says_so(tmp_path):
    write_log(tmp_path / "logs" / "supervisor.jsonl", {"event": "actor_started"})
    write_log(tmp_path / "logs" / "env.jsonl", {"event": "stats", "verdict_timeouts": 0}, {"event": "actor_stopped", "verdict_timeouts": 0})
    figures = run_reproducibility(tmp_path, True)
    assert figures["reproducible"] and figures["restarts"] == figures["missed_deadlines"] == figures["dropped_steps"] == 0
    assert verdict_line(figures).startswith("reproducibility: reproducible")
    assert not run_reproducibility(tmp_path, False)["reproducible"]  # the mode off: timing may move it
    assert verdict_line(run_reproducibility(tmp_path, False)).startswith("reproducibility: off")


def test_a_restart_a_missed_deadline_a_late_step_or_a_dropped_step_makes_a_run_not_reproducible(tmp_path):
    cases = {
        "restart": ("supervisor", [{"event": "actor_restarting", "child": "env"}]),
        "verdict": ("env", [{"event": "actor_stopped", "verdict_timeouts": 2}]),
        "late thoughts": ("env", [{"event": "thoughts_late"}]),
        "degraded": ("risk", [{"event": "stats", "degraded_verdicts": 1}]),
        "thought wait": ("fusion", [{"event": "stats", "thought_waits_expired": 3}]),
        "dropped": ("policy", [{"event": "actor_stopped", "steps_dropped": 1}]),
    }
    for name, (actor, records) in cases.items():
        run = tmp_path / name.replace(" ", "_")
        write_log(run / "logs" / f"{actor}.jsonl", *records)
        figures = run_reproducibility(run, True)
        assert not figures["reproducible"], name
        assert "NOT reproducible" in verdict_line(figures)
    assert run_reproducibility(tmp_path / "restart", True)["restarts"] == 1
    assert run_reproducibility(tmp_path / "verdict", True)["missed_deadlines"] == 2
    assert run_reproducibility(tmp_path / "dropped", True)["dropped_steps"] == 1


def test_the_figures_go_into_fingerprint_json_and_the_reports_metrics(tmp_path):
    figures = run_reproducibility(tmp_path, True)
    path = write_fingerprint(tmp_path, load_config(None), figures)
    assert json.loads(path.read_text())["reproducibility"] == figures
    metrics = tmp_path / "metrics.json"
    metrics.write_text(json.dumps({"net_pnl_usd": 1.0}))
    add_to_metrics(metrics, figures)
    assert json.loads(metrics.read_text()) == {"net_pnl_usd": 1.0, "reproducibility": figures}
    add_to_metrics(tmp_path / "absent.json", figures)  # no report: nothing written
    assert not (tmp_path / "absent.json").exists()
