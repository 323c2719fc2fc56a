"""``bin/run``: start the runtime in one of its modes."""

from __future__ import annotations

import argparse
import importlib
import sys
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
    "evaluate": "walk-forward evidence: per fold, train the policy on the days before a test window and test it frozen, against flat, random, buy-and-hold, momentum rules and the oracle; success table, deflated Sharpe, PBO, learning curve (--market regimes|null|FILE, --folds, --seeds, --quick; --lockstep-decisions N [--adapter PATH] [--fusion-warmup M]: the fusion and LLM rows)",
    "dashboard": "a live dashboard of a run in the browser (--run RUN_DIR live or finished, or --bus BUS_JSON; --port, --host); "
                 "main/train/backtest/paper --dashboard start one beside the job",
    "sweep": "an Optuna search over SPACE.toml's settings (bin/run sweep SPACE.toml): each trial a walk-forward on the validation folds, pruned fold by fold, on Ray workers; the best trial tested once on the held-out test folds; every trial in the ledger",
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
}
"""mode -> "module:function", imported only when the mode runs (``bin/run --help`` loads no actor)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bin/run",
        description="Start the thinking futures-trading agent: a ZeroMQ broker plus one OS process per actor.",
        epilog="Modes:\n" + "\n".join(f"  {name:<9} {text}" for name, text in MODES.items())
        + "\n\nEvery run gets a directory (printed at start) with the resolved config, one JSON-lines log per actor"
        " (follow them with bin/tail), bus addresses, checkpoints and reports.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("mode", nargs="?", default="main", choices=list(MODES), help="what to run (default: main)")
    parser.add_argument("space", nargs="?", type=Path, help="sweep: the SPACE.toml to search (docs/experiments/sweeps/)")
    parser.add_argument("--ray", metavar="ADDRESS", help="evaluate, ablation, sweep: where the cells run: local (a Ray on "
                        "this machine's CPUs), off (one after another in this process), auto or HOST:PORT (a cluster; "
                        "default $RAY_ADDRESS, else local for a grid worth it, see docs/ray.md)")
    parser.add_argument("--config", type=Path, help="a TOML file merged over config/default.toml")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="override one config key (TOML value syntax; repeatable), e.g. --set env.n_envs=4",
    )
    parser.add_argument("--run-dir", type=Path, help="use this run directory instead of runs/<timestamp>-<mode>")
    parser.add_argument("--duration-secs", type=float, help="stop cleanly after this many seconds (same as --set run.duration_secs=...)")
    parser.add_argument("--timesteps", type=int, help="train/main/ablation: environment steps to train for")
    parser.add_argument("--model", type=Path, help="backtest: the policy checkpoint to evaluate (a file or a run directory)")
    parser.add_argument("--data", type=Path, help="backtest: a CSV/Parquet file of bars to test on instead of the held-out split")
    parser.add_argument("--resume", type=Path, help="train: continue from the last checkpoint of this run directory")
    parser.add_argument("--seeds", type=int, default=None, help="ablation, evaluate: seeds per variant (mean and 95%% interval over them; default 3, evaluate --quick 1)")
    parser.add_argument("--market", help="evaluate: regimes | null (synthetic markets with a known answer) | a bars file (default regimes)")
    parser.add_argument("--folds", type=int, help="evaluate: walk-forward test windows (default 3, --quick 2)")
    parser.add_argument("--budgets", help="evaluate: training steps of the learning curve, comma-separated (default 50000,100000,200000; --quick 50000,100000)")
    parser.add_argument("--days", type=int, help="evaluate: trading days of a synthetic market (default 700, --quick 400); paper --write-bars: sessions (default 2)")
    parser.add_argument("--train-days", type=int, help="evaluate: training days of the first fold (default: 57%% of the days, --quick 62.5%%); "
                        "the test windows share the days after it and its purge")
    parser.add_argument("--long", action="store_true", help="main: train phase 1 for 102,400 steps on 700 synthetic days "
                        "instead of 51,200 on 300, and backtest on 105 held-out days instead of 45 (about 12 minutes on 2 cores; "
                        "enough test days to tell the policy from the momentum rule)")
    parser.add_argument("--quick", action="store_true", help="evaluate: a small walk-forward that finishes in a few minutes on 2 cores")
    parser.add_argument("--four-step", action="store_true", help="ablation: add the four-step thought variant (seconds per decision on 2 cores)")
    parser.add_argument("--frames", type=int, default=100_000, help="fuzz: how many bad frames to send (default 100000)")
    parser.add_argument("--with-reasoner", action="store_true", help="chaos: add the reasoner (the LLM) to the loop and kill it too")
    parser.add_argument("--minutes", type=float, default=30.0, help="soak: how long to run (default 30)")
    parser.add_argument("--dir", dest="keys_dir", type=Path, default=Path("keys"), help="keys: where to write the key pairs (default ./keys)")
    parser.add_argument("--clients", type=int, default=1, help="keys: how many client key pairs to make (default 1)")
    parser.add_argument("--join", metavar="BUS", help="join: the remote broker: its run directory's bus.json (copied here), or tcp://HOST:XSUB_PORT,XPUB_PORT")
    parser.add_argument("--server-key", metavar="Z85_OR_FILE", help="join: the broker's CURVE public key (or its server.key file) when --join is an address")
    parser.add_argument("--client-key", metavar="FILE", help="join: this host's client .key_secret (default: $TT_CURVE_CLIENT_KEY_FILE, then the path in bus.json)")
    parser.add_argument("--experiences", type=Path, help="lora: a JSON-lines experience file to fine-tune from (offline)")
    parser.add_argument("--rounds", type=int, default=1, help="lora: training rounds over --experiences (default 1)")
    parser.add_argument("--rollback", type=int, metavar="VERSION", help="lora: republish adapter VERSION of --run-dir RUN as a new version")
    parser.add_argument("--lora", action="store_true", help="ablation: add the +LoRA variant (an adapter trained in a lockstep run "
                        "on each seed's training days, or --adapter)")
    parser.add_argument("--no-lora", action="store_true", help="main: leave the LoRA trainer out of the hybrid phase (its "
                        "round runs beside the loop: about two minutes on 2 cores)")
    parser.add_argument("--adapter", type=Path, help="a GGUF LoRA adapter for the reasoner: ablation --lora: for the +LoRA variant "
                        "instead of training one; evaluate --lockstep-decisions: a second lockstep run with it, the LLM "
                        "accuracy base -> adapter")
    parser.add_argument("--lockstep-decisions", type=int, metavar="N", help="evaluate: after the walk-forward, play the "
                        "last fold's policy (first seed, last budget) through the actors for the first N decisions of its "
                        "test window in lockstep with the LLM (base model, and --adapter if given), and fill the success "
                        "table's fusion accuracy, LLM accuracy and RL/LLM agreement rows (about 2-3 s a decision on 2 cores)")
    parser.add_argument("--fusion-warmup", type=int, metavar="M", help="evaluate --lockstep-decisions: before each lockstep run, "
                        "M lockstep decisions of the last training days teach the fusion network (from closed trades and "
                        "the hindsight of flat steps); the test run fuses with it, frozen (fusion.method = network)")
    parser.add_argument("--market-history", type=int, default=None, metavar="N",
                        help="main, ablation --lora: the LoRA trainer starts with N hindsight-labelled prompts at bars spread "
                             "over the training days, besides the run's own thoughts (main: 96 and 24 held out, so its "
                             "first round starts at once; ablation: 0)")
    parser.add_argument("--lockstep", action="store_true", help="paper: the main job's hybrid-phase preset (env.thought_lag_steps=1, "
                        "single-shot thoughts, a query on every bar): each decision waits for the previous bar's thought")
    parser.add_argument("--until-feed-done", action="store_true", help="paper: stop when the attached feed has played its bars (default: Ctrl-C)")
    parser.add_argument("--write-bars", type=Path, metavar="FILE", help="paper: write --days (default 2) synthetic NQ sessions as a "
                        "vendor-style CSV to replay with bin/feed, and exit")
    parser.add_argument("--dashboard", action="store_true", help="main, train, backtest, paper: start the live dashboard beside the job "
                        "and print its address")
    parser.add_argument("--run", type=Path, help="dashboard: the run directory to show (live or finished; default: the newest)")
    parser.add_argument("--bus", type=Path, help="dashboard: the bus.json of a running runtime")
    parser.add_argument("--port", type=int, help="dashboard: port of the page (default: [dashboard] port, 8765; 0 picks a free one)")
    parser.add_argument("--host", help="dashboard: address to listen on (default: [dashboard] host, 127.0.0.1; any other "
                        "needs the token printed at start)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or console log lines, only the final summary")
    return parser


def run_mode(args: argparse.Namespace) -> int:
    module_name, _, function = MODE_HANDLERS[args.mode].partition(":")
    handler = getattr(importlib.import_module(module_name), function)
    if getattr(args, "dashboard", False):
        from actors.jobs.dashboard import dashboard_beside

        with dashboard_beside(args):
            return handler(args)
    return handler(args)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.join and args.mode == "main" and "main" not in (argv if argv is not None else sys.argv[1:]):
        args.mode = "join"  # bin/run --join BUS
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


if __name__ == "__main__":
    sys.exit(main())
