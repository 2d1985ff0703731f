"""Structured state: records, tuples, sets, arrays over any finite index domain and
arrays of arrays, lowered to the packed slots every engine reads.

A structured variable is a *type* tree over the scalar domains.  Building the model
gives each leaf (an ``Int``, ``Bool`` or ``Enum`` value, or one element's bit of a set)
one slot, in the order the type lists them: an array of records is element by element,
each element field by field.  Reads become slots and :func:`~.expr.Select` nodes, writes
become one guarded update per slot they may reach, so every engine, z3 included, reads
them as it reads a plain array; only the traces see the structure again.

>>> from osf_check.models.dsl import ModelBuilder, Enum, Int
>>> PC = Enum("idle", "busy")
>>> b = ModelBuilder("procs")
>>> proc = b.array("proc", Record(pc=PC, n=Int(0, 3)), 2, actor="p")
>>> b.init(proc={"pc": "idle", "n": 0})
>>> m = b.build()
>>> m.slot_names
['proc[0].pc', 'proc[0].n', 'proc[1].pc', 'proc[1].n']
>>> m.show_state(m.initial_states[0])
{'proc': [{'pc': 'idle', 'n': 0}, {'pc': 'idle', 'n': 0}]}
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Iterator, Mapping, Sequence, Union

from .domains import Bool, Domain, Int
from .errors import BadValue, ModelError
from .expr import And, Const, Expr, Select, Slot
from .views import SetView

__all__ = ["Record", "Tuple", "SetOf", "Array", "SetTable", "Type", "as_type"]

#: where a value lives: its first slot, or ``(index, [where each element lives])`` for a
#: value picked by a computed index (nested once per computed index on the way)
Loc = Union[int, tuple]


class Type:
    """The type of a structured value: how many slots it takes and how it shows."""

    size: int

    def slot_domains(self) -> list[Domain]:
        raise NotImplementedError

    def slot_names(self, prefix: str) -> list[str]:
        raise NotImplementedError

    def show(self, vals: Sequence[int]) -> Any:
        raise NotImplementedError

    def values(self, x: Any, init: bool) -> list[range]:
        """Each slot's values for the shown value ``x``: one value each, or (``init``,
        an initial value given as a domain) every value of it.  ``init`` also takes one
        value for every element of an array and an enum's number for its name."""
        raise NotImplementedError

    def parse(self, x: Any) -> list[int]:
        return [r.start for r in self.values(x, False)]

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError

    def view(self, loc: Loc, which: int, name: str) -> Any:
        raise NotImplementedError


class Scalar(Type):
    """One value of an ``Int``, ``Bool`` or ``Enum`` domain: one slot."""

    size = 1

    def __init__(self, domain: Domain):
        self.domain = domain

    def slot_domains(self) -> list[Domain]:
        return [self.domain]

    def slot_names(self, prefix: str) -> list[str]:
        return [prefix]

    def show(self, vals: Sequence[int]) -> Any:
        return self.domain.show(vals[0])

    def values(self, x: Any, init: bool) -> list[range]:
        d = self.domain
        if init and isinstance(x, Domain):
            if not (d.lo <= x.lo and x.hi <= d.hi):
                raise BadValue(f"values {x} outside {d}")
            return [range(x.lo, x.hi + 1)]
        if init and isinstance(x, int):  # (an enum's value by number, as plain arrays take it)
            if int(x) not in d:
                raise BadValue(f"{int(x)} is outside {d}")
            return [range(int(x), int(x) + 1)]
        v = d.parse(x)
        return [range(v, v + 1)]

    def describe(self) -> dict[str, Any]:
        return self.domain.describe()

    def view(self, loc: Loc, which: int, name: str) -> Expr:
        return Slot(loc, which) if isinstance(loc, int) else CellRef(loc, which)

    def __repr__(self) -> str:
        return repr(self.domain)


def as_type(t: Any) -> Type:
    """A type from what a model writes: a domain is a scalar of it."""
    if isinstance(t, Type):
        return t
    if isinstance(t, Domain):
        return Scalar(t)
    raise ModelError(f"a field or element type is a domain (Int, Bool, Enum), Record, "
                     f"Tuple, SetOf or Array, not {t!r}")


class _Fields(Type):
    """Named (a record) or numbered (a tuple) fields, one after the other."""

    def __init__(self, fields: Mapping[str, Any]):
        if not fields:
            raise ModelError("a record or tuple needs at least one field")
        self.fields = {k: as_type(t) for k, t in fields.items()}
        self.offsets: dict[str, int] = {}
        at = 0
        for k, t in self.fields.items():
            self.offsets[k] = at
            at += t.size
        self.size = at

    def slot_domains(self) -> list[Domain]:
        return [d for t in self.fields.values() for d in t.slot_domains()]

    def _parts(self, vals: Sequence[int]) -> Iterator[tuple[str, Any]]:
        for k, t in self.fields.items():
            yield k, t.show(vals[self.offsets[k]:self.offsets[k] + t.size])

    def _field_values(self, xs: Sequence[Any], init: bool) -> list[range]:
        return [r for t, x in zip(self.fields.values(), xs) for r in t.values(x, init)]


class Record(_Fields):
    """A record type, TLA+'s ``[pc: PC, n: 0..3]``: ``Record(pc=PC, n=Int(0, 3))``.  A
    record shows as an object of its fields (ITF's record); ``r.pc`` reads a field,
    ``r.update(pc=...)`` writes some."""

    def __init__(self, **fields: Any):
        bad = [k for k in fields if k.startswith("_") or k in ("update", "assign",
                                                                 "equals", "leaves")]
        if bad:
            raise ModelError(f"record field {bad[0]!r} is a name the record view uses")
        super().__init__(fields)

    def slot_names(self, prefix: str) -> list[str]:
        return [n for k, t in self.fields.items() for n in t.slot_names(f"{prefix}.{k}")]

    def show(self, vals: Sequence[int]) -> Any:
        return dict(self._parts(vals))

    def values(self, x: Any, init: bool) -> list[range]:
        if not isinstance(x, Mapping) or set(x) != set(self.fields):
            raise BadValue(f"expected a record with fields {', '.join(self.fields)}, "
                           f"got {x!r}")
        return self._field_values([x[k] for k in self.fields], init)

    def describe(self) -> dict[str, Any]:
        return {"kind": "record", "fields": {k: t.describe() for k, t in self.fields.items()}}

    def view(self, loc: Loc, which: int, name: str) -> "RecordView":
        return RecordView(self, loc, which, name)

    def __repr__(self) -> str:
        return f"Record({', '.join(f'{k}={t!r}' for k, t in self.fields.items())})"


class Tuple(_Fields):
    """A tuple type, TLA+'s ``<<a, b>>`` of ``A \\X B``: ``Tuple(Int(0, 3), Bool())``.  It
    shows as ITF's ``{"#tup": [...]}``; ``t[0]`` reads its first part."""

    def __init__(self, *parts: Any):
        super().__init__({str(k): t for k, t in enumerate(parts)})

    def slot_names(self, prefix: str) -> list[str]:
        return [n for k, t in self.fields.items() for n in t.slot_names(f"{prefix}[{k}]")]

    def show(self, vals: Sequence[int]) -> Any:
        return {"#tup": [v for _, v in self._parts(vals)]}

    def values(self, x: Any, init: bool) -> list[range]:
        if isinstance(x, Mapping) and set(x) == {"#tup"}:
            x = x["#tup"]
        if not isinstance(x, (list, tuple)) or len(x) != len(self.fields):
            raise BadValue(f'expected a tuple of {len(self.fields)}, {{"#tup": [...]}}, '
                           f"got {x!r}")
        return self._field_values(x, init)

    def describe(self) -> dict[str, Any]:
        return {"kind": "tuple", "of": [t.describe() for t in self.fields.values()]}

    def view(self, loc: Loc, which: int, name: str) -> "RecordView":
        return RecordView(self, loc, which, name)

    def __repr__(self) -> str:
        return f"Tuple({', '.join(map(repr, self.fields.values()))})"


class SetOf(Type):
    """A set of elements of a small domain, TLA+'s ``SUBSET elements``, as a field or an
    element: one bit slot per element (what :meth:`ModelBuilder.set` declares alone)."""

    def __init__(self, elements: Domain):
        self.elements = elements
        self.size = elements.size

    def slot_domains(self) -> list[Domain]:
        return [Bool()] * self.size

    def slot_names(self, prefix: str) -> list[str]:
        e = self.elements
        return [f"{prefix}[{e.show(v)}]" for v in range(e.lo, e.hi + 1)]

    def show(self, vals: Sequence[int]) -> Any:
        e = self.elements
        return {"#set": [e.show(e.lo + k) for k, b in enumerate(vals) if b]}

    def values(self, x: Any, init: bool) -> list[range]:
        if init and isinstance(x, Domain):  # every subset: each bit over its values
            return [Scalar(Bool()).values(x, True)[0]] * self.size
        if isinstance(x, Mapping) and isinstance(x.get("#set"), list) and len(x) == 1:
            x = x["#set"]
        elif not (init and isinstance(x, (list, tuple, set, frozenset))):
            raise BadValue(f'expected a set, {{"#set": [...]}}, got {x!r}')
        e = self.elements
        have = {Scalar(e).values(y, init)[0].start for y in x}
        return [range(int(v in have), int(v in have) + 1) for v in range(e.lo, e.hi + 1)]

    def describe(self) -> dict[str, Any]:
        return {"kind": "set", "of": self.elements.describe()}

    def view(self, loc: Loc, which: int, name: str) -> "SetAt":
        return SetAt(self, loc, which, name)

    def __repr__(self) -> str:
        return f"SetOf({self.elements!r})"


class Array(Type):
    """A function from a finite index domain to a type, TLA+'s ``[Index -> T]``:
    ``Array(T, 3)`` is indexed by 0..2, ``Array(T, Colour)`` by an enum's values (read
    ``a["red"]`` or ``a[Colour.red]``, shown by name), ``Array(T, Int(1, 3))`` by 1..3.
    An array indexed from 0 shows as a list; any other, as ITF's ``{"#map": [[key,
    value], ...]}``."""

    def __init__(self, of: Any, index: int | Domain):
        if isinstance(index, bool) or not isinstance(index, (int, Domain)):
            raise ModelError(f"an array's index is a length or a domain, not {index!r}")
        if isinstance(index, int):
            if index < 1:
                raise ModelError("an array needs at least one element")
            index = Int(0, index - 1)
        self.index, self.of = index, as_type(of)
        self.length = index.size
        self.size = self.length * self.of.size

    @property
    def is_list(self) -> bool:
        return self.index.kind == "int" and self.index.lo == 0

    def keys(self) -> list[int]:
        return list(range(self.index.lo, self.index.hi + 1))

    def slot_domains(self) -> list[Domain]:
        return self.of.slot_domains() * self.length

    def slot_names(self, prefix: str) -> list[str]:
        return [n for k in self.keys()
                for n in self.of.slot_names(f"{prefix}[{self.index.show(k)}]")]

    def show(self, vals: Sequence[int]) -> Any:
        w = self.of.size
        got = [self.of.show(vals[j * w:(j + 1) * w]) for j in range(self.length)]
        if self.is_list:
            return got
        return {"#map": [[self.index.show(k), v] for k, v in zip(self.keys(), got)]}

    def values(self, x: Any, init: bool) -> list[range]:
        """See :meth:`Type.values`.  In ``init``, an array of sets also takes one list of
        elements for every element (``[]``: each set empty), as it takes one set.

        >>> from osf_check.models.domains import Enum
        >>> Nodes = Enum("n1", "n2", "n3")
        >>> Array(SetOf(Nodes), 2).show([r.start for r in Array(SetOf(Nodes), 2).values(
        ...     [Nodes.n1, "n3"], True)])
        [{'#set': ['n1', 'n3']}, {'#set': ['n1', 'n3']}]
        >>> Array(SetOf(Nodes), 2).values([[], "n1"], True)
        Traceback (most recent call last):
        ...
        osf_check.models.errors.BadValue: an array of sets takes one set for every element, as a list of elements ([] for the empty set), or a list of 2 sets, each a list of elements ([[...], [...]]); got [[], 'n1']
        """
        if isinstance(x, Mapping) and set(x) == {"#map"} and isinstance(x["#map"], list):
            pairs = {self._key(p, init): p[1] for p in x["#map"]}
            if len(pairs) != self.length:
                raise BadValue(f"expected a value for each of {self._keys_shown()}")
            x = [pairs[k] for k in self.keys()]
        elif init and (not isinstance(x, (list, tuple)) or _one_set(self.of, x)):
            x = [x] * self.length  # one value for every element
        elif init and _mixed(self.of, x):
            raise BadValue(f"an array of sets takes one set for every element, as a list of "
                           f"elements ([] for the empty set), or a list of {self.length} "
                           f"sets, each a list of elements ([[...], [...]]); got {x!r}")
        elif not isinstance(x, (list, tuple)) or len(x) != self.length:
            raise BadValue(f"expected a list of {self.length} values or a "
                           f'{{"#map": [[key, value], ...]}} over {self._keys_shown()}, '
                           f"got {x!r}")
        return [r for y in x for r in self.of.values(y, init)]

    def _key(self, pair: Any, init: bool) -> int:
        if not isinstance(pair, list) or len(pair) != 2:
            raise BadValue(f"a #map holds [key, value] pairs, not {pair!r}")
        return self.index.read(pair[0]) if init else self.index.parse(pair[0])

    def _keys_shown(self) -> str:
        return ", ".join(str(self.index.show(k)) for k in self.keys())

    def describe(self) -> dict[str, Any]:
        return {"kind": "array", "index": self.index.describe(), "of": self.of.describe()}

    def view(self, loc: Loc, which: int, name: str) -> "ArrayAt":
        return ArrayAt(self, loc, which, name)

    def __repr__(self) -> str:
        return f"Array({self.of!r}, {self.index!r})"


def _elements_only(x: Any) -> bool:
    """Whether ``x`` is a list of set elements (names or numbers), not of sets."""
    return all(isinstance(y, (str, int)) for y in x)


def _one_set(t: Type, x: Any) -> bool:
    """Whether ``x``, a list, is one value of ``t`` given for every element of an array
    of ``t``: a list of elements where ``t`` is a set (or an array of sets, every element
    of which it is).  A list of lists stays one value per element."""
    if isinstance(t, Array):
        return _one_set(t.of, x)
    return isinstance(t, SetOf) and _elements_only(x)


def _mixed(t: Type, x: Any) -> bool:
    """Whether ``x`` mixes set elements with sets where ``t`` is a set: neither
    reading of it holds, and the message says what to write."""
    return (isinstance(t, SetOf) and isinstance(x, (list, tuple))
            and any(isinstance(y, (str, int)) for y in x))


# ---------------------------------------------------------------------------
# locations: a constant one is a slot number; a computed index makes a tree of them

def shift(loc: Loc, off: int) -> Loc:
    if isinstance(loc, int):
        return loc + off
    return (loc[0], [shift(x, off) for x in loc[1]])


def read(loc: Loc, which: int) -> Expr:
    """The value at ``loc``: a slot, or a Select per computed index (an index outside
    its domain is then the engines' model error, as for a plain array)."""
    if isinstance(loc, int):
        return Slot(loc, which)
    return Select(loc[0], [read(x, which) for x in loc[1]])


def cells(loc: Loc) -> list[tuple[int, Expr | None]]:
    """Each slot ``loc`` may name, with the condition under which it names it."""
    if isinstance(loc, int):
        return [(loc, None)]
    out: list[tuple[int, Expr | None]] = []
    for j, x in enumerate(loc[1]):
        for slot, cond in cells(x):
            here = loc[0] == j
            out.append((slot, here if cond is None else And(here, cond)))
    return out


class CellRef(Expr):
    """A scalar at a computed place (``proc[i].pc``, ``m[r][c]``): reads as Selects, and
    as an lvalue updates each slot it may name under the condition that it names it."""

    __slots__ = ("cells", "which")

    def __init__(self, loc: Loc, which: int):
        sel = read(loc, which)
        super().__init__(sel.op, sel.args, sel.value)
        self.cells, self.which = cells(loc), which


# ---------------------------------------------------------------------------
# views: what an action or a property reads a structured variable as

class View:
    """A structured value seen from an action or property."""

    def __init__(self, t: Type, loc: Loc, which: int, name: str):
        self._t, self._loc, self._which, self._name = t, loc, which, name

    def leaves(self) -> list[Expr]:
        """Its slots' values, in slot order (each an lvalue)."""
        return [Scalar(d).view(shift(self._loc, k), self._which, self._name)
                for k, d in enumerate(self._t.slot_domains())]

    def equals(self, other: "View") -> Expr:
        """Whether two values of one type are equal (every slot)."""
        self._same_type(other)
        return And(*(a == b for a, b in zip(self.leaves(), other.leaves())))

    def assign(self, other: "View") -> dict[Expr, Any]:
        """The update ``this' = other`` (of one type), to merge into an action's."""
        self._same_type(other)
        return dict(zip(self.leaves(), other.leaves()))

    def __eq__(self, other: object) -> Any:
        # Python's == on two views would compare the objects and answer False at
        # build time: a guard that silently never holds
        raise ModelError(f"{self._name} is a {self._t!r}: compare it with .equals(other), "
                         "or compare its fields")

    __ne__ = __eq__
    __hash__ = object.__hash__

    def _same_type(self, other: Any) -> None:
        if not isinstance(other, View) or repr(other._t) != repr(self._t):
            raise ModelError(f"{self._name} is a {self._t!r}: it compares with and takes "
                             f"a value of that type, not {other!r}")


def _update(t: Type, view: Any, x: Any, name: str) -> dict[Expr, Any]:
    """The updates that make ``view`` (of type ``t``) hold ``x``: an expression or a
    shown value (a name, a record as a dict, a set as a list of elements)."""
    if isinstance(view, View) and isinstance(x, View):
        return view.assign(x)
    if isinstance(x, SetView):
        return dict(zip(view, x))
    if isinstance(t, Scalar):
        if isinstance(x, str):
            try:
                x = t.domain.parse(x)
            except ValueError as e:
                raise ModelError(f"{name}: {e}") from None
        return {view: x}
    if (isinstance(t, SetOf) and isinstance(x, list) and len(x) == t.size
            and any(isinstance(b, Expr) for b in x)):
        return dict(zip(view.leaves(), x))  # a union's or an intersection's bits
    try:
        vals = t.values(x, True)
    except ValueError as e:
        raise ModelError(f"{name}: {e}") from None
    if any(len(r) != 1 for r in vals):
        raise ModelError(f"{name}: an update gives one value, not a domain")
    return {leaf: r.start for leaf, r in zip(view.leaves(), vals)}


class RecordView(View):
    """A record (or tuple): ``r.field`` (``t[k]``) reads a field, ``r.update(field=x)``
    gives the update of some fields, TLA+'s ``[r EXCEPT !.field = x]``."""

    _t: _Fields

    def _field(self, k: str) -> Any:
        t = self._t
        if k not in t.fields:
            raise AttributeError(f"{self._name} has no field {k!r} (its fields: "
                                 f"{', '.join(t.fields)})")
        sep = "." if isinstance(t, Record) else ""
        shown = k if isinstance(t, Record) else f"[{k}]"
        return t.fields[k].view(shift(self._loc, t.offsets[k]), self._which,
                                f"{self._name}{sep}{shown}")

    def __getattr__(self, k: str) -> Any:
        if k.startswith("_"):
            raise AttributeError(k)
        return self._field(k)

    def __getitem__(self, k: int) -> Any:
        return self._field(str(k))

    def update(self, **fields: Any) -> dict[Expr, Any]:
        out: dict[Expr, Any] = {}
        for k, x in fields.items():
            try:
                view = self._field(k)
            except AttributeError as e:
                raise ModelError(str(e)) from None
            out.update(_update(self._t.fields[k], view, x, f"{self._name}.{k}"))
        return out

    def __repr__(self) -> str:
        return self._name


class ArrayAt(View):
    """An array: ``a[i]`` for an index value (an int, an enum's name, or an expression),
    ``a[r, c]`` for ``a[r][c]``; iterating gives the elements in index order."""

    _t: Array

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, tuple):
            out: Any = self
            for k in i:
                out = out[k]
            return out
        t = self._t
        if isinstance(i, str):
            try:
                i = t.index.parse(i)
            except ValueError as e:
                raise ModelError(f"{self._name}[{i!r}]: {e}") from None
        if isinstance(i, Expr) and i.op == "const":
            i = i.value
        w = t.of.size
        if isinstance(i, Expr):
            at = i - t.index.lo if t.index.lo else i
            loc: Loc = (at, [shift(self._loc, j * w) for j in range(t.length)])
            return t.of.view(loc, self._which, f"{self._name}[…]")
        if isinstance(i, bool) or not isinstance(i, int) or i not in t.index:
            raise ModelError(f"{self._name}[{i}] is outside {t.index}")
        k = i - t.index.lo
        return t.of.view(shift(self._loc, k * w), self._which,
                         f"{self._name}[{t.index.show(i)}]")

    def __len__(self) -> int:
        return self._t.length

    def __iter__(self) -> Iterator[Any]:
        return (self[k] for k in self._t.keys())

    def keys(self) -> list[int]:
        """The index values, in order (what ``ForAll``/``Exists`` range over)."""
        return self._t.keys()

    def update(self, i: Any, x: Any) -> dict[Expr, Any]:
        """The update ``a' = [a EXCEPT ![i] = x]`` for a whole element ``x``."""
        return _update(self._t.of, self[i], x, f"{self._name}[{i}]")

    def __repr__(self) -> str:
        return self._name


class SetAt(SetView):
    """A set that is a field or an element of a structured variable."""

    def __init__(self, t: SetOf, loc: Loc, which: int, name: str):
        self._var = SimpleNamespace(elements=t.elements, length=t.size)
        self._t, self._loc, self._which, self._name = t, loc, which, name

    def __getitem__(self, k: Any) -> Expr:
        if isinstance(k, Expr) and k.op == "const":
            k = k.value
        if isinstance(k, Expr):
            loc: Loc = (k, [shift(self._loc, j) for j in range(self._t.size)])
            return CellRef(loc, self._which)
        if not 0 <= k < self._t.size:
            raise ModelError(f"{self._name}: element {k} is outside {self._t.elements}")
        return Scalar(Bool()).view(shift(self._loc, k), self._which, self._name)

    def leaves(self) -> list[Expr]:
        return list(self)

    def __repr__(self) -> str:
        return self._name


# ---------------------------------------------------------------------------
# constants: a function to sets, read at an index the state computes

class SetTable:
    """A constant function from a domain to sets of a small domain, TLA+'s ``Succ \\in
    [Nodes -> SUBSET Nodes]`` given as a constant: ``table[i]`` is the set at ``i``, for
    ``i`` a value (a name or a number) or an expression (``Succ[u[self]]``), read as a
    set variable is (``contains``, ``card``, quantifiers, ``union`` with one, and as the
    bits an ``assign`` takes) but not written.

    >>> from osf_check.models.domains import Enum
    >>> from osf_check.models.expr import Const, evaluate
    >>> Nodes = Enum("n1", "n2", "n3")
    >>> Succ = SetTable(Nodes, Nodes, {"n1": ["n2", "n3"], "n2": ["n3"], "n3": []})
    >>> u = Const(Nodes.n1)
    >>> evaluate(Succ[u].contains("n3"), ()), evaluate(Succ[u].card(), ())
    (1, 2)
    >>> evaluate(Succ["n3"].is_empty(), ())
    1
    >>> SetTable(Nodes, Nodes, {"n1": ["n4"]})
    Traceback (most recent call last):
    ...
    osf_check.models.errors.ModelError: SetTable: the set at n1: expected one of n1, n2, n3, got 'n4'
    """

    def __init__(self, index: Domain, elements: Domain, table: Mapping[Any, Any]):
        self.index, self.elements = index, elements
        self._bits: dict[int, list[bool]] = {k: [False] * elements.size for k in index}
        for key, members in table.items():
            try:
                k = index.read(key)
                have = {elements.read(x) for x in members}
            except ValueError as e:
                raise ModelError(f"SetTable: the set at {key}: {e}") from None
            self._bits[k] = [v in have for v in elements]

    def __getitem__(self, i: Any) -> "ConstSet":
        if isinstance(i, Expr) and i.op == "const":
            i = i.value
        if isinstance(i, Expr):
            at = i - self.index.lo if self.index.lo else i
            keys = list(self.index)
            return ConstSet(self.elements, [Select(at, [self._bits[k][j] for k in keys])
                                            for j in range(self.elements.size)])
        try:
            k = self.index.read(i)
        except ValueError as e:
            raise ModelError(f"SetTable[{i!r}]: {e}") from None
        return ConstSet(self.elements, [Const(b) for b in self._bits[k]])


class ConstSet(SetView):
    """A set a :class:`SetTable` gives: its membership bits are expressions over the
    state (the index it was read at), not slots of its own."""

    def __init__(self, elements: Domain, bits: list[Expr]):
        self._var = SimpleNamespace(elements=elements, length=elements.size)
        self._bits, self._which = bits, 0

    def __getitem__(self, k: Any) -> Expr:
        if isinstance(k, Expr) and k.op == "const":
            k = k.value
        if isinstance(k, Expr):
            return Select(k, self._bits)
        return self._bits[k]

    def __repr__(self) -> str:
        return f"ConstSet({self._var.elements!r})"
