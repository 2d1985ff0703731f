"""Quantifiers, choice and the one argument convention of Sum, Min, Max and Count, through
every engine (a value each engine computes differently would show as a count or a
verdict that differs)."""

from __future__ import annotations

import pytest

import osf_check
from osf_check import Bool, Choose, Count, Exists, ForAll, Int, Max, Min, ModelBuilder, Sum
from osf_check.models.expr import Const, evaluate


@pytest.mark.parametrize("f", [Sum, Min, Max])
def test_sum_min_max_take_the_same_three_forms(f):
    xs = [Const(4), Const(1), Const(6)]
    separate, listed = evaluate(f(*xs), ()), evaluate(f(xs), ())
    mapped = evaluate(f(range(3), lambda i: xs[i]), ())
    assert separate == listed == mapped == {Sum: 11, Min: 1, Max: 6}[f]


def test_count_takes_a_list_or_a_domain_and_a_predicate():
    assert evaluate(Count([Const(1) == 1, Const(2) == 3]), ()) == 1
    assert evaluate(Count(Int(2, 6), lambda v: Const(v) % 2 == 0), ()) == 3


def _pick_model():
    """A token moves to the least marked node (Choose), and any marked node unmarks."""
    b = ModelBuilder("pick")
    b.array("marked", Bool(), 4, actor="n")
    b.var("token", Int(0, 3), actor="n")

    @b.action("n")
    def move(s):
        return Exists(range(4), lambda i: s.marked[i]), {
            s.token: Choose(range(4), lambda i: s.marked[i])}

    @b.action("n", params={"i": range(4)})
    def unmark(s, i):
        return s.marked[i] & ForAll(range(4), lambda j: s.token != j + 10), {s.marked[i]: False}

    b.init_all(marked=Bool(), token=0)
    b.quiescent(lambda s: True)  # nothing marked: nothing to do, legitimately
    return b.build()


def test_choose_picks_the_least_element_and_the_engines_agree():
    m = _pick_model()
    r = osf_check.Checker(m).depth(None).explore()
    # hand count: token 0 with any of the 16 markings, or token t = the least of a
    # marking, which unmarking then shrinks to any subset of t..3: 8 + 4 + 2 for t = 1..3
    assert r.distinct == 16 + 8 + 4 + 2
    for engine in ("explicit", "vector"):
        assert osf_check.Checker(m).engine(engine).depth(None).explore().distinct == 30
    st = (0, 1, 1, 0, 0)  # marked = {1, 2}, token 0
    [mv] = [i for i in m.instances if i.name == "move"]
    assert evaluate(mv.updates[4], st) == 1
