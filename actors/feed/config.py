"""The [feed] config section: which source the feed actor reads and how it publishes md.bar; FeedSettings, what it reads."""

from __future__ import annotations

import msgspec

from actors.common.events import IMPORTANCES
from actors.common.loop_settings import LoopShape
from actors.common.market_settings import InstrumentConfig
from actors.feed.bars import LATE_POLICIES, timeframe_ns
from config.checks import ConfigSection, Count, NonNegative, Positive, PositiveCount, PositiveSecs, Secs, require
from runtime.settings import RuntimeSettings

SOURCES = ("replay", "synthetic", "ccxt")
PACES = ("clock", "agent")


class FeedConfig(ConfigSection, kw_only=True):
    source: str = "synthetic"
    """replay (a CSV/Parquet file of bars) | synthetic (the seeded generator) | ccxt (an exchange's candles)."""
    symbol: str = ""
    """Symbol stamped on md.bar; empty = instrument.symbol. For ccxt the exchange's market, e.g. BTC/USDT:USDT."""
    timeframe: str = "1m"
    """Bars published: 30s, 1m, 5m, 1h, 1d ...; finer input bars are aggregated (ccxt fetches this timeframe)."""
    late_policy: str = "drop"
    """A record for a bar already published: drop it | amend (publish that bar again, corrected, same start)."""
    wait_for_actors: list[str] = msgspec.field(default_factory=list)
    """Publish the first bar only once these actors have sent a heartbeat (e.g. ["env"]), so none is missed."""
    wait_timeout_secs: Secs = 60.0
    """How long to wait for wait_for_actors; then publish anyway (logged)."""
    max_bars: Count = 0
    """Stop publishing after this many bars; 0 = no limit."""
    stop_when_exhausted: bool = False
    """Stop the actor when the source has no more bars (bin/feed does; under bin/run the supervisor would restart it)."""
    pace: str = "clock"
    """clock: bars come at the source's pace (replay_speed, synthetic_pace_secs, the market) | agent (replay and
    synthetic): bar n+1 is published only once the runtime decided on bar n (a risk.verdict), so a replay runs as
    fast as the agent thinks and never faster."""
    agent_wait_secs: Secs = 120.0
    """pace = agent: longest wait for the decision on a bar, then the next bar goes out anyway (counted agent_timeouts)."""
    warmup_bars: int = -1
    """source = replay with replay_start: bars before the start published first, flagged as history, to warm the
    env's features up; -1 = env.paper_warmup_bars, 0 = none."""
    replay_path: str = ""
    """source = replay: the CSV or Parquet file of bars (columns auto-detected, as data.path)."""
    replay_speed: NonNegative = 1.0
    """source = replay: 1.0 = real time (a 1m bar per minute), 60 = a minute per second, 0 = as fast as possible."""
    replay_start: str = ""
    """source = replay: skip bars starting before this time (ISO 8601; naive = replay_timezone); empty = from the first."""
    replay_timezone: str = "America/New_York"
    """source = replay: time zone of naive timestamps in the file."""
    synthetic_days: PositiveCount = 5
    """source = synthetic: trading days generated (390 one-minute bars each)."""
    synthetic_pace_secs: Secs = 1.0
    """source = synthetic: wall-clock seconds between bars; 0 = as fast as possible."""
    synthetic_start_price: Positive = 18_000.0
    """source = synthetic: first price, points."""
    synthetic_start_date: str = "2024-01-02"
    """source = synthetic: first session date (bars keep the generator's timestamps)."""
    synthetic_seed: int = -1
    """source = synthetic: generator seed; -1 = run.seed."""
    ccxt_exchange: str = "binance"
    """source = ccxt: exchange id as ccxt names it (binance, bybit, okx, kraken, ...)."""
    ccxt_market_type: str = ""
    """source = ccxt: the exchange's defaultType option (swap for perpetual futures, future, spot); empty = its default."""
    ccxt_history_bars: Count = 0
    """source = ccxt: closed candles published at start before the live ones (a warm-up history)."""
    ccxt_poll_secs: Secs = 0.0
    """source = ccxt: seconds between polls; 0 = just after each candle closes (never faster than the exchange's rateLimit)."""
    ccxt_close_delay_secs: Secs = 2.0
    """source = ccxt: wait this long after a candle's end before asking for it (exchanges finalise candles late)."""
    ccxt_backoff_secs: float = 1.0
    """source = ccxt: first wait after a network or exchange error; doubles per failure in a row."""
    ccxt_backoff_max_secs: float = 60.0
    """source = ccxt: longest wait between retries."""
    ccxt_api_key_env: str = "TT_CCXT_API_KEY"
    """source = ccxt: name of the environment variable holding an API key (optional: public candles need none; never logged)."""
    ccxt_secret_env: str = "TT_CCXT_SECRET"
    """source = ccxt: name of the environment variable holding the API secret."""
    event_calendar_paths: list[str] = msgspec.field(default_factory=list)
    """Economic-calendar files (.csv, .ics; actors/common/event_files.py) replayed on md.event as the bar clock passes each
    release (bin/feed --calendar FILE). A bad row refuses the file at start (the error names file, row and field)."""
    event_headline_paths: list[str] = msgspec.field(default_factory=list)
    """Headlines files (.jsonl) replayed on md.event as the bar clock passes each headline (bin/feed --headlines FILE)."""
    event_schedule_ahead_mins: NonNegative = 60.0
    """A file's release is announced this long before its time (its actual figure left out) and published again at its
    time: risk's news rule needs it ahead (at least risk.news_blackout_before_mins); 0 = only at its time."""
    event_rss_urls: list[str] = msgspec.field(default_factory=list)
    """RSS/Atom feeds polled for headlines, each new entry published once on md.event (bin/feed --rss URL)."""
    event_poll_secs: PositiveSecs = 60.0
    """event_rss_urls: seconds between polls of each feed."""
    event_timeout_secs: PositiveSecs = 10.0
    """event_rss_urls: a fetch waiting this long for the server is abandoned (logged rss_timeout); polling goes on."""
    event_rss_importance: str = "medium"
    """event_rss_urls: importance given to a feed's headlines (low | medium | high); a feed does not say."""

    def __post_init__(self) -> None:
        section = "feed"
        super().__post_init__()
        require(self.source in SOURCES, "source", f"must be one of {SOURCES}, got {self.source!r}", section=section)
        try:
            timeframe_ns(self.timeframe)
        except ValueError as exc:
            require(False, "timeframe", str(exc), section=section)
        require(self.pace in PACES, "pace", f"must be one of {PACES}, got {self.pace!r}", section=section)
        require(self.pace != "agent" or self.source != "ccxt", "pace", "agent pacing needs a replay or synthetic source (a live market keeps its own pace)", section=section)
        require(self.warmup_bars >= -1, "warmup_bars", f"must be >= -1 (-1 = env.paper_warmup_bars), got {self.warmup_bars}", section=section)
        require(self.late_policy in LATE_POLICIES, "late_policy", f"must be one of {LATE_POLICIES}, got {self.late_policy!r}", section=section)
        require(self.source != "replay" or bool(self.replay_path), "replay_path", "is required when feed.source = 'replay'", section=section)
        require(self.source != "ccxt" or bool(self.symbol), "symbol", "is required when feed.source = 'ccxt' (e.g. BTC/USDT:USDT)", section=section)
        require(bool(self.ccxt_exchange), "ccxt_exchange", "must not be empty", section=section)
        require(self.event_rss_importance in IMPORTANCES, "event_rss_importance", f"must be one of {IMPORTANCES}, got {self.event_rss_importance!r}", section=section)
        for key in ("event_calendar_paths", "event_headline_paths"):
            for path in getattr(self, key):
                require(path.lower().endswith((".csv", ".ics", ".jsonl")), key, f"{path!r}: expected a .csv, .ics or .jsonl file", section=section)
        require(0 < self.ccxt_backoff_secs <= self.ccxt_backoff_max_secs, "ccxt_backoff_secs", "must be > 0 and <= ccxt_backoff_max_secs", section=section)


class FeedSettings(RuntimeSettings, kw_only=True):
    """What the feed actor reads: the runtime's sections, [feed], the shared [instrument] (its symbol), and of
    [env] the paper warm-up (feed.warmup_bars = -1 publishes as many history bars)."""

    instrument: InstrumentConfig = msgspec.field(default_factory=InstrumentConfig)
    env: LoopShape = LoopShape()  # a view of [env]: a frozen value
    feed: FeedConfig = msgspec.field(default_factory=FeedConfig)
