"""``bin/run evaluate --gate-walk``: the account walk through the running actors over the whole test window, once per
risk gate, on the same test days (issue 53: does the LLM's read of how dangerous the next minutes are keep a prop-firm
account alive better than the calendar blackout?).

The arms (GATES), each a backtest of the last fold's policy (first seed, last budget, frozen as tested) through the
actors over every bar of that fold's test window, one account walking consecutive prop-firm evaluations (a new one
after each pass or fail, actors/env/account_walk.py):

- ``none``: no gate;
- ``blackout``: the prop-firm calendar rule (risk.news_blackout_enabled: no entry from 2 minutes before to 2 after a
  high-importance release, on the market's clock: actors/risk/news.py);
- ``keyword``: the keyword gate (risk.keyword_gate_enabled: no entry for 15 minutes after an event whose md.event words
  the project's keyword risk rule reads as a dangerous tier and size, actors/risk/event_gates.py), no model;
- ``oracle``: the oracle gate (risk.oracle_gate_enabled: the same, for the events whose TRUE tier and surprise size are
  dangerous; backtest only). Both tables are fitted on the fold's training days (``event_gate_settings``): the keys
  whose hindsight level (the next 15 bars' range in ATR, actors/common/news_risk.py) is ELEVATED or more;
- ``llm``: the LLM's gate (risk.thought_risk_gate = stand_aside: no entry for the minutes a read at or above
  risk.thought_risk_min_level names, actors/risk/thought_gate.py), in lockstep with the reasoner (WALK_THINKING: its
  risk read on, one thought per event made public and one on each new episode's first bar, no timer thoughts; a quiet
  bar is answered at once by the env's latest thought, aged from the bar its prompt read).

Every arm fuses by ``rl_only``: the LLM's only part is the gate, so the arms differ in the gate alone. The arms
without the LLM run without the reasoner (env.thought_lag_steps = 0), minutes instead of hours.

Per arm, from its report's metrics.json (``walk_figures``): evaluations failed and passed; the daily P&L (the net $ of
the trades closed in each test session, 0 for a session without one), its mean, the net P&L, the worst 5 % day
(5th percentile) and the maximum drawdown of the cumulative daily P&L, each with a 95 % bootstrap interval over the
days (moving blocks of BLOCK_DAYS: a drawdown is a path). ``compare`` pairs two arms day by day (the same days
resampled for both): each gate minus none and minus blackout, the LLM minus the keyword and oracle gates. Beside them, the llm arm's thoughts' real age.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from actors.common.news_risk import ELEVATED, LevelTable, bucket, fit_thresholds, forward_range_atr, oracle_key
from actors.common.statistics import bootstrap_indices
from actors.env.dataset import Dataset
from actors.jobs.evaluation.decision_sources import finite_or_none
from actors.jobs.evaluation.thought_ages import ages_text
from actors.jobs.evaluation.walkforward import WalkForward
from actors.risk.event_gates import event_key, keyword_reading

WALK_DIR = "gate-walk"
WALK_THINKING = {"reasoner.risk_read": True, "reasoner.think_on": "events", "reasoner.think_every_bars": 100_000}
"""The llm arm's reasoner: a thought when an event comes out (and on a new episode's first bar), none on a timer: a
quiet bar then costs the loop's own hop (about 10 ms), not a model call (9-10 s each on 2 loaded cores)."""
WITHOUT_LLM = {"env.thought_lag_steps": 0}
"""No lockstep: run_backtest leaves the reasoner out of a reproducible run that does not wait for thoughts."""
GATES: dict[str, tuple[str, dict[str, Any]]] = {
    "none": ("no gate", WITHOUT_LLM),
    "blackout": ("calendar blackout (T-2..T+2 min, high releases)", {**WITHOUT_LLM, "risk.news_blackout_enabled": True}),
    "keyword": ("keyword gate (15 min after an event its words read dangerous)", {**WITHOUT_LLM, "risk.keyword_gate_enabled": True}),
    "oracle": ("oracle gate (15 min after an event whose true tier and size are dangerous)",
               {**WITHOUT_LLM, "risk.oracle_gate_enabled": True}),
    "llm": ("the LLM's gate (stand aside for the minutes its read names)", {**WALK_THINKING, "risk.thought_risk_gate": "stand_aside"}),
}
"""Arm name -> (title, settings laid over the walk's)."""
PAIRS = (("llm", "blackout"), ("llm", "none"), ("llm", "keyword"), ("llm", "oracle"), ("keyword", "blackout"), ("keyword", "none"),
         ("oracle", "blackout"), ("oracle", "none"), ("oracle", "keyword"), ("blackout", "none"))
"""The paired differences printed, each where both arms were walked."""
BLOCK_DAYS = 5
"""The moving-block bootstrap's block (days): a drawdown runs over days."""
REPS = 2000
WORST_DAY_PERCENTILE = 5.0
RISK_COUNTERS = ("veto_thought_risk", "thought_risk_reads", "news_releases", "news_steps", "veto_news_blackout",
                 "keyword_risk_windows", "veto_keyword_risk", "oracle_risk_windows", "veto_oracle_risk", "vetoes")
"""The risk actor's counters that say how often each gate acted (its last stats line, actor_stopped)."""
LEVELS = {-1: "none", 0: "CALM", 1: "ELEVATED", 2: "EXTREME"}


def gate_counts(run_dir: Path) -> dict[str, float]:
    """How often the arm's gate acted (the risk actor's RISK_COUNTERS) and, with the reasoner, the model's reads
    (``reads_CALM`` ...: its own thoughts, not the answers carried to quiet bars); {} without logs."""
    counts: dict[str, float] = {}
    for actor, pick in (("risk", _risk_counts), ("reasoner", _read_counts)):
        log = run_dir / "logs" / f"{actor}.jsonl"
        if log.is_file():
            counts.update(pick(log.read_text().splitlines()))
    return counts


def _entries(lines: list[str]):
    for line in lines:
        try:
            yield json.loads(line)
        except ValueError:
            continue


def _risk_counts(lines: list[str]) -> dict[str, float]:
    last = {}
    for entry in _entries(lines):
        if entry.get("event") == "actor_stopped":
            last = entry
    return {key: float(last.get(key, 0)) for key in RISK_COUNTERS} if last else {}


def _read_counts(lines: list[str]) -> dict[str, float]:
    counts = {f"reads_{name}": 0.0 for name in LEVELS.values()}
    for entry in _entries(lines):
        if entry.get("event") == "thought" and not entry.get("cached"):
            counts[f"reads_{LEVELS.get(int(entry.get('risk', -1)), 'none')}"] += 1
    return counts


def check_gates(names: list[str]) -> list[str]:
    """The arms asked for, in GATES' order; a ValueError names an unknown one."""
    unknown = [name for name in names if name not in GATES]
    if unknown:
        raise ValueError(f"--gate-walk takes arms among {', '.join(GATES)}; got {', '.join(unknown)}")
    return [name for name in GATES if name in names]


def walk_gates(names: list[str], has_events: bool, market: str) -> list[str]:
    """evaluate --gate-walk's arms (none given: every one); a JobError for a market without events or an unknown arm."""
    from actors.jobs.common import JobError

    if not has_events:
        raise JobError(f"evaluate --gate-walk needs a market with events (news, news_null, news_drift), got {market}")
    try:
        return check_gates(names or list(GATES))
    except ValueError as exc:
        raise JobError(str(exc)) from None


def event_gate_settings(dataset: Dataset, train_days: tuple[int, int], test_start_day: int) -> dict[str, Any]:
    """The keyword and oracle gates' settings fitted on the training days ``[start, stop)``, as the project's risk
    floors are (actors/common/news_risk.py): the hindsight level of each event bar (thresholds: the training bars'
    range quantiles), the most common level per key (LevelTable, events of held-out templates left out as the
    keyword rule's fit leaves them), the keys at ELEVATED or more. The keyword gate gets its "tier:size" keys; the
    oracle gate the ids of the test window's events whose TRUE tier and surprise size read a dangerous key."""
    truth, events = dataset.event_truth, list(dataset.events)
    starts = np.asarray(dataset.session_starts, dtype=np.int64)
    first, stop, test = (int(starts[day]) for day in (*train_days, test_start_day))
    highs, lows, closes = (np.asarray(getattr(dataset, k), dtype=np.float64) for k in ("high", "low", "close"))
    thresholds = fit_thresholds(forward_range_atr(highs, lows, closes, np.arange(max(first, 1), stop)))
    bars = np.asarray(truth["event_bar"], dtype=np.int64)
    labels = bucket(forward_range_atr(highs, lows, closes, bars), thresholds)
    held = np.asarray(truth.get("template_held_out", ()), dtype=bool)
    held = held if len(held) == len(events) else np.zeros(len(events), bool)
    rows = np.flatnonzero((bars >= first) & (bars < stop) & (labels >= 0) & ~held)
    keyword = [keyword_reading(event) for event in events]
    oracle = ["{}:{}".format(*oracle_key(event, z)) for event, z in zip(events, np.asarray(truth["surprise"]).tolist())]
    dangerous = {}
    for name, keys in (("keyword", keyword), ("oracle", oracle)):
        table = LevelTable([keys[i] for i in rows], labels[rows])
        dangerous[name] = {key for key, level in table.table.items() if level >= ELEVATED}
    return {"risk.keyword_gate_keys": sorted(dangerous["keyword"]),
            "risk.oracle_gate_event_ids": [event_key(events[i]) for i in np.flatnonzero(bars >= test) if oracle[i] in dangerous["oracle"]]}


def daily_pnl(metrics: dict) -> tuple[list[str], np.ndarray]:
    """Every test session's date and the net $ of the trades closed in it (a backtest report's metrics.json): the
    account's P&L whatever evaluation it was in (the report's equity restarts at each new evaluation)."""
    dates = [record["date"] for record in metrics.get("session_pnl", [])]
    by_date = dict.fromkeys(dates, 0.0)
    for trade in metrics.get("trade_list", []):
        day = str(trade["exit_time_et"])[:10]
        by_date[day] = by_date.get(day, 0.0) + float(trade["pnl_usd"])
    days = sorted(by_date)
    return days, np.array([by_date[day] for day in days], dtype=np.float64)


def max_drawdown(daily: np.ndarray) -> np.ndarray | float:
    """The largest fall of the cumulative daily P&L from its running peak (the start counts as a peak of 0); over the
    last axis, so a stack of resamples is one call."""
    daily = np.asarray(daily, dtype=np.float64)
    if not daily.shape[-1]:
        return 0.0
    path = np.concatenate((np.zeros(daily.shape[:-1] + (1,)), np.cumsum(daily, axis=-1)), axis=-1)
    falls = np.max(np.maximum.accumulate(path, axis=-1) - path, axis=-1)
    return float(falls) if falls.ndim == 0 else falls


def worst_day(daily: np.ndarray) -> np.ndarray | float:
    daily = np.asarray(daily, dtype=np.float64)
    if not daily.shape[-1]:
        return float("nan")
    worst = np.percentile(daily, WORST_DAY_PERCENTILE, axis=-1)
    return float(worst) if np.ndim(worst) == 0 else worst


STATISTICS: dict[str, Callable[[np.ndarray], np.ndarray | float]] = {
    "mean_day_usd": lambda d: np.mean(d, axis=-1) if d.shape[-1] else float("nan"),
    "net_pnl_usd": lambda d: np.sum(d, axis=-1),
    "worst_5pct_day_usd": worst_day,
    "max_drawdown_usd": max_drawdown,
}
"""Each over the last axis: one arm's days, or a stack of resamples of them."""


def _figure(value, draws: np.ndarray) -> dict[str, float]:
    return {"value": float(value), "low": float(np.percentile(draws, 2.5)), "high": float(np.percentile(draws, 97.5))}


def with_interval(values: np.ndarray, resamples: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray | float]) -> dict[str, float]:
    """The statistic and its 95 % percentile interval over the resamples."""
    return _figure(statistic(values), np.asarray(statistic(values[resamples])))


def arm_figures(daily: np.ndarray, resamples: np.ndarray) -> dict[str, dict[str, float]]:
    return {name: with_interval(daily, resamples, statistic) for name, statistic in STATISTICS.items()}


def compare(a: np.ndarray, b: np.ndarray, resamples: np.ndarray) -> dict[str, dict[str, float]]:
    """Per statistic, a's minus b's on the same days, with the interval of the paired resamples."""
    if len(a) != len(b):
        raise ValueError(f"the arms walked different days ({len(a)} against {len(b)}): no paired difference")
    return {name: _figure(statistic(a) - statistic(b), np.asarray(statistic(a[resamples]) - statistic(b[resamples])))
            for name, statistic in STATISTICS.items()}


@dataclass(frozen=True)
class WalkArm:
    name: str
    title: str
    days: list[str]
    daily: np.ndarray
    evaluations: dict[str, float]
    """evaluations, passed, failed, open (the backtest's evaluation_summary)."""
    run_dir: str
    figures: dict[str, dict[str, float]] = field(default_factory=dict)
    ages: dict[str, float] = field(default_factory=dict)
    """The llm arm's thoughts' real age (actors/jobs/evaluation/thought_ages.py); {} without the reasoner."""
    vetoes: dict[str, float] = field(default_factory=dict)
    """The gate's cost: entries blocked by rule (halted bars from the report)."""
    elapsed_secs: float = float("nan")
    counts: dict[str, float] = field(default_factory=dict)
    """How often its gate acted and the model's reads (gate_counts)."""

    def to_json(self) -> dict:
        return {"title": self.title, "run_dir": self.run_dir, "days": len(self.days), "first_day": self.days[0] if self.days else "",
                "last_day": self.days[-1] if self.days else "", "evaluations": dict(self.evaluations),
                "figures": {k: {kk: finite_or_none(vv) for kk, vv in v.items()} for k, v in self.figures.items()},
                "thought_ages": {k: finite_or_none(v) for k, v in self.ages.items()}, "halted_bars": dict(self.vetoes),
                "elapsed_secs": finite_or_none(self.elapsed_secs), "counts": dict(self.counts), "daily_pnl_usd": [round(float(x), 2) for x in self.daily]}


def walk_arm(name: str, metrics: dict, run_dir: str, resamples: np.ndarray, ages: dict[str, float] | None = None,
             elapsed_secs: float = float("nan"), counts: dict[str, float] | None = None) -> WalkArm:
    """One arm's figures from its backtest report (metrics.json) and the shared resamples."""
    days, daily = daily_pnl(metrics)
    evaluations = {key: float(metrics.get(key) or 0.0) for key in ("evaluations", "passed", "failed", "open")}
    return WalkArm(name, GATES[name][0] if name in GATES else name, days, daily, evaluations, run_dir, arm_figures(daily, resamples), dict(ages or {}),
                   {rule: float(count) for rule, count in (metrics.get("halted_bars") or {}).items()}, elapsed_secs, dict(counts or {}))


@dataclass(frozen=True)
class GateWalk:
    arms: dict[str, WalkArm]
    pairs: dict[str, dict[str, dict[str, float]]]
    """"llm-blackout" -> per statistic the paired difference."""
    test_start_day: int
    test_days: int
    checkpoint: str

    def to_json(self) -> dict:
        return {"test_start_day": self.test_start_day, "test_days": self.test_days, "policy_checkpoint": self.checkpoint,
                "block_days": BLOCK_DAYS, "reps": REPS, "arms": {k: v.to_json() for k, v in self.arms.items()},
                "paired": {k: {s: {kk: finite_or_none(vv) for kk, vv in d.items()} for s, d in v.items()} for k, v in self.pairs.items()}}


def gate_walk(arms: dict[str, tuple[dict, str, dict[str, float], float]], test_start_day: int, checkpoint: str, seed: int = 0) -> GateWalk:
    """The figures of the arms played: name -> (its report's metrics.json, run dir, thought ages, seconds). A name
    outside GATES (the llm arm under another setting, from another run on the same days) is paired with the floors
    walked (keyword, oracle, blackout, none) too."""
    n_days = min(len(daily_pnl(metrics)[1]) for metrics, *_ in arms.values())
    n_rows = max(n_days, 1)  # the same rows serve every arm: paired
    resamples = bootstrap_indices(n_rows, REPS, seed, block_length=min(BLOCK_DAYS, n_rows), blocks="moving")
    walked = {name: walk_arm(name, metrics, run_dir, resamples, ages, secs, gate_counts(Path(run_dir)))
              for name, (metrics, run_dir, ages, secs) in arms.items()}
    extra = [(name, floor) for name in walked if name not in GATES for floor in ("keyword", "oracle", "blackout", "none")]  # another llm setting
    pairs = {f"{a}-{b}": compare(walked[a].daily, walked[b].daily, resamples) for a, b in (*PAIRS, *extra) if a in walked and b in walked}
    return GateWalk(walked, pairs, test_start_day, n_days, checkpoint)


def _money(figure: dict[str, float]) -> str:
    return f"{figure['value']:+,.0f} [{figure['low']:+,.0f}, {figure['high']:+,.0f}]"


def walk_lines(walk: GateWalk) -> list[str]:
    """The table evaluate prints: per arm, then the paired differences, then the thoughts' real age."""
    head = "| arm | failed / passed / evaluations | net P&L $ | $ a day | worst 5 % day $ | max drawdown $ | entries halted (bars) |"
    lines = [f"account walk over {walk.test_days} test days (from day {walk.test_start_day}), one account through "
             f"consecutive evaluations, 95 % block-bootstrap intervals ({BLOCK_DAYS}-day blocks)", "", head, "|" + " --- |" * 7]
    for arm in walk.arms.values():
        e, f = arm.evaluations, arm.figures
        halted = ", ".join(f"{rule} {int(count)}" for rule, count in arm.vetoes.items()) or "0"
        lines.append(f"| {arm.title} | {e['failed']:.0f} / {e['passed']:.0f} / {e['evaluations']:.0f} | {_money(f['net_pnl_usd'])} | "
                     f"{_money(f['mean_day_usd'])} | {_money(f['worst_5pct_day_usd'])} | {_money(f['max_drawdown_usd'])} | {halted} |")
    if walk.pairs:
        lines += ["", "| paired, same days | net P&L $ | $ a day | worst 5 % day $ | max drawdown $ | failed evaluations |", "|" + " --- |" * 6]
        for key, pair in walk.pairs.items():
            a, b = key.rsplit("-", 1)
            failed = walk.arms[a].evaluations["failed"] - walk.arms[b].evaluations["failed"]
            lines.append(f"| {a} minus {b} | {_money(pair['net_pnl_usd'])} | {_money(pair['mean_day_usd'])} | "
                         f"{_money(pair['worst_5pct_day_usd'])} | {_money(pair['max_drawdown_usd'])} | {failed:+.0f} |")
    for arm in walk.arms.values():
        acted = ", ".join(f"{key} {value:.0f}" for key, value in arm.counts.items() if value and key != "vetoes")
        if acted:
            lines += ["", f"{arm.name}: {acted}"]
        if arm.ages:
            lines += [f"{arm.name}: the thoughts' real age: {ages_text(arm.ages)}"]
    return lines


def run_gate_walk(args: argparse.Namespace, data_settings: dict[str, Any], dataset: Dataset, result: WalkForward, out: Path,
                  gates: list[str], adapter_settings: dict[str, Any], say: Callable[[str], None] = lambda _t: None) -> GateWalk:
    """Play the last fold's policy over its whole test window once per gate (``gates``: GATES' names), through the
    actors; the arms' figures and their paired differences."""
    from actors.jobs.evaluation.lockstep_evidence import POLICY_DIR, save_lockstep_policy, window_settings
    from actors.jobs.lockstep import lockstep_backtest

    if result.last_policy is None:
        raise ValueError("the walk-forward kept no policy to walk")
    policy_dir = out / POLICY_DIR
    path, saved = save_lockstep_policy(policy_dir, *result.last_policy)
    fold = result.folds[-1]
    choices = getattr(result, "policy_choices", [])
    chosen = {key: choices[-1].params[key] for key in ("env.decision_every_bars", "env.min_hold_bars")} if choices else {}
    settings = {**data_settings, **saved, **chosen, **window_settings(dataset, fold.test_start_day), "fusion.method": "rl_only"}
    fitted = event_gate_settings(dataset, (fold.train_start_day, fold.train_stop_day), fold.test_start_day)
    tables = {"keyword": {"risk.keyword_gate_keys": fitted["risk.keyword_gate_keys"]},
              "oracle": {"risk.oracle_gate_event_ids": fitted["risk.oracle_gate_event_ids"]}, "llm": adapter_settings}
    if set(gates) & {"keyword", "oracle"}:
        say(f"gate walk: keyword gate keys {', '.join(fitted['risk.keyword_gate_keys']) or 'none'}; oracle gate: "
            f"{len(fitted['risk.oracle_gate_event_ids'])} dangerous events in the test window (fitted on days "
            f"{fold.train_start_day}-{fold.train_stop_day - 1})")
    played = {}
    for name in check_gates(gates):
        title, gate = GATES[name]
        model = tables.get(name, {})
        say(f"gate walk: {title}, fold {fold.index + 1}'s test window from day {fold.test_start_day}, policy {path}")
        started = time.monotonic()
        run = lockstep_backtest(args, {**settings, **gate, **model, "run.name": f"evaluate-{WALK_DIR}-{name}"},
                                out / f"{WALK_DIR}-{name}", 0, window=f"the whole test window from day {fold.test_start_day}, {title}")
        metrics = json.loads((run.report_dir / "metrics.json").read_text())
        played[name] = (metrics, str(run.run_dir), run.ages if name == "llm" else {}, time.monotonic() - started)
    walk = gate_walk(played, fold.test_start_day, str(path))
    (out / "gate_walk.json").write_text(json.dumps(walk.to_json(), indent=2))
    return walk
