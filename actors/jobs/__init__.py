"""The jobs behind ``bin/run``'s modes: the only code that imports several actors.

Each job starts the runtime (runtime/supervisor.py) with a job-specific config, watches the bus
(progress, done) and prints a summary. What a job needs from an actor it imports from that actor's
package (``from actors.policy import find_checkpoint``), never from its modules.

- config.py    the root Config (every section) and its loading: the composition root, above every actor
- common.py    JobError, JobResult, configure() (the config layers), run_job(), format_table()
- presets.py   the cross-cutting intents (Lockstep, Backtest, FrozenLearners, Train, Paper) as typed presets
- progress.py  the progress bar / progress lines of a running job
- run.py       mode run: the configured actors until Ctrl-C or --duration-secs
- train.py     mode train: the policy learns inside the full loop; the training summary
- backtest.py  mode backtest: a frozen policy on held-out data; the report
- main.py      mode main: short training, backtest, then a live-like session with the LLM's thoughts
- ablation.py  mode ablation: one training, one backtest per variant, one table
- cli.py       bin/run's command line: a subcommand per mode with its own options, and the mode dispatch
"""
