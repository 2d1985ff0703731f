"""The finite domains state variables take their values in: ``Int``, ``Bool``, ``Enum``.

A value is stored as a small integer (an enum's index, a bool's 0/1); a domain knows how
a person reads it and how to read it back.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from .errors import BadValue, ModelError
from .expr import INT64

__all__ = ["Domain", "Bool", "Enum", "Int"]


class Domain:
    """A finite set of values ``lo..hi`` with an optional name per value.

    Iterating gives its values in order (an enum's are its names' indices), ``len``
    how many there are, so a domain serves wherever a range of its values does.

    >>> Procs = Enum("p1", "p2", "p3")
    >>> list(Procs), len(Procs), Procs.p2
    ([0, 1, 2], 3, 1)
    >>> list(Int(-1, 1)), list(Bool())
    ([-1, 0, 1], [0, 1])
    """

    __slots__ = ("kind", "lo", "hi", "names")

    def __init__(self, kind: str, lo: int, hi: int, names: tuple[str, ...] = ()):
        if hi < lo:
            raise ModelError(f"empty domain {lo}..{hi}")
        self.kind, self.lo, self.hi, self.names = kind, lo, hi, names

    @property
    def size(self) -> int:
        return self.hi - self.lo + 1

    @property
    def bits(self) -> int:
        return max(1, math.ceil(math.log2(self.size))) if self.size > 1 else 0

    def __getattr__(self, name: str) -> int:
        names = object.__getattribute__(self, "names")
        if name in names:
            return names.index(name)
        raise AttributeError(name)

    def __contains__(self, v: int) -> bool:
        return self.lo <= v <= self.hi

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.lo, self.hi + 1))

    def __len__(self) -> int:
        return self.size

    def show(self, v: int) -> Any:
        """The value as a person (and JSON) reads it."""
        if self.kind == "bool":
            return bool(v)
        if self.kind == "enum":
            return self.names[v]
        return int(v)

    def parse(self, x: Any) -> int:
        """The inverse of :meth:`show`; raises ``ValueError`` on a foreign value."""
        if self.kind == "bool":
            if isinstance(x, bool):
                return int(x)
            raise BadValue(f"expected true/false, got {x!r}")
        if self.kind == "enum":
            if isinstance(x, str) and x in self.names:
                return self.names.index(x)
            raise BadValue(f"expected one of {', '.join(self.names)}, got {x!r}")
        if isinstance(x, int) and not isinstance(x, bool) and self.lo <= x <= self.hi:
            return x
        raise BadValue(f"expected an integer in {self.lo}..{self.hi}, got {x!r}")

    def read(self, x: Any) -> int:
        """A value a model writes (``init``, ``init_all``): what :meth:`parse` reads, or
        the value's number (an enum's index, as ``Enum.name`` gives it, a bool's 0/1).

        >>> Nodes = Enum("n1", "n2")
        >>> Nodes.read("n2"), Nodes.read(Nodes.n2), Bool().read(1)
        (1, 1, 1)
        >>> Nodes.read(2)
        Traceback (most recent call last):
        ...
        osf_check.models.errors.BadValue: expected one of n1, n2 (or 0..1), got 2
        """
        if isinstance(x, int) and not (isinstance(x, bool) and self.kind != "bool"):
            if self.lo <= x <= self.hi:
                return int(x)
        elif isinstance(x, (str, bool)):
            return self.parse(x)
        shown = (f"one of {', '.join(self.names)} (or {self.lo}..{self.hi})"
                 if self.kind == "enum" else "true/false (or 0/1)" if self.kind == "bool"
                 else f"an integer in {self.lo}..{self.hi}")
        raise BadValue(f"expected {shown}, got {x!r}")

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        if self.kind == "enum":
            d["values"] = list(self.names)
        elif self.kind == "int":
            d["min"], d["max"] = self.lo, self.hi
        return d

    def __repr__(self) -> str:
        if self.kind == "enum":
            return f"Enum{self.names}"
        return "Bool()" if self.kind == "bool" else f"Int({self.lo}, {self.hi})"


def Bool() -> Domain:
    return Domain("bool", 0, 1)


def Enum(*names: str) -> Domain:
    """An enumeration; ``Enum("a", "b").b == 1``."""
    if len(set(names)) != len(names) or not names:
        raise ModelError(f"enum values must be distinct and non-empty: {names}")
    if not all(isinstance(n, str) and n for n in names):  # (a trace names them in JSON)
        raise ModelError(f"enum values are names, non-empty strings: {names}")
    return Domain("enum", 0, len(names) - 1, tuple(names))


def Int(lo: int, hi: int) -> Domain:
    """The integers ``lo..hi`` (``lo`` may be negative: a state stores ``v - lo``)."""
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi)):
        raise ModelError(f"Int takes two integers, got {lo!r}, {hi!r}")
    if lo < INT64[0] or hi > INT64[1]:  # numpy's columns hold them (the vector engine's)
        raise ModelError(f"Int({lo}, {hi}) reaches past 64-bit integers, which the engines "
                         f"hold values in: keep a domain within {INT64[0]}..{INT64[1]}")
    return Domain("int", lo, hi)
