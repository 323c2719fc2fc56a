"""A bounded memory of keys met before: how the feed drops a resent trade or headline, the dashboard an event it
read twice (once on the bus, once in its publisher's log), and a step join the late messages of a step it answered.

Bounded on purpose: a live run is long, and a perfect memory would grow without end; a key older than the last
``max_keys`` reads as new again, which for a resend that late is the lesser harm.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable


class SeenKeys:
    """The last ``max_keys`` keys met, oldest forgotten first."""

    def __init__(self, max_keys: int) -> None:
        if max_keys < 1:
            raise ValueError(f"SeenKeys keeps at least 1 key, got max_keys={max_keys}")
        self.max_keys = max_keys
        self._keys: OrderedDict[Hashable, None] = OrderedDict()

    def first_time(self, key: Hashable) -> bool:
        """True the first time ``key`` is met (and remember it); False for a key remembered already."""
        if key in self._keys:
            return False
        self._keys[key] = None
        while len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)
        return True

    def forget(self, key: Hashable) -> None:
        """Forget ``key`` if remembered: it will be new once more."""
        self._keys.pop(key, None)

    def clear(self) -> None:
        self._keys.clear()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)
