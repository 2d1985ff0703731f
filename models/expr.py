"""Expressions of the model DSL.

Every guard, update and property is a tree of :class:`Expr` nodes built from the
helpers below, never from Python's ``if``/``and``/``or`` on state values.  The
same tree is then *interpreted* by each engine: compiled to Python source for the
explicit engine, evaluated over numpy arrays for the vectorized one, and turned
into z3 terms for the symbolic one.

Comparison and arithmetic operators are overloaded, so ``s.status[r] == QUEUED``
builds a node instead of answering ``True``/``False``:

>>> from osf_check.models.expr import Const, And, If
>>> e = If(And(Const(1) == 1, Const(2) > 1), Const(7), Const(0))
>>> e.op
'ite'
>>> from osf_check.models.expr import evaluate
>>> evaluate(e, ())
7

``&``, ``|`` and ``~`` are And, Or and Not.  They bind tighter than comparisons (as in
numpy), so comparisons inside them need parentheses:

>>> evaluate((Const(1) == 1) & ~(Const(2) > 3), ())
1
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

__all__ = [
    "Expr", "Const", "Slot", "And", "Or", "Not", "If", "Implies", "Iff", "Sum", "Count",
    "Select", "Min", "Max", "as_expr", "evaluate", "fold", "BOOL_OPS", "bounds",
    "INT64", "OutOfRange", "Exists", "ForAll", "Choose", "show",
]

#: operators whose value is a truth value (0/1), as opposed to a number
BOOL_OPS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "implies", "true", "false"})


class Expr:
    """A node of the expression tree.

    ``op`` names the operator, ``args`` holds the children (other nodes) and
    ``value`` the payload of leaves (a constant, or the slot number of a state
    variable together with the state it reads: 0 = current, 1 = next).
    """

    __slots__ = ("op", "args", "value", "selects")
    __hash__ = object.__hash__  # == builds nodes, so identity is the only hash

    def __init__(self, op: str, args: tuple["Expr", ...] = (), value: Any = None):
        self.op = op
        self.args = args
        self.value = value
        #: whether a Select (an array read at a computed index) is in this tree: the
        #: engines then check that each index they reach is in range
        self.selects: bool = op == "select" or any(a.selects for a in args)

    # arithmetic -------------------------------------------------------------
    def __add__(self, o: Any) -> "Expr":
        return Expr("add", (self, as_expr(o)))

    def __radd__(self, o: Any) -> "Expr":
        return Expr("add", (as_expr(o), self))

    def __sub__(self, o: Any) -> "Expr":
        return Expr("sub", (self, as_expr(o)))

    def __rsub__(self, o: Any) -> "Expr":
        return Expr("sub", (as_expr(o), self))

    def __mul__(self, o: Any) -> "Expr":
        return Expr("mul", (self, as_expr(o)))

    def __rmul__(self, o: Any) -> "Expr":
        return Expr("mul", (as_expr(o), self))

    def __floordiv__(self, o: int) -> "Expr":
        if not isinstance(o, int) or o <= 0:
            raise TypeError("// in the DSL takes a positive integer constant")
        return Expr("div", (self, Const(o)))

    def __mod__(self, o: int) -> "Expr":
        if not isinstance(o, int) or o <= 0:
            raise TypeError("% in the DSL takes a positive integer constant")
        return Expr("mod", (self, Const(o)))

    # comparisons -----------------------------------------------------------
    def __eq__(self, o: Any) -> "Expr":  # type: ignore[override]
        return Expr("eq", (self, as_expr(o)))

    def __ne__(self, o: Any) -> "Expr":  # type: ignore[override]
        return Expr("ne", (self, as_expr(o)))

    def __lt__(self, o: Any) -> "Expr":
        return Expr("lt", (self, as_expr(o)))

    def __le__(self, o: Any) -> "Expr":
        return Expr("le", (self, as_expr(o)))

    def __gt__(self, o: Any) -> "Expr":
        return Expr("gt", (self, as_expr(o)))

    def __ge__(self, o: Any) -> "Expr":
        return Expr("ge", (self, as_expr(o)))

    # truth values: & | ~ as And, Or, Not (bind tighter than ==: parenthesise comparisons,
    # (s.a == 1) & (s.b == 2), as with numpy's masks) ------------------------------------
    def __and__(self, o: Any) -> "Expr":
        return And(self, o)

    def __rand__(self, o: Any) -> "Expr":
        return And(o, self)

    def __or__(self, o: Any) -> "Expr":
        return Or(self, o)

    def __ror__(self, o: Any) -> "Expr":
        return Or(o, self)

    def __invert__(self) -> "Expr":
        return Not(self)

    def __bool__(self) -> bool:
        # Python's `and`/`or`/`if` on a node would silently pick a branch at
        # model-building time; the engines would then disagree with the model.
        raise TypeError(
            "a DSL expression has no Python truth value: use And/Or/Not/If instead "
            "of and/or/not/if on state values"
        )

    def __repr__(self) -> str:
        if self.op == "const":
            return repr(self.value)
        if self.op == "slot":
            return f"s{'′' if self.value[1] else ''}[{self.value[0]}]"
        return f"{self.op}({', '.join(map(repr, self.args))})"


def Const(v: int | bool) -> Expr:
    """A constant (bools are stored as 0/1)."""
    if isinstance(v, bool):
        return Expr("true") if v else Expr("false")
    if not isinstance(v, int):
        raise TypeError(f"DSL constants are ints or bools, not {type(v).__name__}")
    return Expr("const", value=v)


def Slot(index: int, which: int = 0) -> Expr:
    """The value of state slot ``index`` in the current (0) or next (1) state."""
    return Expr("slot", value=(index, which))


def as_expr(v: Any) -> Expr:
    """Lift a Python int/bool to a constant; pass nodes through."""
    if isinstance(v, Expr):
        return v
    return Const(v)


def _flat(op: str, xs: Iterable[Any]) -> list[Expr]:
    out: list[Expr] = []
    for x in xs:
        x = as_expr(x)
        if x.op == op:
            out.extend(x.args)
        else:
            out.append(x)
    return out


def And(*xs: Any) -> Expr:
    """Conjunction; ``And()`` is true."""
    args = [a for a in _flat("and", xs) if a.op != "true"]
    if any(a.op == "false" for a in args):
        return Const(False)
    if not args:
        return Const(True)
    if len(args) == 1:
        return args[0]
    return Expr("and", tuple(args))


def Or(*xs: Any) -> Expr:
    """Disjunction; ``Or()`` is false."""
    args = [a for a in _flat("or", xs) if a.op != "false"]
    if any(a.op == "true" for a in args):
        return Const(True)
    if not args:
        return Const(False)
    if len(args) == 1:
        return args[0]
    return Expr("or", tuple(args))


def Not(x: Any) -> Expr:
    x = as_expr(x)
    if x.op == "true":
        return Const(False)
    if x.op == "false":
        return Const(True)
    if x.op == "not":
        return x.args[0]
    return Expr("not", (x,))


def Implies(a: Any, b: Any) -> Expr:
    a, b = as_expr(a), as_expr(b)
    if a.op == "false" or b.op == "true":
        return Const(True)
    if a.op == "true":
        return b
    return Expr("implies", (a, b))


def Iff(a: Any, b: Any) -> Expr:
    """``a`` holds exactly when ``b`` does (TLA+'s ``<=>``).

    >>> evaluate(Iff(Const(1) == 1, Const(2) > 3), ())
    0
    """
    a, b = as_expr(a), as_expr(b)
    return Or(And(a, b), And(Not(a), Not(b)))


def If(c: Any, a: Any, b: Any) -> Expr:
    """``a`` where ``c`` holds, else ``b`` (both branches are expressions)."""
    c, a, b = as_expr(c), as_expr(a), as_expr(b)
    if c.op == "true":
        return a
    if c.op == "false":
        return b
    return Expr("ite", (c, a, b))


def _members(over: Any) -> list[tuple[Expr, int]] | None:
    """A set variable's elements, each with the truth value "it is in the set now";
    ``None`` for anything else.  (Iterating a set gives its membership bits, which a
    quantifier must not mistake for its elements.)"""
    if hasattr(over, "contains") and callable(getattr(over, "elements", None)):
        return [(as_expr(b), x) for b, x in zip(over, over.elements())]
    return None


def _elements(over: Any) -> list[Any]:
    """The elements a quantifier ranges over: a ``range``, a list or tuple of values, or a
    finite domain (:func:`~osf_check.models.dsl.Int`, ``Enum``, ``Bool``: its values
    ``lo..hi`` in order)."""
    if hasattr(over, "lo") and hasattr(over, "hi") and hasattr(over, "kind"):
        return list(range(over.lo, over.hi + 1))
    if isinstance(over, (Expr, int, bool)) or not hasattr(over, "__iter__"):
        raise TypeError(f"a quantifier ranges over a range, a list or a domain, not {over!r}")
    return list(over)


def _operands(name: str, xs: tuple[Any, ...]) -> list[Expr]:
    """The one argument convention of ``Sum``, ``Min`` and ``Max``: separate values
    ``f(a, b, c)``, one list of them ``f([a, b, c])``, or a domain (or list) and a
    function ``f(domain, fn)``, TLA+'s ``{fn(x) : x \\in domain}``.  (A set variable,
    whose elements vary, is :func:`_over_set`'s.)"""
    if len(xs) == 2 and callable(xs[1]) and not isinstance(xs[1], Expr):
        xs = tuple(xs[1](x) for x in _elements(xs[0]))
    elif len(xs) == 1 and not isinstance(xs[0], (Expr, int)):
        xs = tuple(xs[0])
    return [as_expr(x) for x in xs]


def _over_set(xs: tuple[Any, ...]) -> list[tuple[Expr, Expr]] | None:
    """``f(S)`` or ``f(S, fn)`` for ``S`` a set variable: each element's membership
    with its value (``fn(x)``, or ``x`` itself); ``None`` for the other forms."""
    members = _members(xs[0]) if xs and len(xs) <= 2 else None
    if members is None or (len(xs) == 2 and not callable(xs[1])):
        return None
    fn = xs[1] if len(xs) == 2 else (lambda x: x)
    return [(b, as_expr(fn(x))) for b, x in members]


def _least(on_set: list[tuple[Expr, Expr]], better: Callable[[Expr, Expr], Expr]) -> Expr:
    """The best value over the set's members; over an empty set, an error in the
    state that reaches it (as :func:`Choose` with no element: a read past the end)."""
    out, seen = on_set[0][1], Const(False)
    for b, v in on_set:
        out = If(And(b, Or(Not(seen), better(v, out))), v, out)
        seen = Or(seen, b)
    return Select(If(seen, 0, 1), [out])


def Sum(*xs: Any) -> Expr:
    """The sum of values: ``Sum(a, b)``, ``Sum([a, b])`` or ``Sum(domain, fn)``; ``Sum()``
    is 0.

    >>> evaluate(Sum(Const(1), 2), ()), evaluate(Sum([Const(3), 4]), ())
    (3, 7)
    >>> evaluate(Sum(range(4), lambda i: Const(i) * 2), ())
    12
    """
    on_set = _over_set(xs)
    if on_set is not None:
        return Sum([If(b, v, 0) for b, v in on_set])
    vals = _operands("Sum", xs)
    if not vals:
        return Const(0)
    out = vals[0]
    for x in vals[1:]:
        out = out + x
    return out


def Exists(over: Any, pred: Callable[[Any], Any]) -> Expr:
    """TLA+'s ``\\E x \\in over : pred(x)`` over a finite range, list or domain (a
    disjunction, one term per element; false over nothing).

    >>> evaluate(Exists(range(3), lambda i: Const(i) == 2), ())
    1
    """
    members = _members(over)
    if members is not None:
        return Or(*(And(b, pred(x)) for b, x in members))
    return Or(*(pred(x) for x in _elements(over)))


def ForAll(over: Any, pred: Callable[[Any], Any]) -> Expr:
    """TLA+'s ``\\A x \\in over : pred(x)`` (a conjunction; true over nothing).

    >>> evaluate(ForAll(range(3), lambda i: Const(i) < 2), ())
    0
    """
    members = _members(over)
    if members is not None:
        return And(*(Implies(b, pred(x)) for b, x in members))
    return And(*(pred(x) for x in _elements(over)))


def Choose(over: Any, pred: Callable[[Any], Any]) -> Expr:
    """TLA+'s ``CHOOSE x \\in over : pred(x)`` by TLC's rule: TLC enumerates the set in
    its normalized order and takes the first element that satisfies ``pred``.  For
    integers that order is ascending, so ``Choose`` over a ``range``, an ``Int``
    domain, a list of integers (sorted first, as TLC sorts ``{3, 1}``) or a set variable
    picks the element TLC picks.  An ``Enum`` is taken in declaration order; TLC orders
    strings by when its parser first met them and model values by their order in the
    ``.cfg``: declare the enum in that order for the same pick.  As in TLC, choosing
    from elements none of which satisfies ``pred`` is an error: the engines report a
    state that reaches such a Choose as a model error (it reads past the end of a
    :func:`Select`).

    >>> evaluate(Choose(range(5), lambda i: Const(i) * Const(i) > 5), ())
    3
    >>> evaluate(Choose([4, 3, 1], lambda i: Const(i) > 2), ())
    3
    >>> evaluate(Choose(range(2), lambda i: Const(i) > 5), ())
    Traceback (most recent call last):
    ...
    IndexError: Select index 2 outside 0..1
    """
    members = _members(over)
    if members is not None:  # the first element in the set that satisfies pred
        elems: list[Any] = [x for _, x in members]
        conds = [And(b, pred(x)) for b, x in members]
    else:
        elems = _elements(over)
        if all(type(x) is int for x in elems):  # TLC's normalized order of a set
            elems = sorted(set(elems))
        conds = [pred(x) for x in elems]
    if not elems:
        raise ValueError("Choose over no elements")
    index: Expr = Const(len(elems))  # past the end: no element satisfies pred
    for k in range(len(elems) - 1, -1, -1):
        index = If(conds[k], k, index)
    if index.op == "const" and index.value == len(elems):
        return Expr("select", (index,) + tuple(as_expr(e) for e in elems))
    return Select(index, [as_expr(e) for e in elems])


def Count(*xs: Any) -> Expr:
    """How many of the conditions hold, in :func:`Sum`'s forms: ``Count(c1, c2)``,
    ``Count([c1, c2])``, ``Count(domain, pred)``; and ``Count(S)``, ``Count(S, pred)``
    for a set variable ``S`` (its elements, or those satisfying ``pred``).

    >>> evaluate(Count(range(5), lambda i: Const(i) > 2), ())
    2
    >>> evaluate(Count(Const(1) == 1, Const(2) == 3), ())
    1
    """
    members = _members(xs[0]) if len(xs) in (1, 2) else None
    if members is not None:
        pred = xs[1] if len(xs) == 2 else None
        conds = [And(b, pred(x)) if pred else b for b, x in members]
    else:
        conds = _operands("Count", xs)
    return Sum([If(c, 1, 0) for c in conds])


def Select(index: Any, options: Sequence[Any]) -> Expr:
    """``options[index]`` for an index that is itself an expression.

    An index outside ``range(len(options))`` in a state that reaches the Select is
    a model error, in the explicit and vector engines alike; z3 would read the last
    option there, so ``prove`` leaves unknown what reads a Select whose index the
    domains let leave its options.  A constant index is checked at once:

    >>> Select(-1, [Const(1), Const(2)])
    Traceback (most recent call last):
    ...
    IndexError: Select index -1 outside 0..1
    """
    opts = tuple(as_expr(o) for o in options)
    index = as_expr(index)
    if index.op == "const":
        if not 0 <= index.value < len(opts):  # (Python's opts[-1] would be the last)
            raise IndexError(f"Select index {index.value} outside 0..{len(opts) - 1}")
        return opts[index.value]
    return Expr("select", (index,) + opts)


def Min(*xs: Any) -> Expr:
    """The least of several values: ``Min(a, b, c)``, ``Min([a, b, c])`` or
    ``Min(domain, fn)``, as :func:`Sum` takes them.

    >>> evaluate(Min(Const(4), 2, 7), ()), evaluate(Min(Const(x) for x in (5, 1)), ())
    (2, 1)
    >>> evaluate(Min(range(1, 4), lambda i: Const(10) - i), ())
    7
    """
    on_set = _over_set(xs)
    if on_set is not None:
        return _least(on_set, lambda x, y: x < y)
    vals = _operands("Min", xs)
    if not vals:
        raise TypeError("Min() needs at least one value")
    out = vals[0]
    for x in vals[1:]:
        out = If(x < out, x, out)
    return out


def Max(*xs: Any) -> Expr:
    """The greatest of several values: ``Max(a, b, c)`` or ``Max([a, b, c])``.

    >>> evaluate(Max(Const(4), 2, 7), ()), evaluate(Max(range(3), lambda i: Const(i)), ())
    (7, 2)
    """
    on_set = _over_set(xs)
    if on_set is not None:
        return _least(on_set, lambda x, y: x > y)
    vals = _operands("Max", xs)
    if not vals:
        raise TypeError("Max() needs at least one value")
    out = vals[0]
    for x in vals[1:]:
        out = If(x > out, x, out)
    return out


# ---------------------------------------------------------------------------
# interpreting a tree: engines give the leaves and the operators their meaning

LEAVES = frozenset({"const", "true", "false", "slot"})


def fold(e: Expr, leaf: Callable[[Expr], Any], node: Callable[[str, list[Any]], Any]) -> Any:
    """Interpret ``e`` bottom-up: ``leaf(x)`` for constants and slots, ``node(op, values)``
    for every operator; a node shared in the tree is interpreted once.

    >>> fold(Const(2) + 3, lambda x: x.value, lambda op, a: a[0] + a[1])
    5
    """
    memo: dict[int, Any] = {}

    def go(x: Expr) -> Any:
        k = id(x)
        if k in memo:
            return memo[k]
        r = leaf(x) if x.op in LEAVES else node(x.op, [go(y) for y in x.args])
        memo[k] = r
        return r

    try:
        return go(e)
    finally:
        # go names itself: left alone, each call would leave a reference cycle that keeps
        # memo (every intermediate value, whole numpy columns) alive until the cyclic
        # collector happens to run
        del go


# ---------------------------------------------------------------------------
# a reference interpreter: slow, obviously right, used by tests and by tools that
# evaluate a handful of expressions (trace replay, property checks on a trace)

def evaluate(e: Expr, state: Sequence[int], nxt: Sequence[int] | None = None) -> int:
    """Evaluate ``e`` on ``state`` (and ``nxt`` for primed slots); truth values are 0/1."""
    op = e.op
    if op == "const":
        return e.value
    if op == "true":
        return 1
    if op == "false":
        return 0
    if op == "slot":
        i, which = e.value
        if which:
            if nxt is None:
                raise ValueError("expression reads the next state, but none was given")
            return nxt[i]
        return state[i]
    a = e.args
    ev: Callable[[Expr], int] = lambda x: evaluate(x, state, nxt)  # noqa: E731
    if op == "and":
        return int(all(ev(x) for x in a))
    if op == "or":
        return int(any(ev(x) for x in a))
    if op == "not":
        return int(not ev(a[0]))
    if op == "implies":
        return int((not ev(a[0])) or bool(ev(a[1])))
    if op == "ite":
        return ev(a[1]) if ev(a[0]) else ev(a[2])
    if op == "select":
        i = ev(a[0])
        if not 0 <= i < len(a) - 1:
            raise IndexError(f"Select index {i} outside 0..{len(a) - 2}")
        return ev(a[1 + i])
    x, y = ev(a[0]), ev(a[1])
    return int({
        "add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
        "div": lambda: x // y, "mod": lambda: x % y,
        "eq": lambda: x == y, "ne": lambda: x != y, "lt": lambda: x < y,
        "le": lambda: x <= y, "gt": lambda: x > y, "ge": lambda: x >= y,
    }[op]())


# ---------------------------------------------------------------------------
# the values an expression can take: numpy computes in 64 bits and wraps around
# without a word, where Python and z3 compute exactly, so an expression that could
# leave 64 bits would make the engines disagree (and a wrapped value that lands in a
# domain is a wrong successor, not an error)

#: the least and greatest integer every engine computes exactly
INT64 = (-2**63, 2**63 - 1)


class OutOfRange(ValueError):
    """An expression whose value, or one of its parts', may leave :data:`INT64`."""


def bounds(e: Expr, slot_range: Callable[[int], tuple[int, int]],
           memo: dict[int, tuple[int, int]] | None = None) -> tuple[int, int]:
    """The least and greatest values of ``e`` when slot ``i`` ranges over
    ``slot_range(i)`` (an interval: every value in it assumed possible, so the bounds
    are safe, not tight).  Raises :class:`OutOfRange` if ``e`` or a part of it may
    leave :data:`INT64`.  ``memo`` (by node id) spares shared nodes a second walk; its
    nodes must outlive it.

    >>> x = Slot(0)
    >>> bounds(x * 3 - 1, lambda i: (0, 10))
    (-1, 29)
    >>> bounds(If(x > 5, x // 2, x % 4), lambda i: (0, 10))
    (0, 5)
    >>> bounds(x * 2**62, lambda i: (0, 3))
    Traceback (most recent call last):
    ...
    osf_check.models.expr.OutOfRange: a product of values in 0..3 and 4611686018427387904..4611686018427387904 may reach 13835058055282163712, past 64-bit integers
    """
    memo = {} if memo is None else memo

    def go(x: Expr) -> tuple[int, int]:
        got = memo.get(id(x))
        if got is not None:
            return got
        op = x.op
        a: list[tuple[int, int]] = []
        if op == "const":
            r = (x.value, x.value)
        elif op in BOOL_OPS:
            for y in x.args:
                go(y)
            r = (int(op == "true"), int(op != "false"))
        elif op == "slot":
            r = slot_range(x.value[0])
        else:
            a = [go(y) for y in x.args]
            r = _bound(op, a)
        if r[0] < INT64[0] or r[1] > INT64[1]:
            past = r[0] if r[0] < INT64[0] else r[1]
            of = " of values in " + " and ".join(f"{lo}..{hi}" for lo, hi in a) if a else ""
            raise OutOfRange(f"{_WHAT.get(op, 'an expression')}{of} may reach {past}, past "
                             "64-bit integers")
        memo[id(x)] = r
        return r

    return go(e)


_WHAT = {"const": "a constant", "slot": "a variable", "add": "a sum", "sub": "a difference",
         "mul": "a product", "div": "a quotient"}


def _bound(op: str, a: list[tuple[int, int]]) -> tuple[int, int]:
    if op == "ite":
        return min(a[1][0], a[2][0]), max(a[1][1], a[2][1])
    if op == "select":
        return min(lo for lo, _ in a[1:]), max(hi for _, hi in a[1:])
    (l0, h0), (l1, h1) = a
    if op == "add":
        return l0 + l1, h0 + h1
    if op == "sub":
        return l0 - h1, h0 - l1
    if op == "mul":
        ends = (l0 * l1, l0 * h1, h0 * l1, h0 * h1)
        return min(ends), max(ends)
    if op == "div":  # by a positive constant (the DSL allows no other)
        return l0 // l1, h0 // l1
    if op == "mod":  # by a positive constant: floor modulo, as numpy and Python do
        return (l0 % l1, h0 % l1) if l0 // l1 == h0 // l1 else (0, l1 - 1)
    raise ValueError(f"unknown operator {op!r}")


#: words and ASCII, not logic's symbols: the pictures' fonts lack ∈, ∧, ∨ and ¬
_INFIX = {"eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "add": "+",
          "sub": "-", "mul": "*", "div": "/", "mod": "%", "implies": "implies"}


def show(e: Expr, names: Sequence[str], domains: Sequence[Any]) -> str:
    """``e`` as a person reads it, with the model's variable names and enum values
    (``names`` and ``domains`` are the model's ``slot_names`` and ``slot_domains``): what
    a liveness counterexample says its goal is.

    >>> x, y = Slot(0), Slot(1)
    >>> show(Or(x == 1, x == 2), ["status[0]", "online"], [None, None])
    'status[0] in {1, 2}'
    >>> show(And(x > 1, Not(y == 0)), ["status[0]", "online"], [None, None])
    'status[0] > 1 and not (online = 0)'
    """
    def value(slot: Expr | None, c: Expr) -> str:
        d = domains[slot.value[0]] if slot is not None else None
        try:
            return str(d.show(c.value)).lower() if d is not None and d.kind == "bool" \
                else str(d.show(c.value)) if d is not None else str(c.value)
        except (IndexError, AttributeError):
            return str(c.value)

    def go(x: Expr, nested: bool = False) -> str:
        if x.op in ("true", "false"):
            return x.op
        if x.op == "const":
            return str(x.value)
        if x.op == "slot":
            return names[x.value[0]] + ("′" if x.value[1] else "")
        if x.op in _INFIX and len(x.args) == 2:
            a, b = x.args
            if a.op == "slot" and b.op == "const":
                text = f"{go(a)} {_INFIX[x.op]} {value(a, b)}"
            else:
                text = f"{go(a, True)} {_INFIX[x.op]} {go(b, True)}"
            return f"({text})" if nested and x.op in ("add", "sub", "implies") else text
        if x.op == "or" and all(a.op == "eq" and a.args[0].op == "slot" and
                                a.args[1].op == "const" and
                                a.args[0].value == x.args[0].args[0].value
                                for a in x.args):
            slot = x.args[0].args[0]
            return f"{go(slot)} in {{{', '.join(value(slot, a.args[1]) for a in x.args)}}}"
        if x.op in ("and", "or"):
            text = f" {x.op} ".join(go(a, True) for a in x.args)
            return f"({text})" if nested else text
        if x.op == "not":
            return f"not ({go(x.args[0])})"
        if x.op == "ite":
            return f"(if {go(x.args[0])} then {go(x.args[1])} else {go(x.args[2])})"
        return f"{x.op}({', '.join(go(a) for a in x.args)})"
    return go(e)
