"""Quantifiers, choice and the one argument convention of Sum, Min, Max and Count, through
every engine (a value each engine computes differently would show as a count or a
verdict that differs)."""

from __future__ import annotations

import pytest

import osf_check
from osf_check import Bool, Choose, Count, Exists, ForAll, Int, Max, Min, ModelBuilder, Sum
from osf_check.models.expr import And, Const, Not, evaluate


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


def _set_at(members):
    b = ModelBuilder("bag")
    b.set("S", Int(1, 4), actor="x")
    b.init(S={"#set": list(members)})
    m = b.build()
    return m.view(0).S, m.initial_states[0]


def test_quantifiers_and_aggregates_over_a_set_range_over_its_elements():
    """A set iterates as its membership bits; a quantifier given the set itself ranges
    over the elements in it (TLA+'s \\E x \\in S), every form alike."""
    S, st = _set_at([2, 4])
    got = [evaluate(e, st) for e in (
        Exists(S, lambda x: Const(x) == 1), Exists(S, lambda x: Const(x) == 4),
        ForAll(S, lambda x: Const(x) % 2 == 0), Sum(S), Sum(S, lambda x: Const(x) * 10),
        Min(S), Max(S), Min(S, lambda x: Const(10) - x), Count(S),
        Count(S, lambda x: Const(x) > 2), Choose(S, lambda x: Const(x) > 1))]
    assert got == [0, 1, 1, 6, 60, 2, 4, 6, 2, 1, 2]


def test_min_of_an_empty_set_is_an_error_as_choose_with_no_element_is():
    S, st = _set_at([])
    with pytest.raises(IndexError):
        evaluate(Min(S), st)
    assert evaluate(Sum(S), st) == 0 and evaluate(Exists(S, lambda x: True), st) == 0


def _bag_model():
    """Add any element; read the least and greatest element back, once there is one."""
    b = ModelBuilder("bag")
    S = b.set("S", Int(1, 3), actor="x")
    b.var("low", Int(0, 3), actor="x")
    b.var("high", Int(0, 3), actor="x")

    @b.action("x", params={"v": range(1, 4)})
    def add(s, v):
        return Not(S.contains(v)), S.add(v)

    @b.action("x")
    def read(s):
        return Exists(S, lambda x: True), {s.low: Min(S), s.high: Max(S)}

    b.init(S={"#set": []}, low=0, high=0)
    b.quiescent(lambda s: True)
    return b.build()


def test_a_set_quantified_in_a_model_counts_alike_in_every_engine_and_in_z3():
    from osf_check.explorer.symbolic.engine import PropertyChecks, bmc
    m = _bag_model()
    counts = {e: osf_check.Checker(m).engine(e).depth(None).explore().distinct
              for e in ("explicit", "vector")}
    # hand count: with S of k elements, (low, high) is (0, 0) or (min T, max T) for T a
    # non-empty subset read on the way, i.e. any a <= b in S: 1 + k(k+1)/2 pairs; over
    # the 8 sets, 1 + 3*2 + 3*4 + 1*7 = 26
    assert counts == {"explicit": 26, "vector": 26}
    s = m.view(0)
    # z3: low = 1 and high = 3 is reachable (read {1, 3}), in three steps, no fewer
    res = bmc(m, PropertyChecks([Not(And(s.low == 1, s.high == 3))], []), 4)
    assert res.depth == 3


def test_choose_takes_integers_in_tlcs_order_whatever_order_they_are_listed_in():
    # TLC: CHOOSE x \in {4, 3, 1} : x > 2 is 3 (the set normalized: 1, 3, 4)
    assert evaluate(Choose([4, 3, 1], lambda i: Const(i) > 2), ()) == 3
    assert evaluate(Choose(range(4, 0, -1), lambda i: Const(i) > 1), ()) == 2


def test_count_takes_sums_forms_too():
    conds = [Const(1) == 1, Const(2) == 3, Const(3) == 3]
    separate, listed = evaluate(Count(*conds), ()), evaluate(Count(conds), ())
    mapped = evaluate(Count(range(3), lambda i: conds[i]), ())
    assert separate == listed == mapped == 2
