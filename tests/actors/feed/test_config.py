import pytest

from actors.jobs.config import load_config

from config.tree import ConfigError


def test_default_feed_is_synthetic_one_minute_bars():
    feed = load_config().feed

    assert feed.source == "synthetic" and feed.timeframe == "1m" and feed.late_policy == "drop"


@pytest.mark.parametrize("overrides, key", [
    ({"feed.source": "ccxt"}, "feed.symbol"),
    ({"feed.source": "replay"}, "feed.replay_path"),
    ({"feed.timeframe": "1y"}, "feed.timeframe"),
    ({"feed.late_policy": "keep"}, "feed.late_policy"),
    ({"feed.source": "websocket"}, "feed.source"),
    ({"feed.replay_speed": -1.0}, "feed.replay_speed"),
])
def test_a_wrong_feed_setting_is_an_error_naming_its_key(overrides, key):
    with pytest.raises(ConfigError) as info:
        load_config(overrides=overrides)

    assert key in str(info.value)
