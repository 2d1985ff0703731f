"""Reach and fair checks on a symmetry-reduced graph: judged where the proof says the
reduced graph answers them exactly (every goal predicate and fair-state condition
symmetric, every fairness set mapped onto itself), "inconclusive" everywhere else, and
a fair cycle found on classes reported as a real, fair lasso of the model."""

from __future__ import annotations

import textwrap

import pytest

import osf_check
from osf_check.explorer.compiled.pycompile import compile_steps
from osf_check.explorer.result import Violation
from osf_check.explorer.symmetry import Reduction, expand_lasso, lasso_fairness, prove

LAMPS = """
from osf_check import Bool, Check, ModelBuilder, ModelSpec, Property
from osf_check.properties.base import Goal
from osf_check.models.expr import And, Or


def build(params, mutant):
    b = ModelBuilder("lamps", params, mutant, actors=("switch",))
    b.array("on", Bool(), 3, actor="switch")

    @b.action("switch", params={"i": range(3)})
    def flip(s, i):
        return (all_off(s) if mutant == "stuck-token" else s.on[i] == 0), {s.on[i]: 1}

    if mutant != "stuck-token":  # (there the one light is never put out)
        @b.action("switch", params={"i": range(3)})
        def dim(s, i):
            return s.on[i] == 1, {s.on[i]: 0}

        b.fairness("weak", ["dim"], name="dims")
    if mutant in ("token", "stuck-token"):  # a lit lamp hands its light on: a step
        # within its class
        @b.action("switch", params={"i": range(3), "d": (1, 2)})
        def hand(s, i, d):
            j = (i + d) % 3
            return And(s.on[i] == 1, s.on[j] == 0), {s.on[i]: 0, s.on[j]: 1}

        b.fairness("weak", ["hand"], name="hands")
    if mutant == "lamp0-only":  # a fairness set the permutations move
        b.fairness("weak", ["flip(i=0)"], name="first")
    else:  # one set of every flip: mapped onto itself
        b.fairness("weak", ["flip"], name="flips")
    b.symmetric("lamp", arrays=("on",))
    b.init(on=False)
    return b.build()


def all_off(s):
    return And(*(s.on[i] == 0 for i in range(3)))


SPEC = ModelSpec(name="lamps", title="three interchangeable lamps", params=(),
                 mutants={"lamp0-only": "", "token": "", "stuck-token": ""}, build_fn=build)
PROPERTIES = (
    Property("L1", "some-lamp-lights", "lamps", "Some lamp lights.",
             (Check("fair", lambda s, m: [Goal.eventually(
                 "one on", Or(*(s.on[i] == 1 for i in range(3))))]),), ()),
    Property("L2", "all-off-again", "lamps", "Every lamp is off infinitely often (false).",
             (Check("fair", lambda s, m: [Goal.infinitely_often("all off", all_off(s))]),), ()),
    Property("L3", "can-go-dark", "lamps", "From anywhere, all lamps can be off again.",
             (Check("reach", lambda s, m: [Goal("all off", Or(True), all_off(s))]),), ()),
    Property("L4", "lamp0-lights", "lamps", "Lamp 0 lights (not symmetric).",
             (Check("fair", lambda s, m: [Goal.eventually("lamp 0 on", s.on[0] == 1)]),), ()),
)
"""


@pytest.fixture(scope="module")
def lamps(tmp_path_factory):
    path = tmp_path_factory.mktemp("lamps") / "lamps.py"
    path.write_text(textwrap.dedent(LAMPS))
    return path


def _run(path, mutant, symmetry, *props, engine="auto"):
    return (osf_check.Checker(path).mutant(mutant).properties(*props).depth(None)
            .keep_going().symmetry(symmetry).engine(engine).explore())


@pytest.mark.parametrize("engine", ["explicit", "vector"])
def test_judged_on_classes_where_proved_exact(lamps, engine):
    plain, red = (_run(lamps, None, s, "L1", "L2", "L3", engine=engine) for s in (False, True))
    assert (plain.distinct, red.distinct) == (8, 4)  # hand count: 2^3 states, 0..3 lamps on
    assert plain.status == red.status == {"L1": "holds", "L2": "violated", "L3": "holds"}
    assert red.raw.symmetry["used"] and not red.warnings


def test_a_fair_cycle_on_classes_is_a_real_fair_lasso(lamps):
    red = _run(lamps, None, True, "L2")
    (v,) = red.violations
    m = red.model
    states, acts = v.states, v.actions
    assert states[0] in m.initial_states and v.loop_start is not None and not v.stutters
    steps = compile_steps(m)
    assert all(steps[a](s) == t for s, a, t in zip(states, acts[1:], states[1:]))
    assert states[v.loop_start] == states[-1]  # a lasso of the model's own states
    assert len(v.path) == len(states)
    assert all(any(s) for s in states[v.loop_start:])  # never all off on the cycle
    assert lasso_fairness(m, states, acts, v.loop_start) == (True, "")


def test_a_fairness_set_the_permutation_moves_stays_inconclusive(lamps):
    # weak fairness of lamp 0's flip alone: plainly "holds" (lamp 0 must light), on
    # classes unknown, never "holds"
    plain, red = (_run(lamps, "lamp0-only", s, "L1", "L3") for s in (False, True))
    assert plain.status == {"L1": "holds", "L3": "holds"}
    assert red.raw.symmetry["used"]
    assert red.status == {"L1": "inconclusive", "L3": "holds"}
    assert red.verdict == "incomplete"
    (w,) = red.warnings
    assert w.startswith("L1: ") and "fairness set first is not mapped onto itself" in w


def test_an_asymmetric_goal_stays_inconclusive(lamps):
    # L4 reads lamp 0 alone: the proof refuses it, and only it
    red = _run(lamps, None, True, "L1", "L4")
    assert red.status == {"L1": "holds", "L4": "inconclusive"}
    assert "goal lamp 0 on reads the elements unequally" in red.warnings[0]


def test_proof_names_what_it_refuses(lamps):
    red = _run(lamps, "lamp0-only", True, "L1", "L3", "L4")
    props = red.raw.properties
    got = prove(red.model, props, red.model.symmetries)
    assert got.why is None and got.judged() == ["L3"]
    assert set(got.graph) == {"L1", "L3", "L4"}


def test_a_bounded_run_leaves_them_inconclusive(lamps):
    red = (osf_check.Checker(lamps).properties("L1", "L3").depth(1).symmetry(True).explore())
    assert red.status == {"L1": "inconclusive", "L3": "inconclusive"}
    mine = [w for w in red.warnings if w.startswith(("L1:", "L3:"))]
    assert len(mine) == 2 and all("search of classes was bounded" in w for w in mine)


def test_a_step_within_a_class_leaves_fair_checks_inconclusive(lamps):
    # handing the light from lamp i to lamp j is a self-loop of the reduced graph that
    # moves the state: read as stuttering it would hide cycles, so no fair verdict
    plain, red = (_run(lamps, "token", s, "L1", "L3") for s in (False, True))
    assert plain.status == {"L1": "holds", "L3": "holds"}
    assert red.status == {"L1": "inconclusive", "L3": "holds"}
    (w,) = red.warnings
    assert w.startswith("L1: ") and "self-loops of the symmetry-reduced graph" in w


def test_a_lap_that_permutes_is_repeated_until_the_real_state_comes_back(lamps):
    # the reduced cycle one lamp on -> two on -> one on: lamp 1 lights, lamp 2 dims, so a
    # lap ends on another member of the class; the lasso goes round until it is back
    m = _run(lamps, None, True, "L1").model
    red = Reduction(m, m.symmetries)
    label = {i.label: i.index for i in m.instances}
    reduced = [(0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 0, 1)]
    acts = [-1, label["flip(i=2)"], label["flip(i=1)"], label["dim(i=2)"]]
    v = Violation("L2", "fair", "", [0, 1, 2, 1], acts, loop_start=1)
    states, got, loop_at = expand_lasso(m, red, v, reduced)
    laps = (len(states) - 2) // 2
    assert loop_at == 1 and len(states) == 2 + 2 * laps and laps > 1
    assert states[-1] == states[1]
    assert [red.canon(s) for s in states] == reduced[:2] + reduced[2:] * laps
    steps = compile_steps(m)
    assert all(steps[a](s) == t for s, a, t in zip(states, got[1:], states[1:]))
    assert lasso_fairness(m, states, got, loop_at) == (True, "")


def test_a_reach_counterexample_ends_as_the_model_does(lamps):
    # once a lamp is lit only handing the light on moves the state: on classes a
    # self-loop, in the model a step, so the trace ends without claiming an end state
    plain, red = (_run(lamps, "stuck-token", s, "L3") for s in (False, True))
    assert plain.status == red.status == {"L3": "violated"}
    (a,), (b,) = plain.violations, red.violations
    assert (b.loop_start, b.stutters, b.message) == (a.loop_start, a.stutters, a.message)
    assert not b.stutters and len(b.states) == len(a.path)
