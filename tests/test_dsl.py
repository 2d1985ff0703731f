"""The DSL's three interpretations agree: reference interpreter, compiled Python, numpy."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from osf_check.explorer.compiled.npeval import np_eval
from osf_check.explorer.compiled.pycompile import compile_pred, compile_trans, py_source
from osf_check.models.dsl import Bool, Enum, Int, ModelBuilder, ModelError
from osf_check.models.expr import And, Const, Count, If, Implies, Not, Or, Select, Slot, evaluate
from strategies import exprs

NSLOTS = 4
VALUE = st.integers(-2, 3)


def _reference(e, s):
    """The reference interpreter's value, or None where a reached Select's index is
    outside its options (a model error in every engine)."""
    try:
        return evaluate(e, s)
    except IndexError:
        return None


@given(exprs(NSLOTS), st.lists(VALUE, min_size=NSLOTS, max_size=NSLOTS))
def test_compiled_python_matches_the_reference_interpreter(e, state):
    s = tuple(state)
    want = _reference(e, s)
    if want is None:
        with pytest.raises(ModelError, match="outside"):
            compile_pred(e)(s)
    else:
        assert int(compile_pred(e)(s)) == want


@given(exprs(NSLOTS), st.lists(st.lists(VALUE, min_size=NSLOTS, max_size=NSLOTS), min_size=1, max_size=8))
def test_numpy_matches_the_reference_interpreter(e, states):
    cols = [np.array([s[i] for s in states]) for i in range(NSLOTS)]
    want = [_reference(e, s) for s in states]
    if None in want:
        with pytest.raises(ModelError, match="outside"):
            np_eval(e, cols, n=len(states))
        return
    got = np.broadcast_to(np_eval(e, cols, n=len(states)), (len(states),))
    assert [int(x) for x in got] == want


@given(exprs(NSLOTS), st.lists(VALUE, min_size=NSLOTS, max_size=NSLOTS))
def test_z3_matches_the_reference_interpreter(e, state):
    """z3's term for an expression, over constants, has the reference's value wherever
    that is defined (prove leaves unknown what reads a Select that may fall outside)."""
    import z3
    from osf_check.explorer.symbolic.engine import to_z3
    want = _reference(e, tuple(state))
    if want is None:
        return
    t = z3.simplify(to_z3(e, [z3.IntVal(v) for v in state]))
    got = (1 if z3.is_true(t) else 0) if z3.is_bool(t) else t.as_long()
    assert got == want


@pytest.mark.parametrize("e, reached", [
    # the Select at index 5 of two is reached where the operator has not decided yet
    (Or(Slot(0) == 0, Select(Slot(1), [1, 2])), [False, True]),
    (And(Slot(0) == 0, Select(Slot(1), [1, 2])), [True, False]),
    (Implies(Slot(0) == 0, Select(Slot(1), [1, 2])), [True, False]),
    (If(Slot(0) == 0, 7, Select(Slot(1), [1, 2])), [False, True]),
    (If(Slot(0) == 0, Select(Slot(1), [1, 2]), 7), [True, False]),
    (Select(Slot(0), [Select(Slot(1), [1, 2]), 3]), [True, False]),  # option 0 only
    (Select(Slot(0), [3, Select(Slot(1), [1, 2])]), [False, True]),
    (Not(Select(Slot(1), [1, 2])) + (Slot(0) == 0), [True, True]),
])
def test_a_select_outside_errs_in_the_states_that_reach_it(e, reached):
    """Rows x = 0 and x = 1, both with index 5: each engine errs exactly where the
    reference interpreter reaches the Select (Python's order of evaluation)."""
    states = [(0, 5), (1, 5)]
    assert [_reference(e, s) is None for s in states] == reached
    for s, bad in zip(states, reached):
        cols = [np.array([v]) for v in s]
        for run in (lambda: compile_pred(e)(s), lambda: np_eval(e, cols, n=1)):
            if bad:
                with pytest.raises(ModelError, match="index 5, outside 0..1"):
                    run()
            else:
                run()
    cols = [np.array([v for v, _ in states]), np.array([i for _, i in states])]
    if any(reached):
        with pytest.raises(ModelError, match=f"in {sum(reached)} of 2 states"):
            np_eval(e, cols, n=2)


@pytest.mark.parametrize("e, want", [
    (If(And(Slot(0) > 2, Slot(1) == 1), Slot(0) + 1, 0), [0, 0, 0, 0, 5, 0, 0, 8]),
    # a Select is evaluated with its indices checked (another walk of the tree)
    (If(Slot(0) < 2, Select(Slot(0), [Slot(1), 9]), 0), [0, 9, 0, 0, 0, 0, 0, 0]),
])
def test_numpy_evaluation_frees_its_columns_at_once(e, want):
    # the vector engine evaluates guards over whole chunks: if an evaluation left a
    # reference cycle, every intermediate column would wait for the cyclic collector
    # (measured on graph-relay: one process's search peaked at 861 MB with the cycle,
    # 368 MB without; the complete run at 3,976 MB against 3,427 MB)
    class Columns(list):  # a list that takes a weak reference
        pass

    cols = Columns([np.arange(8), np.arange(8) % 3])
    ref = weakref.ref(cols)
    gc.disable()
    try:
        got = np_eval(e, cols)
        del cols
        assert ref() is None, "np_eval left a reference cycle holding its columns"
    finally:
        gc.enable()
    assert got.tolist() == want


def test_next_state_slots_read_the_second_state():
    e = Slot(0, 1) == Slot(0) + 1
    assert compile_trans(e)((1,), (2,))
    assert not compile_trans(e)((1,), (3,))
    assert evaluate(e, (1,), (2,)) == 1


def test_python_truth_value_of_an_expression_is_refused():
    with pytest.raises(TypeError, match="And/Or/Not/If"):
        if Slot(0) == 1:  # noqa: SIM108 - the point of the test
            pass


def test_helpers_simplify_constants():
    assert And().op == "true" and Or().op == "false"
    assert And(Slot(0) == 1, False).op == "false"
    assert Not(Not(Slot(0) == 1)).op == "eq"
    assert evaluate(Count([Slot(0) == 1, Slot(1) == 1, True]), (1, 0)) == 2
    assert py_source(Const(True)) == "True"


def _counter(hi: int):
    b = ModelBuilder("c")
    b.var("n", Int(0, hi), actor="server")
    b.var("e", Enum("a", "b"), actor="server")
    b.var("f", Bool(), actor="server")

    @b.action("server")
    def inc(s):
        return True, {s.n: s.n + 1}

    b.init(n=0, e=0, f=False)
    return b.build()


def test_an_update_outside_its_domain_names_the_action():
    from osf_check.explorer.explicit.bfs import bfs
    with pytest.raises(ModelError, match=r"action inc sets n to 3, outside its domain Int\(0, 2\)"):
        bfs(_counter(2), [], depth=None)


def test_builder_rejects_inconsistent_models():
    b = ModelBuilder("bad", actors=("server", "client"))
    b.var("x", Bool(), actor="server")
    with pytest.raises(ModelError, match="declared twice"):
        b.var("x", Bool(), actor="server")
    with pytest.raises(ModelError, match="actor 'martian' is not one of the model's actors "
                                         r"\(server, client\)"):
        b.var("y", Bool(), actor="martian")
    with pytest.raises(ModelError, match="actor 'clinet'"):
        b.action("clinet")
    with pytest.raises(ModelError, match="non-empty"):
        ModelBuilder("bad", actors=("a", "a"))
    with pytest.raises(ModelError, match="initial state"):
        b.build()
    with pytest.raises(ModelError, match="enum values are names"):
        Enum("a", 2)  # shown as 2, and no trace's "2" could name it again


@pytest.mark.parametrize("params, words", [
    ({"o": range(-1, 2)}, "labels name parameter o, which takes -1, outside "
                          r"Enum\('left', 'right'\)"),
    ({"p": range(2)}, "labels name parameter o, which it does not have"),
])
def test_labels_name_only_values_their_parameter_takes(params, words):
    """o = -1 was labelled "right" (an enum's -1 is its last name), as o = 1 was: two
    instances with one label, which traces and the driver protocol find actions by."""
    b = ModelBuilder("labelled", actors=("a",))
    b.var("x", Int(0, 3), actor="a")

    @b.action("a", params=params, labels={"o": Enum("left", "right")})
    def go(s, **kw):
        return s.x < 3, {s.x: s.x + 1}
    b.init(x=0)
    with pytest.raises(ModelError, match=words):
        b.build()


def test_two_actions_of_one_name_are_refused():
    """Traces, check-log's mappings and the driver protocol find an action by its label:
    two actions both named A were built, and a trace's step "A" named either."""
    b = ModelBuilder("twice", actors=("a",))
    b.var("x", Int(0, 3), actor="a")

    @b.action("a", name="A")
    def up(s):
        return s.x < 3, {s.x: s.x + 1}

    @b.action("a", name="A")
    def down(s):
        return s.x > 0, {s.x: s.x - 1}
    b.init(x=0)
    with pytest.raises(ModelError, match=r"two action instances are labelled A \(actions at "
                                         r".*test_dsl.py:\d+ and .*test_dsl.py:\d+\)"):
        b.build()


def test_a_model_declares_its_own_actors_or_takes_them_in_order_of_use():
    b = ModelBuilder("free")
    b.var("x", Bool(), actor="proc")

    @b.action("hero", target="client")
    def go(s):
        return True, {s.x: True}
    b.init(x=False)
    assert b.build().actors == ("proc", "hero", "client")
    with pytest.raises(ModelError, match="non-empty name"):
        b.var("y", Bool(), actor="")


def test_state_round_trips_through_its_shown_form():
    m = _counter(2)
    s = (2, 1, 1)
    assert m.show_state(s) == {"n": 2, "e": "b", "f": True}
    assert m.parse_state(m.show_state(s)) == s
    with pytest.raises(ValueError, match="variable e"):
        m.parse_state({"n": 1, "e": "zzz", "f": True})
    with pytest.raises(ValueError, match="unknown variable"):
        m.parse_state({"n": 1, "e": "a", "f": True, "g": 1})


def test_packing_uses_the_fewest_bits():
    from osf_check.explorer.compiled.pycompile import compile_pack, compile_unpack
    m = _counter(2)
    assert m.bits() == 2 + 1 + 1
    pack, unpack = compile_pack(m), compile_unpack(m)
    for s in [(0, 0, 0), (2, 1, 1), (1, 0, 1)]:
        assert unpack(pack(s)) == s
        assert pack(s) < 2 ** 4
