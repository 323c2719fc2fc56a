"""The page's models follow the state (Bokeh models in Python, no server, no browser)."""

import math

from actors.common.actions import BUY, HOLD
from actors.dashboard.page import DashboardView
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


def test_clicking_a_mark_on_the_chart_selects_its_trade_and_shows_its_chain():
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    closed_trade(state, 1, 10)
    closed_trade(state, 2, 20)
    view.update()
    assert list(view.mark_source.data["trade"]) == [1, 1, 2, 2]

    view.mark_source.selected.indices = [1]  # what the chart's tap tool does: the exit mark of trade 1

    assert view.trade_source.selected.indices == [1]  # newest first: trade 1 is the second row
    assert "trade 1 " in view.chain.text and "step 10: RL BUY" in view.chain.text and "step 12: RL SELL" in view.chain.text


def test_the_selection_stays_with_its_trade_and_an_unchanged_table_is_not_sent_again():
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    closed_trade(state, 1, 10)
    view.update()
    view.trade_source.selected.indices = [0]  # a click on trade 1
    sent = view.trade_source.data
    view.update()
    assert view.trade_source.data is sent  # no new trade: the rows were not rebuilt under the click

    closed_trade(state, 2, 20)
    view.update()
    assert view.trade_source.selected.indices == [1]  # trade 1 moved down a row; the selection moved with it
    assert "trade 1 " in view.chain.text


def test_a_click_means_the_row_the_table_showed_even_when_a_new_trade_arrived_since():
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=0.0)
    closed_trade(state, 1, 10)
    view.update()
    closed_trade(state, 2, 20)  # in the state, not yet on the page

    view.trade_source.selected.indices = [0]

    assert "trade 1 " in view.chain.text


def test_the_trades_table_is_redrawn_at_most_every_trades_refresh_secs_while_trades_arrive():
    now = [100.0]
    state = DashboardState()
    view = DashboardView(state, trades_refresh_secs=3.0, clock=lambda: now[0])
    closed_trade(state, 1, 10)
    view.update()
    closed_trade(state, 2, 20)
    now[0] += 1.0
    view.update()
    assert view.trade_source.data["trade"][:1] == [1]  # held back: a redraw now could swallow a click
    assert list(view.mark_source.data["trade"]) == [1, 1, 2, 2]  # the chart is not
    now[0] += 2.5
    view.update()
    assert view.trade_source.data["trade"][:2] == [2, 1]


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
