"""What the reader takes from a run directory besides the bus."""

import json
import threading
import time
from pathlib import Path

import pandas as pd

from actors.dashboard.config import DashboardConfig
from actors.dashboard.source import Reader, account_rules, resolve_target, run_view
from actors.dashboard.state import MAX_CANDLES, DashboardState
from actors.env.factory import load_dataset
from actors.jobs.config import load_config
from actors.jobs.dashboard import bar_offset, market_history
from config.tree import dump_toml


def test_the_account_rules_come_from_the_runs_config_with_the_preset_resolved(tmp_path):
    (tmp_path / "config.toml").write_text('[account]\npreset = "apex_eod_50k"\n')
    rules = account_rules(run_view(tmp_path))
    assert (rules.name, rules.start_balance, rules.profit_target, rules.daily_loss_limit) == ("apex_eod_50k", 50_000.0, 3_000.0, 1_000.0)


def test_an_unreadable_config_gives_no_rules_and_no_error(tmp_path):
    (tmp_path / "config.toml").write_text('[account]\npreset = "nope"\n')
    assert account_rules(run_view(tmp_path)).profit_target == 0.0
    assert account_rules(run_view(tmp_path / "missing")).start_balance == 0.0


def finished_backtest(run_dir: Path, steps: int, trade_steps: tuple[int, ...]) -> tuple[list[float], int]:
    """A finished backtest's run directory as the runtime leaves it (config.toml, a report, logs, a dead bus.json);
    returns the closes of the bars its loop steps walked and the first bar's index."""
    config = load_config(overrides={"env.mode": "backtest", "env.split": "test"})
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.toml").write_text(dump_toml(config))
    (run_dir / "logs").mkdir()
    (run_dir / "bus.json").write_text(json.dumps({"xsub": f"ipc://{run_dir}/xsub", "xpub": f"ipc://{run_dir}/xpub"}))
    dataset = load_dataset(config)
    first = dataset.split("test").start
    minutes = pd.DatetimeIndex(dataset.index).tz_convert("America/New_York").strftime("%Y-%m-%d %H:%M")
    trades = [{"env_id": 0, "trade_id": i, "side": "long", "entry_time_et": minutes[first + step + 1],
               "entry_price": float(dataset.open[first + step + 1]), "exit_price": float(dataset.close[first + step + 3]),
               "pnl_usd": 10.0, "bars_held": 2, "exit_reason": "signal", "entry_decision": {"step": step}, "exit_decision": None}
              for i, step in enumerate(trade_steps)]
    (run_dir / "backtest").mkdir()
    (run_dir / "backtest" / "metrics.json").write_text(json.dumps({"loop_steps": steps, "trade_list": trades}))
    return dataset.close[first: first + steps + 1].tolist(), first


def test_a_finished_backtest_is_drawn_from_its_rebuilt_bars_placed_on_loop_steps_by_its_trades(tmp_path):
    closes, _ = finished_backtest(tmp_path / "run", steps=400, trade_steps=(20, 150))
    state = DashboardState()
    reader = Reader(resolve_target(tmp_path / "run", None), state, DashboardConfig(attach_timeout_secs=0.2), bars=market_history)
    for _ in range(3):  # what the reader thread does: open the run, find its bus dead, read its logs and report
        reader._pass()

    snap = state.snapshot({})
    price = snap["new"]["price"]
    assert price["step"] == list(range(401)) and price["price"] == closes
    assert snap["new"]["candles"]["close"] == closes[-MAX_CANDLES:]
    assert snap["new"]["marks"]["step"] == [20, 22, 150, 152]
    assert snap["health"]["source"].startswith("logs")


def test_the_bar_of_step_0_is_the_one_most_trades_agree_on():
    trades = [{"env_id": 0, "entry_time_et": "a", "entry_decision": {"step": 5}}, {"env_id": 0, "entry_time_et": "b", "entry_decision": {"step": 9}},
              {"env_id": 0, "entry_time_et": "c", "entry_decision": {"step": 1}}, {"env_id": 1, "entry_time_et": "c", "entry_decision": {"step": 0}}]
    assert bar_offset(trades, {"a": 106, "b": 110, "c": 900}) == 100
    assert bar_offset([], {}) is None


def test_a_training_run_has_no_bars_to_rebuild_and_says_why(tmp_path):
    (tmp_path / "config.toml").write_text("")
    history, why = market_history(tmp_path)
    assert history is None and "only a finished backtest" in why


def _verdict(step: int):
    import numpy as np

    from bus.messages import RiskVerdict

    return RiskVerdict(env_ids=[0], step=step, actions=np.array([0]), vetoed=[False], reasons=[""], degraded=[False], halts=[""])


def _publish_verdicts(publisher, count: int, pause_secs: float, first_step: int = 0) -> None:
    for step in range(first_step, first_step + count):
        publisher.publish(_verdict(step))
        time.sleep(pause_secs)


def _passes(reader, state, count: int) -> list[bool]:
    """``count`` reader passes (a drain, then the pass's pause); whether each ended sampling."""
    sampling = []
    for _ in range(count):
        reader.drain(state)
        sampling.append(reader.sampling)
        time.sleep(0.2)
    return sampling


def test_a_fast_loop_is_received_in_windows_and_a_paced_one_frame_by_frame(tmp_path):
    from actors.dashboard.source import BusReader
    from bus.broker import Broker, bind_addresses, make_socket_dir
    from bus.client import SyncBus

    broker = Broker(bind_addresses("ipc", "127.0.0.1", 0, 0, make_socket_dir()))
    stop = threading.Event()
    serving = threading.Thread(target=broker.serve_until, args=(stop,), daemon=True)
    serving.start()
    publisher = SyncBus(broker.addresses, sender="risk")
    try:
        reader, state = BusReader(broker.addresses, sender="dashboard"), DashboardState()
        time.sleep(0.3)  # the reader's subscription reaches the broker
        reader.drain(state)
        # A burst far above 3 x hot_steps_per_sec (60 a second) within one pass: the reader starts sampling.
        _publish_verdicts(publisher, 300, 0.0)
        time.sleep(0.3)
        reader.drain(state)
        assert reader.sampling and reader.frames == 300
        decided = state.counts["decisions"]
        # While the loop runs fast, only the windows' frames cross the broker (30 ms of each pass of about 230 ms).
        fast = threading.Thread(target=_publish_verdicts, args=(publisher, 2000, 0.0005, 300))
        fast.start()
        while fast.is_alive():
            _passes(reader, state, 1)
        assert reader.frames - 300 < 2000 / 2
        assert state.counts["decisions"] > decided  # the newest of each window decoded
        # The loop stopped: an empty window, and every frame is received again.
        assert any(not _passes(reader, state, 1)[0] for _ in range(50)), "still sampling 50 passes after the loop stopped"
        reader.close()

        paced_reader, paced_state = BusReader(broker.addresses, sender="dashboard"), DashboardState()
        time.sleep(0.3)
        paced = threading.Thread(target=_publish_verdicts, args=(publisher, 15, 0.2, 5000))
        paced.start()
        sampling = []
        while paced.is_alive():
            sampling += _passes(paced_reader, paced_state, 1)
        sampling += _passes(paced_reader, paced_state, 2)
        # Five a second (a lockstep run): every decision is kept, so a clicked trade shows its whole chain.
        assert not any(sampling)
        assert paced_state.counts["decisions"] == 15
        paced_reader.close()
    finally:
        publisher.close()
        stop.set()
        serving.join(10)
