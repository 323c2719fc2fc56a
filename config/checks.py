"""The one validation helper of the config structs: a failed check names its key."""

from __future__ import annotations


def require(condition: bool, key: str, message: str, *, section: str = "") -> None:
    """Raise ValueError("<section.key>: <message>") unless ``condition``; the loader turns it into a
    ConfigError naming the key and the file it came from."""
    if not condition:
        raise ValueError(f"{section}.{key}: {message}" if section else f"{key}: {message}")
