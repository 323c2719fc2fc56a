"""lora.round: a round's version metrics as the typed message the dashboard shows (actors/lora/actor.py)."""

from actors.lora.actor import round_message


def test_a_lora_rounds_metrics_become_the_typed_round_with_its_collapse_alarm():
    metrics = {"match_rate_before": 0.4, "match_rate_after": 0.6, "experiences": 120.0, "collapse": 1.0, "gain_low": -0.1}
    summary = round_message(5, metrics, published=False)

    assert (summary.version, summary.experiences, summary.match_rate_before, summary.match_rate_after) == (5, 120, 0.4, 0.6)
    assert summary.collapsed and not summary.published
    assert not round_message(6, {"match_rate_after": 0.5}, published=True).collapsed
