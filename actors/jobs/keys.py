"""Mode keys: make CURVE key pairs for a tcp bus reachable from other hosts (bus/auth.py)."""

from __future__ import annotations

import argparse

from actors.jobs.common import JobError
from bus.auth import AUTHORIZED_DIR, create_keys


def mode_keys(args: argparse.Namespace) -> int:
    directory = args.keys_dir
    try:
        made = create_keys(directory, clients=args.clients)
    except OSError as exc:  # --dir names a file, or a folder this user cannot write
        raise JobError(f"keys: cannot write key pairs in {directory}: {exc.strerror or exc}") from None
    print(f"CURVE keys in {directory.resolve()} (the .key_secret files are secret: owner-only, never commit them)")
    for name, path in made.items():
        print(f"  {name:<16} {path}")
    client = made["client1"]
    print(
        "\nAdd to your config (or --set):\n"
        "  [bus]\n  transport = \"tcp\"\n  host = \"0.0.0.0\"  # or this host's address\n"
        f"  curve_server_secret_key_file = \"{made['server']}\"\n"
        f"  curve_authorized_clients_dir = \"{directory / AUTHORIZED_DIR}\"\n"
        f"  curve_client_secret_key_file = \"{client}\"\n"
        f"A client on another host needs its own .key_secret (TT_CURVE_CLIENT_KEY_FILE) and its .key in {AUTHORIZED_DIR}/."
    )
    return 0
