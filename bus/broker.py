"""The broker: XSUB (publishers connect) joined to XPUB (subscribers connect) by libzmq's proxy.

No Python runs per message. The bound addresses are written to ``bus.json`` in the run
directory so that tools (``bin/tail --bus``, ``bin/feed``) can find a running runtime.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import zmq

ADDRESSES_FILE = "bus.json"
MAX_IPC_PATH_BYTES = 107


@dataclass(frozen=True)
class BusAddresses:
    xsub: str
    """Publishers connect here."""
    xpub: str
    """Subscribers connect here."""

    def write(self, run_dir: Path) -> None:
        tmp = run_dir / (ADDRESSES_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(self)))
        os.replace(tmp, run_dir / ADDRESSES_FILE)

    @classmethod
    def read(cls, run_dir: Path) -> "BusAddresses":
        data = json.loads((Path(run_dir) / ADDRESSES_FILE).read_text())
        return cls(xsub=data["xsub"], xpub=data["xpub"])


def make_socket_dir(socket_dir: str = "") -> Path:
    """A short directory for ipc sockets: the run directory may be too deep for a 107-byte socket path."""
    if socket_dir:
        path = Path(socket_dir)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return Path(tempfile.mkdtemp(prefix="tt-", dir="/tmp"))


def bind_addresses(transport: str, host: str, xsub_port: int, xpub_port: int, socket_dir: Path | None) -> BusAddresses:
    """The addresses to bind (tcp port 0 is resolved after binding)."""
    if transport == "ipc":
        assert socket_dir is not None
        tag = secrets.token_hex(3)
        xsub, xpub = f"ipc://{socket_dir}/{tag}.in", f"ipc://{socket_dir}/{tag}.out"
        for address in (xsub, xpub):
            if len(address.encode()) - len("ipc://") > MAX_IPC_PATH_BYTES:
                raise ValueError(f"ipc socket path too long ({address}); set bus.socket_dir to a shorter directory")
        return BusAddresses(xsub=xsub, xpub=xpub)
    return BusAddresses(xsub=f"tcp://{host}:{xsub_port or '*'}", xpub=f"tcp://{host}:{xpub_port or '*'}")


class Broker:
    def __init__(self, addresses: BusAddresses, hwm: int = 10000) -> None:
        self.context = zmq.Context.instance()
        self.xsub = self.context.socket(zmq.XSUB)
        self.xpub = self.context.socket(zmq.XPUB)
        for sock in (self.xsub, self.xpub):
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, hwm)
            sock.setsockopt(zmq.RCVHWM, hwm)
        self.xsub.bind(addresses.xsub)
        self.xpub.bind(addresses.xpub)
        self.addresses = BusAddresses(
            xsub=self.xsub.getsockopt_string(zmq.LAST_ENDPOINT), xpub=self.xpub.getsockopt_string(zmq.LAST_ENDPOINT)
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
        for address in (self.addresses.xsub, self.addresses.xpub):
            if address.startswith("ipc://"):
                Path(address[len("ipc://"):]).unlink(missing_ok=True)
