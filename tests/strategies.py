"""Hypothesis strategies the tests share: DSL expressions of every operator."""

from __future__ import annotations

from hypothesis import strategies as st

from osf_check.models.expr import And, Const, If, Implies, Not, Or, Select, Slot


def exprs(nslots: int, max_leaves: int = 12) -> st.SearchStrategy:
    """Any operator over any operands over slots ``0..nslots-1``: numbers as truth
    values (``And(2, 3)``) and truth values as numbers, negative values, and Select
    indices that may fall outside (a constant one is kept inside: it is refused)."""
    leaf = st.one_of(st.integers(-3, 3).map(Const), st.integers(0, nslots - 1).map(Slot))

    def extend(children):
        two = st.tuples(children, children)
        return st.one_of(
            two.map(lambda t: t[0] + t[1]),
            two.map(lambda t: t[0] - t[1]),
            two.map(lambda t: t[0] * t[1]),
            two.map(lambda t: t[0] == t[1]),
            two.map(lambda t: t[0] < t[1]),
            two.map(lambda t: t[0] >= t[1]),
            two.map(lambda t: And(t[0], t[1])),
            two.map(lambda t: Or(t[0], t[1])),
            two.map(lambda t: Implies(t[0], t[1])),
            children.map(Not),
            st.tuples(children, children, children).map(lambda t: If(t[0], t[1], t[2])),
            two.map(lambda t: t[0] % 3 + t[1] // 2),
            st.tuples(children, children, children).map(
                lambda t: Select(Const(t[0].value % 2) if t[0].op == "const" else t[0],
                                 [t[1], t[2]])),
        )
    return st.recursive(leaf, extend, max_leaves=max_leaves)
