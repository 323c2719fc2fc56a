"""The page: one Bokeh document per browser session, updated from the shared ``DashboardState``.

Bokeh's server keeps each open page in sync with its document over a websocket, and ships BokehJS
with the Python package (nothing is fetched from the network). Each session runs a periodic callback
(``[dashboard] update_ms``, twice a second by default) that streams the chart points added since its
last update and replaces the short tables when they changed; a closed page only ends its own callback,
the reader and the runtime never notice.

The trades table is the one a user clicks, so it is never replaced: each trade is written once into a row of
its own (``TRADE_SLOTS``), and the table's view shows the newest rows. A click names a row of the source (the
browser sends ``selected.indices``); the server's redraws cross it on the websocket, so that row must still mean
the trade the browser showed when it was clicked, and a redraw must not send a selection that lands after it.
"""

from __future__ import annotations

import html
import math
import time
from typing import Any, Callable

import numpy as np

from bokeh.document import Document
from bokeh.layouts import column, row
from bokeh.models import (CDSView, ColumnDataSource, DataTable, Div, HoverTool, IndexFilter, MultiChoice, TableColumn, TapTool,
                          TextInput)
from bokeh.plotting import figure

from actors.dashboard.model import Trade
from actors.dashboard.lines import account_lines, columns_of, health_lines, learning_lines
from actors.dashboard.state import EVENT_KINDS, LEARNING_KEYS, MAX_CANDLES, MAX_POINTS, MAX_ROWS, DashboardState

DECISION_COLUMNS = (("step", "step", 60), ("rl", "RL action", 115), ("probs", "RL probabilities", 230), ("llm", "LLM thought", 110),
                    ("reason", "LLM reason", 260), ("stale", "stale", 45), ("adapter", "adapter", 60), ("fusion", "fusion method/rule", 150),
                    ("trust", "trust RL / LLM", 100), ("final", "final", 115), ("risk", "risk verdict", 180), ("halt", "rule in force", 110))
TRADE_COLUMNS = (("trade", "trade", 50), ("side", "side", 50), ("entry", "entry @ step", 120), ("exit", "exit @ step", 120),
                 ("pnl", "P&L $", 70), ("bars", "bars", 45), ("why", "exit", 90))
EVENT_COLUMNS = (("time", "time (UTC)", 75), ("kind", "kind", 70), ("actor", "actor", 80), ("text", "event", 700))
LORA_COLUMNS = (("version", "adapter", 55), ("time", "time", 65), ("experiences", "experiences", 80),
                ("match", "match rate before -> after", 160), ("published", "result", 75), ("alarm", "alarm", 60))
ACCOUNT_COLUMNS = (("account", "account", 60), ("episode", "episode", 60), ("steps", "steps", 110), ("outcome", "outcome", 70),
                   ("net", "net $", 80), ("why", "why", 120))
STREAMS = (("price", MAX_POINTS), ("candles", MAX_CANDLES), ("position", MAX_POINTS), ("marks", MAX_POINTS), ("news", MAX_POINTS), ("equity", MAX_POINTS),
           ("trust", MAX_POINTS), ("accuracy", 1000), ("learning", 1000))
"""The chart sources streamed from the state's series of the same name, and how many points each keeps."""
TRADE_SLOTS = 10 * MAX_ROWS
"""Rows of the trades table's source. A trade is written into the row below the newest trade's (one patch of its
cells: a redraw sends the new trades only) and keeps that row; the table's view (an IndexFilter) shows the newest
MAX_ROWS of them, in row order: newest first. When no row is left below, the shown trades start again at the far
end, away from the rows just shown, so a row's index means one trade for TRADE_SLOTS - 2 x MAX_ROWS trades: long
enough for a click in flight, whatever the server redrew meanwhile."""
LEARNING_LINES = (("approx_kl", "#1f77b4"), ("clip_fraction", "#ff7f0e"), ("explained_variance", "#2ca02c"), ("entropy_loss", "#9467bd"))


def _table(columns: tuple[tuple[str, str, int], ...], height: int, blank_rows: int = 0,
           **kwargs: Any) -> tuple[ColumnDataSource, DataTable]:
    source = ColumnDataSource(columns_of([{}] * blank_rows, tuple(name for name, _, _ in columns)))
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

    def __init__(self, state: DashboardState, trades_refresh_secs: float = 3.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.state = state
        self.trades_refresh_secs, self.clock = trades_refresh_secs, clock
        self.trades_sent_at = -math.inf
        self.cursors: dict[str, int] = {}
        self.last_tables: dict[str, Any] = {}
        self.shown_trades: list[Trade] = []
        """The trades the trades table shows, newest first: line i is shown_trades[i], in source row table_rows[i]."""
        self.table_rows: list[int] = []
        """Their rows in the trades table's source: consecutive, ascending."""
        self.table_cells: list[dict[str, Any]] = []
        """Their cells, as last sent."""
        self.row_trades: list[Trade | None] = [None] * TRADE_SLOTS
        """The trade each source row holds, kept when it leaves the table: a click in flight reads its row here."""
        self.selected: tuple[int, int] | None = None
        """(env, trade id) of the trade whose chain is shown: kept across the table's redraws."""
        self.selected_row: int | None = None
        """The source row the table shows it in (below the newest when it is older than them); None: not shown."""

        self.health = Div(text=_pre(["connecting..."]), width=420, name="health")
        self.account = Div(text=_pre(["..."]), width=520, name="account")
        self.actor_div = Div(text=_pre([]), width=420, name="actors")

        self.price_source = ColumnDataSource({"step": [], "price": []}, name="price_source")
        self.candle_source = ColumnDataSource({"step": [], "open": [], "high": [], "low": [], "close": [], "colour": []},
                                              name="candle_source")
        self.position_source = ColumnDataSource({"step": [], "entry": [], "stop": [], "target": []}, name="position_source")
        self.mark_source = ColumnDataSource({"step": [], "price": [], "kind": [], "colour": [], "trade": []}, name="mark_source")
        self.halt_source = ColumnDataSource({"start": [], "end": [], "rule": []}, name="halt_source")
        self.news_source = ColumnDataSource({"step": [], "price": [], "kind": [], "colour": [], "text": []}, name="news_source")
        self.price = figure(title=f"market (env 0): close, the last {MAX_CANDLES} bars as candles, entries and exits, "
                                  "the open position's entry, stop and target; halted stretches shaded; market events as diamonds",
                            height=300, sizing_mode="stretch_width", x_axis_label="loop step",
                            tools="pan,wheel_zoom,box_zoom,reset", name="price_chart")
        halts = self.price.vstrip(x0="start", x1="end", source=self.halt_source, fill_color="#ff7f0e", fill_alpha=0.15,
                                  line_color=None, legend_label="halted")
        self.price.line("step", "price", source=self.price_source, line_width=1, color="#9aa9b8", legend_label="close")
        self.price.segment("step", "high", "step", "low", source=self.candle_source, color="colour")
        self.price.vbar(x="step", width=0.7, top="open", bottom="close", source=self.candle_source, fill_color="colour",
                        line_color="colour")
        self.price.line("step", "entry", source=self.position_source, color="#555555", line_dash="dotted", line_width=1.5,
                        legend_label="entry")
        self.price.line("step", "stop", source=self.position_source, color="#d62728", line_dash="dashed", line_width=1.5,
                        legend_label="stop")
        self.price.line("step", "target", source=self.position_source, color="#2ca02c", line_dash="dashed", line_width=1.5,
                        legend_label="target")
        marks = self.price.scatter("step", "price", source=self.mark_source, color="colour", size=10, marker="triangle",
                                   line_color="black", legend_field="kind")
        self.price.add_tools(HoverTool(renderers=[marks], tooltips=[("trade", "@trade (click: its chain)"), ("step", "@step"),
                                                                    ("price", "@price{0,0.00}"), ("", "@kind")]),
                             HoverTool(renderers=[halts], tooltips=[("halt", "@rule")]), TapTool(renderers=[marks]))
        news = self.price.scatter("step", "price", source=self.news_source, color="colour", size=11, marker="diamond", line_color="black",
                                  legend_label="market event")  # md.event at env 0's bar that made it public (release purple, headline orange)
        self.price.add_tools(HoverTool(renderers=[news], tooltips=[("", "@kind"), ("", "@text"), ("step", "@step")]))
        self.mark_source.selected.on_change("indices", self._on_mark_click)
        self.price.legend.orientation = "horizontal"
        self.price.add_layout(self.price.legend[0], "below")  # inside, it would hide the newest bars

        self.equity_source = ColumnDataSource({"step": [], "equity": [], "threshold": []})
        self.equity = figure(title="account: equity and the trailing drawdown threshold", height=220, sizing_mode="stretch_width",
                             x_axis_label="loop step", tools="pan,wheel_zoom,box_zoom,reset", name="equity_chart")
        self.equity.line("step", "equity", source=self.equity_source, color="#2ca02c", line_width=1.5, legend_label="equity")
        self.equity.line("step", "threshold", source=self.equity_source, color="#d62728", line_dash="dashed", legend_label="threshold")
        self.equity.legend.location = "top_left"

        self.decision_source, self.decision_table = _table(DECISION_COLUMNS, 300, name="decisions")
        self.trade_filter = IndexFilter(indices=[])
        self.trade_source, self.trade_table = _table(TRADE_COLUMNS, 200, blank_rows=TRADE_SLOTS, view=CDSView(filter=self.trade_filter),
                                                     name="trades")
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
        self.account_source, self.account_table = _table(ACCOUNT_COLUMNS, 150, name="accounts")

        self.trust_source = ColumnDataSource({"step": [], "rl_trust": [], "llm_trust": []}, name="trust_source")
        self.trust = figure(title="fusion: trust in RL and in the LLM (env 0)", height=200, sizing_mode="stretch_width",
                            x_axis_label="loop step", y_range=(0, 1.05), tools="pan,wheel_zoom,reset", name="trust_chart")
        self.trust.line("step", "rl_trust", source=self.trust_source, color="#1f77b4", legend_label="RL trust")
        self.trust.line("step", "llm_trust", source=self.trust_source, color="#ff7f0e", legend_label="LLM trust")
        self.trust.legend.location = "top_left"
        self.accuracy_source = ColumnDataSource({"labels": [], "chose_right": [], "fused": [], "rl": [], "llm": []},
                                                name="accuracy_source")
        self.accuracy = figure(title="fusion accuracy against hindsight labels (running share)", height=200, sizing_mode="stretch_width",
                               x_axis_label="labelled decisions", y_range=(0, 1.05), tools="pan,wheel_zoom,reset", name="accuracy_chart")
        for key, colour, label in (("chose_right", "#9467bd", "chose the right source"), ("fused", "#2ca02c", "fused = label"),
                                   ("rl", "#1f77b4", "RL = label"), ("llm", "#ff7f0e", "LLM = label")):
            self.accuracy.line("labels", key, source=self.accuracy_source, color=colour, legend_label=label)
        self.accuracy.legend.location = "top_left"
        self.learning_text = Div(text=_pre([]), sizing_mode="stretch_width", name="learning_text")

        self.event_kinds = MultiChoice(options=list(EVENT_KINDS), placeholder="all kinds", width=420, name="event_kinds")
        self.event_filter = TextInput(placeholder="and containing (an actor, a rule, a step...)", width=420)
        self.event_source, self.event_table = _table(EVENT_COLUMNS, 300, name="events")

        self.layout = column(
            Div(text="<h2 style='margin:4px 0'>thinking trader: live dashboard</h2>"),
            row(column(_panel("health"), self.health, self.actor_div),
                column(_panel("account"), self.account, _panel("evaluation accounts (env 0, newest first)"), self.account_table,
                       sizing_mode="stretch_width"), sizing_mode="stretch_width"),
            self.price, self.equity,
            _panel("who decided (env 0, newest first)"), self.decision_table,
            row(column(_panel("trades (click one, or a mark on the chart)"), self.trade_table, width=560),
                column(_panel("decision chain"), self.chain), sizing_mode="stretch_width"),
            _panel("learning"), self.learning_text,
            row(self.trust, self.accuracy, sizing_mode="stretch_width"),
            row(self.learning, column(_panel("LoRA rounds"), self.lora_table, width=520), sizing_mode="stretch_width"),
            _panel("events (newest first)"), row(self.event_kinds, self.event_filter), self.event_table,
            sizing_mode="stretch_width",
        )

    # ------------------------------------------------------------------ updates

    def update(self) -> None:
        snap = self.state.snapshot(self.cursors, self.event_filter.value.strip(), frozenset(self.event_kinds.value))
        sources = {"price": self.price_source, "candles": self.candle_source, "position": self.position_source, "marks": self.mark_source,
                   "news": self.news_source,
                   "equity": self.equity_source, "trust": self.trust_source, "accuracy": self.accuracy_source,
                   "learning": self.learning_source}
        if snap["reset"]:
            for source in sources.values():
                source.data = {name: [] for name in source.data}
        for name, limit in STREAMS:
            source, new = sources[name], snap["new"][name]
            if new and next(iter(new.values())):
                source.stream({k: _column(values) for k, values in new.items()}, rollover=limit)
        self._text(self.health, health_lines(snap))
        account = account_lines(snap)
        if snap["report"]:
            r = snap["report"]
            account.append(f"report: net ${_num(r.get('net_pnl_usd'))}  trades {_num(r.get('trades'), 0)}  "
                           f"win rate {_num(r.get('win_rate'))}  evaluation accounts {r['accounts']}")
        self._text(self.account, account)
        self._text(self.learning_text, learning_lines(snap))
        halts = columns_of(snap["halts"], ("start", "end", "rule"))
        if self.last_tables.get("halts") != halts:
            self.last_tables["halts"] = halts
            self.halt_source.data = halts
        self._text(self.actor_div, [f"{'actor':<10} {'pid':>7}  {'heartbeat age':<18} {'restarts':>8}  uptime"]
                   + [f"{r['actor']:<10} {r['pid']:>7}  {r['age']:<18} {r['restarts']:>8}  {r['uptime']}" for r in snap["actors"]])
        for table, key, columns in ((self.decision_table, "decisions", DECISION_COLUMNS), (self.trade_table, "trades", TRADE_COLUMNS),
                                    (self.lora_table, "lora", LORA_COLUMNS), (self.event_table, "events", EVENT_COLUMNS),
                                    (self.account_table, "accounts", ACCOUNT_COLUMNS)):
            rows = snap[key]
            if self.last_tables.get(key) != rows:  # unchanged tables cost no websocket traffic, and keep a click in flight
                if key == "trades":
                    if self.clock() - self.trades_sent_at < self.trades_refresh_secs:
                        continue  # redrawn at most every trades_refresh_secs: fewer redraws under the pointer (see config)
                    self.trades_sent_at = self.clock()
                    self.last_tables[key] = rows
                    self._redraw_trades(snap["trade_objects"], rows)
                    continue
                self.last_tables[key] = rows
                data = columns_of(rows, tuple(name for name, _, _ in columns))
                if len(rows) == len(table.source.data[columns[0][0]]):
                    # BokehJS redraws a table when its row count changes, not when only its values do: a blank last
                    # row, there every other update, changes the count (cheaper than re-rendering the table).
                    data = {name: values + [""] for name, values in data.items()}
                table.source.data = data

    def _redraw_trades(self, trades: list[Trade], rows: list[dict[str, Any]]) -> None:
        """The trades table now shows ``trades`` (newest first; ``rows`` are their cells). When the new list is the
        old one with newer trades on top (the common case), the trades shown keep their source rows and only the new
        trades' cells are sent, into the rows below, with the view's indices: no selection is sent (a row still means
        its trade, and a selection sent now could land in the browser after a click it is sending). Any other change
        (a report's trades, or no row left below) writes all of them into fresh rows, away from those shown."""
        names = tuple(name for name, _, _ in TRADE_COLUMNS)
        shown, top = self.shown_trades, (self.table_rows[0] if self.table_rows else TRADE_SLOTS)
        new = next((i for i, t in enumerate(trades) if shown and _key(t) == _key(shown[0])), len(trades))
        kept = len(trades) - new
        if not (kept <= len(shown) and [_key(t) for t in trades[new:]] == [_key(t) for t in shown[:kept]]
                and rows[new:] == self.table_cells[:kept]):
            new, kept = len(trades), 0  # not newer trades on top of the shown ones: all written afresh
        if new > top:
            new, kept = len(trades), 0
            top = TRADE_SLOTS  # no row left below: start again at the far end (the rows shown are near the start)
        first = top - new
        patches: dict[str, list[tuple[int, Any]]] = {name: [] for name in names}
        for row, trade, cells in zip(range(first, top), trades, rows):
            self.row_trades[row] = trade
            for name in names:
                patches[name].append((row, cells.get(name, "")))
        self.table_rows = list(range(first, top)) + self.table_rows[:kept]
        self.shown_trades, self.table_cells = list(trades), list(rows)
        self._show(self._row_of(self.selected, self.selected_row), patches if new else None, redraw=True)

    def _text(self, div: Div, lines: list[str]) -> None:
        text = _pre(lines)
        if div.text != text:
            div.text = text

    def _on_trade_click(self, attr: str, old: list[int], new: list[int]) -> None:
        """A row clicked (or the selection moved with its trade): that trade's chain. A source row keeps its trade
        across redraws (``row_trades``), so a click the browser sent before a redraw reached it means the trade it showed."""
        trade = self.row_trades[new[0]] if new and 0 <= new[0] < TRADE_SLOTS else None
        if trade is not None:
            if _key(trade) != self.selected:
                self.mark_source.selected.indices = []  # a later click on a mark selects again
            self._select(trade, new[0])

    def _on_mark_click(self, attr: str, old: list[int], new: list[int]) -> None:
        """An entry or exit mark clicked on the price chart: its trade is selected in the table and its chain shown."""
        trades = self.mark_source.data.get("trade", [])
        if not new or new[0] >= len(trades):
            return
        trade_id = int(trades[new[0]])
        trade = next((t for t in self.shown_trades if t.trade_id == trade_id and t.env_id == 0), None) or self.state.trade(trade_id)
        if trade is None:
            self.selected = None
            self._text(self.chain, [f"trade {trade_id}: no longer kept (the trades table keeps the newest {MAX_ROWS})"])
            self._show(None)
            return
        self._select(trade)

    def _select(self, trade: Trade, row: int | None = None) -> None:
        self.selected = _key(trade)
        self._text(self.chain, [f"trade {trade.trade_id} ({trade.side}, {trade.pnl_usd:+.2f} $):", self.state.chain_text(trade)])
        self._show(self._row_of(self.selected, row))

    def _row_of(self, key: tuple[int, int] | None, hint: int | None) -> int | None:
        """The source row that shows trade ``key``: its row among the newest; else a row below them (an older trade)
        that still holds it, ``hint`` first (the row clicked, or the one it was shown in); else none."""
        if key is None:
            return None
        row = next((r for r, t in zip(self.table_rows, self.shown_trades) if _key(t) == key), None)
        if row is not None:
            return row
        below = self.table_rows[-1] + 1 if self.table_rows else 0
        rows = [r for r in range(below, TRADE_SLOTS) if (t := self.row_trades[r]) is not None and _key(t) == key]
        return hint if hint in rows else (rows[0] if rows else None)

    def _show(self, row: int | None, patches: dict[str, list[tuple[int, Any]]] | None = None, redraw: bool = False) -> None:
        """The table shows its newest rows, and ``row``, the selected trade's, below them when it is older: a selection
        never leaves the view (BokehJS keeps a selected row its view hides and selects it again when the row is shown,
        by then perhaps another trade's). The selection is ``row``: set when it differs; a ``redraw`` sets it only
        when the trade's row changed (a click may be on its way), and clears it first, before ``patches`` rewrite
        rows; a click clears it first when the view drops a selected row."""
        moved, self.selected_row = row != self.selected_row, row
        view = self.table_rows + ([row] if row is not None and row not in self.table_rows else [])
        indices = [row] if row is not None else []
        current = list(self.trade_source.selected.indices)
        send = current != indices and (moved or not redraw)
        if send and current and (redraw or any(i not in view for i in current)):
            self.trade_source.selected.indices = []
        if patches:
            self.trade_source.patch(patches)
        if list(self.trade_filter.indices) != view:
            self.trade_filter.indices = view
        if send and list(self.trade_source.selected.indices) != indices:
            self.trade_source.selected.indices = indices


def _key(trade: Trade) -> tuple[int, int]:
    return trade.env_id, trade.trade_id


def _column(values: list) -> list | np.ndarray:
    """A float column goes as a float64 array, so a NaN (a flat step, a figure not yet known) stays NaN and breaks
    the line there; as a list, BokehJS would read its ``null`` as 0 and draw down to zero."""
    if values and all(isinstance(v, float) for v in values):
        return np.asarray(values, dtype=np.float64)
    return values


def _num(value: Any, digits: int = 2) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:,.{digits}f}"


def build_document(doc: Document, state: DashboardState, token: str = "", update_ms: int = 500, trades_refresh_secs: float = 3.0) -> None:
    """Bokeh's per-session hook: the page, or (without the right token) a page that says what is missing."""
    doc.title = "thinking trader dashboard"
    if token:
        request = doc.session_context.request if doc.session_context else None
        given = (request.arguments.get("token", [b""])[0] if request is not None else b"")
        given = given.decode() if isinstance(given, bytes) else str(given)
        if given != token:
            doc.add_root(Div(text="<h3>token required</h3><p>Open the address the dashboard printed at start (it ends in ?token=...).</p>"))
            return
    view = DashboardView(state, trades_refresh_secs)
    doc.add_root(view.layout)
    view.update()
    doc.add_periodic_callback(view.update, update_ms)
