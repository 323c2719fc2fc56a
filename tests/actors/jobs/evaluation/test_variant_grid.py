"""bin/run grid, the variant grid over bin/run evaluate: variant files, the commands it runs, its table, the mode."""

from __future__ import annotations

import json
import sys

import pytest

from actors.jobs.cli import build_parser, main
from actors.jobs.evaluation import variant_grid
from actors.jobs.evaluation.variant_grid import GridError, evaluate_command, load_variants, override_text, result_rows


def test_variants_are_tables_of_dotted_settings_and_an_empty_table_is_the_defaults(tmp_path):
    path = tmp_path / "v.toml"
    path.write_text('[base]\n\n[masked]\n"env.management_actions" = false\n"policy.net_arch" = [128, 128]\n[nested.policy]\ngamma = 0.97\n')
    variants = load_variants(path)
    assert variants == {"base": {}, "masked": {"env.management_actions": False, "policy.net_arch": [128, 128]},
                        "nested": {"policy.gamma": 0.97}}


@pytest.mark.parametrize("text, reason", [("x = 1\n", "must be a table"), ("", "names no variant"), ("[a\n", "cannot read")])
def test_a_bad_variants_file_is_a_clear_error(tmp_path, text, reason):
    path = tmp_path / "v.toml"
    path.write_text(text)
    with pytest.raises(GridError, match=reason):
        load_variants(path)


def test_each_setting_becomes_a_set_override_in_toml_syntax(tmp_path):
    assert [override_text(v) for v in (False, 0.97, 7, "rl_only", [64, 64])] == ["false", "0.97", "7", '"rl_only"', "[64, 64]"]
    command = evaluate_command("masked", {"env.management_actions": False}, tmp_path, ["--quick"])
    assert command[:4] == [sys.executable, "-m", "actors.jobs.cli", "evaluate"]
    assert command[4:] == ["--quick", "--run-dir", str(tmp_path / "masked"), "--set", "env.management_actions=false"]


def test_the_table_shows_each_budget_beside_momentum_and_the_oracle_and_names_a_missing_result(tmp_path):
    metrics = {"learning_curve": [{"timesteps": 100_000, "pnl_per_day": 345.2, "pnl_per_day_interval": [244.0, 447.0]}],
               "variants": {"momentum": {"pnl_per_day": 263.0}, "oracle": {"pnl_per_day": 825.0}},
               "floor_choices": [{"momentum_lookback": 30}, {"momentum_lookback": 120}],
               "momentum_floor": "momentum", "oracle_share": 0.38, "policy": {"trades": 1502, "halted_share": 0.14}}
    (tmp_path / "good" / "evaluate").mkdir(parents=True)
    (tmp_path / "good" / "evaluate" / "metrics.json").write_text(json.dumps(metrics))
    rows = result_rows(tmp_path, ["good", "broken"])
    assert "| good | 100k +345 [+244, +447] | 1502 | 14% | +263 (30/120 bars) | +825 | 0.38 |" in rows
    assert any(row.startswith("| broken | (no result: see broken.log)") for row in rows)


def test_what_follows_the_double_dash_is_every_variants_evaluate_options():
    args = build_parser().parse_args(["grid", "v.toml", "--parallel", "2", "--set", "run.seed=3", "--", "--market", "null",
                                      "--quick", "--set", "policy.gamma=0.9"])
    assert args.mode == "grid" and str(args.variants_file) == "v.toml" and args.parallel == 2
    assert args.overrides == ["run.seed=3"] and args.evaluate_args == ["--market", "null", "--quick", "--set", "policy.gamma=0.9"]
    assert build_parser().parse_args(["evaluate", "--quick"]).evaluate_args == []  # other modes: none


@pytest.mark.parametrize("variants, extra, says", [
    ("[a]\n", ["--only", "b"], "--only names unknown variants ['b']"),
    ("[a]\n\"policy.gammma\" = 0.9\n", [], "policy.gammma"),
    ("x = 1\n", [], "v.toml: 'x' must be a table"),
    (None, [], "name the variants file"),
])
def test_a_bad_variants_file_is_one_line_and_no_run(tmp_path, capsys, variants, extra, says):
    if variants is not None:
        (tmp_path / "v.toml").write_text(variants)
    named = [str(tmp_path / "v.toml")] if variants is not None else []
    code = main(["grid", *named, *extra, "--run-dir", str(tmp_path / "run"), "--", "--quick"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code != 0 and len(err) == 1 and says in err[0] and err[0].startswith("bin/run"), err
    assert not (tmp_path / "run").exists()


def test_the_mode_runs_each_variant_with_the_shared_and_its_own_settings_and_writes_the_table(tmp_path, monkeypatch, capsys):
    ran = {}

    def fake_run(name, command, out):  # what evaluate would leave: its metrics.json (a variant named "broken" fails)
        ran[name] = command
        if name != "broken":
            (out / name / "evaluate").mkdir(parents=True)
            metrics = {"learning_curve": [], "variants": {"m": {"pnl_per_day": 1.0}}, "momentum_floor": "m",
                       "policy": {"trades": 7, "halted_share": 0.0}}
            (out / name / "evaluate" / "metrics.json").write_text(json.dumps(metrics))
        return name, int(name == "broken"), 0.0

    monkeypatch.setattr(variant_grid, "run_variant", fake_run)
    (tmp_path / "v.toml").write_text('[base]\n[broken]\n"policy.gamma" = 0.9\n')
    code = main(["grid", str(tmp_path / "v.toml"), "--set", "run.seed=3", "--run-dir", str(tmp_path / "run"), "--",
                 "--market", "null", "--quick"])
    assert code == 1 and "1 of 2 variants failed (broken)" in capsys.readouterr().err
    assert ran["broken"][4:] == ["--market", "null", "--quick", "--set", "run.seed=3", "--run-dir", str(tmp_path / "run" / "broken"),
                                 "--set", "policy.gamma=0.9"]
    table = (tmp_path / "run" / "grid.md").read_text()
    assert "| base |  | 7 | 0% | +1 (n/a bars)" in table and "| broken | (no result: see broken.log)" in table
