"""What the reader takes from a run directory besides the bus."""

from actors.dashboard.source import account_rules


def test_the_account_rules_come_from_the_runs_config_with_the_preset_resolved(tmp_path):
    (tmp_path / "config.toml").write_text('[account]\npreset = "apex_eod_50k"\n')
    rules = account_rules(tmp_path)
    assert (rules.name, rules.start_balance, rules.profit_target, rules.daily_loss_limit) == ("apex_eod_50k", 50_000.0, 3_000.0, 1_000.0)


def test_an_unreadable_config_gives_no_rules_and_no_error(tmp_path):
    (tmp_path / "config.toml").write_text('[account]\npreset = "nope"\n')
    assert account_rules(tmp_path).profit_target == 0.0
    assert account_rules(tmp_path / "missing").start_balance == 0.0
