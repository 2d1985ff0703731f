"""An array variable, and a set of a small domain, as an action or property reads them:
indexing gives expressions over the variable's slots (see :mod:`~.dsl`)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from .errors import ModelError
from .expr import Expr, Not, Select, Slot, as_expr

__all__ = ["ElemRef", "ArrayView", "SetView"]


class ElemRef(Expr):
    """``array[index]`` for an index that is an expression; usable as an lvalue."""

    __slots__ = ("var", "index", "which")

    def __init__(self, var: Any, index: Expr, which: int):
        opts = tuple(Slot(i, which) for i in var.slots)
        sel = Select(index, opts)
        super().__init__(sel.op, sel.args, sel.value)
        self.var, self.index, self.which = var, index, which


class ArrayView:
    """An array variable seen from an action or property."""

    def __init__(self, var: Any, which: int):
        self._var, self._which = var, which

    def __getitem__(self, i: int | Expr) -> Expr:
        v = self._var
        if isinstance(i, Expr):
            if i.op == "const":
                i = i.value
            else:
                return ElemRef(v, i, self._which)
        if not isinstance(i, int) or not 0 <= i < (v.length or 0):
            raise ModelError(f"{v.name}[{i}] is outside 0..{(v.length or 0) - 1}")
        return Slot(v.first_slot + i, self._which)

    def __len__(self) -> int:
        return self._var.length or 0

    def __iter__(self) -> Iterator[Expr]:
        return (self[i] for i in range(len(self)))


class SetView(ArrayView):
    """A finite set over a small domain (TLA+'s ``SUBSET Elements``), one bit per
    element.  Elements are values of the domain (an enum's names work too); reads give
    truth values and numbers, writes give updates to merge into an action's.

    >>> from osf_check.models.dsl import Enum, ModelBuilder
    >>> from osf_check.models.expr import evaluate
    >>> b = ModelBuilder("sets")
    >>> S = b.set("S", Enum("a", "b", "c"), actor="x")
    >>> b.init(S={"#set": ["b"]})
    >>> m = b.build()
    >>> st = m.initial_states[0]
    >>> evaluate(S.contains("b"), st), evaluate(S.card(), st), m.show_state(st)
    (1, 1, {'S': {'#set': ['b']}})
    """

    def _index(self, x: Any) -> Any:
        e = self._var.elements
        assert e is not None  # a SetView is made only for a set variable
        if isinstance(x, str):
            return e.parse(x) - e.lo
        return x - e.lo if e.lo else x

    def contains(self, x: Any) -> Expr:
        """``x \\in S``."""
        return as_expr(self[self._index(x)])

    def card(self) -> Expr:
        """``Cardinality(S)``."""
        from .expr import Count
        return Count(list(self))

    def is_empty(self) -> Expr:
        from .expr import And
        return And(*(Not(b) for b in self))

    def subset_of(self, other: "SetView") -> Expr:
        """``S \\subseteq T``."""
        from .expr import And, Implies
        return And(*(Implies(a, b) for a, b in zip(self, other)))

    def elements(self) -> list[int]:
        e = self._var.elements
        assert e is not None  # a SetView is made only for a set variable
        return list(range(e.lo, e.hi + 1))

    def exists(self, pred: Callable[[int], Any]) -> Expr:
        """``\\E x \\in S : pred(x)``."""
        from .expr import And, Or
        return Or(*(And(b, pred(x)) for b, x in zip(self, self.elements())))

    def forall(self, pred: Callable[[int], Any]) -> Expr:
        """``\\A x \\in S : pred(x)``."""
        from .expr import And, Implies
        return And(*(Implies(b, pred(x)) for b, x in zip(self, self.elements())))

    def add(self, x: Any) -> dict[Expr, Any]:
        """The update ``S' = S \\cup {x}``."""
        return {self[self._index(x)]: True}

    def remove(self, x: Any) -> dict[Expr, Any]:
        """The update ``S' = S \\ {x}``."""
        return {self[self._index(x)]: False}

    def assign(self, bits: Iterable[Any]) -> dict[Expr, Any]:
        """The update ``S' = T`` for ``T`` another set's bits (``union``, ``intersect``)."""
        return dict(zip(self, bits))

    def union(self, other: "SetView") -> list[Expr]:
        from .expr import Or
        return [Or(a, b) for a, b in zip(self, other)]

    def intersect(self, other: "SetView") -> list[Expr]:
        from .expr import And
        return [And(a, b) for a, b in zip(self, other)]
