"""``bin/run dashboard``: the reader thread plus Bokeh's server in one process (the thin shell).

Loopback by default. Any other address gets a random token, printed in the address at start; a page
opened without it shows only "token required". The process is read-only: it subscribes to the bus and
reads files, and publishes nothing.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import secrets
import signal
import socket
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from actors.dashboard.config import DashboardConfig
from actors.dashboard.source import BarsOf, DashboardError, Reader, Target, resolve_target
from actors.dashboard.state import DashboardState
from runtime.settings import is_loopback

READY_PREFIX = "dashboard: "
"""The line (on stdout) that says the page is up: 'dashboard: http://HOST:PORT/...'; a job starting one waits for it."""


@dataclass(frozen=True)
class Listen:
    host: str
    port: int
    token: str
    """'' on loopback."""

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        shown = socket.gethostname() if self.host in ("0.0.0.0", "", "::") else host  # all interfaces: a name others can reach
        return f"http://{shown}:{port or self.port}/" + (f"?token={self.token}" if self.token else "")


def listen_on(host: str, port: int) -> Listen:
    if not 0 <= port <= 65535:
        raise DashboardError(f"--port {port}: not a port (0..65535; 0 picks a free one)")
    if port == 0:  # pick it now: the websocket origins name the port
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            try:
                probe.bind((host, 0))
            except OSError as exc:
                raise DashboardError(f"cannot listen on {host}: {exc.strerror}") from None
            port = probe.getsockname()[1]
    return Listen(host, port, "" if is_loopback(host) else secrets.token_urlsafe(18))


def websocket_origins(listen: Listen) -> list[str]:
    """The pages that may open the websocket: this address on loopback; off loopback any host on this port (the token guards it)."""
    if listen.token:
        return [f"*:{listen.port}"]
    return [f"localhost:{listen.port}", f"127.0.0.1:{listen.port}"]


def start_server(state: DashboardState, listen: Listen, settings: DashboardConfig = DashboardConfig()):
    """Bokeh's server bound to ``listen`` (not yet looping); DashboardError when the port is taken."""
    from bokeh.application import Application
    from bokeh.application.handlers.function import FunctionHandler
    from bokeh.server.server import Server

    from actors.dashboard.page import build_document

    app = Application(FunctionHandler(partial(build_document, state=state, token=listen.token, update_ms=settings.update_ms,
                                                  trades_refresh_secs=settings.trades_refresh_secs)))
    # Off loopback Bokeh warns about the any-host origin pattern; the token guards the page and we say so ourselves.
    logging.getLogger("bokeh.server.util").setLevel(logging.ERROR)
    try:
        server = Server({"/": app}, address=listen.host, port=listen.port, allow_websocket_origin=websocket_origins(listen),
                        check_unused_sessions_milliseconds=5000, unused_session_lifetime_milliseconds=10000)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise DashboardError(f"port {listen.port} on {listen.host} is in use (another dashboard?): "
                                 f"pass --port N, or --port 0 for a free one") from None
        if exc.errno in (errno.EADDRNOTAVAIL, errno.EACCES):
            raise DashboardError(f"cannot listen on {listen.host}:{listen.port}: {exc.strerror}") from None
        raise
    return server


def serve(target: Target, listen: Listen, settings: DashboardConfig = DashboardConfig(), *, parent_pid: int = 0,
          bars: BarsOf | None = None) -> int:
    state = DashboardState()
    reader = Reader(target, state, settings, bars=bars)
    if target.bus is not None:
        reader.check_bus()  # a dead bus is a clear error now, before a page shows nothing
    server = start_server(state, listen, settings)
    reader.start()
    server.start()
    print(f"{READY_PREFIX}{listen.url(server.port)}", flush=True)
    if listen.token:
        print(f"dashboard: listening on {listen.host} beyond loopback; the page needs the token above", file=sys.stderr, flush=True)
    loop = server.io_loop

    def stop(*_args) -> None:
        loop.add_callback_from_signal(loop.stop)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if parent_pid:  # started beside a job: end with it, even if it died without stopping us
        from tornado.ioloop import PeriodicCallback

        PeriodicCallback(lambda: None if _alive(parent_pid) else loop.stop(), 1000).start()
    try:
        loop.start()
    finally:
        reader.stop()
        server.stop()
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def run_dashboard(run: Path | None, bus: Path | None, settings: DashboardConfig, *, follow: bool = False, parent_pid: int = 0,
                  runs_dir: Path = Path("runs"), bars: BarsOf | None = None) -> int:
    """What ``bin/run dashboard`` does (``settings``: the [dashboard] section, --host and --port applied; ``bars``: see
    source.py ``BarsOf``); prints a clear error and returns 2 for bad input."""
    try:
        target = resolve_target(run, bus, follow=follow, runs_dir=runs_dir)
        return serve(target, listen_on(settings.host, settings.port), settings, parent_pid=parent_pid, bars=bars)
    except DashboardError as exc:
        print(f"bin/run dashboard: {exc}", file=sys.stderr, flush=True)
        return 2


def with_flags(settings: DashboardConfig, host: str | None, port: int | None) -> DashboardConfig:
    """The [dashboard] settings with the command line's --host and --port (when given) over them."""
    import msgspec

    changes = {key: value for key, value in (("host", host), ("port", port)) if value is not None}
    return msgspec.structs.replace(settings, **changes) if changes else settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m actors.dashboard", description="A live dashboard of a run in the browser.")
    parser.add_argument("--run", type=Path, help="a run directory (live or finished; default: the newest under runs/)")
    parser.add_argument("--bus", type=Path, help="the bus.json of a running runtime")
    parser.add_argument("--host", help="address to listen on (default: [dashboard] host, 127.0.0.1; others need the printed token)")
    parser.add_argument("--port", type=int, help="port (default: [dashboard] port, 8765; 0 picks a free one)")
    parser.add_argument("--settings", help="the [dashboard] section as JSON (bin/run passes its job's: default.toml, --config, "
                        "--set); default: the section's defaults")
    parser.add_argument("--follow", action="store_true", help="wait for the run directory to appear and follow each new stage in it")
    parser.add_argument("--parent-pid", type=int, default=0, help="stop when this process ends")
    return parser


def settings_of(args: argparse.Namespace) -> DashboardConfig:
    """The [dashboard] settings: --settings (a job's section), else the section's defaults; then --host and --port."""
    import msgspec

    try:
        settings = msgspec.json.decode(args.settings, type=DashboardConfig) if args.settings else DashboardConfig()
    except (msgspec.ValidationError, msgspec.DecodeError, ValueError) as exc:
        raise DashboardError(f"--settings: {exc}") from None
    return with_flags(settings, args.host, args.port)


def main(argv: list[str] | None = None, bars: BarsOf | None = None) -> int:
    """``python -m actors.dashboard`` (``bars``: given by ``python -m actors.jobs.dashboard``, which bin/run starts)."""
    args = build_parser().parse_args(argv)
    try:
        settings = settings_of(args)
    except DashboardError as exc:
        print(f"bin/run dashboard: {exc}", file=sys.stderr, flush=True)
        return 2
    return run_dashboard(args.run, args.bus, settings, follow=args.follow, parent_pid=args.parent_pid, bars=bars)
