"""CURVE authentication and encryption for a tcp bus (ZeroMQ's CurveZMQ, keys made by pyzmq's zmq.auth).

- ``create_keys(dir)``: a server key pair and client key pairs (``bin/run keys``); the public
  halves of the clients go to ``authorized_clients/``, which is what the broker trusts.
- The broker's sockets are CURVE servers; a ZAP handler in the broker process (``ZapHandler``)
  accepts a client only when its public key is in the authorised directory, and logs every
  rejection (rate-limited: a scanner cannot flood the log).
- Every client (actors, the supervisor, bin/tail --bus, bin/feed) finds the server's public key
  and its own key file in the run directory's bus.json (``BusAddresses``) and connects with them.

Secret keys are read from files and never logged; only public keys (z85) and file paths are.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq
import zmq.auth
import zmq.utils.z85

ZAP_ENDPOINT = "inproc://zeromq.zap.01"
ZAP_VERSION = b"1.0"
SERVER_NAME = "server"
AUTHORIZED_DIR = "authorized_clients"
CLIENT_KEY_FILE_ENV = "TT_CURVE_CLIENT_KEY_FILE"
"""Overrides bus.json's client key file: a tool run by another user or on another host uses its own key."""
REJECTION_LOG_INTERVAL_SECS = 5.0


class CurveKeyError(ValueError):
    """A key file is missing or not a key file; the message names it."""


@dataclass(frozen=True)
class KeyPair:
    public: bytes
    """z85, 40 bytes."""
    secret: bytes = b""

    def __repr__(self) -> str:  # never print a secret
        return f"KeyPair(public={self.public.decode()!r}, secret={'<redacted>' if self.secret else '<none>'})"


def load_key_pair(path: str | Path, *, what: str, need_secret: bool = True) -> KeyPair:
    """A key pair from a zmq.auth certificate file (``*.key_secret`` holds both halves, ``*.key`` the public one)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise CurveKeyError(f"{what}: no key file at {path} (make keys with: bin/run keys --dir DIR)")
    try:
        public, secret = zmq.auth.load_certificate(str(path))
    except (ValueError, OSError) as exc:
        raise CurveKeyError(f"{what}: {path} is not a ZeroMQ certificate ({exc})") from None
    if need_secret and not secret:
        raise CurveKeyError(f"{what}: {path} holds no secret key (use the .key_secret file)")
    return KeyPair(public, secret or b"")


def load_authorized_keys(directory: str | Path) -> set[bytes]:
    """The public keys of every ``*.key`` certificate in ``directory``."""
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise CurveKeyError(f"bus.curve_authorized_clients_dir: no directory at {directory}")
    keys = set()
    for path in sorted(directory.glob("*.key")):
        keys.add(load_key_pair(path, what="authorized client key", need_secret=False).public)
    if not keys:
        raise CurveKeyError(f"bus.curve_authorized_clients_dir: no *.key file in {directory}; nobody could connect")
    return keys


def create_keys(directory: str | Path, clients: int = 1) -> dict[str, Path]:
    """Make ``server`` and ``client1..N`` key pairs in ``directory``; the clients' public keys are copied to
    ``directory/authorized_clients``. Secret files are readable by the owner only. Returns name -> file."""
    directory = Path(directory)
    authorized = directory / AUTHORIZED_DIR
    authorized.mkdir(parents=True, exist_ok=True)
    made: dict[str, Path] = {}
    for name in [SERVER_NAME, *(f"client{i}" for i in range(1, clients + 1))]:
        public_file, secret_file = zmq.auth.create_certificates(str(directory), name)
        os.chmod(secret_file, 0o600)
        if name != SERVER_NAME:
            shutil.copy(public_file, authorized / Path(public_file).name)
        made[name] = Path(secret_file)
        made[f"{name}.public"] = Path(public_file)
    return made


# --------------------------------------------------------------------------- sockets


def make_server(sock: zmq.Socket, server: KeyPair) -> None:
    sock.curve_secretkey = server.secret
    sock.curve_publickey = server.public
    sock.curve_server = True


def make_client(sock: zmq.Socket, client: KeyPair, server_public: bytes) -> None:
    sock.curve_secretkey = client.secret
    sock.curve_publickey = client.public
    sock.curve_serverkey = server_public


class ZapHandler:
    """The broker's ZAP handler (RFC 27): accept a CURVE client whose public key is authorised, log each decision.

    It must be bound in the broker's context before the sockets bind: with no handler, libzmq would let
    every CURVE client in."""

    def __init__(self, context: zmq.Context, authorized: set[bytes], log: Any) -> None:
        self.authorized = set(authorized)
        self.log = log
        self.accepted = 0
        self.rejected = 0
        self._socket = context.socket(zmq.REP)
        self._socket.linger = 0
        self._socket.bind(ZAP_ENDPOINT)
        self._stop = threading.Event()
        self._last_rejection_log = 0.0
        self._suppressed = 0
        self._thread = threading.Thread(target=self._serve, name="zap", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        while not self._stop.is_set():
            if poller.poll(100):
                self._socket.send_multipart(self.reply(self._socket.recv_multipart()))
        self._socket.close(linger=0)

    def reply(self, request: list[bytes]) -> list[bytes]:
        """The ZAP reply to one request: [version, request id, status, text, user id, metadata]."""
        if len(request) < 6 or request[0] != ZAP_VERSION:
            return [ZAP_VERSION, request[1] if len(request) > 1 else b"", b"400", b"bad ZAP request", b"", b""]
        request_id, address, mechanism, credentials = request[1], request[3].decode(errors="replace"), request[5], request[6:]
        if mechanism == b"CURVE" and credentials and zmq.utils.z85.encode(credentials[0]) in self.authorized:
            client_key = zmq.utils.z85.encode(credentials[0]).decode()
            self.accepted += 1
            self.log.info("bus_client_accepted", address=address, client_key=client_key)
            return [ZAP_VERSION, request_id, b"200", b"OK", client_key.encode(), b""]
        self.rejected += 1
        self._log_rejection(address, mechanism.decode(errors="replace"),
                            zmq.utils.z85.encode(credentials[0]).decode() if credentials and len(credentials[0]) == 32 else "")
        return [ZAP_VERSION, request_id, b"400", b"client key not authorised", b"", b""]

    def _log_rejection(self, address: str, mechanism: str, client_key: str) -> None:
        now = time.monotonic()
        if now - self._last_rejection_log < REJECTION_LOG_INTERVAL_SECS:
            self._suppressed += 1
            return
        self.log.warning("bus_client_rejected", address=address, mechanism=mechanism, client_key=client_key,
                         reason="key not authorised", suppressed=self._suppressed)
        self._last_rejection_log, self._suppressed = now, 0

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
