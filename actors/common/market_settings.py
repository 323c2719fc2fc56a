"""The [instrument] and [account] config sections: shared vocabulary, not the env's own.

The env fills orders and keeps the account with them, risk sizes its guard and pauses the day with them, the
feed names its symbol with them; so they live here, beside the instrument table (instruments.py), and every
actor's settings may list them. Imports nothing but msgspec, the stdlib and config.checks.
"""

from __future__ import annotations

import re

import msgspec

from config.checks import ConfigSection, NonNegative
from config.checks import require as _require


class InstrumentConfig(ConfigSection, kw_only=True):
    symbol: str = "NQ"
    """NQ | ES | YM | RTY | MNQ | MES | M2K | MYM built in; any other symbol needs tick_size and multiplier."""
    tick_size: NonNegative = 0.0
    """Price increment in points; 0 = from the built-in table."""
    multiplier: NonNegative = 0.0
    """Dollars per point per contract; 0 = from the built-in table."""
    commission_per_side: float = -1.0
    """Dollars per contract per side; -1 = from the built-in table."""
    slippage_ticks: float = -1.0
    """Ticks lost on every market or stop fill; -1 = from the built-in table."""

    def __post_init__(self) -> None:
        _require(bool(self.symbol.strip()), "instrument.symbol", "must not be empty")
        super().__post_init__()
        _require(self.commission_per_side >= 0 or self.commission_per_side == -1, "instrument.commission_per_side", "must be >= 0 (or -1 for the table)")
        _require(self.slippage_ticks >= 0 or self.slippage_ticks == -1, "instrument.slippage_ticks", "must be >= 0 (or -1 for the table)")


TRAILING_MODES = ("intraday", "end_of_day", "none")

_HHMM = r"([01]\d|2[0-3]):[0-5]\d"

# Account rule presets. Every value is also an [account] key; a key set in the config overrides its
# preset value ("from the preset" sentinels below). Each preset names its source and the date it follows.
_APEX_50K: dict[str, object] = dict(
    start_balance=50_000.0, trailing_drawdown=2_500.0, drawdown_lock_balance=50_100.0, max_contracts=10,
    flat_time_et="16:59", profit_target=3_000.0, trading_day_reset_et="18:00",
)
"""The figures every Apex 50K evaluation below shares (legacy and 4.0); each preset adds what sets it apart."""

ACCOUNT_PRESETS: dict[str, dict[str, object]] = {
    # The seeds' rules (seeds/, the source system) = Apex's legacy 50K evaluation as sold before the
    # March 2026 change: intraday trailing $2,500 including unrealised profit, threshold locked at
    # start + $100, flat by 16:59 ET, 10 contracts, target $3,000, no daily loss limit.
    "apex_legacy_50k": dict(
        _APEX_50K, name="apex_legacy_50k", trailing="intraday", daily_loss_limit=0.0,
        source="seeds (source system) + Apex help center 'What Are the Rules for Evaluations?' (support.atf.com), "
               "legacy evaluation rules in force until 2026-03-01",
    ),
    # Apex 4.0 intraday-trailing evaluation (new purchases from 2026-03-01): the floor trails the live
    # equity peak, no daily loss limit, $3,000 target on 50K, floor locks at start + $100.
    "apex_intraday_50k": dict(
        _APEX_50K, name="apex_intraday_50k", trailing="intraday", daily_loss_limit=0.0,
        source="Apex 4.0 rulebook of 2026-03-01 as summarised by propfirmescape.com ('Apex Trader Funding Evaluation "
               "Rules 2026: Intraday vs EOD') and puravidaedge.com (verified 2026-05); max contracts: the legacy 50K figure",
    ),
    # Apex 4.0 EOD evaluation (from 2026-03-01): the floor trails the closing balance, updated at the
    # trading-day reset; a daily loss limit pauses the day (soft: no failure). The DLL amount is not
    # stated in the sources found: $1,000 is assumed (verify on apextraderfunding.com).
    "apex_eod_50k": dict(
        _APEX_50K, name="apex_eod_50k", trailing="end_of_day", daily_loss_limit=1_000.0,
        source="Apex 4.0 rulebook of 2026-03-01 as summarised by propfirmescape.com and puravidaedge.com "
               "(verified 2026-05: EOD trailing, soft daily loss limit); DLL amount assumed",
    ),
    # No prop-firm rules (24/7 crypto, own money): no trailing drawdown, no flat time, no target.
    "none": dict(
        name="none", start_balance=50_000.0, trailing="none", trailing_drawdown=0.0,
        drawdown_lock_balance=0.0, max_contracts=1_000, flat_time_et="none", daily_loss_limit=0.0,
        profit_target=0.0, trading_day_reset_et="00:00",
        source="no prop-firm rules (this project, 2026)",
    ),
}

_FROM_PRESET_NUMBER = -1.0
_FROM_PRESET_TEXT = ""


class AccountConfig(ConfigSection, kw_only=True):
    """The account's rules: a preset (ACCOUNT_PRESETS) whose values any key below overrides.

    Keys left at their sentinel (-1, or '' for text) take the preset's value when the struct is built,
    so ``AccountConfig().trailing_drawdown`` is the resolved number.
    """

    preset: str = "apex_legacy_50k"
    """apex_legacy_50k (the seeds) | apex_intraday_50k | apex_eod_50k | none; see ACCOUNT_PRESETS."""
    name: str = _FROM_PRESET_TEXT
    """Label for reports ('' = the preset's name)."""
    source: str = _FROM_PRESET_TEXT
    """Where the rules come from and the date they follow ('' = the preset's)."""
    start_balance: float = _FROM_PRESET_NUMBER
    """Account balance at the start of every evaluation, dollars (-1 = preset)."""
    trailing: str = _FROM_PRESET_TEXT
    """intraday (peak = equity incl. unrealised, at the bar's favourable extreme) | end_of_day (peak = closing
    balance at the trading-day reset) | none ('' = preset)."""
    trailing_drawdown: float = _FROM_PRESET_NUMBER
    """Equity may fall at most this far below its peak; touching the threshold fails the evaluation (-1 = preset, 0 = none)."""
    drawdown_lock_balance: float = _FROM_PRESET_NUMBER
    """The threshold stops trailing once it reaches this balance (Apex: start + 100); 0 = trails forever, -1 = preset."""
    max_contracts: int = -1
    """Most contracts open at once (-1 = preset)."""
    flat_time_et: str = _FROM_PRESET_TEXT
    """All positions are closed by this US/Eastern time every day (HH:MM; 'none' = never; '' = preset)."""
    daily_loss_limit: float = _FROM_PRESET_NUMBER
    """Day's loss (dollars, incl. open P&L) at which the position is closed and entries pause until the next
    trading day; the evaluation does not fail (0 = none, -1 = preset)."""
    profit_target: float = _FROM_PRESET_NUMBER
    """Net profit (dollars) that passes the evaluation, reached flat with no breach (0 = none, -1 = preset)."""
    trading_day_reset_et: str = _FROM_PRESET_TEXT
    """US/Eastern time (HH:MM) at which a trading day ends: daily P&L resets, end-of-day trailing updates ('' = preset)."""
    losing_streak_resets_daily: bool = True
    """Start every trading day with a losing streak of 0, so the risk stage's streak veto pauses entries for the
    rest of a bad day instead of for the rest of a multi-day backtest."""

    def __post_init__(self) -> None:
        _require(self.preset in ACCOUNT_PRESETS, "account.preset", f"must be one of {tuple(ACCOUNT_PRESETS)}, got {self.preset!r}")
        preset = ACCOUNT_PRESETS[self.preset]
        lock_from_preset = self.drawdown_lock_balance == _FROM_PRESET_NUMBER
        for key, value in preset.items():
            current = getattr(self, key)
            if current == _FROM_PRESET_TEXT or (not isinstance(current, str) and current == _FROM_PRESET_NUMBER):
                msgspec.structs.force_setattr(self, key, value)
        if lock_from_preset and self.drawdown_lock_balance > 0:
            # The preset's lock is "start + 100": keep that offset when start_balance is overridden.
            offset = float(preset["drawdown_lock_balance"]) - float(preset["start_balance"])
            msgspec.structs.force_setattr(self, "drawdown_lock_balance", self.start_balance + offset)
        _require(self.start_balance > 0, "account.start_balance", f"must be > 0, got {self.start_balance}")
        _require(self.trailing in TRAILING_MODES, "account.trailing", f"must be one of {TRAILING_MODES}, got {self.trailing!r}")
        _require(self.trailing_drawdown >= 0, "account.trailing_drawdown", f"must be >= 0, got {self.trailing_drawdown}")
        _require(self.trailing == "none" or self.trailing_drawdown > 0, "account.trailing_drawdown", "must be > 0 unless account.trailing = 'none'")
        _require(self.drawdown_lock_balance >= 0, "account.drawdown_lock_balance", "must be >= 0")
        _require(self.max_contracts >= 1, "account.max_contracts", f"must be >= 1, got {self.max_contracts}")
        _require(self.daily_loss_limit >= 0, "account.daily_loss_limit", "must be >= 0")
        _require(self.profit_target >= 0, "account.profit_target", "must be >= 0")
        _require(
            self.flat_time_et == "none" or re.fullmatch(_HHMM, self.flat_time_et) is not None,
            "account.flat_time_et",
            f"must be HH:MM (24 h) or 'none', got {self.flat_time_et!r}",
        )
        _require(
            re.fullmatch(_HHMM, self.trading_day_reset_et) is not None,
            "account.trading_day_reset_et",
            f"must be HH:MM (24 h), got {self.trading_day_reset_et!r}",
        )
        super().__post_init__()  # declared bounds, checked on the resolved values

    @property
    def has_trailing_drawdown(self) -> bool:
        return self.trailing != "none" and self.trailing_drawdown > 0

    @property
    def flat_minute_of_day(self) -> int | None:
        """Minute of the US/Eastern day of the flat time; None when positions may be held overnight."""
        return None if self.flat_time_et == "none" else _minute_of_day(self.flat_time_et)

    @property
    def reset_minute_of_day(self) -> int:
        return _minute_of_day(self.trading_day_reset_et)


def _minute_of_day(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)
