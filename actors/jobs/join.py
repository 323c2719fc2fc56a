"""Mode join: this host's share of a runtime whose broker runs on another host (``bin/run join --join ...``).

The main host runs ``bin/run ...`` with a tcp bus (CURVE keys) and lists only its own actors in
``runtime.actors``; this host runs ``bin/run join --join BUS`` with its config's ``runtime.actors``
naming the actors it hosts (e.g. ``["reasoner"]``). Here a supervisor without a broker starts
those actors, connects them to the remote broker, watches their heartbeats and restarts them like
the main runtime does, and stops them on Ctrl-C or when the main runtime's ``sys.shutdown`` arrives.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from actors.jobs.common import JobError, configure, format_table
from actors.jobs.config import Config
from actors.jobs.progress import console_enabled
from bus.auth import CLIENT_KEY_FILE_ENV, CurveKeyError
from bus.broker import BusAddresses
from runtime.logs import configure_logging
from runtime.rundir import JoinTargetError, create_run_dir, join_addresses
from runtime.supervisor import EXIT_OK, Supervisor

REMOTE_SHUTDOWN = "remote_shutdown"


def mode_join(args: argparse.Namespace) -> int:
    if not args.join:
        raise JobError("join: name the broker to join: --join BUS_JSON | RUN_DIR | tcp://HOST:XSUB_PORT,XPUB_PORT")
    config = configure(args)
    if not config.runtime.actors:
        raise JobError("join: runtime.actors is empty: name the actors this host runs (e.g. --set 'runtime.actors=[\"reasoner\"]')")
    addresses = remote_addresses(args, config)
    rd = create_run_dir(config, "join", args.run_dir)
    log = configure_logging(log_file=rd.log_file("supervisor"), level=config.logging.level, console=console_enabled(config, args.quiet),
                            actor="supervisor", run=rd.run_id)
    if not args.quiet:
        print(f"run directory: {rd.path}\njoining:       {addresses.xsub} / {addresses.xpub} "
              f"({'CURVE' if addresses.server_key else 'no CURVE'}) with {', '.join(config.runtime.actors)}",
              file=sys.stderr, flush=True)
    supervisor = Supervisor(config, rd, log, join=addresses)
    supervisor.install_signal_handlers()
    supervisor.start()
    code = supervisor.run(duration_secs=config.run.duration_secs)
    if code != EXIT_OK:
        raise JobError(f"joined runtime failed: {supervisor.failure} (is the broker at {addresses.xpub} up, and is this "
                       f"host's client key authorised there?) (run directory {rd.path})")
    print(format_table([("stop_reason", supervisor.stop_reason), ("run_dir", str(rd.path))], "join stopped"))
    return EXIT_OK


def remote_addresses(args: argparse.Namespace, config: Config) -> BusAddresses:
    """The remote broker's addresses, with this host's client key checked before any actor starts.

    This host's key file: --client-key, else TT_CURVE_CLIENT_KEY_FILE, else this config's
    bus.curve_client_secret_key_file, else the path in bus.json (same path on both hosts)."""
    try:
        addresses = join_addresses(args.join, args.server_key or "")
    except (JoinTargetError, CurveKeyError) as exc:
        raise JobError(f"join: {exc}") from None
    if args.client_key:
        os.environ[CLIENT_KEY_FILE_ENV] = str(Path(args.client_key).expanduser().resolve())  # the actors inherit it
    elif not os.environ.get(CLIENT_KEY_FILE_ENV) and config.bus.curve_client_secret_key_file:
        os.environ[CLIENT_KEY_FILE_ENV] = str(Path(config.bus.curve_client_secret_key_file).expanduser().resolve())
    if not addresses.server_key:
        print("warning: join: no server key (--server-key or bus.json): connecting without CURVE, which only a broker "
              "without CURVE keys accepts", file=sys.stderr, flush=True)
        return addresses
    try:
        addresses.client_keys()
    except ValueError as exc:  # CurveKeyError included: names the file
        raise JobError(f"join: {exc} (give this host's key with --client-key FILE)") from None
    return addresses
