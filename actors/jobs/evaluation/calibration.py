"""What the market a run used looks like beside real NQ, and what evidence from it can and cannot show.

``bin/run evaluate`` and the main job's phase 3 print both, so a figure is never read without the market it came
from. The table is ``actors/common/market_stats.py``'s ``calibration_table(frame)``: each figure beside real NQ's range.
"""

from __future__ import annotations

import pandas as pd

from actors.common.market_stats import CalibrationTable, calibration_table

WHAT_IT_SHOWS = {
    "regimes": ("synthetic regimes: planted trends, far easier than NQ. It tests the learner's plumbing (can it find an "
                "edge that is there?), not evidence of an edge on real markets."),
    "null": ("synthetic null: a random walk with nothing to learn. Any edge here is noise (or a leak); a verdict of "
             "'evidence of an edge' on null means the test is broken."),
    "news": ("synthetic news, sized like the literature: releases and headlines whose words carry the tier and size of "
             "the surprise; a jump in the release bar and a volatility burst, no drift after it. The words can tell when "
             "the next minutes are dangerous, hardly which way they go; the sizes are assumptions of the literature's order."),
    "news_null": ("synthetic news_null: the same events and words, the bursts at bars drawn apart from them. "
                  "Nothing in the words is worth anything: any edge from reading them is noise."),
    "news_drift": ("synthetic news_drift: the words carry the surprise's sign (80 % of the time) and the market drifts "
                   "that way for 30 minutes after each event, far stronger than the literature: a unit test of "
                   "reading direction, not evidence that reading helps on NQ."),
    "news_drift_null": ("synthetic news_drift_null: the same events and words, each move in a sign drawn apart from "
                        "the words: any edge from reading them is noise."),
    "realistic": ("synthetic realistic: calibrated to NQ's volatility, fat tails and clustering, with weak planted "
                  "structure. Closer to a real market than regimes, still a generator's: not evidence on real NQ."),
    "realistic_null": ("synthetic realistic_null: NQ-like volatility and tails with nothing to learn. Any edge here is "
                       "noise; it shows how often a policy seems to win on a market like NQ by chance."),
}


def what_the_market_shows(market: str) -> str:
    """One plain sentence on what evidence from ``market`` (a scenario name or a bars file) can and cannot show."""
    if market in WHAT_IT_SHOWS:
        return WHAT_IT_SHOWS[market]
    return (f"the user's data ({market}): evidence on this market's days only, after the costs and risk rules "
            "configured; how far it carries to other periods is what the folds' spread says.")


def market_name(config) -> str:
    """The market a config's [data] section describes: the scenario's name, or the bars file's path."""
    return config.data.path if config.data.source == "file" else config.data.scenario


def market_lines(config, dataset) -> list[str]:
    """What the market is, what it can show, and its calibration beside real NQ (the main job's phase 3)."""
    market = market_name(config)
    return [f"market: {market}: {what_the_market_shows(market)}", "", *calibration_lines(dataset_frame(dataset), market)]


def dataset_frame(dataset) -> pd.DataFrame:
    """A dataset's bars as the UTC-indexed OHLCV frame ``market_stats`` reads."""
    return pd.DataFrame({"open": dataset.open, "high": dataset.high, "low": dataset.low, "close": dataset.close,
                         "volume": dataset.volume}, index=pd.DatetimeIndex(dataset.index))


def calibration_rows(frame: pd.DataFrame) -> CalibrationTable:
    """Every calibration figure of ``frame`` beside real NQ's range."""
    return calibration_table(frame)


def calibration_lines(frame: pd.DataFrame, market: str) -> list[str]:
    """The calibration table as Markdown, headed by the market it ran on."""
    table = calibration_rows(frame)
    lines = [f"Calibration of the market this ran on ({market}, {table.sessions} sessions) beside real NQ:", "",
             "| figure | real range | this market | in range? | debiased (information) |",
             "| --- | --- | --- | --- | --- |"]
    for row in table.rows:
        band = f"{row.real.low:.4g} .. {row.real.high:.4g}{'' if row.real.measured else '*'}"
        aside = "" if row.debiased is None else f"{row.debiased:.4g}"
        lines.append(f"| {row.label} | {band} | {row.value:.4g} | {'yes' if row.in_range else 'NO'} | {aside} |")
    lines += ["", f"{table.in_range} of {len(table.rows)} figures in range; * = a band from the literature or assumed, "
                  "not measured on real bars (actors/common/market_stats.py REAL_NQ_RANGES). A variance ratio is banded in its "
                  "textbook form, the way the real bands were measured; the debiased form (any random walk reads 1, "
                  "whatever its intraday volatility curve) is beside it."]
    return lines
