"""Process entry point: ``python -m runtime.entry --run-dir DIR (--broker | --actor NAME)``.

The supervisor starts every process through here. Each process reads the resolved
config from the run directory, configures logging, and runs on uvloop.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import os
import signal
import sys
import threading
from pathlib import Path

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask the kernel to SIGTERM us if the supervisor dies, so no actor is left orphaned."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def resolve_actor_class(name: str):
    """``env`` -> actors.env.actor.ACTOR; ``pkg.module`` -> pkg.module.ACTOR; ``pkg.module:Class`` -> that class.
    ACTOR is an actor class or a factory called with the same keywords (the env picks its shell by mode); a
    factory carries the ``settings_type`` of the actors it builds, as a class does."""
    module_name, _, attr = name.partition(":")
    if "." not in module_name:
        module_name = f"actors.{module_name}.actor"
    module = importlib.import_module(module_name)
    return getattr(module, attr or "ACTOR")


def actor_log_name(name: str) -> str:
    """The actor's short name: ``env`` -> ``env``; ``actors.env.random_verdicts`` -> ``random_verdicts``;
    ``runtime.probes:Pinger`` -> ``pinger``."""
    module_name, _, attr = name.partition(":")
    if attr:
        return attr.lower()
    return module_name.rsplit(".", 1)[-1]


REBIND_ENV = "TT_BROKER_REBIND"
"""Set by the supervisor when it restarts a dead broker: bind the addresses in bus.json again."""


def run_broker(run_dir: Path) -> int:
    from bus.broker import Broker, CurveServer, bind_addresses
    from runtime.logs import configure_logging
    from runtime.rundir import RunDir

    from runtime.settings import RuntimeSettings

    rd = RunDir(run_dir)
    config = rd.load_settings(RuntimeSettings)
    log = configure_logging(log_file=rd.log_file("broker"), level=config.logging.level, actor="broker", run=rd.run_id)
    _place("broker", config, log)
    socket_dir = Path(os.environ["TT_SOCKET_DIR"]) if config.bus.transport == "ipc" else None
    if os.environ.get(REBIND_ENV):  # a restarted broker binds the addresses its peers already connect to
        from bus.broker import BusAddresses

        previous = BusAddresses.read(rd.path)
        addresses = BusAddresses(xsub=previous.xsub, xpub=previous.xpub, peers=previous.peers)
    else:
        direct = [actor_log_name(spec) for spec in config.runtime.actors] if config.bus.direct and socket_dir else []
        addresses = bind_addresses(config.bus.transport, config.bus.host, config.bus.xsub_port, config.bus.xpub_port, socket_dir, direct)
    bus = config.bus
    curve = None
    if bus.curve:  # a missing or broken key file stops the broker here, naming the file, before any actor starts
        curve = CurveServer.from_files(bus.curve_server_secret_key_file, bus.curve_authorized_clients_dir,
                                       str(Path(bus.curve_client_secret_key_file).expanduser().resolve()))
    broker = Broker(addresses, hwm=max(bus.send_hwm, bus.recv_hwm), curve=curve, log=log)
    broker.addresses.write(rd.path)
    log.info("broker_started", xsub=broker.addresses.xsub, xpub=broker.addresses.xpub, pid=os.getpid(),
             curve=curve is not None, server_key=broker.addresses.server_key,
             authorized_clients=len(curve.authorized) if curve else 0)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    broker.serve_until(stop)
    log.info("broker_stopped")
    return 0


STANDBY_GO = b"go\n"
"""What the supervisor writes to a spare's stdin to make it the actor (runtime.spare_actors)."""


def _place(process: str, config, log) -> None:
    """runtime.cpu_placement: hold this process on its CPUs (runtime/placement.py) and log where."""
    from runtime.placement import place_process, process_role

    rt = config.runtime
    run_has_llm = bool(set(rt.llm_actors) & {actor_log_name(spec) for spec in rt.actors})
    role = process_role(process, rt.loop_actors, rt.llm_actors)
    cpus = place_process(role, rt.cpu_placement, rt.llm_cpus, run_has_llm)
    if cpus is not None:
        log.info("cpu_placed", cpus=sorted(cpus), placement=config.runtime.cpu_placement)


def run_actor(run_dir: Path, name: str, standby: bool = False) -> int:
    """Run actor ``name``. ``standby``: a spare, started ahead so a restart skips the imports: import
    everything, then wait for ``STANDBY_GO`` on stdin (end of input: not needed, exit 0)."""
    import uvloop

    from bus.broker import BusAddresses
    from bus.client import AsyncBus
    from runtime.logs import configure_logging
    from runtime.rundir import RunDir

    rd = RunDir(run_dir)
    actor_cls = resolve_actor_class(name)
    config = rd.load_settings(actor_cls.settings_type)  # its own sections; the job validated the rest
    short = actor_log_name(name)
    log = configure_logging(log_file=rd.log_file(short), level=config.logging.level, actor=short, run=rd.run_id)
    if standby:
        warm_up = getattr(actor_cls, "warm_up", None)  # the env's ACTOR is a factory over env.mode: nothing to warm
        if warm_up is not None:
            warm_up(config)
        if sys.stdin.buffer.readline() != STANDBY_GO:
            return 0
        log.info("spare_activated", pid=os.getpid())
    _place(short, config, log)  # before the bus: its zmq I/O thread inherits the placement
    addresses = BusAddresses.read(rd.path)  # after a standby: a restarted broker may have rewritten it

    async def main() -> int:
        bus = AsyncBus(addresses, sender=f"{short}:{os.getpid()}", name=short, hwm=config.bus.send_hwm,
                       max_frame_bytes=config.bus.max_message_bytes)
        actor = actor_cls(name=short, config=config, run_dir=rd.path, bus=bus, log=log, freeze_heap=True)
        try:
            return await actor.run()
        finally:
            bus.close()

    if short in os.environ.get("TT_PROFILE", "").split(","):
        return _profiled(lambda: uvloop.run(main()), rd.path / f"profile-{short}.prof")
    return uvloop.run(main())


def _profiled(fn, out: Path) -> int:
    """Run under cProfile and write the stats (TT_PROFILE=env,policy ... names the actors to profile)."""
    import cProfile

    profiler = cProfile.Profile()
    try:
        return profiler.runcall(fn)
    finally:
        profiler.dump_stats(str(out))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m runtime.entry", description=__doc__)
    parser.add_argument("--run-dir", required=True, type=Path)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--broker", action="store_true")
    group.add_argument("--actor")
    parser.add_argument("--standby", action="store_true", help="with --actor: a spare that waits for 'go' on stdin")
    args = parser.parse_args(argv)
    die_with_parent()
    code = run_broker(args.run_dir) if args.broker else run_actor(args.run_dir, args.actor, args.standby)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: native engines (torch, llama.cpp) have already been closed by
    # on_stop, and their static destructors racing at exit are what print "terminate called ...".
    os._exit(code)


if __name__ == "__main__":
    main()
