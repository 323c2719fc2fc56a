"""The env actor: one thin shell per mode over the loop driver (actors/env/loop.py), chosen by ``ACTOR``.

- train: the loop over training episodes; at the end (or when stopped) the metrics of its finished
  episodes go to <run_dir>/train_report;
- backtest: the loop over the held-out split, played once, explaining each trade (DecisionBook); the
  report goes to <run_dir>/<env.report_dir> (actors/env/report/), and few trades are named in a sentence;
- paper: bars from a feed instead of a data file (actors/env/paper_actor.py).

The runtime builds an actor by calling ``ACTOR(name=..., config=..., run_dir=..., bus=..., log=..., freeze_heap=...)``
(runtime/entry.py); here that call picks the shell from ``env.mode``.
"""

from __future__ import annotations

from typing import Any

from actors.env.decision_book import backtest_report
from actors.env.factory import load_dataset
from actors.env.loop import EnvLoop
from actors.env.paper_actor import PaperEnvActor
from actors.env.report import entries_sentence, write_report
from actors.env.statistics import MIN_TRADES
from runtime.actor import Actor

TRAIN_REPORT_DIR = "train_report"
"""Run sub-directory for the metrics of training episodes (backtests use env.report_dir)."""


class TrainEnvActor(EnvLoop):
    report_title = "Training episodes"

    async def write_report(self, title: str, summary: dict[str, float]) -> dict[str, float]:
        out_dir = self.run_dir / TRAIN_REPORT_DIR
        _, equity_curve, trades = self.batch.run_summary()
        await self.in_worker(write_report, out_dir, equity_curve, trades, summary, title, self.report_context())
        self.log.info("report_written", path=str(out_dir))
        return summary


class BacktestEnvActor(EnvLoop):
    explains = True
    report_title = "Backtest"

    async def write_report(self, title: str, summary: dict[str, float]) -> dict[str, float]:
        out_dir = self.run_dir / self.config.env.report_dir
        funnel = self.book.funnel.as_dict()
        summary = {**summary, **self.batch.evaluation_summary(), **self.book.halted_bars(),
                   **{f"entries_{stage}": value for stage, value in funnel.items()}}
        cfg = self.config.env
        context = (f"{self.config.instrument.symbol}, split {cfg.split}, mode {cfg.mode}, account {self.config.account.name}, "
                   f"{cfg.n_envs} env(s), {self.step_index} loop steps.")
        data = self.book.report_input(self.batch, title, summary, self.data_notes, context)
        summary = await self.in_worker(backtest_report, out_dir, data, self.config.run.seed)
        if summary.get("trades", 0.0) < MIN_TRADES:
            self.log.warning("few_trades", trades=summary.get("trades", 0.0), entries=entries_sentence(funnel))
        self.log.info("report_written", path=str(out_dir))
        return summary


SHELLS: dict[str, type[Actor]] = {"train": TrainEnvActor, "backtest": BacktestEnvActor, "paper": PaperEnvActor}
"""env.mode -> the env actor's shell."""


def env_actor(**kwargs: Any) -> Actor:
    """The env actor of ``config.env.mode``: the factory the runtime calls to build it."""
    return SHELLS[kwargs["config"].env.mode](**kwargs)


def warm_up(config: Any) -> None:
    """A spare env (runtime.spare_actors) builds the data set before it waits: the features and the regime HMM's fit
    and belief are most of an env's start (about 1 s of CPU on the default market, besides the imports), and the
    activated spare's on_start reads them back from this process's cache (actors/env/factory.py), the same values."""
    if config.env.mode != "paper":  # the paper env reads bars from a feed: nothing to build ahead
        load_dataset(config)


env_actor.settings_type = EnvLoop.settings_type  # type: ignore[attr-defined]  # what every shell reads (the runtime decodes it)
env_actor.warm_up = warm_up  # type: ignore[attr-defined]
ACTOR = env_actor
