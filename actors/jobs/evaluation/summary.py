"""The evaluation's figures as typed, frozen records: what ``evidence.summarise`` returns and the report, the success
table and metrics.json read by attribute (a misspelt figure is an AttributeError, not a missing row).

NaN means undefined (the report prints n/a, metrics.json null). ``Summary.to_json`` gives metrics.json's keys: the
deflated Sharpe's figures at the top level, ``lockstep`` only when a lockstep run filled it.
"""

from __future__ import annotations

from typing import Any

import msgspec

Interval = tuple[float, float]
"""A 95 % interval (low, high); NaN bounds when undefined."""


def _numpy_scalar(value: Any) -> Any:
    """numpy's scalars (a count from np.sum, a float32) as Python's: what JSON holds."""
    if hasattr(value, "item"):
        return value.item()
    raise NotImplementedError(f"no JSON for {type(value).__name__}")


class Record(msgspec.Struct, frozen=True, kw_only=True):
    def to_json(self) -> dict:
        return msgspec.to_builtins(self, enc_hook=_numpy_scalar)


class VariantFigures(Record, frozen=True, kw_only=True):
    """One variant's out-of-sample days (a policy seed, an ensemble, a floor, the oracle)."""

    net_pnl: float
    pnl_per_day: float
    pnl_per_day_interval: Interval
    sharpe: float
    """Daily Sharpe on the start balance, annualised (actors/common/statistics.py)."""
    trades: int
    median_trades_per_day: float
    win_rate: float
    halted_share: float
    breaches: int


class PolicyFigures(VariantFigures, frozen=True, kw_only=True):
    """The policy at the last budget, its days averaged over seeds."""

    sharpe_interval: Interval


class Difference(Record, frozen=True, kw_only=True):
    """One series minus another, $ a day, with its bootstrap interval."""

    pnl_per_day_difference: float
    interval: Interval


class Beats(Difference, frozen=True, kw_only=True):
    beats: bool
    """The whole interval is above 0."""


class Comparison(Difference, frozen=True, kw_only=True):
    """The policy against one floor; SPA / the reality check over every policy variant against it."""

    p_value_reality_check: float
    p_value_spa: float
    variants_beating_it: list[str]
    beats: bool


class TrackRecord(Record, frozen=True, kw_only=True):
    """How many test days the observed Sharpe needs (MinTRL, PSR 0.95) against 0 and the trials' lucky best."""

    days: int
    min_days_vs_zero: float
    min_days_vs_trials: float
    enough: bool
    too_few: bool


class Deflation(Record, frozen=True, kw_only=True):
    """The deflated Sharpe with the trials ledger's N and V, and the minimum track record."""

    dsr: float
    dsr_trials: int
    dsr_runs: int
    dsr_sharpe_variance: float
    dsr_benchmark_sharpe: float
    """The daily Sharpe the best of N unskilled trials reaches by luck alone."""
    track_record: TrackRecord
    dsr_trials_this_run: int
    ledger: str = ""
    """The trials ledger read (empty: none named)."""
    market: str = ""
    """The market the trials are filed under (the main job's phase 3)."""
    dsr_of: str = ""
    """The trial the deflated Sharpe deflates, itself one of the N (a variant name, or the seeds' mean)."""


class Snooping(Record, frozen=True, kw_only=True):
    """SPA / reality check / StepM of every candidate against flat (``significance.data_snooping_tests``)."""

    p_value_spa: float
    p_value_spa_lower: float
    p_value_spa_upper: float
    p_value_reality_check: float
    superior: list[str]
    candidates: list[str]
    days: int


class Pbo(Record, frozen=True, kw_only=True, omit_defaults=True):
    """Probability of backtest overfitting (CSCV), or why there is none."""

    pbo: float
    """Share of the CSCV combinations whose in-sample best variant ranks at or below the median out of sample (NaN: none)."""
    n_combinations: int
    """Combinations of the blocks into in-sample and out-of-sample halves that were scored (0: none)."""
    variants: int = 0
    """Variants ranked (0: no PBO, see ``why``). A field at its default is left out of metrics.json."""
    splits: int = 0
    """Blocks the test days were cut into (0: no PBO)."""
    why: str = ""
    """Why there is no PBO (too few test days or variants); empty when there is one."""


class FloorChoiceRow(Record, frozen=True, kw_only=True):
    """What the tunable floors chose on one fold's training days."""

    fold: int
    """The fold's index (0: the earliest test window)."""
    momentum_lookback: int
    """The momentum floor's lookback (bars) that netted most on the training days."""
    regime_threshold: float
    """The regime floor's belief threshold that netted most on the training days."""
    train_days: list[int]
    """The training days: the first one's index and one past the last one's."""
    momentum_nets: dict[str, float]
    """Lookback -> what it netted on the training days, $."""
    regime_nets: dict[str, float]
    """Threshold -> what it netted on the training days, $."""
    supervised_threshold: float | None = None
    """The supervised floor's probability threshold, chosen on the fold's validation quarter (None: no such floor)."""
    supervised_horizon_bars: int | None = None
    """Bars ahead the supervised floor's classifier predicts the sign of."""
    supervised_train_bars: int | None = None
    """Bars it was fitted on."""
    first_half_hour_hold_minutes: int | None = None
    """Minutes before the close the first-half-hour rule held, chosen on the training days (None: not tried)."""
    fade_sigmas: float | None = None
    """The fade's threshold in sigma, chosen on the training days (None: not tried)."""
    first_half_hour_nets: dict[str, float] = {}
    """Hold in minutes -> what the first-half-hour rule netted on the training days, $."""
    fade_nets: dict[str, float] = {}
    """Threshold in sigma -> what the fade netted on the training days, $."""
    rule_train_sharpes: dict[str, float] = {}
    """Each rule floor at its chosen setting -> its annualised Sharpe on the training days."""
    best_rule: str = ""
    """The rule floor with the higher training Sharpe: the one the policy's Sharpe is divided by on this fold's days."""


class RuleRatio(Record, frozen=True, kw_only=True):
    """The policy's Sharpe over the best simple rule's on the same test days (actors/jobs/evaluation/rule_ratio.py)."""

    target: float
    """The issue's target for ``ratio`` (0.8: the policy earns at least 0.8 of what the best one-line rule does)."""
    policy_sharpe: float
    rule_sharpes: dict[str, float]
    """Each rule floor's annualised Sharpe on the test days."""
    chosen_by_fold: list[str]
    """Per fold, the rule with the higher Sharpe on its training days: the test days divided by come from it."""
    best_rule_sharpe: float
    """The annualised Sharpe of those test days (each fold's chosen rule, folds joined)."""
    best_rule_sharpe_interval: Interval
    ratio: float
    """policy_sharpe / best_rule_sharpe; NaN where the best rule's Sharpe is not above 0 (no edge to share)."""
    ratio_interval: Interval
    """95 % bootstrap interval over the test days, resampled in pairs (draws where the rule's Sharpe is not above 0 left out)."""
    verdict: str
    test_day_best: str
    """The rule with the higher Sharpe on the test days themselves (a choice made on the answers, shown beside)."""
    test_day_ratio: float
    """The policy's Sharpe over ``test_day_best``'s."""


class LearningPoint(Record, frozen=True, kw_only=True):
    """The policy at one budget of the learning curve."""

    timesteps: int
    pnl_per_day: float
    pnl_per_day_interval: Interval
    sharpe: float
    sharpe_per_seed: list[float]
    sharpe_interval: Interval
    trades_per_day: float = float("nan")
    """Mean trades a day of the budget's seeds: whether more steps trade less or more."""


class Ensemble(Record, frozen=True, kw_only=True):
    """The last budget's ensemble of seeds (one account trading the seeds' mean distribution)."""

    name: str
    seeds: int
    pnl_per_day: float
    pnl_per_day_interval: Interval
    sharpe: float
    vs_momentum: Beats
    vs_seeds_mean: Difference
    oracle_share: float
    oracle_share_interval: Interval


class Summary(Record, frozen=True, kw_only=True):
    """Every figure of one evaluation (``evidence.summarise``; bin/run evaluate adds the fields after ``verdict``)."""

    market: str
    test_days: int
    folds: int
    seeds: list[int]
    budgets: list[int]
    policy: PolicyFigures
    psr: float
    deflation: Deflation
    pbo: Pbo
    oracle_share: float
    oracle_share_interval: Interval
    momentum_floor: str
    comparisons: dict[str, Comparison]
    snooping: Snooping
    variants: dict[str, VariantFigures]
    floor_choices: list[FloorChoiceRow]
    learning_curve: list[LearningPoint]
    training: list[dict[str, Any]]
    ensemble: Ensemble | None
    success_table: list[Any] = []
    """The success table's rows (``evidence.Row``)."""
    simple_rules: RuleRatio | None = None
    """The policy's Sharpe over the best simple rule's on the same test days; None where the rules did not play."""
    diagnostics: list[dict[str, Any]] = []
    """Per fold, how the policies trade and what they do where the edges are (actors/jobs/evaluation/diagnostics.py)."""
    policy_choices: list[dict[str, Any]] = []
    """Per fold, the policy settings (cadence, minimum hold, turnover charge, entropy) chosen on its validation days and
    what each candidate netted there (actors/jobs/evaluation/cadence.py); empty when none were tried."""
    lockstep: dict[str, Any] | None = None
    """The lockstep run's own JSON (``LockstepEvidence.to_json``), with --lockstep-decisions."""
    verdict: str = ""
    market_shows: str = ""
    calibration: list[str] = []
    elapsed_secs: float = float("nan")
    news_floors: list[dict[str, Any]] = []
    cells: dict[str, Any] | None = None
    folds_days: list[dict[str, Any]] = []

    def to_json(self) -> dict:
        """metrics.json: the deflated Sharpe's figures beside the PSR (``ledger`` after the verdict), ``lockstep`` only
        when there is one."""
        fields = super().to_json()
        deflation = fields.pop("deflation")
        ledger = deflation.pop("ledger")
        deflation.pop("market")
        out: dict = {}
        for key, value in fields.items():
            if key == "pbo":
                out.update(deflation)
            if key == "lockstep" and value is None:
                continue
            out[key] = value
            if key == "verdict":
                out["ledger"] = ledger
        return out
