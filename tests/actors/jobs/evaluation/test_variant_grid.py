"""The settings sweep over bin/run evaluate: variant files, the commands it runs, and its table."""

from __future__ import annotations

import json
import sys

import pytest

from actors.jobs.evaluation.variant_grid import evaluate_command, load_variants, override_text, result_rows


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
    with pytest.raises(SystemExit, match=reason):
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
