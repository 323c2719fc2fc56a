"""When to think on a news market (reasoner.think_on = "news"): when something new arrives, not on every bar.

A small model thinking on every bar mostly re-reads the same tape; what changes a good answer is new
information. An env's observation is worth a thought when, since the env's last accepted one:

- an event became public on its clock (a release, a headline: the book's newest visible minute moved on);
- the position opened, closed or turned (an entry or an exit);
- reasoner.think_every_bars loop steps passed, or it is the env's first observation (or its step count restarted).

Each decision still uses the latest thought (fusion's ThoughtBook); its age in steps is what fusion weighs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class _Seen:
    step: int
    event_minute: int | None
    side: int


class NewsTrigger:
    def __init__(self, every_bars: int, on_position: bool = True) -> None:
        self.every_bars = every_bars
        self.on_position = on_position
        """False (reasoner.think_on = events): an entry or exit is no reason to think."""
        self._seen: dict[int, _Seen] = {}
        self.counts = {"first": 0, "event": 0, "position": 0, "interval": 0, "quiet": 0}

    def forget(self, env_id: int) -> None:
        """The env's next observation is its first (a new episode: nothing of the last one may be carried into it)."""
        self._seen.pop(env_id, None)

    def reason_to_think(self, env_id: int, step: int, context: Mapping[str, Any], newest_event_minute: int | None) -> str:
        """Why this observation is worth a thought ("first", "event", "position", "interval"), or "" on a quiet bar."""
        side = _side(context)
        seen = self._seen.get(env_id)
        if seen is None or step < seen.step:
            reason = "first"
        elif newest_event_minute is not None and (seen.event_minute is None or newest_event_minute > seen.event_minute):
            reason = "event"
        elif self.on_position and side != seen.side:
            reason = "position"
        elif step - seen.step >= self.every_bars:
            reason = "interval"
        else:
            self.counts["quiet"] += 1
            return ""
        self.counts[reason] += 1
        self._seen[env_id] = _Seen(step, newest_event_minute, side)
        return reason


def _side(context: Mapping[str, Any]) -> int:
    position = int(context.get("position", 0) or 0)
    return (position > 0) - (position < 0)
