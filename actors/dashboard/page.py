"""The page: one Bokeh document per browser session, updated from the shared ``DashboardState``.

Bokeh's server keeps each open page in sync with its document over a websocket, and ships BokehJS
with the Python package (nothing is fetched from the network). Each session runs a periodic callback
(``UPDATE_MS``) that streams the chart points added since its last update and replaces the short
tables when they changed; a closed page only ends its own callback, the reader and the runtime never
notice.
"""

from __future__ import annotations

import html
import math
from typing import Any

from bokeh.document import Document
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, DataTable, Div, TableColumn, TextInput
from bokeh.plotting import figure

from actors.dashboard.state import LEARNING_KEYS, MAX_POINTS, DashboardState, account_lines, columns_of, health_lines

UPDATE_MS = 500
"""Page updates twice a second."""
DECISION_COLUMNS = (("step", "step", 60), ("rl", "RL action", 115), ("probs", "RL probabilities", 230), ("llm", "LLM thought", 110),
                    ("reason", "LLM reason", 260), ("stale", "stale", 45), ("adapter", "adapter", 60), ("fusion", "fusion method/rule", 150),
                    ("trust", "trust RL / LLM", 100), ("final", "final", 115), ("risk", "risk verdict", 180), ("halt", "rule in force", 110))
TRADE_COLUMNS = (("trade", "trade", 50), ("side", "side", 50), ("entry", "entry @ step", 120), ("exit", "exit @ step", 120),
                 ("pnl", "P&L $", 70), ("bars", "bars", 45), ("why", "exit", 90))
EVENT_COLUMNS = (("time", "time (UTC)", 75), ("kind", "kind", 70), ("actor", "actor", 80), ("text", "event", 700))
LORA_COLUMNS = (("version", "adapter", 55), ("time", "time", 65), ("experiences", "experiences", 80),
                ("match", "match rate before -> after", 160), ("published", "result", 75), ("alarm", "alarm", 60))
LEARNING_LINES = (("approx_kl", "#1f77b4"), ("clip_fraction", "#ff7f0e"), ("explained_variance", "#2ca02c"), ("entropy_loss", "#9467bd"))


def _table(columns: tuple[tuple[str, str, int], ...], height: int, **kwargs: Any) -> tuple[ColumnDataSource, DataTable]:
    source = ColumnDataSource(columns_of([], tuple(name for name, _, _ in columns)))
    table = DataTable(source=source, columns=[TableColumn(field=name, title=title, width=width) for name, title, width in columns],
                      height=height, index_position=None, reorderable=False, autosize_mode="none",
                      sizing_mode="stretch_width", **kwargs)
    return source, table


def _pre(lines: list[str]) -> str:
    return "<pre style='margin:0;font-size:12px'>" + html.escape("\n".join(lines)) + "</pre>"


def _panel(title: str) -> Div:
    return Div(text=f"<b>{html.escape(title)}</b>", styles={"font-size": "14px", "margin-top": "6px"})


class DashboardView:
    """The models of one session and the update that refreshes them from the state."""

    def __init__(self, state: DashboardState) -> None:
        self.state = state
        self.cursors: dict[str, int] = {}
        self.last_tables: dict[str, Any] = {}
        self.trades: list[Any] = []

        self.health = Div(text=_pre(["connecting..."]), width=420, name="health")
        self.account = Div(text=_pre(["..."]), width=520, name="account")
        self.actor_div = Div(text=_pre([]), width=420, name="actors")

        self.price_source = ColumnDataSource({"step": [], "price": []}, name="price_source")
        self.mark_source = ColumnDataSource({"step": [], "price": [], "kind": [], "colour": []})
        self.price = figure(title="market: price (env 0), entries and exits", height=260, sizing_mode="stretch_width",
                            x_axis_label="loop step", tools="pan,wheel_zoom,box_zoom,reset,hover", name="price_chart",
                            tooltips=[("step", "@step"), ("price", "@price{0,0.00}"), ("", "@kind")])
        self.price.line("step", "price", source=self.price_source, line_width=1.5, color="#1f77b4")
        self.price.scatter("step", "price", source=self.mark_source, color="colour", size=9, marker="triangle", legend_field="kind")
        self.price.legend.location = "top_left"

        self.equity_source = ColumnDataSource({"step": [], "equity": [], "threshold": []})
        self.equity = figure(title="account: equity and the trailing drawdown threshold", height=220, sizing_mode="stretch_width",
                             x_axis_label="loop step", tools="pan,wheel_zoom,box_zoom,reset", name="equity_chart")
        self.equity.line("step", "equity", source=self.equity_source, color="#2ca02c", line_width=1.5, legend_label="equity")
        self.equity.line("step", "threshold", source=self.equity_source, color="#d62728", line_dash="dashed", legend_label="threshold")
        self.equity.legend.location = "top_left"

        self.decision_source, self.decision_table = _table(DECISION_COLUMNS, 300, name="decisions")
        self.trade_source, self.trade_table = _table(TRADE_COLUMNS, 200, name="trades")
        self.trade_source.selected.on_change("indices", self._on_trade_click)
        self.chain = Div(text=_pre(["click a trade to see the decisions behind it"]), sizing_mode="stretch_width", name="chain")

        self.learning_source = ColumnDataSource({"t": [], **{key: [] for key in LEARNING_KEYS}})
        self.learning = figure(title="learning: PPO updates", height=220, sizing_mode="stretch_width", x_axis_label="update",
                               tools="pan,wheel_zoom,reset", name="learning_chart")
        for key, colour in LEARNING_LINES:
            self.learning.line("t", key, source=self.learning_source, color=colour, legend_label=key)
            self.learning.scatter("t", key, source=self.learning_source, color=colour, size=4, legend_label=key)  # a first update shows
        self.learning.legend.location = "top_left"
        self.lora_source, self.lora_table = _table(LORA_COLUMNS, 150, name="lora")

        self.event_filter = TextInput(placeholder="filter events (veto, fill, halt, adapter, error, an actor...)", width=420)
        self.event_source, self.event_table = _table(EVENT_COLUMNS, 300, name="events")

        self.layout = column(
            Div(text="<h2 style='margin:4px 0'>thinking trader: live dashboard</h2>"),
            row(column(_panel("health"), self.health, self.actor_div), column(_panel("account"), self.account)),
            self.price, self.equity,
            _panel("who decided (env 0, newest first)"), self.decision_table,
            row(column(_panel("trades (click one)"), self.trade_table, width=560), column(_panel("decision chain"), self.chain),
                sizing_mode="stretch_width"),
            row(self.learning, column(_panel("LoRA rounds"), self.lora_table, width=520), sizing_mode="stretch_width"),
            _panel("events (newest first)"), self.event_filter, self.event_table,
            sizing_mode="stretch_width",
        )

    # ------------------------------------------------------------------ updates

    def update(self) -> None:
        snap = self.state.snapshot(self.cursors, self.event_filter.value.strip())
        if snap["reset"]:
            for source in (self.price_source, self.mark_source, self.equity_source, self.learning_source):
                source.data = {name: [] for name in source.data}
        for source, name, limit in ((self.price_source, "price", MAX_POINTS), (self.mark_source, "marks", MAX_POINTS),
                                    (self.equity_source, "equity", MAX_POINTS), (self.learning_source, "learning", 1000)):
            new = snap["new"][name]
            if new and next(iter(new.values())):
                source.stream({k: [None if isinstance(v, float) and math.isnan(v) else v for v in values] for k, values in new.items()},
                              rollover=limit)
        self._text(self.health, health_lines(snap))
        account = account_lines(snap)
        if snap["report"]:
            r = snap["report"]
            account.append(f"report: net ${_num(r.get('net_pnl_usd'))}  trades {_num(r.get('trades'), 0)}  "
                           f"win rate {_num(r.get('win_rate'))}  evaluation accounts {r['accounts']}")
        self._text(self.account, account)
        self.trades = snap["trade_objects"]
        self._text(self.actor_div, [f"{'actor':<10} {'pid':>7}  {'heartbeat age':<18} {'restarts':>8}  uptime"]
                   + [f"{r['actor']:<10} {r['pid']:>7}  {r['age']:<18} {r['restarts']:>8}  {r['uptime']}" for r in snap["actors"]])
        for table, key, columns in ((self.decision_table, "decisions", DECISION_COLUMNS), (self.trade_table, "trades", TRADE_COLUMNS),
                                    (self.lora_table, "lora", LORA_COLUMNS), (self.event_table, "events", EVENT_COLUMNS)):
            rows = snap[key]
            if self.last_tables.get(key) != rows:  # unchanged tables cost no websocket traffic
                self.last_tables[key] = rows
                data = columns_of(rows, tuple(name for name, _, _ in columns))
                if len(rows) == len(table.source.data[columns[0][0]]):
                    # BokehJS redraws a table when its row count changes, not when only its values do: a blank last
                    # row, there every other update, changes the count (cheaper than re-rendering the table).
                    data = {name: values + [""] for name, values in data.items()}
                table.source.data = data

    def _text(self, div: Div, lines: list[str]) -> None:
        text = _pre(lines)
        if div.text != text:
            div.text = text

    def _on_trade_click(self, attr: str, old: list[int], new: list[int]) -> None:
        if new and new[0] < len(self.trades):
            trade = self.trades[new[0]]
            self._text(self.chain, [f"trade {trade.trade_id} ({trade.side}, {trade.pnl_usd:+.2f} $):", self.state.chain_text(trade)])


def _num(value: Any, digits: int = 2) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:,.{digits}f}"


def build_document(doc: Document, state: DashboardState, token: str = "") -> None:
    """Bokeh's per-session hook: the page, or (without the right token) a page that says what is missing."""
    doc.title = "thinking trader dashboard"
    if token:
        request = doc.session_context.request if doc.session_context else None
        given = (request.arguments.get("token", [b""])[0] if request is not None else b"")
        given = given.decode() if isinstance(given, bytes) else str(given)
        if given != token:
            doc.add_root(Div(text="<h3>token required</h3><p>Open the address the dashboard printed at start (it ends in ?token=...).</p>"))
            return
    view = DashboardView(state)
    doc.add_root(view.layout)
    view.update()
    doc.add_periodic_callback(view.update, UPDATE_MS)
