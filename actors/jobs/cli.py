"""``bin/run``: start the runtime in one of its modes, each a subcommand with its own options and help.

``bin/run MODE [options]``; ``bin/run`` alone (or with options only) is ``bin/run main``, and ``bin/run --join BUS``
is ``bin/run join --join BUS``. Every mode takes the shared options (``SHARED_OPTIONS``: --config, --set, --run-dir,
--duration-secs, --quiet); its own are in ``MODE_OPTIONS``, one function a mode.

ADDING A FLAG to a mode is one ``parser.add_argument(...)`` line in that mode's function below (``evaluate_options``
for ``bin/run evaluate --ray ADDRESS``); a new mode is a line in ``MODES`` and ``MODE_HANDLERS`` and a function in
``MODE_OPTIONS``. A flag another mode reads is an error naming the mode (``RunParser``); the job code may still read
any option as ``args.NAME``: an option its mode does not take holds its default (None or False).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from config.tree import ConfigError

MODES = {
    "main": "the default job: RL training at full speed, a hybrid phase in lockstep with the LLM in every decision, a full-speed backtest report on held-out data and a lockstep backtest on a slice of it",
    "run": "start the broker and the configured actors ([runtime].actors) and keep them running until Ctrl-C or --duration-secs",
    "train": "train the policy inside the full decision loop (env, policy, reasoner, fusion, risk) for --timesteps steps",
    "backtest": "run the loop with a frozen policy (--model) on held-out data (or --data FILE) and write a report",
    "ablation": "train per seed, then backtest each variant (RL only, risk veto, rule/neural fusion with lockstep thoughts, no veto) over the same data and seeds; one table with 95% intervals",
    "fuzz": "send --frames bad frames (random bytes, truncated msgpack, huge lengths, wrong types/shapes, NaN/inf, unknown topics, replays) into a running decision loop; print what each actor dropped and whether it survived",
    "chaos": "kill -9 each actor of a running decision loop in turn; print time to detect, time to recover, degraded decisions and what was lost",
    "soak": "run the loop with the reasoner (frozen policy, test split, repeated) for --minutes; sample every process's RSS into soak.csv and print per-process growth per hour with PASS/FAIL",
    "join": "this host's share of a runtime whose broker runs on another host (--join BUS, implies this mode): start only [runtime].actors, connect them over tcp with CURVE, restart them as needed, stop on Ctrl-C or the main runtime's shutdown",
    "keys": "make CURVE key pairs for a tcp bus beyond loopback (--dir DIR): a server pair and --clients client pairs",
    "paper": "paper-trade on a live feed until Ctrl-C: attach one with bin/feed --run RUN_DIR (optional --model CHECKPOINT)",
    "evaluate": "walk-forward evidence: per fold, train the policy on the days before a test window and test it frozen, against flat, random, buy-and-hold, momentum rules and the oracle; success table, deflated Sharpe, PBO, learning curve (--market MARKET|FILE: a registered synthetic market or bars files, --folds, --seeds, --quick; --lockstep-decisions N [--adapter PATH] [--fusion-warmup M]: the fusion and LLM rows; --gate-walk [ARM ...]: one account through the whole test window with no gate, the calendar blackout, the keyword and oracle gates and the LLM's risk gate)",
    "dashboard": "a live dashboard of a run in the browser (--run RUN_DIR live or finished, or --bus BUS_JSON; --port, --host); "
                 "main/train/backtest/paper/evaluate/ablation/sweep --dashboard start one beside the job",
    "sweep": "an Optuna search over SPACE.toml's settings (bin/run sweep SPACE.toml): each trial a walk-forward on the validation folds, pruned fold by fold, on Ray workers; the best trial tested once on the held-out test folds; every trial in the ledger",
    "grid": "bin/run evaluate once per settings variant, side by side: bin/run grid VARIANTS.toml [--parallel N] [--only A,B] "
            "-- EVALUATE OPTIONS (every variant the same market, days, folds and seeds; one table, RUN_DIR/grid.md). "
            "Several variants on the same test days are several trials: judge a winner by evaluate's deflated Sharpe on fresh days",
    "trials": "list and summarise the trials ledger (--ledger PATH, --market NAME): N per market, the runs, the best trial "
              "and its deflated Sharpe given N (how lucky it looks)",
    "lora": "fine-tune the LLM's LoRA once from --experiences FILE (--rounds N; prints match rate before -> after and the adapter), or --rollback VERSION --run-dir RUN to republish an earlier adapter",
}
MODE_HANDLERS = {
    "main": "actors.jobs.main:mode_main",
    "run": "actors.jobs.run:mode_run",
    "train": "actors.jobs.train:mode_train",
    "backtest": "actors.jobs.backtest:mode_backtest",
    "ablation": "actors.jobs.ablation:mode_ablation",
    "fuzz": "actors.jobs.fuzz:mode_fuzz",
    "chaos": "actors.jobs.chaos:mode_chaos",
    "soak": "actors.jobs.soak:mode_soak",
    "keys": "actors.jobs.keys:mode_keys",
    "join": "actors.jobs.join:mode_join",
    "paper": "actors.jobs.paper:mode_paper",
    "lora": "actors.jobs.lora:mode_lora",
    "evaluate": "actors.jobs.evaluate:mode_evaluate",
    "dashboard": "actors.jobs.dashboard:mode_dashboard",
    "sweep": "actors.jobs.sweep:mode_sweep",
    "grid": "actors.jobs.evaluation.variant_grid:mode_grid",
    "trials": "actors.jobs.trials_mode:mode_trials",
}
"""mode -> "module:function", imported only when the mode runs (``bin/run --help`` loads no actor)."""
DEFAULT_MODE = "main"


# ---------------------------------------------------------------------- the options of every mode

def shared_options(parser: argparse.ArgumentParser) -> None:
    """What every mode takes: the config layers, the run directory, the duration, the console."""
    parser.add_argument("--config", type=Path, help="a TOML file merged over config/default.toml")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="override one config key (TOML value syntax; repeatable), e.g. --set env.n_envs=4",
    )
    parser.add_argument("--run-dir", type=Path, help="use this run directory instead of runs/<timestamp>-<mode>")
    parser.add_argument("--duration-secs", type=float, help="stop cleanly after this many seconds (same as --set run.duration_secs=...)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or console log lines, only the final summary")


SHARED_OPTIONS: Callable[[argparse.ArgumentParser], None] = shared_options


def _dashboard(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dashboard", action="store_true", help="start the live dashboard beside the job and print its address")
    _page(parser, "with --dashboard: ")


def _page(parser: argparse.ArgumentParser, when: str = "") -> None:
    parser.add_argument("--port", type=int, help=f"{when}port of the page (default: [dashboard] port, 8765; 0 picks a free one)")
    parser.add_argument("--host", help=f"{when}address the page listens on (default: [dashboard] host, 127.0.0.1; any other "
                        "needs the token printed at start)")


def _model(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--model", type=Path, help=f"{what}: a checkpoint file, a training run directory (its newest "
                        "checkpoint) or a main run's directory (the policy it chose for its backtests)")


def main_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timesteps", type=int, help="environment steps of phase 1 (RL at full speed)")
    parser.add_argument("--long", action="store_true", help="train phase 1 for 102,400 steps on 700 synthetic days "
                        "instead of 51,200 on 300, and backtest on 105 held-out days instead of 45 (about 12 minutes on 2 cores; "
                        "enough test days to tell the policy from the momentum rule)")
    parser.add_argument("--data", type=Path, help="a CSV/Parquet file of bars to train and test on instead of the synthetic market")
    parser.add_argument("--no-lora", action="store_true", help="leave the LoRA trainer out of the hybrid phase (its "
                        "round runs beside the loop: about two minutes on 2 cores)")
    parser.add_argument("--market-history", type=int, default=None, metavar="N",
                        help="the LoRA trainer starts with N hindsight-labelled prompts at bars spread over the training days, "
                             "besides the run's own thoughts (default 96 and 24 held out, so its first round starts at once)")
    _dashboard(parser)


def run_options(parser: argparse.ArgumentParser) -> None:
    pass  # the shared options only


def train_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timesteps", type=int, help="environment steps to train for")
    parser.add_argument("--resume", type=Path, help="continue from the last checkpoint of this run directory")
    _dashboard(parser)


def backtest_options(parser: argparse.ArgumentParser) -> None:
    _model(parser, "the policy to evaluate")
    parser.add_argument("--data", type=Path, help="a CSV/Parquet file of bars to test on instead of the held-out split")
    _dashboard(parser)


def _ray(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument("--ray", metavar="ADDRESS", help="where the cells run: local (a Ray on this machine's CPUs), off (one "
                        "after another in this process), auto or HOST:PORT (a cluster); default $RAY_ADDRESS, else "
                        f"{default} (docs/ray.md)")


def ablation_options(parser: argparse.ArgumentParser) -> None:
    _ray(parser, "off")
    parser.add_argument("--timesteps", type=int, help="environment steps each seed's policy trains for")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per variant (mean and 95%% interval over them; default 3)")
    _model(parser, "play this policy in every variant instead of training one per seed")
    parser.add_argument("--data", type=Path, help="a CSV/Parquet file of bars instead of the synthetic market")
    parser.add_argument("--four-step", action="store_true", help="add the four-step thought variant (seconds per decision on 2 cores)")
    parser.add_argument("--lora", action="store_true", help="add the +LoRA variant (an adapter trained in a lockstep run "
                        "on each seed's training days, or --adapter)")
    parser.add_argument("--adapter", type=Path, help="with --lora: a GGUF LoRA adapter for the +LoRA variant instead of training one")
    parser.add_argument("--market-history", type=int, default=None, metavar="N",
                        help="with --lora: the LoRA trainer starts with N hindsight-labelled prompts of the training days (default 0)")
    _dashboard(parser)


def fuzz_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=100_000, help="how many bad frames to send (default 100000)")


def chaos_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--with-reasoner", action="store_true", help="add the reasoner (the LLM) to the loop and kill it too")


def soak_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--minutes", type=float, default=30.0, help="how long to run (default 30)")


def join_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--join", metavar="BUS", help="the remote broker: its run directory's bus.json (copied here), or tcp://HOST:XSUB_PORT,XPUB_PORT")
    parser.add_argument("--server-key", metavar="Z85_OR_FILE", help="the broker's CURVE public key (or its server.key file) when --join is an address")
    parser.add_argument("--client-key", metavar="FILE", help="this host's client .key_secret (default: $TT_CURVE_CLIENT_KEY_FILE, then the path in bus.json)")


def keys_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", dest="keys_dir", type=Path, default=Path("keys"), help="where to write the key pairs (default ./keys)")
    parser.add_argument("--clients", type=int, default=1, help="how many client key pairs to make (default 1)")


def paper_options(parser: argparse.ArgumentParser) -> None:
    _model(parser, "the policy to trade with (default: policy.model_path)")
    parser.add_argument("--lockstep", action="store_true", help="the main job's hybrid-phase preset (env.thought_lag_steps=1, "
                        "single-shot thoughts, a query on every bar): each decision waits for the previous bar's thought")
    parser.add_argument("--until-feed-done", action="store_true", help="stop when the attached feed has played its bars (default: Ctrl-C)")
    parser.add_argument("--write-bars", type=Path, metavar="FILE", help="write --days (default 2) synthetic NQ sessions as a "
                        "vendor-style CSV to replay with bin/feed, and exit")
    parser.add_argument("--days", type=int, help="with --write-bars: sessions to write (default 2)")
    _dashboard(parser)


class LazyHelpStore(argparse._StoreAction):
    """A stored option whose help is written when shown (``help_from()``): --market's lists the registered markets,
    and building the parser imports none of their modules (bin/run --help stays light)."""

    def __init__(self, *args, help_from: Callable[[], str], **kwargs) -> None:
        self._help_from = help_from
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str:  # type: ignore[override]
        return self._help_from()

    @help.setter
    def help(self, _value: str | None) -> None:
        pass


def market_option_help() -> str:
    """--market's help: every market of actors/common/markets.py with its help line, then files."""
    from actors.common.markets import market_help

    names = "; ".join(f"{name}: {line}" for name, line in market_help().items())
    return (f"a synthetic market with a known answer ({names}) | one or more bars files, joined into one calendar "
            "(actors/common/bar_join.py); default regimes").replace("%", "%%")


def evaluate_options(parser: argparse.ArgumentParser) -> None:
    _ray(parser, "local for a grid of 60,000 training steps or more, else off")
    parser.add_argument("--market", nargs="+", action=LazyHelpStore, help_from=market_option_help)
    parser.add_argument("--folds", type=int, help="walk-forward test windows (default 3, --quick 2)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per fold (mean and 95%% interval over them; default 3, --quick 1)")
    parser.add_argument("--budgets", help="training steps of the learning curve, comma-separated (default 25000,50000,100000,150000,200000; --quick 25000,50000,75000,100000)")
    parser.add_argument("--days", type=int, help="trading days of a synthetic market (default 700, --quick 400)")
    parser.add_argument("--train-days", type=int, help="training days of the first fold (default: 57%% of the days, --quick 62.5%%); "
                        "the test windows share the days after it and its purge")
    parser.add_argument("--quick", action="store_true", help="a small walk-forward that finishes in a few minutes on 2 cores")
    parser.add_argument("--policy-grid", choices=("full", "quick", "off"), help="the policy settings (decision cadence, minimum "
                        "hold, turnover charge, entropy) each fold chooses among on its validation days "
                        "(actors/jobs/evaluation/cadence.py): full (3, the default), quick (2, the default with --quick), off")
    parser.add_argument("--stand-aside", action="store_true", help="a fold whose chosen policy setting did not net above "
                        "$0 on its validation days plays flat on its test days (the policy is still trained; the report and "
                        "metrics.json's policy_choices say which folds stood aside)")
    parser.add_argument("--lockstep-decisions", type=int, metavar="N", help="after the walk-forward, play the "
                        "last fold's policy (first seed, last budget) through the actors for the first N decisions of its "
                        "test window in lockstep with the LLM (base model, and --adapter if given), and fill the success "
                        "table's fusion accuracy, LLM accuracy and RL/LLM agreement rows (about 2-3 s a decision on 2 cores)")
    parser.add_argument("--lockstep-window", choices=("all", "events"), default="all", help="with --lockstep-decisions: "
                        "all (the first N decisions of the test window) | events (only the bars from 5 before to 30 after "
                        "each event of the test window, at most N decisions, with the reasoner's risk read: its match with "
                        "the hindsight volatility level beside the calendar and keyword rules; a news market)")
    parser.add_argument("--gate-walk", nargs="*", metavar="ARM", help="after the walk-forward, walk one account through "
                        "every bar of the last fold's test window through the actors once per risk gate: none, blackout (the "
                        "calendar blackout, T-2..T+2 min around high releases), keyword (15 min after an event the keyword risk rule "
                        "reads dangerous), oracle (the same for the events whose true tier and surprise size are dangerous), "
                        "llm (the LLM's risk read gates entries, in lockstep, a thought per event; with --adapter, the "
                        "adapter's); no ARM: all five. Failed "
                        "evaluations, net P&L, worst 5%% day and max drawdown per arm and paired, with intervals (a news market; "
                        "the llm arm takes about 10 s a thought on 2 cores)")
    parser.add_argument("--adapter", type=Path, help="with --lockstep-decisions: a GGUF LoRA adapter for a second lockstep run, "
                        "the LLM accuracy base -> adapter; with --gate-walk: the llm arm's reasoner")
    parser.add_argument("--fusion-warmup", type=int, metavar="M", help="with --lockstep-decisions: before each lockstep run, "
                        "M lockstep decisions of the last training days teach the fusion network (from closed trades and "
                        "the hindsight of flat steps); the test run fuses with it, frozen (fusion.method = network)")
    _dashboard(parser)


def dashboard_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", type=Path, help="the run directory to show (live or finished; default: the newest)")
    parser.add_argument("--bus", type=Path, help="the bus.json of a running runtime")
    _page(parser)


def sweep_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("space", nargs="?", type=Path, metavar="SPACE.toml", help="the search space (docs/experiments/sweeps/)")
    _ray(parser, "local")
    _dashboard(parser)


def grid_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("variants_file", nargs="?", type=Path, metavar="VARIANTS.toml", help="one table of dotted settings per variant "
                        "(\"policy.gamma\" = 0.97; an empty table is the defaults; docs/experiments/policy_sweep.toml)")
    parser.add_argument("--parallel", type=int, default=None, metavar="N", help="variants run at once (default: the CPUs less one)")
    parser.add_argument("--only", default="", metavar="A,B", help="only these variants of the file (comma-separated)")
    parser.add_argument("evaluate_args", nargs="*", default=[], metavar="-- EVALUATE OPTIONS",
                        help="after --: the options every variant's bin/run evaluate takes (--market, --days, --folds, "
                             "--seeds, --budgets, ...); the shared --config and --set go to every variant too, its own --set after them")


def trials_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ledger", type=Path, metavar="PATH", help="the trials ledger to read (default: run.trials_path, else <runs_dir>/trials.jsonl)")
    parser.add_argument("--market", dest="trials_market", metavar="NAME",
                        help="only this market (a scenario name as the ledger files it, or a bars file)")


def lora_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--experiences", type=Path, help="a JSON-lines experience file to fine-tune from (offline)")
    parser.add_argument("--rounds", type=int, default=1, help="training rounds over --experiences (default 1)")
    parser.add_argument("--rollback", type=int, metavar="VERSION", help="republish adapter VERSION of --run-dir RUN as a new version")
    parser.add_argument("--market-history", type=int, default=None, metavar="N",
                        help="fine-tune from N hindsight-labelled prompts of a synthetic market (lora.market_history_days), "
                             "besides or instead of --experiences")


MODE_OPTIONS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "main": main_options, "run": run_options, "train": train_options, "backtest": backtest_options, "ablation": ablation_options,
    "fuzz": fuzz_options, "chaos": chaos_options, "soak": soak_options, "join": join_options, "keys": keys_options,
    "paper": paper_options, "evaluate": evaluate_options, "dashboard": dashboard_options, "lora": lora_options,
    "sweep": sweep_options, "grid": grid_options, "trials": trials_options,
}
"""mode -> the function that adds its own options."""


# ---------------------------------------------------------------------- the parser

PASS_ON_MODES = ("grid",)
"""Modes that pass what follows ``--`` on to another mode's runs (``bin/run grid V.toml -- --market null --quick``)."""


class RunParser(argparse.ArgumentParser):
    """bin/run's parser: no mode means main (``--join BUS`` alone: join), a flag of another mode is an error that names
    the mode, and the namespace holds every mode's options (the ones this mode does not take at their defaults)."""

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None):
        argv = list(sys.argv[1:] if args is None else args)
        if not argv or (argv[0] not in MODES and argv[0] not in ("-h", "--help")):
            argv.insert(0, "join" if "--join" in argv else DEFAULT_MODE)
        passed_on: list[str] = []
        if argv[0] in PASS_ON_MODES and "--" in argv:  # what follows -- is another mode's options, read by that mode
            cut = argv.index("--")
            argv, passed_on = argv[:cut], argv[cut + 1:]
        parsed, extras = super().parse_known_args(argv, namespace)
        if passed_on:
            parsed.evaluate_args = passed_on
        if extras:
            self._refuse(parsed.mode, extras)
        for dest, default in self._every_mode_default().items():
            if not hasattr(parsed, dest):
                setattr(parsed, dest, default)
        return parsed, []

    def _refuse(self, mode: str, extras: list[str]) -> None:
        flag = next((word.split("=", 1)[0] for word in extras if word.startswith("-")), None)
        if flag is None:
            word = extras[0]
            hint = f": the mode comes first (bin/run {word} ...)" if word in MODES else ""
            self.error(f"{mode}: unexpected argument {word!r}{hint}")
        readers = [name for name, sub in self._modes().items() if flag in sub._option_string_actions]
        if readers:
            self.error(f"{flag} is not an option of {mode} (it is one of {', '.join(readers)}); bin/run {mode} --help lists {mode}'s")
        self.error(f"{mode}: unknown option {flag} (bin/run {mode} --help lists {mode}'s)")

    def _modes(self) -> dict[str, argparse.ArgumentParser]:
        return next(action.choices for action in self._actions if isinstance(action, argparse._SubParsersAction))

    def _every_mode_default(self) -> dict[str, object]:
        return {action.dest: action.default for sub in self._modes().values() for action in sub._actions
                if action.dest not in ("help", argparse.SUPPRESS)}


def build_parser() -> RunParser:
    parser = RunParser(
        prog="bin/run",
        description="Start the thinking futures-trading agent: a ZeroMQ broker plus one OS process per actor.",
        epilog="bin/run MODE --help lists a mode's options; bin/run alone is bin/run main.\n\n"
        "Every run gets a directory (printed at start) with the resolved config, one JSON-lines log per actor"
        " (follow them with bin/tail), bus addresses, checkpoints and reports.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    modes = parser.add_subparsers(dest="mode", metavar="MODE", title="modes", parser_class=argparse.ArgumentParser)
    for name, add_options in MODE_OPTIONS.items():
        sub = modes.add_parser(name, help=MODES[name].replace("%", "%%"), description=MODES[name], prog=f"bin/run {name}")
        add_options(sub)
        SHARED_OPTIONS(sub.add_argument_group("options of every mode"))
    return parser


def mode_parser(mode: str) -> argparse.ArgumentParser:
    """The parser of one mode (its --help, its options)."""
    return build_parser()._modes()[mode]


def run_mode(args: argparse.Namespace) -> int:
    module_name, _, function = MODE_HANDLERS[args.mode].partition(":")
    handler = getattr(importlib.import_module(module_name), function)
    if getattr(args, "dashboard", False):
        from actors.jobs.dashboard import dashboard_beside

        with dashboard_beside(args):
            return handler(args)
    return handler(args)


USER_ERRORS = (
    "actors.common.file_errors:FileError",  # a bars, event or checkpoint file: file, row, column
    "actors.common.trading_calendar:CalendarError",  # synthetic sessions past the exchange calendar's range
    "actors.policy:CheckpointNotFound",
    "actors.reasoner:ModelFileError",
    "actors.common.llm.model:ModelNotFound",
    "actors.jobs.evaluation.ledger:LedgerError",
    "actors.jobs.cells.space:SpaceError",
    "actors.jobs.evaluation.variant_grid:GridError",
    "actors.dashboard.source:DashboardError",
    "bus.auth:CurveKeyError",
    "runtime.rundir:JoinTargetError",
)
"""The errors a user's input causes, each with a message that names the file (and row and field where it has them):
bin/run prints the message as one line and exits 1, never a traceback. A new such error: one line here
(tests/actors/jobs/test_bad_inputs.py feeds every mode a bad file)."""


def is_user_error(exc: BaseException) -> bool:
    """``exc`` is one of USER_ERRORS (a class whose module was never imported cannot have been raised: none is imported here)."""
    for entry in USER_ERRORS:
        module_name, _, name = entry.partition(":")
        module = sys.modules.get(module_name)
        if module is not None and isinstance(exc, getattr(module, name)):
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from actors.jobs.common import JobError, JobStopped

    try:
        return run_mode(args)
    except JobStopped as exc:  # Ctrl-C: every process stopped in order, checkpoints and reports kept
        print(f"\nbin/run: {exc}", file=sys.stderr)
        return 0
    except KeyboardInterrupt:  # Ctrl-C between two stages of a job, when no runtime was running
        print("\nbin/run: stopped by the user (Ctrl-C)", file=sys.stderr)
        return 0
    except ConfigError as exc:
        print(f"bin/run: config error: {exc}", file=sys.stderr)
        return 2
    except JobError as exc:
        print(f"bin/run: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        if not is_user_error(exc):
            raise  # a bug: its traceback is what to report
        print(f"bin/run: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
