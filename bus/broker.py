"""The broker: XSUB (publishers connect) joined to XPUB (subscribers connect) by libzmq's proxy.

No Python runs per message. The bound addresses are written to ``bus.json`` in the run
directory so that tools (``bin/tail --bus``, ``bin/feed``) can find a running runtime.

Direct lanes (``bus.direct``, ipc only): each actor of the runtime binds its own PUB socket
at an address listed in ``bus.json`` (``peers``), and every subscriber, actor or tool,
connects to each of them as well as to the broker's XPUB. An actor's message then goes
from its process straight to each subscriber's, with no broker process (and its threads)
to wake on the way: on 2 cores that wake-up was half of every decision-loop hop. The
broker still carries whatever publishers outside the runtime send (``bin/feed``, the
supervisor's shutdown). Each sender uses one path, so per-sender order and sequence
numbers hold as before.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import structlog
import zmq

ADDRESSES_FILE = "bus.json"
MAX_IPC_PATH_BYTES = 107


@dataclass(frozen=True)
class BusAddresses:
    xsub: str
    """Publishers connect here."""
    xpub: str
    """Subscribers connect here."""
    server_key: str = ""
    """The broker's CURVE public key (z85); empty = no CURVE. Public: safe to write down."""
    client_key_file: str = ""
    """The client key file (.key_secret) this runtime's processes connect with (a path, never the key);
    the environment variable TT_CURVE_CLIENT_KEY_FILE overrides it for a tool of another user or host."""
    peers: dict[str, str] = field(default_factory=dict)
    """Direct lanes: actor short name -> the address its own PUB binds; subscribers connect to each. Empty = every
    message goes through the broker."""

    def write(self, run_dir: Path) -> None:
        tmp = run_dir / (ADDRESSES_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(self)))
        os.replace(tmp, run_dir / ADDRESSES_FILE)

    @classmethod
    def read(cls, run_dir: Path) -> "BusAddresses":
        return cls.from_json(json.loads((Path(run_dir) / ADDRESSES_FILE).read_text()))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "BusAddresses":
        return cls(xsub=data["xsub"], xpub=data["xpub"], server_key=data.get("server_key", ""),
                   client_key_file=data.get("client_key_file", ""), peers=dict(data.get("peers", {})))

    def subscribe_addresses(self) -> list[str]:
        """Where a subscriber connects: the broker's XPUB and every actor's direct PUB."""
        return [self.xpub, *self.peers.values()]

    def client_keys(self):
        """(this client's KeyPair, the server's public key) when the bus uses CURVE, else None."""
        if not self.server_key:
            return None
        from bus.auth import CLIENT_KEY_FILE_ENV, load_key_pair

        key_file = os.environ.get(CLIENT_KEY_FILE_ENV) or self.client_key_file
        if not key_file:
            raise ValueError(f"the bus uses CURVE: set {CLIENT_KEY_FILE_ENV} or bus.curve_client_secret_key_file to a client key file")
        return load_key_pair(key_file, what="bus.curve_client_secret_key_file"), self.server_key.encode()


def make_socket_dir(socket_dir: str = "") -> Path:
    """A short directory for ipc sockets: the run directory may be too deep for a 107-byte socket path."""
    if socket_dir:
        path = Path(socket_dir)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return Path(tempfile.mkdtemp(prefix="tt-", dir="/tmp"))


def bind_addresses(transport: str, host: str, xsub_port: int, xpub_port: int, socket_dir: Path | None,
                   direct_actors: list[str] = ()) -> BusAddresses:
    """The addresses to bind (tcp port 0 is resolved after binding). ``direct_actors``: with ipc, the actors that
    get a direct lane (their own PUB address in ``peers``)."""
    if transport == "ipc":
        assert socket_dir is not None
        tag = secrets.token_hex(3)
        xsub, xpub = f"ipc://{socket_dir}/{tag}.in", f"ipc://{socket_dir}/{tag}.out"
        peers = {name: f"ipc://{socket_dir}/{tag}.{name}" for name in direct_actors}
        for address in (xsub, xpub, *peers.values()):
            if len(address.encode()) - len("ipc://") > MAX_IPC_PATH_BYTES:
                raise ValueError(f"ipc socket path too long ({address}); set bus.socket_dir to a shorter directory")
        return BusAddresses(xsub=xsub, xpub=xpub, peers=peers)
    return BusAddresses(xsub=f"tcp://{host}:{xsub_port or '*'}", xpub=f"tcp://{host}:{xpub_port or '*'}")


@dataclass(frozen=True)
class CurveServer:
    """What the broker needs for CURVE: its key pair, the authorised client keys, and the client key file
    its own runtime's processes should use (written to bus.json as a path)."""

    server: Any
    """bus.auth.KeyPair (with the secret)."""
    authorized: frozenset
    """z85 public keys of the clients allowed in."""
    client_key_file: str = ""

    @classmethod
    def from_files(cls, server_secret_key_file: str, authorized_clients_dir: str, client_key_file: str = "") -> "CurveServer":
        from bus.auth import load_authorized_keys, load_key_pair

        server = load_key_pair(server_secret_key_file, what="bus.curve_server_secret_key_file")
        return cls(server, frozenset(load_authorized_keys(authorized_clients_dir)), client_key_file)


class Broker:
    def __init__(self, addresses: BusAddresses, hwm: int = 10000, *, curve: CurveServer | None = None, log: Any = None) -> None:
        self.context = zmq.Context.instance()
        self.zap = None
        if curve is not None:  # the ZAP handler first: bound before any CURVE socket, or libzmq lets everyone in
            from bus.auth import ZapHandler

            self.zap = ZapHandler(self.context, set(curve.authorized), log if log is not None else structlog.get_logger("broker"))
        self.xsub = self.context.socket(zmq.XSUB)
        self.xpub = self.context.socket(zmq.XPUB)
        for sock in (self.xsub, self.xpub):
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, hwm)
            sock.setsockopt(zmq.RCVHWM, hwm)
            if curve is not None:
                from bus.auth import make_server

                make_server(sock, curve.server)
        self.xsub.bind(addresses.xsub)
        self.xpub.bind(addresses.xpub)
        self.addresses = BusAddresses(
            xsub=self.xsub.getsockopt_string(zmq.LAST_ENDPOINT), xpub=self.xpub.getsockopt_string(zmq.LAST_ENDPOINT),
            server_key=curve.server.public.decode() if curve else "", client_key_file=curve.client_key_file if curve else "",
            peers=dict(addresses.peers),
        )

    def serve_until(self, stop: threading.Event) -> None:
        """Run libzmq's proxy in a thread until ``stop`` is set, then terminate it through its control socket."""
        control_address = f"inproc://broker-control-{id(self)}"
        control_in = self.context.socket(zmq.PAIR)
        control_in.bind(control_address)
        control_out = self.context.socket(zmq.PAIR)
        control_out.connect(control_address)
        proxy = threading.Thread(target=zmq.proxy_steerable, args=(self.xsub, self.xpub, None, control_in), name="proxy", daemon=True)
        proxy.start()
        while not stop.wait(0.5):
            if not proxy.is_alive():
                break
        control_out.send(b"TERMINATE")
        proxy.join(timeout=5)
        control_out.close(linger=0)
        control_in.close(linger=0)
        self.close()

    def close(self) -> None:
        self.xsub.close(linger=0)
        self.xpub.close(linger=0)
        if self.zap is not None:
            self.zap.close()
        for address in (self.addresses.xsub, self.addresses.xpub):
            if address.startswith("ipc://"):
                Path(address[len("ipc://"):]).unlink(missing_ok=True)
