"""Halts that end: each entry veto stops when its rule says, and none locks an account out."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from actors.common.actions import BUY, HOLD
from actors.risk.config import RiskConfig
from actors.risk.halts import Halts
from actors.risk.rules import RiskRules
from tests.actors.risk.risk_inputs import FLAT_MASK, NQ_LIMITS, context

HALT_RULES = ("account_guard", "daily_loss_limit", "consecutive_losses", "drawdown_buffer", "win_rate")
CONFIG = RiskConfig(consecutive_losses_cooldown_bars=5, win_rate_cooldown_bars=7)


def halts() -> Halts:
    return Halts(CONFIG, RiskRules(CONFIG, NQ_LIMITS))


def run(book: Halts, steps: range, trades: int = 0, **fields) -> list[str]:
    return [book.update(0, step, context(**fields), trades=trades) for step in steps]


def run_then_trade(book: Halts, steps: range, trades: int, after: dict | None = None, **fields) -> tuple[list[str], str]:
    """The halt in force over ``steps``, then the one at the next step once another trade has closed
    (with ``after`` changing the context fields for that step)."""
    in_force = run(book, steps, trades=trades, **fields)
    after_trade = book.update(0, steps.stop, context(**{**fields, **(after or {})}), trades=trades + 1)
    return in_force, after_trade


def test_a_losing_streak_halts_for_its_cooldown_then_re_arms_only_on_a_new_loss():
    book = halts()

    in_force, after_new_loss = run_then_trade(book, range(0, 12), trades=3, after=dict(consecutive_losses=4), consecutive_losses=3, session_id=1)

    assert in_force == ["consecutive_losses"] * 5 + [""] * 7
    assert after_new_loss == "consecutive_losses"


def test_a_thin_drawdown_buffer_halts_to_the_end_of_the_day_and_re_arms_on_a_new_trade():
    book = halts()
    thin = dict(drawdown_buffer=100.0, atr=0.1)

    day_one = run(book, range(0, 4), trades=2, session_id=1, **thin)
    day_two, after_trade = run_then_trade(book, range(4, 6), trades=2, session_id=2, **thin)

    assert day_one == ["drawdown_buffer"] * 4 and day_two == ["", ""]
    assert after_trade == "drawdown_buffer"


def test_a_poor_win_rate_halts_for_its_cooldown_then_waits_for_a_new_trade():
    book = halts()

    in_force, after_trade = run_then_trade(book, range(0, 10), trades=6, win_rate=0.2, session_id=1)

    assert in_force == ["win_rate"] * 7 + [""] * 3
    assert after_trade == "win_rate"


def test_the_daily_loss_limit_halts_until_the_next_trading_day():
    book = halts()

    day_one = run(book, range(0, 3), daily_pnl=-1_000.0, session_id=1)
    day_two = run(book, range(3, 5), daily_pnl=0.0, session_id=2)

    assert day_one == ["daily_loss_limit"] * 3 and day_two == ["", ""]


def test_the_guards_entry_check_halts_to_the_end_of_the_day_and_re_arms_on_a_new_trade():
    book = halts()
    thin = dict(drawdown_buffer=400.0, trailing_limit=0.0)  # an entry could lose $415 on its first bar

    day_one = run(book, range(0, 2), session_id=1, **thin)
    day_two, after_trade = run_then_trade(book, range(2, 4), trades=0, session_id=2, **thin)

    assert day_one == ["account_guard"] * 2 and day_two == ["", ""]
    assert after_trade == "account_guard"


def test_a_halt_started_while_flat_holds_in_a_position_but_none_starts_there():
    book = halts()

    in_position = run(book, range(0, 2), position=1, contracts=1, consecutive_losses=3, session_id=1)

    assert in_position == ["", ""]


def test_without_a_session_id_a_day_long_halt_ends_after_the_fallback_bars():
    config = RiskConfig(session_halt_fallback_bars=3)
    book = Halts(config, RiskRules(config, NQ_LIMITS))

    in_force = [book.update(0, step, context(daily_pnl=-1_000.0)) for step in range(4)]

    assert in_force[:3] == ["daily_loss_limit"] * 3 and in_force[3] == "daily_loss_limit"  # the condition holds again
    assert [spell.rule for spell in book.spells] == ["daily_loss_limit"]


def test_a_halt_replaces_the_context_vetoes_in_the_review():
    rules = RiskRules(CONFIG, NQ_LIMITS)
    losing = context(consecutive_losses=5)

    assert rules.review(BUY, FLAT_MASK, losing, halt="").action == BUY  # its cooldown is over
    assert rules.review(BUY, FLAT_MASK, context(), halt="win_rate").reason == "win_rate"
    assert rules.review(BUY, FLAT_MASK, losing).reason == "consecutive_losses"  # without halts: as before


# ---------------------------------------------------------------- a policy that enters whenever flat


def play_always_enter():
    """The env over the default config's test split, in process: enter whenever flat, the real rules and halts."""
    from actors.env.batch import EnvBatch
    from actors.env.env import FuturesTradingEnv
    from actors.env.factory import load_dataset
    from actors.common.instruments import resolve_instrument
    from actors.risk.actor import account_limits
    from bus.messages import MarketContext
    from actors.jobs.config import load_config

    config = load_config()
    dataset = load_dataset(config)
    env = FuturesTradingEnv(dataset.split("test"), resolve_instrument(config.instrument), config.account, config.env)
    batch = EnvBatch([env], mode="backtest")
    batch.reset()
    rules = RiskRules(config.risk, account_limits(config))
    book = Halts(config.risk, rules)
    trades: dict[int, int] = defaultdict(int)
    steps = []
    step = 0
    while not batch.finished:
        (raw,) = batch.contexts([0])
        ctx = MarketContext(**raw)
        _, masks = batch.observations([0])
        episode = env.episode_id
        halt = book.update(0, step, ctx, episode, trades[episode])
        proposed = BUY if ctx.position == 0 and masks[0][BUY] else HOLD
        review = rules.review(proposed, masks[0], ctx, trades[episode], halt)
        result = batch.step([0], np.array([review.action]), step)
        for closed in result.closed_trades:
            trades[closed.episode_id] += 1
        steps.append((ctx.session_id, proposed, halt, review.reason, int(result.actions[0])))
        step += 1
    return config, steps, book, batch


def test_a_policy_that_enters_whenever_flat_trades_every_session_but_those_a_stated_rule_halts():
    _, steps, _, batch = play_always_enter()

    by_session: dict[int, list] = defaultdict(list)
    for row in steps:
        by_session[row[0]].append(row)
    traded = [any(executed == BUY for *_, executed in rows) for rows in by_session.values()]
    for (session, rows), entered in zip(by_session.items(), traded, strict=True):
        refused = {reason for _, proposed, halt, reason, _ in rows if proposed == BUY and reason}
        # a session without an entry is one whose every wanted entry a stated halt refused
        assert entered or refused <= set(HALT_RULES) and all(halt for _, proposed, halt, _, _ in rows if proposed == BUY), session
    assert sum(traded) >= len(traded) // 2
    assert not any(not a and not b for a, b in zip(traded, traded[1:])), traded  # never two idle sessions in a row
    assert len(batch.evaluations(0)) >= 2  # a walk of evaluation accounts, not one that idles to the end


def test_each_halt_of_the_always_entering_policy_ends_when_its_rule_says():
    config, steps, book, _ = play_always_enter()
    cooldown = {"consecutive_losses": config.risk.consecutive_losses_cooldown_bars, "win_rate": config.risk.win_rate_cooldown_bars}

    for spell in book.spells:
        if spell.rule in cooldown:
            assert spell.end_step - spell.start_step == cooldown[spell.rule]
        else:  # ends with the trading day: the first step of a later day
            assert spell.end_session > spell.start_session
            assert steps[spell.end_step - 1][0] == spell.start_session and steps[spell.end_step][0] == spell.end_session
