"""Symmetry in graph-relay: its intents are interchangeable (proved by z3), an unused run
names none of them, and a reduced search gives every mutant the verdict and the
shortest counterexample it gets without."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from osf_check.explorer.check import check
from osf_check.explorer.compiled.pycompile import compile_steps
from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.symmetry import Reduction, _Set, apply, prove, prove_symmetric
from osf_check.explorer.vector.search import vector_bfs
from osf_check.models.graph_relay import MUTANTS, SPEC
from osf_check.properties import catalogue, kinds

PROPS = catalogue.properties_of("graph-relay")
#: the safety properties (a bounded reduced search judges these alone)
SAFETY = [p for p in PROPS if not any(kinds.on_graph(c.kind) for c in p.checks)]
#: the smallest complete space with two intents
SMALL = {"retries": 0, "slugs": 1}


def _proved(params: dict, mutant: str | None = None) -> str | None:
    m = SPEC.build(params, mutant)
    return prove_symmetric(m, PROPS, m.symmetries)


def test_an_unused_run_names_no_intent():
    m = SPEC.build({})
    c = m.constants["ctx"]
    key = m.var_by_name["key"]
    assert {s[i] for s in m.initial_states for i in key.slots} == {c.no_key}
    assert c.no_key >= c.intents  # out of the range the symmetry renames
    # the old encoding (an unused run's key 0, which names intent 0) is not closed under
    # the permutations: the claim is refused
    old = [tuple(0 if i in key.slots else v for i, v in enumerate(s))
           for s in m.initial_states]
    assert "initial states change" in prove_symmetric(
        dataclasses.replace(m, initial_states=old), PROPS, m.symmetries)


@pytest.mark.parametrize("params", [{}, {"intents": 3}, {"listing": 1}, SMALL])
def test_intents_are_proved_interchangeable(params):
    m = SPEC.build(params)
    assert [(s.name, s.arrays, s.refs) for s in m.symmetries] == [
        ("intent", ("call", "attempts", "ticket"), ("key",))]
    assert _proved(params) is None


@pytest.mark.parametrize("params,mutant", [({}, "fresh-key-on-retry"), ({"projects": 2}, None)])
def test_where_intents_are_told_apart_the_claim_is_refused(params, mutant):
    # fresh-key-on-retry: a key names an attempt, not an intent; projects=2: intent i's
    # runs are filed under project i mod 2
    assert _proved(params, mutant) == ("intent is not symmetric: no action matches "
                                       "run_graph_session(i=0) under swapping elements 0 and 1")


def test_one_intent_declares_nothing_to_permute():
    assert SPEC.build({"intents": 1}).symmetries == []


def _classes(model, depth: int) -> int:
    """States within ``depth`` steps, up to a renaming of the intents, by brute force: the
    least image of each under every permutation (depth is the same for a whole class)."""
    ex = bfs(model, [], depth=depth)
    st = _Set(model, model.symmetries[0])
    perms = list(itertools.permutations(range(st.k)))
    return len({min(apply(st, p, ex.state(i)) for p in perms) for i in range(ex.distinct)})


@pytest.mark.parametrize("params,depth", [({}, 6), ({"intents": 3, "retries": 0}, 5)])
def test_the_reduced_search_stores_exactly_one_state_per_class(params, depth):
    m = SPEC.build(params)
    red = Reduction(m, m.symmetries)
    a = bfs(m, [], depth=depth, reduce=red)
    b = vector_bfs(m, [], depth=depth, reduce=red)
    assert a.distinct == b.distinct == _classes(m, depth)
    assert a.histogram() == b.histogram()
    assert a.distinct < bfs(m, [], depth=depth).distinct


def test_pinned_class_counts():
    # regression pins (this engine), each next to the unreduced count it reduces
    got = {}
    for name, params, depth in [("default d8", {}, 8), ("small", SMALL, None),
                                ("intents=3 d7", {"intents": 3}, 7)]:
        m = SPEC.build(params)
        got[name] = tuple(vector_bfs(m, [], depth=depth, reduce=r).distinct
                          for r in (None, Reduction(m, m.symmetries)))
    assert got == {"default d8": (31_110, 15_624), "small": (302_160, 151_104),
                   "intents=3 d7": (78_759, 14_258)}


def _is_trace(r, v) -> None:
    """The expanded counterexample is a run of the model from an initial state."""
    states = r.exploration.trace_states(v)
    assert states[0] in r.model.initial_states
    steps = compile_steps(r.model)
    assert all(steps[a](s) == t for s, a, t in zip(states, v.actions[1:], states[1:]))
    assert len(states) == len(v.path)


def _same(params: dict, mutant: str | None, depth: int | None, props) -> None:
    plain, red = (check("graph-relay", params=params, mutant=mutant, depth=depth,
                        props=[p.id for p in props], symmetry=s) for s in (False, True))
    assert red.verdict == plain.verdict, mutant
    assert ([(v.prop, len(v.path)) for v in red.violations]
            == [(v.prop, len(v.path)) for v in plain.violations]), mutant
    assert red.symmetry["used"] != bool(red.symmetry["why"]), mutant
    if red.symmetry["used"]:
        assert red.exploration.distinct < plain.exploration.distinct, mutant
        for v in red.violations:
            _is_trace(red, v)


@pytest.mark.parametrize("mutant", [None, *MUTANTS])
def test_every_mutant_keeps_its_verdict_to_a_depth(mutant):
    _same({}, mutant, 7, SAFETY)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [None, *MUTANTS])
def test_every_mutant_keeps_its_safety_verdict_complete(mutant):
    _same(SMALL, mutant, None, SAFETY)


def test_reach_and_fair_properties_stay_unknown_on_bounded_classes():
    plain, red = (check("graph-relay", depth=4, symmetry=s) for s in (False, True))
    graph = {p.id for p in PROPS} - {p.id for p in SAFETY}
    assert graph and {red.status[p] for p in graph} == {"inconclusive"}
    assert "inconclusive" not in {plain.status[p] for p in graph}
    assert all("search of classes was bounded" in w for w in red.warnings
               if w.split(":")[0] in graph)


def test_the_reduced_graph_judges_every_reach_and_fair_property():
    m = SPEC.build(SMALL)
    got = prove(m, PROPS, m.symmetries)
    assert got.why is None and got.graph == {"A2": None, "A10": None}


def _every_verdict(mutant: str | None, params: dict = SMALL) -> None:
    """Every property's verdict, the violations (property, kind, length of a path;
    a lasso may go round its cycle more than once on the model) the same with and
    without --symmetry on a complete run, each counterexample a run of the model."""
    plain, red = (check("graph-relay", params=params, mutant=mutant, depth=None,
                        symmetry=s, stop_on_violation=False) for s in (False, True))
    assert red.status == plain.status and red.verdict == plain.verdict, mutant
    assert ([(v.prop, v.kind) for v in red.violations]
            == [(v.prop, v.kind) for v in plain.violations]), mutant
    assert red.symmetry["used"] != bool(red.symmetry["why"]), mutant
    for a, b in zip(plain.violations, red.violations):
        if a.loop_start is None or a.stutters:
            assert len(a.path) == len(b.path), mutant
        if red.symmetry["used"]:
            _is_trace(red, b)
            if b.loop_start is not None and not b.stutters:
                states = red.exploration.trace_states(b)
                assert states[b.loop_start] == states[-1], mutant


@pytest.mark.parametrize("mutant", [None, "outbox-off"])
def test_reach_and_fair_verdicts_on_classes(mutant):
    # outbox-off breaks A2's invariant, reach goal and fair goal: a path and a lasso
    _every_verdict(mutant)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [None, *MUTANTS])
def test_every_mutant_keeps_every_verdict_complete(mutant):
    _every_verdict(mutant)


def test_a10_broken_on_classes_as_on_states():
    # queue-on-desktop, the mutant that breaks A10, runs with one intent (nothing to
    # permute); given two, A10's reach goal is violated on classes as on states, by a
    # counterexample of the same length
    _every_verdict("queue-on-desktop", {**SMALL, "intents": 2})
    r = check("graph-relay", params={**SMALL, "intents": 2}, mutant="queue-on-desktop",
              depth=None, symmetry=True)
    assert r.symmetry["used"] and r.status["A10"] == "violated"
    assert r.exploration.distinct == 167_616  # regression pin (335,184 states without)


def test_pinned_reduced_graph():
    # regression pin (vector engine, every property): the classes of the smallest
    # complete space with two intents and the edges of their graph
    r = check("graph-relay", params=SMALL, depth=None, symmetry=True)
    off, dst, _ = r.exploration.edges_by_source()
    assert (r.exploration.distinct, len(dst)) == (151_104, 2_462_340)
    assert r.status["A2"] == r.status["A10"] == "holds"
