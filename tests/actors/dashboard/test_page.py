"""The page's models follow the state (Bokeh models in Python, no server, no browser)."""

import math

from bokeh.document import Document
from bokeh.document.events import ColumnsPatchedEvent, ModelChangedEvent

from actors.common.actions import BUY, HOLD
from actors.dashboard.page import TRADE_SLOTS, DashboardView
from actors.dashboard.state import AccountRules, DashboardState
from tests.actors.dashboard.test_state import fusion, obs, proposal, verdict, walk_obs


def test_an_update_streams_candles_position_and_halts_and_fills_the_account_walk():
    state = DashboardState()
    state.set_rules(AccountRules("apex", 50_000.0, 3_000.0, 0.0))
    view = DashboardView(state)
    state.on_message(obs(1, 101.0, bar_open=100.0, bar_high=102.0, bar_low=99.5, position=1, contracts=1, entry_price=100.5,
                         stop_price=98.0, target_price=106.0))
    state.on_message(proposal(1, BUY))
    state.on_message(fusion(1, BUY))
    state.on_message(verdict(1, HOLD, vetoed=True, reason="win_rate", halt="win_rate"))
    state.on_message(walk_obs(2, 0, 50_000.0))

    view.update()

    assert list(view.candle_source.data["high"]) == [102.0]
    stops = list(view.position_source.data["stop"])
    assert stops[0] == 98.0 and math.isnan(stops[1])  # flat at step 2: NaN, a break in the line (not None, which BokehJS reads as 0)
    assert view.halt_source.data == {"start": [0.5], "end": [1.5], "rule": ["win_rate"]}
    assert view.account_source.data["outcome"][0] == "open"
    assert list(view.trust_source.data["llm_trust"]) == [0.4]
    assert "fusion accuracy: no hindsight label yet" in view.learning_text.text


def test_choosing_event_kinds_narrows_the_events_table():
    state = DashboardState()
    view = DashboardView(state)
    state.on_message(verdict(1, HOLD, vetoed=True, reason="win_rate", halt="win_rate"))
    view.update()
    assert {"veto", "halt"} <= set(view.event_source.data["kind"])

    view.event_kinds.value = ["veto"]
    view.update()
    assert set(view.event_source.data["kind"]) - {""} == {"veto"}  # "": the row that makes BokehJS redraw


def test_later_updates_append_to_the_chart_columns():
    state = DashboardState()
    view = DashboardView(state)
    state.on_message(obs(1, 101.0))
    view.update()
    state.on_message(obs(2, 102.0))
    state.on_message(obs(3, 103.0))
    view.update()
    assert list(view.price_source.data["price"]) == [101.0, 102.0, 103.0] and list(view.price_source.data["step"]) == [1, 2, 3]


def closed_trade(state: DashboardState, trade_id: int, entry_step: int) -> None:
    from actors.common.actions import SELL
    from bus.messages import EnvOutcome

    for step, action in ((entry_step, BUY), (entry_step + 2, SELL)):
        state.on_message(proposal(step, action))
        state.on_message(fusion(step, action))
        state.on_message(verdict(step, action))
    state.on_message(EnvOutcome(env_id=0, episode_id=0, trade_id=trade_id, side=1, contracts=1, entry_ns=0, exit_ns=1, entry_price=100.0,
                                exit_price=101.0, pnl_usd=20.0, bars_held=2, exit_reason="signal", decision_steps=[entry_step, entry_step + 2],
                                llm_query_ids=[]))


def rows_shown(view: DashboardView) -> list[int]:
    """The rows of the trades table's source in the order the browser shows them: the rows its view keeps, ascending."""
    trades = view.trade_source.data["trade"]
    kept = getattr(view.trade_table.view.filter, "indices", None)
    return [i for i in (sorted(kept) if kept is not None else range(len(trades))) if trades[i] != ""]  # "": a blank row


def shown_trades(view: DashboardView) -> list[int]:
    return [view.trade_source.data["trade"][i] for i in rows_shown(view)]


def click_line(view: DashboardView, line: int) -> None:
    """What the browser sends for a click on the table's ``line``-th line: the index of its row in the source."""
    view.trade_source.selected.indices = [rows_shown(view)[line]]


def selected_trade(view: DashboardView) -> int | None:
    indices = view.trade_source.selected.indices
    return view.trade_source.data["trade"][indices[0]] if indices else None


def test_clicking_a_mark_on_the_chart_selects_its_trade_and_shows_its_chain():
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    closed_trade(state, 1, 10)
    closed_trade(state, 2, 20)
    view.update()
    assert list(view.mark_source.data["trade"]) == [1, 1, 2, 2]

    view.mark_source.selected.indices = [1]  # what the chart's tap tool does: the exit mark of trade 1

    assert shown_trades(view) == [2, 1] and selected_trade(view) == 1  # newest first: trade 1 is the second line
    assert "trade 1 " in view.chain.text and "step 10: RL BUY" in view.chain.text and "step 12: RL SELL" in view.chain.text



def page_showing_trade_1() -> tuple[DashboardState, DashboardView]:
    """A page that redraws at once (no refresh bound), with one closed trade on its table."""
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    closed_trade(state, 1, 10)
    view.update()
    return state, view

def test_the_selection_stays_with_its_trade_and_an_unchanged_table_is_not_sent_again():
    state, view = page_showing_trade_1()
    click_line(view, 0)  # a click on trade 1
    sent = view.trade_source.data
    view.update()
    assert view.trade_source.data is sent  # no new trade: the rows were not rebuilt under the click

    closed_trade(state, 2, 20)
    view.update()
    assert shown_trades(view) == [2, 1] and selected_trade(view) == 1  # trade 1 moved down a line; the selection moved with it
    assert "trade 1 " in view.chain.text


def test_a_click_means_the_row_the_table_showed_even_when_a_new_trade_arrived_since():
    state, view = page_showing_trade_1()
    closed_trade(state, 2, 20)  # in the state, not yet on the page

    click_line(view, 0)

    assert "trade 1 " in view.chain.text


def test_a_click_the_browser_sent_before_a_redraw_that_added_trades_still_selects_the_trade_it_showed():
    state, view = page_showing_trade_1()
    clicked = rows_shown(view)[0]  # the browser shows trade 1 on its first line, and the user clicks it
    closed_trade(state, 2, 20)
    closed_trade(state, 3, 30)
    view.update()  # the server's redraw crosses the click on the wire

    view.trade_source.selected.indices = [clicked]  # the click arrives, against the rows the browser showed

    assert "trade 1 " in view.chain.text
    assert shown_trades(view) == [3, 2, 1] and selected_trade(view) == 1


def test_a_redraw_that_adds_a_trade_sends_its_row_only_and_no_selection_that_could_overwrite_a_click():
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    doc = Document()
    doc.add_root(view.layout)
    closed_trade(state, 1, 10)
    view.update()
    click_line(view, 0)
    sent = []
    doc.on_change(sent.append)

    closed_trade(state, 2, 20)
    view.update()

    to_trades = [e for e in sent if getattr(e, "model", None) in (view.trade_source, view.trade_source.selected)]
    assert to_trades and all(isinstance(e, ColumnsPatchedEvent) for e in to_trades)  # no whole table, no selection sent
    assert {index for e in to_trades for cells in e.patches.values() for index, _ in cells} == {rows_shown(view)[0]}
    assert shown_trades(view) == [2, 1] and selected_trade(view) == 1 and "trade 1 " in view.chain.text


def test_a_click_the_browser_sent_before_a_report_replaced_the_trades_still_shows_the_trade_it_showed(tmp_path):
    import json

    from tests.actors.dashboard.test_state import report_trade

    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    for trade_id in (1, 2, 3):
        closed_trade(state, trade_id, 10 * trade_id)
    view.update()
    clicked = rows_shown(view)[1]  # trade 2
    (tmp_path / "backtest").mkdir()
    (tmp_path / "backtest" / "metrics.json").write_text(json.dumps({"trade_list": [report_trade(i, 100 + 10 * i, 2, 1.0)
                                                                                   for i in range(100, 160)]}))
    state.on_report(tmp_path)
    view.update()  # every row replaced

    view.trade_source.selected.indices = [clicked]

    assert "trade 2 " in view.chain.text and "step 20: RL BUY" in view.chain.text
    assert shown_trades(view)[:2] == [159, 158]


def test_when_the_rows_run_out_the_table_starts_again_and_a_click_in_flight_still_means_its_trade():
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    last = 0
    for batch in range(100):
        clicked, trade_id = (rows_shown(view)[0], shown_trades(view)[0]) if last else (None, None)
        for _ in range(30):
            last += 1
            closed_trade(state, last, 10 * last)
        view.update()
        assert shown_trades(view) == list(range(last, max(0, last - 40), -1))
        if clicked is not None and rows_shown(view)[0] > clicked:
            break  # the newest trade took the source's first row last time: the table started again at its end
    else:
        raise AssertionError("the trades table never started again")

    view.trade_source.selected.indices = [clicked]

    assert f"trade {trade_id} " in view.chain.text and selected_trade(view) == trade_id


def test_the_trades_table_is_redrawn_at_most_every_trades_refresh_secs_while_trades_arrive():
    now = [100.0]
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=3.0, clock=lambda: now[0])
    closed_trade(state, 1, 10)
    view.update()
    closed_trade(state, 2, 20)
    now[0] += 1.0
    view.update()
    assert shown_trades(view) == [1]  # held back: a redraw now could swallow a click
    assert list(view.mark_source.data["trade"]) == [1, 1, 2, 2]  # the chart is not
    now[0] += 2.5
    view.update()
    assert shown_trades(view) == [2, 1]


def test_the_selected_trade_stays_below_the_newest_when_newer_trades_push_it_out():
    state, view = page_showing_trade_1()
    click_line(view, 0)
    for trade_id in range(2, 43):
        closed_trade(state, trade_id, 10 * trade_id)
    view.update()  # trade 1 is older than the 40 the table keeps

    assert shown_trades(view) == list(range(42, 2, -1)) + [1] and selected_trade(view) == 1 and "trade 1 " in view.chain.text


class Browser:
    """What BokehJS holds of the trades table, on the far end of a slow websocket. The page's events wait in
    ``inbox`` until ``deliver()``; a click changes the browser's selection at once and reaches the server at
    ``send()`` (as Bokeh's server applies it: ``set_from_json`` with the session as setter, not echoed back). Its
    DataTable keeps a selected row its view hides and selects it again once the row is shown
    (``DataTableView._sync_selected_with_view``), telling the server."""

    def __init__(self, view: DashboardView) -> None:
        self.view, self.inbox, self.outbox = view, [], []
        self.trades = list(view.trade_source.data["trade"])
        self.kept = list(view.trade_filter.indices)
        self.selected: list[int] = []
        self.hidden: list[int] = []
        self.doc = Document()
        self.doc.add_root(view.layout)
        self.doc.on_change(lambda event: None if event.setter is self else self.inbox.append(event))

    def deliver(self) -> None:
        for event in self.inbox:
            if isinstance(event, ColumnsPatchedEvent) and event.model is self.view.trade_source:
                for row, value in event.patches.get("trade", []):
                    self.trades[row] = value
            elif isinstance(event, ModelChangedEvent) and event.model is self.view.trade_filter:
                self.kept = list(event.new)
                self.sync()
            elif isinstance(event, ModelChangedEvent) and event.model is self.view.trade_source.selected and event.attr == "indices":
                self.selected = list(event.new)
        self.inbox = []

    def sync(self) -> None:
        shown = [i for i in self.hidden if i in self.kept]
        self.hidden = [i for i in self.hidden if i not in shown] + [i for i in self.selected if i not in self.kept]
        selected = shown + [i for i in self.selected if i in self.kept]
        if selected != self.selected:
            self.selected = selected
            self.outbox.append(selected)

    def click_line(self, line: int) -> int:
        """A click on the line the browser shows there: selected at once, sent later. The trade it shows."""
        row = sorted(self.kept)[line % len(self.kept)]
        self.selected = [row]
        self.outbox.append([row])
        return self.trades[row]

    def send(self) -> None:
        for indices in self.outbox:
            self.view.trade_source.selected.set_from_json("indices", indices, setter=self)
        self.outbox = []

    def selected_trade(self) -> int | None:
        return self.trades[self.selected[0]] if self.selected else None


def test_a_redraw_does_not_select_again_a_trade_the_user_unselected_in_the_table():
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    browser = Browser(view)
    closed_trade(state, 1, 10)
    view.update()
    browser.deliver()
    browser.click_line(0)
    browser.send()
    browser.selected, browser.outbox = [], [[]]  # a ctrl-click on the selected line
    browser.send()

    closed_trade(state, 2, 20)
    view.update()
    browser.deliver()

    assert browser.selected == [] and "trade 1 " in view.chain.text  # the chain stays until another trade is clicked


def test_clicks_that_cross_redraws_on_the_wire_select_the_trade_clicked_through_a_wrap_and_a_report(tmp_path):
    import json

    from tests.actors.dashboard.test_state import report_trade

    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    browser = Browser(view)
    last, firsts = 0, []
    for batch in range(TRADE_SLOTS // 8):
        for _ in range(1 + 14 * (batch % 3 != 1)):
            last += 1
            closed_trade(state, last, 10 * last)
        if batch == 20:
            (tmp_path / "backtest").mkdir()
            (tmp_path / "backtest" / "metrics.json").write_text(json.dumps({"trade_list": [report_trade(i, 5 + 10 * i, 2, 1.0)
                                                                                           for i in range(60)]}))
            state.on_report(tmp_path)  # every row of the table replaced
        view.update()  # a redraw, on its way to the browser...
        firsts.append(view.table_rows[0])
        if batch % 4 == 3:
            view.mark_source.selected.indices = [len(view.mark_source.data["trade"]) - 1]  # ...then a click on a mark...
        clicked = browser.click_line(batch % 5 * 9) if batch % 4 != 3 and browser.kept else None  # ...or on the old table
        browser.send()
        browser.deliver()
        browser.send()  # what the browser's table said back on the way (a selection its view now hides)
        browser.deliver()

        assert browser.hidden == []  # never a hidden selection the browser could bring back on another trade
        assert browser.selected == list(view.trade_source.selected.indices)
        if clicked is not None:
            assert f"trade {clicked} " in view.chain.text and browser.selected_trade() == clicked, batch
    assert any(b > a for a, b in zip(firsts, firsts[1:]))  # the rows ran out and the table started again at the far end


def test_a_mark_of_a_report_trade_older_than_the_table_still_shows_its_chain(tmp_path):
    import json

    from tests.actors.dashboard.test_state import report_trade

    (tmp_path / "backtest").mkdir()
    trades = [report_trade(i, 10 * i, 2, 1.0) for i in range(60)]
    (tmp_path / "backtest" / "metrics.json").write_text(json.dumps({"trade_list": trades}))
    state = DashboardState()
    state.on_report(tmp_path)
    view = DashboardView(state, trades_refresh_secs=0.0)
    view.update()

    view.mark_source.selected.indices = [0]  # trade 0's entry: the table shows the newest 40 only

    assert "trade 0 " in view.chain.text and "entry step 0" in view.chain.text
    assert view.trade_source.selected.indices == []
