"""The vectorized interpretation of the DSL: an expression over numpy columns.

Each state slot becomes a column (one row per state); ``If`` becomes
``np.where``, ``And`` becomes ``&`` and so on, so a predicate is evaluated over a
whole set of states at once.

>>> import numpy as np
>>> from osf_check.models.expr import Slot, If, And
>>> cols = [np.array([0, 1, 2]), np.array([5, 5, 6])]
>>> np_eval(If(And(Slot(0) >= 1, Slot(1) == 5), 1, 0), cols).tolist()
[0, 1, 0]
>>> narrow = [np.array([100], dtype=np.int8)]
>>> np_eval(Slot(0) + Slot(0), narrow).tolist()  # computed in 64 bits: no wrap-around
[200]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from osf_check.models.dsl import Model, ModelError
from osf_check.models.expr import Expr, fold

__all__ = ["np_eval", "unpack_columns", "pack_columns", "packed_array"]


def np_eval(e: Expr, cols: Sequence[np.ndarray], nxt: Sequence[np.ndarray] | None = None,
            n: int | None = None) -> np.ndarray:
    """Evaluate ``e`` row by row; truth values come back as bool arrays (constants may come
    back as numpy scalars: broadcast with ``np.broadcast_to(result, (n,))``).

    A Select (an array read at a computed index) whose index is outside its options in a
    row that reaches it is a :class:`ModelError`, as in the explicit engine; a row
    reaches it unless an ``If`` takes the other branch, or an ``And``, ``Or`` or
    ``Implies`` is decided before it (numpy computes every branch: those rows'
    indices are ignored).

    >>> from osf_check.models.expr import If, Select, Slot
    >>> x = [np.array([0, 1, 2])]
    >>> np_eval(If(Slot(0) < 2, Select(Slot(0), [10, 20]), 0), x).tolist()
    [10, 20, 0]
    >>> np_eval(Select(Slot(0), [10, 20]), x)
    Traceback (most recent call last):
    ...
    osf_check.models.errors.ModelError: an array read or Select at index 2, outside 0..1 (in 1 of 3 states)
    """
    if n is None:
        n = len(cols[0]) if len(cols) else 0
    if e.selects:
        return _checked(e, cols, nxt, n)
    return _eval(e, cols, nxt, n)


def _eval(e: Expr, cols: Sequence[np.ndarray], nxt: Sequence[np.ndarray] | None,
          n: int) -> np.ndarray:
    def leaf(x: Expr) -> np.ndarray:
        if x.op == "const":
            return np.int64(x.value)  # a scalar: numpy broadcasts it
        if x.op in ("true", "false"):
            return np.bool_(x.op == "true")
        i, which = x.value
        return (nxt if which else cols)[i]  # type: ignore[index]

    return fold(e, leaf, lambda op, a: _apply(op, a, n))


def _apply(op: str, a: list[np.ndarray], n: int) -> np.ndarray:
    """Operator ``op`` over its operands' values, row by row."""
    # truth values are usually bool already: no copy then (copy=False)
    if op in ("and", "or"):
        r = a[0].astype(bool, copy=False)
        for y in a[1:]:
            r = (r & y.astype(bool, copy=False)) if op == "and" else \
                (r | y.astype(bool, copy=False))
        return r
    if op == "not":
        return ~a[0].astype(bool, copy=False)
    if op == "implies":
        return ~a[0].astype(bool, copy=False) | a[1].astype(bool, copy=False)
    if op == "ite":
        return np.where(a[0].astype(bool, copy=False), a[1], a[2])
    if op == "select":  # an index out of range picks the last (see _checked)
        at = np.clip(np.broadcast_to(a[0], (n,)).astype(np.int64), 0, len(a) - 2)
        return np.choose(at, [np.broadcast_to(y, (n,)) for y in a[1:]])
    # truth values take part in arithmetic as 0/1; arithmetic is done in 64 bits, so
    # that columns stored narrow (int8, int16) never wrap around
    x0 = a[0].astype(np.int64) if a[0].dtype == bool else a[0]
    x1 = a[1].astype(np.int64) if a[1].dtype == bool else a[1]
    if op in _ARITH:
        return _BIN[op](x0, x1, dtype=np.int64)
    return _BIN[op](x0, x1)


def _checked(e: Expr, cols: Sequence[np.ndarray], nxt: Sequence[np.ndarray] | None,
             n: int) -> np.ndarray:
    """``e``'s value, with each reached Select's index checked: each node gives its value
    and the rows where an out-of-range index reaches it (``None``: none), which ``If``,
    ``And``, ``Or`` and ``Implies`` pass on only from the operands a row evaluates."""
    memo: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
    first: list[tuple[int, int, np.ndarray]] = []  # (index, options, rows) per bad Select

    def go(x: Expr) -> tuple[np.ndarray, np.ndarray | None]:
        got = memo.get(id(x))
        if got is not None:
            return got
        if not x.selects:
            r: tuple[np.ndarray, np.ndarray | None] = (_eval(x, cols, nxt, n), None)
        else:
            args = [go(y) for y in x.args]
            vals = [a[0] for a in args]
            r = (_apply(x.op, vals, n), _reached(x, vals, [a[1] for a in args], n, first))
        memo[id(x)] = r
        return r

    try:
        value, bad = go(e)
    finally:
        del go  # (it names itself: a cycle that would keep memo's columns alive)
    if bad is not None and bad.any():
        row = int(np.argmax(bad))
        idx, m = next((int(i[row]), k) for i, k, rows in first if rows[row])
        raise ModelError(f"an array read or Select at index {idx}, outside 0..{m - 1} (in "
                         f"{int(bad.sum()):,} of {n:,} states)")
    return value


def _reached(x: Expr, vals: list[np.ndarray], bads: list[np.ndarray | None], n: int,
             first: list[tuple[int, int, np.ndarray]]) -> np.ndarray | None:
    """The rows where an out-of-range index reaches ``x``: from the operands each row
    evaluates (Python's order: an ``If`` one branch, ``And``/``Or``/``Implies`` until
    decided), and for a Select its own index too."""
    def rows(v: np.ndarray) -> np.ndarray:
        return np.broadcast_to(np.asarray(v).astype(bool, copy=False), (n,))
    op, out = x.op, None

    def add(b: np.ndarray | None, where: np.ndarray | None = None) -> None:
        nonlocal out
        if b is not None:
            b = b if where is None else b & where
            out = b if out is None else out | b
    if op == "ite":
        add(bads[0])
        c = rows(vals[0])
        add(bads[1], c)
        add(bads[2], ~c)
    elif op in ("and", "or", "implies"):
        live = np.ones(n, dtype=bool)  # rows not decided yet
        for i, (v, b) in enumerate(zip(vals, bads)):
            add(b, live)
            t = rows(v)
            live = live & (t if op == "and" or (op == "implies" and i == 0) else ~t)
    elif op == "select":
        add(bads[0])
        idx = np.broadcast_to(np.asarray(vals[0]).astype(np.int64), (n,))
        m = len(vals) - 1
        oob = (idx < 0) | (idx >= m)
        if oob.any():
            first.append((idx, m, oob))
            add(oob)
        for j, b in enumerate(bads[1:]):
            add(b, idx == j)
    else:
        for b in bads:
            add(b)
    return out


_ARITH = frozenset({"add", "sub", "mul", "div", "mod"})
_BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.floor_divide,
        "mod": np.mod, "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}


def _layout(model: Model) -> list[tuple[int, int, int]]:
    out, off = [], 0
    for d in model.slot_domains:
        out.append((off, d.bits, d.lo))
        off += d.bits
    return out


def packed_array(packed: Sequence[int], model: Model) -> np.ndarray:
    """Packed states as a uint64 array, or an object array of Python ints past 64 bits."""
    if model.bits() > 64:
        return np.array(list(packed), dtype=object)
    return np.fromiter(packed, dtype=np.uint64, count=len(packed))


def unpack_columns(arr: np.ndarray, model: Model) -> list[np.ndarray]:
    """One int64 column per slot."""
    if arr.dtype == object:  # wider than 64 bits: unpack state by state
        from .pycompile import compile_unpack
        unpack = compile_unpack(model)
        rows = np.array([unpack(p) for p in arr.tolist()], dtype=np.int64).reshape(
            len(arr), model.nslots)
        return [rows[:, i].copy() for i in range(model.nslots)]
    cols = []
    for off, bits, lo in _layout(model):
        if bits == 0:
            cols.append(np.full(len(arr), lo, dtype=np.int64))
            continue
        c = ((arr >> np.uint64(off)) & np.uint64((1 << bits) - 1)).astype(np.int64)
        cols.append(c + lo if lo else c)
    return cols


def pack_columns(cols: Sequence[np.ndarray], model: Model) -> np.ndarray:
    out = np.zeros(len(cols[0]) if cols else 0, dtype=np.uint64)
    for c, (off, bits, lo) in zip(cols, _layout(model)):
        if bits:
            out |= (np.asarray(c, dtype=np.int64) - lo).astype(np.uint64) << np.uint64(off)
    return out
