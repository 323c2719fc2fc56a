"""The instrument spec lives in actors/common/instruments.py (shared with risk); env modules may keep importing it here."""

from actors.common.instruments import INSTRUMENTS, InstrumentSpec, resolve_instrument

__all__ = ["INSTRUMENTS", "InstrumentSpec", "resolve_instrument"]
