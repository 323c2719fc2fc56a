import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter

import numpy as np

from actors.common.actions import ACTION_NAMES, BUY, HOLD, SELL
from actors.lora.experience import Experience
from actors.lora.store import ExperienceStore, balanced_by_action, is_held_out, systematic_draws


def experience(n, pnl=0.0, action=0):
    return Experience(id=f"e-{n}", messages=[{"role": "user", "content": f"q{n}"}], mask=(True,) * 6,
                      target=f"{ACTION_NAMES[action]} | 0.80 | quiet", action=action, pnl_usd=pnl, source="trade")


def store(path, max_experiences=100, held_out=0.2, balance_actions=False):
    return ExperienceStore(path, max_experiences=max_experiences, held_out_fraction=held_out, min_weight_usd=1.0,
                           balance_actions=balance_actions)


def test_experiences_read_back_and_a_duplicate_id_is_ignored(tmp_path):
    s = store(tmp_path / "x.sqlite")

    added = s.add([experience(1), experience(2)]) + s.add([experience(1)])

    assert added == 2
    assert [e.id for e in s.all()] == ["e-1", "e-2"]
    assert s.all()[0] == experience(1)


def test_the_oldest_experiences_are_evicted_beyond_the_bound(tmp_path):
    s = store(tmp_path / "x.sqlite", max_experiences=3)

    s.add([experience(n) for n in range(5)])

    assert s.ids() == ["e-2", "e-3", "e-4"] and s.evicted == 2


def test_held_out_is_a_stable_share_by_id_and_never_sampled(tmp_path):
    s = store(tmp_path / "x.sqlite", max_experiences=1000)
    s.add([experience(n) for n in range(400)])

    held = {e.id for e in s.all(held_out=True)}
    sampled = {e.id for e in s.sample(500, np.random.default_rng(0))}

    assert 40 <= len(held) <= 120
    assert held == {f"e-{n}" for n in range(400) if is_held_out(f"e-{n}", 0.2)}
    assert not held & sampled


def test_sampling_favours_large_outcomes(tmp_path):
    s = store(tmp_path / "x.sqlite", held_out=0.01)
    s.add([experience(n, pnl=1000.0 if n == 0 else 0.0) for n in range(20)])

    picks = [e.id for e in s.sample(1000, np.random.default_rng(1))]

    assert picks.count("e-0") > 800  # weight 1001 against 19 x 1


def rising_days(path, balance_actions):
    """80 BUY targets, 12 SELL, 8 HOLD: what a run on rising days labels."""
    s = store(path, max_experiences=1000, held_out=0.01, balance_actions=balance_actions)
    s.add([experience(n, pnl=50.0, action=BUY if n < 80 else SELL if n < 92 else HOLD) for n in range(100)])
    return s


def test_balanced_sampling_draws_every_target_action_equally_often(tmp_path):
    drawn = Counter(e.action for e in rising_days(tmp_path / "b.sqlite", True).sample(3000, np.random.default_rng(2)))
    plain = Counter(e.action for e in rising_days(tmp_path / "p.sqlite", False).sample(3000, np.random.default_rng(2)))

    assert all(850 <= drawn[action] <= 1150 for action in (BUY, SELL, HOLD)), drawn
    assert plain[BUY] > 2200, plain


def test_balanced_weights_keep_the_outcome_order_within_an_action():
    weights = balanced_by_action(np.array([1.0, 3.0, 10.0, 2.0]), np.array([BUY, BUY, SELL, HOLD]))

    assert np.allclose(weights / weights.sum(), np.array([0.25, 0.75, 1.0, 1.0]) / 3)


def test_a_rare_action_keeps_its_own_share_of_the_draws_and_the_common_ones_split_the_rest():
    # market history: 1 % HOLD, BUY and SELL 55 / 44; equal shares would draw HOLD a third of the time
    actions = np.array([HOLD] * 1 + [BUY] * 55 + [SELL] * 44)
    weights = balanced_by_action(np.ones(len(actions)), actions)
    mass = {action: weights[actions == action].sum() / weights.sum() for action in (HOLD, BUY, SELL)}

    assert np.isclose(mass[HOLD], 0.01) and np.isclose(mass[BUY], 0.495) and np.isclose(mass[SELL], 0.495)


def test_every_balanced_batch_holds_the_two_sides_in_equal_numbers_where_independent_draws_do_not(tmp_path):
    # market history: BUY 55 %, SELL 44 %, HOLD 1 %; batches of 4 as the trainer draws them
    s = store(tmp_path / "m.sqlite", max_experiences=1000, held_out=0.01, balance_actions=True)
    s.add([experience(n, action=HOLD if n < 2 else BUY if n < 112 else SELL) for n in range(200)])
    rng = np.random.default_rng(3)

    batches = [Counter(e.action for e in s.sample(4, rng)) for _ in range(500)]

    assert all(b[BUY] == b[SELL] == 2 or (b[HOLD] == 1 and {b[BUY], b[SELL]} == {1, 2}) for b in batches), batches
    lopsided = sum(abs(b[BUY] - b[SELL]) >= 2 for b in
                   (Counter(int(a) for a in rng.choice([BUY, SELL], size=4)) for _ in range(500)))
    assert lopsided > 150  # independent draws: 3-1 or 4-0 in 5 of 8 batches


def test_systematic_draws_keep_each_rows_expected_count():
    weights, actions = np.array([1.0, 3.0, 2.0, 2.0]), np.array([SELL, BUY, SELL, BUY])
    rng = np.random.default_rng(4)

    counts = np.bincount(np.concatenate([systematic_draws(weights, actions, 4, rng) for _ in range(4000)]), minlength=4)

    assert np.allclose(counts / counts.sum(), weights / weights.sum(), atol=0.01), counts


def test_nothing_acknowledged_is_lost_when_the_writer_is_killed(tmp_path):
    path = tmp_path / "x.sqlite"
    child = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.getcwd()!r})
        from tests.actors.lora.test_store import experience, store
        s = store({str(path)!r}, max_experiences=10_000)
        n = 0
        while True:
            s.add([experience(n), experience(n + 1)])
            print(n + 1, flush=True)  # the acknowledgement: add() has returned
            n += 2
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    acknowledged = -1
    for line in proc.stdout:
        acknowledged = int(line)
        if acknowledged >= 301:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    reopened = store(path, max_experiences=10_000)

    ids = set(reopened.ids())
    assert all(f"e-{n}" in ids for n in range(acknowledged + 1))


def test_level_balanced_sampling_draws_every_risk_level_equally_from_the_training_side_only(tmp_path):
    """teach = risk: 60 % CALM, 36 % ELEVATED, 4 % EXTREME on the training side (EXTREME under the rare-action share,
    still drawn a third of the time), a level-less experience never drawn, the held-out side never drawn."""
    import dataclasses

    levels = [0] * 60 + [1] * 36 + [2] * 4
    training = [dataclasses.replace(experience(i, 10.0 * (i % 7), BUY if i % 3 else SELL),
                                    meta={"risk_level": level, "held_out": False}) for i, level in enumerate(levels)]
    no_level = dataclasses.replace(experience(500, 1000.0), meta={"held_out": False})
    unknown = dataclasses.replace(experience(501, 1000.0), meta={"risk_level": -1, "held_out": False})
    held = [dataclasses.replace(experience(600 + i, 1000.0), meta={"risk_level": 2, "held_out": True}) for i in range(20)]
    s = ExperienceStore(tmp_path / "l.sqlite", max_experiences=1000, held_out_fraction=0.2, min_weight_usd=1.0,
                        balance_actions=True, balance_levels=True)
    s.add([*training, no_level, unknown, *held])

    batches = [s.sample(6, np.random.default_rng(seed)) for seed in range(200)]
    drawn = Counter(e.meta.get("risk_level") for batch in batches for e in batch)
    assert set(drawn) == {0, 1, 2} and all(drawn[level] == 400 for level in (0, 1, 2)), drawn
    assert all(Counter(e.meta["risk_level"] for e in batch) == {0: 2, 1: 2, 2: 2} for batch in batches)
    assert not any(e.meta.get("held_out") for batch in batches for e in batch)
    sides = Counter(e.action for batch in batches for e in batch if e.meta["risk_level"] == 0)
    assert abs(sides[BUY] - sides[SELL]) < 0.2 * (sides[BUY] + sides[SELL]), sides  # 2:1 stored, balanced per level

    plain = ExperienceStore(tmp_path / "p.sqlite", max_experiences=1000, held_out_fraction=0.2, min_weight_usd=1.0,
                            balance_actions=True)
    plain.add(training)
    assert Counter(e.meta["risk_level"] for e in plain.sample(3000, np.random.default_rng(1)))[2] < 300
