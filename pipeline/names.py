"""A tiny generic name registry with "did you mean" errors.

Backends, engines and the scheme table register themselves by name; an unknown name fails
with the closest match and the full list, so a typo in params.yaml is a one-line fix:

>>> engines: Registry[type] = Registry("engine")
>>> @engines.register("vllm")
... class VllmEngine: ...
>>> engines.get("vllm") is VllmEngine
True
>>> engines.get("vlm")
Traceback (most recent call last):
...
pipeline.names.UnknownNameError: unknown engine 'vlm' — did you mean 'vllm'? Available: vllm
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice most similar to ``word`` (difflib ratio >= 0.6), or None."""
    matches = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"did you mean 'y'?"`` for the closest choice, or ``""`` when nothing is close.

    >>> did_you_mean("calibraton", ["calibration", "variants"])
    "did you mean 'calibration'?"
    >>> did_you_mean("zzz", ["calibration"])
    ''
    """
    match = closest(word, choices)
    return f"did you mean '{match}'?" if match else ""


class UnknownNameError(LookupError):
    """A name that is not registered; the message carries the suggestion and the list."""

    def __init__(self, kind: str, name: str, available: Iterable[str]) -> None:
        self.kind, self.name, self.available = kind, name, sorted(available)
        hint = did_you_mean(name, self.available)
        listing = ", ".join(self.available) or "(none registered)"
        sep = f" — {hint} " if hint else " — "
        super().__init__(f"unknown {kind} '{name}'{sep}Available: {listing}")


class Registry(Generic[T]):
    """Name -> object table for one kind of plug-in (``kind`` names it in errors)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, obj: T) -> T:
        """Register ``obj`` under ``name``; a second registration of a name is an error."""
        if name in self._items:
            raise ValueError(
                f"{self.kind} '{name}' is already registered (by {self._items[name]!r}); "
                "pick another name or remove the duplicate registration"
            )
        logger.debug("registered %s %r", self.kind, name)
        self._items[name] = obj
        return obj

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`: ``@registry.register("vllm")``."""

        def decorator(obj: T) -> T:
            return self.add(name, obj)

        return decorator

    def get(self, name: str) -> T:
        """The object registered as ``name``; :class:`UnknownNameError` otherwise."""
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._items) from None

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, names={self.names()!r})"
