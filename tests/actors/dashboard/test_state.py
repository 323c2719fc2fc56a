"""The dashboard's state from bus messages and log records: no processes, no sockets, no browser."""

import json

import numpy as np

from actors.common.actions import BUY, HOLD, NO_ACTION, SELL
from actors.dashboard.config import EnvReportsView, RunView
from actors.dashboard.lines import account_lines, health_lines, learning_lines
from actors.dashboard.state import MAX_CANDLES, MAX_POINTS, AccountRules, DashboardState, MarketHistory, Series
from bus.messages import (EnvEpisode, EnvHindsight, EnvObs, EnvOutcome, FusionDecision, Heartbeat, LlmThought, LoraAdapter, LoraRound,
                          PolicyProposal, PolicyUpdate, Progress, RiskVerdict, Stats)
from tests.contexts import market_context


def obs(step: int, price: float, **context_overrides) -> EnvObs:
    return EnvObs(env_ids=[0], episode_ids=[0], step=step, obs=np.zeros((1, 261), np.float32), masks=np.ones((1, 6), bool),
                  contexts=[market_context(price=price, **context_overrides)])


def proposal(step: int, action: int) -> PolicyProposal:
    probs = np.zeros((1, 6), np.float32)
    probs[0, action] = 0.7
    probs[0, HOLD if action != HOLD else SELL] = 0.3
    return PolicyProposal(env_ids=[0], step=step, actions=np.array([action]), confidences=np.array([0.7], np.float32), probs=probs,
                          values=np.zeros(1, np.float32))


def fusion(step: int, action: int, query_id: str = "", llm_action: int = NO_ACTION) -> FusionDecision:
    return FusionDecision(env_ids=[0], step=step, actions=np.array([action]), method="rules", rules=["agreement"],
                          rl_actions=np.array([action]), rl_confidences=np.array([0.7]), llm_actions=np.array([llm_action]),
                          llm_confidences=np.array([0.8]), llm_staleness=np.array([1 if query_id else -1]), llm_query_ids=[query_id],
                          rl_trust=np.array([0.6]), llm_trust=np.array([0.4]))


def verdict(step: int, action: int, vetoed: bool = False, reason: str = "", halt: str = "") -> RiskVerdict:
    return RiskVerdict(env_ids=[0], step=step, actions=np.array([action]), vetoed=[vetoed], reasons=[reason], degraded=[False],
                       halts=[halt])


def thought(step_seen: int, query_id: str, action: int) -> LlmThought:
    return LlmThought(env_id=0, episode_id=0, step_seen=step_seen, query_id=query_id, action=action, confidence=0.8,
                      mode="single_shot", reason="momentum is up", adapter_version=2)


def test_a_decision_joins_proposal_thought_fusion_and_verdict_of_its_step():
    state = DashboardState()
    state.on_message(thought(4, "q4", BUY))
    state.on_message(proposal(5, BUY))
    state.on_message(fusion(5, BUY, "q4", BUY))
    state.on_message(verdict(5, BUY))

    row = state.snapshot({})["decisions"][0]
    assert (row["step"], row["rl"], row["llm"], row["final"], row["risk"]) == (5, "BUY", "BUY 0.80", "BUY", "pass")
    assert "BUY 0.70" in row["probs"] and "HOLD 0.30" in row["probs"]
    assert (row["reason"], row["adapter"], row["stale"], row["fusion"]) == ("momentum is up", "v2", "1", "rules/agreement")


def test_a_veto_and_a_halt_show_in_the_decision_and_as_events():
    state = DashboardState()
    state.on_message(proposal(1, BUY))
    state.on_message(fusion(1, BUY))
    state.on_message(verdict(1, HOLD, vetoed=True, reason="max_consecutive_losses", halt="consecutive_losses"))

    snap = state.snapshot({})
    assert snap["decisions"][0]["risk"] == "veto: max_consecutive_losses"
    assert snap["decisions"][0]["halt"] == "consecutive_losses"
    kinds = [event["kind"] for event in snap["events"]]
    assert "veto" in kinds and "halt" in kinds
    assert snap["counts"]["vetoes"] == 1


def test_charts_stream_only_the_points_a_session_has_not_seen():
    state = DashboardState()
    cursors: dict[str, int] = {}
    state.on_message(obs(1, 100.0))
    state.on_message(obs(2, 101.0))
    first = state.snapshot(cursors)
    state.on_message(obs(3, 102.5))
    second = state.snapshot(cursors)

    assert first["new"]["price"] == {"step": [1, 2], "price": [100.0, 101.0]}
    assert second["new"]["price"] == {"step": [3], "price": [102.5]}
    assert state.snapshot(cursors)["new"]["price"] == {"step": [], "price": []}


def test_equity_and_the_trailing_threshold_come_from_the_account_context():
    state = DashboardState()
    state.on_message(obs(1, 100.0, balance=50200.0, unrealized_pnl=-50.0, drawdown_buffer=2000.0))

    snap = state.snapshot({})
    assert snap["new"]["equity"] == {"step": [1], "equity": [50150.0], "threshold": [48150.0]}
    assert any("drawdown: $500 of $2,500" in line for line in account_lines(snap))


def test_a_closed_trade_marks_its_entry_and_exit_and_its_chain_lists_its_decisions():
    state = DashboardState()
    for step, action in ((7, BUY), (9, SELL)):
        state.on_message(proposal(step, action))
        state.on_message(fusion(step, action))
        state.on_message(verdict(step, action))
    state.on_message(EnvOutcome(env_id=0, episode_id=0, trade_id=1, side=1, contracts=1, entry_ns=0, exit_ns=1, entry_price=100.0,
                                exit_price=104.0, pnl_usd=75.0, bars_held=2, exit_reason="signal", decision_steps=[7, 9], llm_query_ids=[]))

    snap = state.snapshot({})
    assert snap["new"]["marks"]["step"] == [7, 9]
    assert snap["trades"][0]["pnl"] == 75.0
    chain = state.chain_text(snap["trade_objects"][0])
    assert "step 7: RL BUY" in chain and "step 9: RL SELL" in chain
    assert snap["events"][0]["kind"] == "fill"


def test_a_trade_closed_by_its_stop_is_marked_where_it_closed():
    state = DashboardState()
    state.on_message(EnvOutcome(env_id=0, episode_id=0, trade_id=1, side=-1, contracts=1, entry_ns=0, exit_ns=1, entry_price=100.0,
                                exit_price=101.0, pnl_usd=-25.0, bars_held=3, exit_reason="stop", decision_steps=[14], llm_query_ids=[]))
    assert state.snapshot({})["new"]["marks"]["step"] == [14, 17]


def test_a_heartbeat_from_a_new_pid_counts_a_restart():
    now = [10.0]
    state = DashboardState(clock=lambda: now[0])
    state.on_message(Heartbeat(actor="policy", pid=100, uptime_secs=1.0))
    now[0] = 11.0
    state.on_message(Heartbeat(actor="policy", pid=200, uptime_secs=0.5))
    now[0] = 13.5

    rows = state.heartbeat_rows()
    assert rows == [{"actor": "policy", "pid": 200, "age": "2.5 s", "restarts": 1, "uptime": "0 s"}]
    assert state.snapshot({})["events"][0]["kind"] == "restart"


def test_health_shows_steps_per_second_and_the_loop_latency():
    state = DashboardState()
    state.on_message(Progress(actor="env", steps=500, total_steps=1000, steps_per_sec=250.0))
    state.on_message(Stats(actor="env", counters={}, gauges={"decision_latency_p50_us": 800.0, "decision_latency_p99_us": 2500.0}))

    state.on_message(Stats(actor="feed", counters={}, gauges={"lag_ms_p50": 1500.0}))

    lines = health_lines(state.snapshot({}))
    assert "steps/s: 250" in lines and "feed lag: 1.5 s" in lines
    assert "decision latency p50 800 µs / p99 2.5 ms" in lines


def test_learning_takes_policy_updates_and_lora_rounds_from_the_bus_and_the_same_messages_read_back_from_the_log():
    state = DashboardState()
    state.on_message(PolicyUpdate(update=1, num_timesteps=64, approx_kl=0.01, mean_episode_return=-3.0))
    state.on_message(Progress(actor="policy", steps=64, total_steps=128, steps_per_sec=5.0, figures={"approx_kl": 0.5}))  # no point
    state.on_log({"event": PolicyUpdate.LOG_EVENT, "actor": "policy", "update": 1, "num_timesteps": 64, "approx_kl": 0.01})  # the same
    state.on_log({"event": PolicyUpdate.LOG_EVENT, "actor": "policy", "update": 2, "num_timesteps": 128, "approx_kl": 0.02,
                  "clip_fraction": 0.1})
    state.on_log({"event": LoraRound.LOG_EVENT, "actor": "lora", "version": 1, "match_rate_before": 0.4, "match_rate_after": 0.55,
                  "experiences": 48, "published": True, "collapsed": False, "timestamp": "2026-01-01T10:00:01Z"})
    state.on_message(LoraRound(version=1, experiences=48, match_rate_before=0.4, match_rate_after=0.55, published=True, collapsed=False))
    state.on_message(LoraRound(version=2, experiences=60, match_rate_before=0.55, match_rate_after=float("nan"), published=False,
                               collapsed=True))
    state.on_message(LoraAdapter(version=1, path="/x.gguf", metrics={"match_rate_after": 0.55}))

    snap = state.snapshot({})
    assert snap["new"]["learning"]["approx_kl"] == [0.01, 0.02]
    assert snap["new"]["learning"]["mean_episode_return"][0] == -3.0
    assert [row["version"] for row in snap["lora"]] == [2, 1]
    assert snap["lora"][1] == {"version": 1, "time": "10:00:01", "experiences": "48", "match": "0.40 -> 0.55", "published": "published",
                               "alarm": "-"}
    assert (snap["lora"][0]["match"], snap["lora"][0]["published"], snap["lora"][0]["alarm"]) == ("0.55 -> -", "refused", "collapse")
    assert snap["events"][0]["kind"] == "adapter"


def test_a_logged_update_without_the_messages_fields_is_an_event_row_not_a_reader_error():
    state = DashboardState()
    state.on_log({"event": LoraRound.LOG_EVENT, "actor": "lora", "level": "info", "version": 1})  # an older log: no match rates

    snap = state.snapshot({})
    assert snap["lora"] == [] and snap["events"][0]["kind"] == "lora"


def test_warnings_and_errors_of_any_actor_become_events_and_can_be_filtered():
    state = DashboardState()
    state.on_log({"event": "verdict_timeout", "actor": "env", "level": "warning", "step": 3, "timestamp": "2026-01-01T10:00:01Z"})
    state.on_log({"event": "think_failed", "actor": "reasoner", "level": "error", "error": "boom"})
    state.on_log({"event": "ppo_update", "actor": "policy", "level": "info"})

    assert [e["kind"] for e in state.snapshot({})["events"]] == ["error", "warning"]
    assert state.snapshot({}, event_filter="reasoner")["events"][0]["text"].startswith("think_failed")
    assert state.snapshot({})["events"][1]["time"] == "10:00:01"


def test_attaching_a_new_stage_starts_the_charts_over_and_keeps_the_events():
    state = DashboardState()
    cursors: dict[str, int] = {}
    state.attach("/runs/x/1-train", "train", "live bus")
    state.on_message(obs(1, 100.0))
    state.on_message(proposal(1, BUY))
    state.on_message(verdict(1, BUY))
    state.snapshot(cursors)
    state.attach("/runs/x/2-hybrid", "train", "live bus")

    snap = state.snapshot(cursors)
    assert snap["reset"] and snap["new"]["price"]["step"] == []
    assert (snap["counts"]["decisions"], snap["health"]["loop_step"], snap["decisions"]) == (0, 0, [])
    assert len([e for e in snap["events"] if "attached" in e["text"]]) == 2


def test_a_finished_report_fills_the_trades_with_their_decision_chain(tmp_path):
    report = tmp_path / "backtest"
    report.mkdir()
    decision = {"step": 3, "rl_action": "BUY", "rl_confidence": 0.6, "thought": None, "fusion_method": "rules", "fusion_rule": "no_thought",
                "rl_trust": 1.0, "llm_trust": 0.0, "final_action": "BUY", "veto_reason": ""}
    (report / "metrics.json").write_text(json.dumps({
        "net_pnl_usd": 120.0, "trades": 1.0, "evaluation_accounts": [{"index": 0, "outcome": "open", "reason": "data_end", "trading_days": 2, "net_pnl_usd": 120.0}],
        "trade_list": [{"env_id": 0, "trade_id": 1, "side": "long", "entry_price": 1.0, "exit_price": 2.0, "pnl_usd": 120.0,
                        "bars_held": 4, "exit_reason": "target", "entry_decision": decision, "exit_decision": None}]}))
    state = DashboardState()
    state.on_report(tmp_path)

    snap = state.snapshot({})
    assert snap["trades"][0]["why"] == "target" and snap["report"]["accounts"] == "open:1"
    assert snap["accounts"][0]["outcome"] == "open" and snap["accounts"][0]["steps"] == "(report)"
    assert state.chain_text(snap["trade_objects"][0]).startswith("entry step 3: RL BUY 0.60; no thought; fusion rules/no_thought")


def test_series_hands_a_late_reader_what_is_still_kept():
    series = Series(("x",), maxlen=3)
    for x in range(5):
        series.add(x)
    assert series.since(0) == ({"x": [2, 3, 4]}, 5)


def test_candles_come_from_the_bar_range_and_the_open_position_draws_entry_stop_and_target():
    state = DashboardState()
    state.on_message(obs(1, 101.0, bar_open=100.0, bar_high=102.0, bar_low=99.5))
    state.on_message(obs(2, 100.5, bar_open=101.0, bar_high=101.5, bar_low=100.0, position=1, contracts=1, entry_price=100.75,
                         stop_price=98.0, target_price=106.0))
    state.on_message(obs(3, 100.0, bar_open=100.5, bar_high=100.5, bar_low=99.0))

    snap = state.snapshot({})
    candles = snap["new"]["candles"]
    assert (candles["open"], candles["high"], candles["low"], candles["close"]) == ([100.0, 101.0, 100.5], [102.0, 101.5, 100.5],
                                                                                   [99.5, 100.0, 99.0], [101.0, 100.5, 100.0])
    assert candles["colour"][0] != candles["colour"][1]  # up and down bars differ
    position = snap["new"]["position"]
    assert position["step"] == [2, 3] and (position["entry"][0], position["stop"][0], position["target"][0]) == (100.75, 98.0, 106.0)
    assert all(v != v for v in (position["entry"][1], position["stop"][1], position["target"][1]))  # flat again: the lines break
    assert any(e["kind"] == "order" and "entered long 1 @ 100.75 stop 98.00 target 106.00" in e["text"] for e in snap["events"])


def test_a_sender_without_the_bar_range_gives_a_close_line_and_no_candles():
    state = DashboardState()
    state.on_message(obs(1, 101.0))
    snap = state.snapshot({})
    assert snap["new"]["price"]["price"] == [101.0] and snap["new"]["candles"]["step"] == []


def test_halted_steps_become_shaded_stretches_one_per_rule_and_run():
    state = DashboardState()
    for step, halt in ((1, ""), (2, "win_rate"), (3, "win_rate"), (5, "win_rate"), (6, ""), (7, "win_rate"), (8, "daily_loss")):
        state.on_message(verdict(step, HOLD, halt=halt))

    assert state.snapshot({})["halts"] == [{"start": 1.5, "end": 5.5, "rule": "win_rate"}, {"start": 6.5, "end": 7.5, "rule": "win_rate"},
                                           {"start": 7.5, "end": 8.5, "rule": "daily_loss"}]


def walk_obs(step: int, episode_id: int, balance: float) -> EnvObs:
    return EnvObs(env_ids=[0], episode_ids=[episode_id], step=step, obs=np.zeros((1, 261), np.float32), masks=np.ones((1, 6), bool),
                  contexts=[market_context(balance=balance)])


def test_the_evaluation_account_walk_follows_env_0s_episodes():
    state = DashboardState()
    state.set_rules(AccountRules("apex", 50_000.0, 3_000.0, 1_000.0))
    state.on_message(walk_obs(1, 0, 50_000.0))
    state.on_message(walk_obs(2, 0, 53_100.0))
    state.on_message(EnvEpisode(env_id=0, episode_id=0, steps=2, episode_return=1.0, metrics={"net_pnl_usd": 3_100.0, "apex_violations": 0.0}))
    state.on_message(walk_obs(3, 1, 50_000.0))
    state.on_message(walk_obs(4, 1, 47_400.0))
    state.on_message(EnvEpisode(env_id=0, episode_id=1, steps=2, episode_return=-1.0, metrics={"net_pnl_usd": -2_600.0, "apex_violations": 1.0}))
    state.on_message(walk_obs(5, 2, 50_000.0))
    state.on_message(walk_obs(6, 2, 50_250.0))

    snap = state.snapshot({})
    assert [(a["account"], a["outcome"], a["net"]) for a in snap["accounts"]] == [(2, "open", 250.0), (1, "failed", -2_600.0),
                                                                                 (0, "passed", 3_100.0)]
    assert snap["account_counts"] == {"passed": 1, "failed": 1, "ended": 0} and snap["open_accounts"] == 1
    lines = account_lines(snap)
    assert any("evaluation account 2 (open): net $250.00 of the $3,000 target   walk: passed 1 failed 1 ended 0 open 1" in line for line in lines)
    assert any("daily loss limit -$1,000" in line for line in lines)
    assert sum(e["kind"] == "account" for e in snap["events"]) == 2


def test_an_account_whose_episode_message_was_missed_is_judged_by_its_balance():
    state = DashboardState()
    state.set_rules(AccountRules("apex", 50_000.0, 3_000.0, 0.0))
    state.on_message(walk_obs(1, 0, 50_000.0))
    state.on_message(walk_obs(2, 0, 50_400.0))
    state.on_message(walk_obs(3, 1, 50_000.0))
    assert state.snapshot({})["accounts"][1]["outcome"] == "ended"


def hindsight(steps: list[int], labels: list[int]) -> EnvHindsight:
    n = len(steps)
    return EnvHindsight(env_ids=[0] * n, episode_ids=[0] * n, steps=steps, actions=np.array(labels), long_pnl_usd=np.zeros(n),
                        short_pnl_usd=np.zeros(n), long_exits=["time"] * n, short_exits=["time"] * n, long_bars=np.zeros(n, np.int64),
                        short_bars=np.zeros(n, np.int64))


def test_fusion_accuracy_scores_flat_decisions_with_a_thought_against_their_hindsight_labels():
    state = DashboardState()
    # step: (fused, RL, LLM) -> label
    plan = {1: ((BUY, BUY, SELL), BUY), 2: ((SELL, BUY, SELL), BUY), 3: ((SELL, SELL, SELL), SELL), 4: ((BUY, BUY, NO_ACTION), BUY)}
    for step, ((fused, rl, llm), _) in plan.items():
        state.on_message(obs(step, 100.0))
        decision = fusion(step, fused, "q" if llm != NO_ACTION else "", llm)
        state.on_message(FusionDecision(**{**{f: getattr(decision, f) for f in decision.__struct_fields__}, "rl_actions": np.array([rl])}))
    state.on_message(hindsight(list(plan), [label for _, label in plan.values()]))

    snap = state.snapshot({})
    assert snap["scores"] == {"scored": 3, "fused_hits": 2, "rl_hits": 3, "llm_hits": 1, "contested": 2, "chose_right": 1}
    assert snap["new"]["accuracy"] == {"labels": [3], "chose_right": [0.5], "fused": [2 / 3], "rl": [1.0], "llm": [1 / 3]}
    assert snap["new"]["trust"]["rl_trust"] == [0.6] * 4
    assert learning_lines(snap)[0].startswith("fusion chose the right source 0.50 of 2   fused = label 0.67 of 3")


def test_the_events_table_filters_by_kind_and_text():
    state = DashboardState()
    state.on_message(proposal(1, BUY))
    state.on_message(fusion(1, BUY))
    state.on_message(verdict(1, HOLD, vetoed=True, reason="max_consecutive_losses", halt="consecutive_losses"))
    state.on_log({"event": "think_failed", "actor": "reasoner", "level": "error"})

    assert {e["kind"] for e in state.snapshot({}, event_kinds={"veto", "error"})["events"]} == {"veto", "error"}
    assert [e["kind"] for e in state.snapshot({}, event_kinds={"halt"})["events"]] == ["halt"]
    assert state.snapshot({}, "reasoner", {"veto"})["events"] == []


def report_trade(trade_id: int, entry_step: int, bars: int, pnl: float, exit_decision: bool = True) -> dict:
    decision = {"rl_action": "BUY", "rl_confidence": 0.6, "thought": None, "fusion_method": "rules", "fusion_rule": "no_thought",
                "rl_trust": 1.0, "llm_trust": 0.0, "final_action": "BUY", "veto_reason": ""}
    return {"env_id": 0, "trade_id": trade_id, "side": "long", "entry_price": 100.0, "exit_price": 101.0, "pnl_usd": pnl,
            "bars_held": bars, "exit_reason": "signal" if exit_decision else "stop", "entry_decision": {**decision, "step": entry_step},
            "exit_decision": {**decision, "step": entry_step + bars} if exit_decision else None}


def test_the_report_is_read_where_the_runs_settings_put_it_a_backtests_before_a_paper_runs(tmp_path):
    for folder, trade_id in (("bt", 7), ("backtest", 1), ("live/report", 9)):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "metrics.json").write_text(json.dumps({"trade_list": [report_trade(trade_id, 3, 2, 5.0)]}))
    moved, paper = DashboardState(), DashboardState()
    moved.on_report(tmp_path, RunView(env=EnvReportsView(report_dir="bt")))
    paper.on_report(tmp_path, RunView(env=EnvReportsView(report_dir="none", paper_dir="live")))

    assert [t.trade_id for t in moved.snapshot({})["trade_objects"]] == [7]
    assert [t.trade_id for t in paper.snapshot({})["trade_objects"]] == [9]


def test_a_finished_run_draws_its_trades_its_realised_equity_and_its_rebuilt_bars(tmp_path):
    (tmp_path / "backtest").mkdir()
    (tmp_path / "backtest" / "metrics.json").write_text(json.dumps({"trade_list": [report_trade(1, 3, 2, 50.0),
                                                                                   report_trade(2, 8, 4, -20.0, exit_decision=False)]}))
    state = DashboardState()
    state.attach(str(tmp_path), "backtest", "logs (finished run)")
    state.set_rules(AccountRules(start_balance=50_000.0))
    state.on_report(tmp_path)
    n = MAX_POINTS + 500
    state.on_market(MarketHistory(0, [100.0] * n, [102.0] * n, [99.0] * n, [101.0] * n, "(test)"))

    snap = state.snapshot({})
    marks = snap["new"]["marks"]
    assert (marks["step"], marks["trade"]) == ([3, 5, 8, 12], [1, 1, 2, 2])  # the stopped trade: its exit at entry + bars held
    assert snap["new"]["equity"]["step"] == [5, 12] and snap["new"]["equity"]["equity"] == [50_050.0, 50_030.0]
    price = snap["new"]["price"]["step"]
    assert price[0] == 0 and price[-1] >= n - 2 and len(price) <= MAX_POINTS  # the whole run, sampled
    assert snap["new"]["candles"]["step"] == list(range(n - MAX_CANDLES, n))
    assert any("rebuilt from the run's data" in e["text"] for e in snap["events"])


def test_a_run_drawn_from_the_bus_keeps_its_chart_when_its_report_arrives(tmp_path):
    (tmp_path / "backtest").mkdir()
    (tmp_path / "backtest" / "metrics.json").write_text(json.dumps({"trade_list": [report_trade(1, 3, 2, 50.0)]}))
    state = DashboardState()
    state.on_message(obs(1, 100.0))
    state.on_report(tmp_path)
    state.on_market(MarketHistory(0, [1.0] * 10, [1.0] * 10, [1.0] * 10, [1.0] * 10))

    snap = state.snapshot({})
    assert snap["new"]["price"]["price"] == [100.0] and snap["new"]["marks"]["step"] == []
    assert snap["trades"][0]["trade"] == 1
