"""Token authentication when the cells join a Ray cluster (``--ray HOST:PORT``).

Since Ray 2.59, ``ray start --head`` turns token authentication on whenever a token already exists on the head
(``~/.ray/auth_token``: any local ``ray.init()`` writes one, as does ``ray get-auth-token --generate``). A driver that
joins such a head by its address stays unauthenticated unless ``RAY_AUTH_MODE=token`` is set (Ray enables it on its
own only for ``address="auto"``), and ``ray.init`` then fails after ~20 s with "Failed to connect to Ray cluster".

So before joining, the pool looks for a token where Ray reads one (``$RAY_AUTH_TOKEN``, the file
``$RAY_AUTH_TOKEN_PATH``, ``~/.ray/auth_token``) and, with ``RAY_AUTH_MODE`` unset, turns token mode on for this
process when it finds one; a head without authentication accepts such a client all the same. ``RAY_AUTH_MODE`` set
(``disabled`` or ``token``) is obeyed as it is. When joining fails, ``connect_error`` says what to set on the client
and on each worker node.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

AUTH_MODE_ENV = "RAY_AUTH_MODE"
TOKEN_ENV = "RAY_AUTH_TOKEN"
TOKEN_PATH_ENV = "RAY_AUTH_TOKEN_PATH"
AUTH_REFUSALS = ("InvalidAuthToken", "Unauthenticated", "AuthenticationError")
"""Words in Ray's connection error (or its cause) that say the head refused this client's credentials."""


def default_token_path() -> Path:
    """Where ``ray start --head`` and ``ray get-auth-token`` keep the token: ~/.ray/auth_token."""
    return Path.home() / ".ray" / "auth_token"


def token_source() -> str | None:
    """Where this client's token comes from, in Ray's own order ($RAY_AUTH_TOKEN, then the file $RAY_AUTH_TOKEN_PATH,
    then ~/.ray/auth_token), or None when there is none (an unreadable or empty file counts as none)."""
    if os.environ.get(TOKEN_ENV, "").strip():
        return f"${TOKEN_ENV}"
    named = os.environ.get(TOKEN_PATH_ENV, "")
    for path in ([Path(named).expanduser()] if named else [default_token_path()]):
        try:
            if path.read_text().strip():
                return str(path)
        except OSError:
            pass
    return None


def use_token_if_found() -> str | None:
    """Turn token authentication on for this process (and the Ray processes it starts) when a token is found and
    RAY_AUTH_MODE is unset; returns where the token comes from, or None when the client joins without one."""
    mode = os.environ.get(AUTH_MODE_ENV)
    if mode is not None:
        return token_source() if mode.strip().lower() == "token" else None
    source = token_source()
    if source is None:
        return None
    os.environ[AUTH_MODE_ENV] = "token"
    _refresh_ray_config()
    logging.getLogger(__name__).debug("ray token authentication from %s", source)
    return source


def _refresh_ray_config() -> None:
    """Ray caches its config per process: refresh it, as ray.init(address="auto") does when it finds a token."""
    try:
        from ray._raylet import Config

        Config.initialize("")
    except (ImportError, AttributeError):  # another Ray: the variable is read when ray.init starts its core worker
        pass


def connect_error(address: str, error: BaseException, source: str | None) -> str:
    """One paragraph for a failed join: the error, then what to set on this client and on each worker node."""
    mode = os.environ.get(AUTH_MODE_ENV)
    if mode is not None and mode.strip().lower() != "token":
        found = f"{AUTH_MODE_ENV}={mode} is set here, so this client sent no token"
    elif source is None:
        found = f"no token was found here (${TOKEN_ENV}, ${TOKEN_PATH_ENV}, {default_token_path()})"
    else:
        found = f"the token from {source} was sent: if the head refused it, it is not the head's"
    details = f"{error} {error.__cause__ or ''}"
    refused = any(word in details for word in AUTH_REFUSALS)
    head = ("The head refused this client's credentials: it uses token authentication" if refused else
            "If the head uses token authentication (Ray 2.59+ `ray start --head` turns it on where ~/.ray/auth_token exists; "
            "its output then says 'Token authentication is enabled')")
    first_line = (str(error).strip().splitlines() or [""])[0]
    return (
        f"cannot join the Ray cluster at {address} ({type(error).__name__}: {first_line}). {head}, and {found}. "
        f"On this machine: copy the head's ~/.ray/auth_token to {default_token_path()} (or set {TOKEN_PATH_ENV}=FILE, or "
        f"{TOKEN_ENV}=TOKEN), and leave {AUTH_MODE_ENV} unset or set it to token. On each worker node: the same token file, "
        f"and start it with `RAY_AUTH_MODE=token .venv/bin/ray start --address {address}`."
        + ("" if refused else f" Otherwise check the address and that the head runs (`ray status --address {address}`).")
    )
