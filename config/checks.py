"""What every config struct uses: bounds msgspec checks while decoding (``Annotated[int, Meta(ge=1)]``),
``check_bounds`` that applies the same bounds to a struct built in code, and ``require`` for the checks
bounds cannot express, and ``ConfigSection``, the base of every section struct that runs that check. Every failure
names its key. Imports nothing but msgspec and the stdlib."""

from __future__ import annotations

import functools
import operator
from typing import Annotated, Any

import msgspec
import msgspec.inspect

# A violation reads "Expected `int` >= 1 - at `$.section.key`"; the loader names the key and its file.
Port = Annotated[int, msgspec.Meta(ge=0, le=65535)]
"""A tcp port; 0 = pick a free one."""
Count = Annotated[int, msgspec.Meta(ge=0)]
PositiveCount = Annotated[int, msgspec.Meta(ge=1)]
Secs = Annotated[float, msgspec.Meta(ge=0)]
PositiveSecs = Annotated[float, msgspec.Meta(gt=0)]
Fraction = Annotated[float, msgspec.Meta(ge=0, le=1)]
"""A share in [0, 1]."""
NonNegative = Annotated[float, msgspec.Meta(ge=0)]
Positive = Annotated[float, msgspec.Meta(gt=0)]


def require(condition: bool, key: str, message: str, *, section: str = "") -> None:
    """Raise ValueError("<section.key>: <message>") unless ``condition``; the loader turns it into a
    ConfigError naming the key and the file it came from."""
    if not condition:
        raise ValueError(f"{section}.{key}: {message}" if section else f"{key}: {message}")


_COMPARISONS = {"ge": (operator.ge, ">="), "gt": (operator.gt, ">"), "le": (operator.le, "<="), "lt": (operator.lt, "<")}


@functools.cache
def _declared_bounds(struct_type: type) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    """(field, ((comparison, limit), ...)) for every numeric field with Meta bounds."""
    found = []
    for field in msgspec.inspect.type_info(struct_type).fields:
        kind = field.type
        if isinstance(kind, (msgspec.inspect.IntType, msgspec.inspect.FloatType)):
            limits = tuple((name, getattr(kind, name)) for name in _COMPARISONS if getattr(kind, name) is not None)
            if limits:
                found.append((field.name, limits))
    return tuple(found)


def check_bounds(struct: msgspec.Struct, section: str) -> None:
    """Check the declared Meta bounds of ``struct``: msgspec checks them only while decoding, so a
    struct built in code (``PolicyConfig(n_steps=1)``) is checked here, from its ``__post_init__``."""
    for name, limits in _declared_bounds(type(struct)):
        value = getattr(struct, name)
        for comparison, limit in limits:
            holds, symbol = _COMPARISONS[comparison]
            require(holds(value, limit), name, f"must be {symbol} {limit}, got {value}", section=section)


class ConfigSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of every config section struct: frozen, unknown keys refused, declared bounds checked when built.

    A section struct is named for its section (``FusionConfig`` is [fusion]: ``section_name()``, the name its
    errors give) and restates ``kw_only=True``, which msgspec applies per class. One with checks of its own
    calls ``super().__post_init__()`` among them."""

    @classmethod
    def section_name(cls) -> str:
        return cls.__name__.removesuffix("Config").lower()

    def __post_init__(self) -> None:
        check_bounds(self, self.section_name())
