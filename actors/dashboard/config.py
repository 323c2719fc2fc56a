"""The [dashboard] config section: where the page listens, how often it updates, and what the reader decodes; and
``RunView``, what the dashboard reads of the config of the run it shows.

``bin/run dashboard`` and ``bin/run ... --dashboard`` read the section; their ``--host`` and ``--port`` override it.
Imports nothing but msgspec, the stdlib, config.checks and the shared sections (every config load imports it)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.common.market_settings import AccountConfig
from config.checks import ConfigSection, Port, Positive, PositiveCount, PositiveSecs, Secs, require

UpdateMs = Annotated[int, msgspec.Meta(ge=100, le=10_000)]
"""The page's update interval: at least 0.1 s (each update is a pass over the state per open page), at most 10 s."""


class DashboardConfig(ConfigSection, kw_only=True):
    host: str = "127.0.0.1"
    """Address the page listens on; any address other than loopback gets a random token, printed in the address."""
    port: Port = 8765
    """Port of the page; 0 = a free one (printed at start)."""
    update_ms: UpdateMs = 500
    """Each open page is updated this often (new chart points streamed, changed tables sent), without a reload."""
    trades_refresh_secs: Secs = 3.0
    """The trades table is redrawn at most this often while new trades arrive (0 = at each update). A click the
    browser took is never lost to a redraw: rows keep their index in the table's source, and a redraw sends only the
    new trades' rows, never a selection (page.py ``TRADE_SLOTS``). What this bounds is in the browser: each redraw
    re-renders the table's lines (SlickGrid), and a press and release that straddle it land on no line, so the
    browser drops that click before the server hears of it. The chart's marks and the chain are not held back."""
    hot_steps_per_sec: Positive = 20.0
    """The per-topic frame rate bound: frames of each decision-loop topic (env.obs, policy.proposal, fusion.decision,
    risk.verdict) decoded per second of wall time, the newest; a faster loop is shown sampled. Every frame is
    received (cheap); decoding is what costs the dashboard's core."""
    hot_keep: PositiveCount = 4
    """At least this many frames of each decision-loop topic are decoded per reader pass."""
    hot_max: PositiveCount = 400
    """At most this many per pass (a pass after a long stall)."""
    sample_window_ms: Annotated[float, msgspec.Meta(ge=0.0, le=200.0)] = 30.0
    """A loop faster than 3 x hot_steps_per_sec is received only in a window this long per reader pass (the loop's
    topics subscribed, read, unsubscribed): then the broker does not copy every step to the dashboard, which cost
    the loop 10 % of its steps/s on 2 cores. Below 1.5 x hot_steps_per_sec every frame is received again (a paced
    run keeps each trade's chain). 0 = always receive every frame."""
    attach_timeout_secs: PositiveSecs = 6.0
    """No message within this long after subscribing: the bus is dead (every actor beats every second)."""
    silent_secs: PositiveSecs = 6.0
    """A live bus with no message for this long: the runtime stopped, and the dashboard shows the run from its files."""
    ready_timeout_secs: PositiveSecs = 60.0
    """bin/run ... --dashboard waits this long for the page to be up (Bokeh's first import is slow on a busy machine)."""

    def __post_init__(self) -> None:
        section = "dashboard"
        super().__post_init__()
        require(bool(self.host.strip()), "host", "must not be empty (127.0.0.1 for this machine only)", section=section)
        require(self.hot_keep <= self.hot_max, "hot_keep", f"must be <= hot_max ({self.hot_max}), got {self.hot_keep}", section=section)


class EnvReportsView(msgspec.Struct, frozen=True, kw_only=True):
    """Of [env]: where the env writes a run's reports (a view: the other keys ignored)."""

    report_dir: str = "backtest"
    paper_dir: str = "paper"


class RunView(msgspec.Struct, frozen=True, kw_only=True):
    """What the dashboard reads of the run it shows (the run directory's config.toml, other sections ignored): where
    the env wrote the reports, and the account's rules (the evaluation walk's target and limits)."""

    env: EnvReportsView = EnvReportsView()
    account: AccountConfig = msgspec.field(default_factory=AccountConfig)
