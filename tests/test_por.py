"""Partial-order reduction (``explore --por``): counts computed by hand where the
reduction is exact, models where dropping the cycle proviso or visibility would report a
wrong "holds", counterexamples replayed on the model, and verdicts equal to the unreduced
search's on every shipped model, mutant and public spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import osf_check
from osf_check.api import load
from osf_check.cli import main
from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.por import PartialOrder, replay
from osf_check.models.dsl import Bool, Int, ModelBuilder
from osf_check.models.expr import And, Not
from osf_check.properties import catalogue, kinds
from osf_check.properties.base import Check, CheckList, Property

HERE = Path(__file__).resolve().parent / "public_specs"


def _counters(n: int, top: int):
    """``n`` counters, each counted up to ``top`` by its own action: no two actions touch
    one variable, and the end (every counter at the top) is legitimate."""
    b = ModelBuilder("counters", actors=("c",))
    c = b.array("c", Int(0, top), n, actor="c")

    @b.action("c", params={"i": range(n)})
    def inc(s, i):
        return c[i] < top, {c[i]: c[i] + 1}
    b.init(c=0)
    b.quiescent(lambda s: And(*(x == top for x in c)))
    return b.build()


@pytest.mark.parametrize("n,top", [(3, 2), (4, 3), (2, 5)])
def test_independent_counters_reduce_to_one_interleaving(n, top):
    """Hand count: every interleaving reaches the same states, (top + 1) ** n of them;
    one stubborn set of one counter's step per state walks a single path of n * top
    steps, so n * top + 1 states.  The states before the last counter's turn have more
    than one enabled step ((n - 1) * top of them), the last counter's top have one."""
    m = _counters(n, top)
    full = bfs(m, [], depth=None)
    red = bfs(m, [], depth=None, por=True)
    assert full.distinct == (top + 1) ** n
    assert red.distinct == n * top + 1  # hand count
    assert red.por.as_dict() == {"reduced": (n - 1) * top, "full": top, "proviso": 0}
    assert red.complete and not red.violations and not full.violations


def _spinner_and_alarm():
    """An invisible step that loops for ever (spin flips a bit) and a visible one that
    breaks the invariant (alarm); a search that keeps firing spin alone, the one
    invisible step, closes the loop without ever firing alarm."""
    b = ModelBuilder("spin", actors=("p",))
    b.var("bit", Bool(), actor="p")
    b.var("alarm", Bool(), actor="p")

    @b.action("p")
    def spin(s):
        return True, {s.bit: Not(s.bit)}

    @b.action("p")
    def ring(s):
        return Not(s.alarm), {s.alarm: True}
    b.init(bit=False, alarm=False)
    prop = Property("S1", "quiet", "spin", "alarm stays off",
                    (Check("inv", lambda s, m: Not(s.alarm)),), ())
    return b.build(), prop


def test_the_cycle_proviso_keeps_a_step_from_being_put_off_for_ever():
    """Without C3 the reduced search would fire spin, come back to the first state and
    stop: "holds".  The proviso expands the state whose successor was seen before."""
    m, prop = _spinner_and_alarm()
    full = bfs(m, [prop], depth=None)
    red = bfs(m, [prop], depth=None, por=True)
    assert [v.prop for v in full.violations] == ["S1"]
    assert [v.prop for v in red.violations] == ["S1"]
    assert red.por.proviso >= 1


def _two_flags(check: Check, first: str = "late"):
    """Two steps on two variables, ``first`` defined first: a reduction that may pick
    either (they are independent) fires that one alone from the first state."""
    b = ModelBuilder("flags", actors=("p",))
    b.var("x", Bool(), actor="p")
    b.var("y", Bool(), actor="p")
    steps = {"late": lambda s: (Not(s.y), {s.y: True}),
             "early": lambda s: (Not(s.x), {s.x: True})}
    for name in sorted(steps, key=lambda n: n != first):
        b.action("p", name=name)(steps[name])
    b.init(x=False, y=False)
    b.quiescent(lambda s: And(s.x, s.y))
    return b.build(), Property("F1", "order", "flags", "", (check,), ())


def test_a_step_that_changes_what_an_invariant_reads_is_visible():
    """x without y is reachable (early first); a reduction that fired late alone, as
    independence allows, would never see it: both write what the invariant reads."""
    m, prop = _two_flags(Check("inv", lambda s, m: Not(And(s.x, Not(s.y)))))
    po = PartialOrder(m, CheckList.of(m, [prop]))
    assert po.visible == 0b11
    assert [v.prop for v in bfs(m, [prop], depth=None, por=True).violations] == ["F1"]


def test_a_transition_check_reading_another_step_makes_both_visible():
    """early's check reads y, which only late writes: early after late breaks it, and a
    reduction that fired early alone first would never take that order."""
    m, prop = _two_flags(Check("trans", lambda s, t, inst, m:
                               Not(s.y) if inst.name == "early" else None), first="early")
    po = PartialOrder(m, CheckList.of(m, [prop]))
    assert po.visible == 0b11
    red = bfs(m, [prop], depth=None, por=True)
    assert [v.prop for v in red.violations] == ["F1"]


def test_a_step_that_changes_nothing_is_checked_where_it_is_enabled():
    """peek writes nothing: the search checks its step where it is enabled and never
    takes it.  Its check fails only where early has fired and late has not, a state a
    reduction firing late alone would skip: what it reads makes late and early visible."""
    b = ModelBuilder("peek", actors=("p",))
    b.var("x", Bool(), actor="p")
    b.var("y", Bool(), actor="p")

    @b.action("p")
    def late(s):
        return Not(s.y), {s.y: True}

    @b.action("p")
    def early(s):
        return Not(s.x), {s.x: True}

    @b.action("p")
    def peek(s):
        return True, {}
    b.init(x=False, y=False)
    prop = Property("P1", "peek", "peek", "", (Check("trans", lambda s, t, inst, m: Not(
        And(s.x, Not(s.y))) if inst.name == "peek" else None),), ())
    m = b.build()
    po = PartialOrder(m, CheckList.of(m, [prop]))
    assert (po.stutter, po.visible) == (0b100, 0b011)
    assert [v.prop for v in bfs(m, [prop], depth=None, por=True).violations] == ["P1"]


def test_a_check_on_a_steps_own_variables_leaves_the_reduction_alone():
    """A check that reads only what its step reads or writes is decided by that step's
    own values, which every interleaving keeps: no step is visible, and a check that
    only says a variable it does not write keeps its value reads nothing at all."""
    m, prop = _two_flags(Check("trans", lambda s, t, inst, m:
                               And(t.x, t.y == s.y) if inst.name == "early" else None))
    po = PartialOrder(m, CheckList.of(m, [prop]))
    assert po.visible == 0
    assert bfs(m, [prop], depth=None, por=True).distinct == 3 < bfs(m, [prop], depth=None
                                                                   ).distinct


def test_deadlocks_are_kept():
    """Two processes taking two locks in opposite orders: the deadlock (each holds one)
    is only reached by interleaving them, and the reduced search finds it."""
    b = ModelBuilder("locks", actors=("p",))
    pc = b.array("pc", Int(0, 3), 2, actor="p")
    lock = b.array("lock", Int(0, 2), 2, actor="p")  # 0 free, else holder + 1
    for p in range(2):
        first, second = (0, 1) if p == 0 else (1, 0)

        @b.action("p", name=f"take_first_{p}")
        def take1(s, p=p, first=first):
            return And(pc[p] == 0, lock[first] == 0), {pc[p]: 1, lock[first]: p + 1}

        @b.action("p", name=f"take_second_{p}")
        def take2(s, p=p, second=second):
            return And(pc[p] == 1, lock[second] == 0), {pc[p]: 2, lock[second]: p + 1}

        @b.action("p", name=f"release_{p}")
        def release(s, p=p):
            return pc[p] == 2, {pc[p]: 3, lock[0]: 0, lock[1]: 0}
    b.init(pc=0, lock=0)
    b.quiescent(lambda s: And(pc[0] == 3, pc[1] == 3))
    m = b.build()
    full = bfs(m, [], depth=None, stop_on_violation=False)
    red = bfs(m, [], depth=None, por=True, stop_on_violation=False)
    assert [v.kind for v in full.violations] == [v.kind for v in red.violations] == [
        "deadlock"]
    assert full.state(full.violations[0].path[-1]) == red.state(red.violations[0].path[-1])
    assert red.distinct <= full.distinct


def test_a_counterexample_replays_and_a_tampered_one_does_not():
    m, prop = _spinner_and_alarm()
    ex = bfs(m, [prop], depth=None, por=True)
    [v] = ex.violations
    checks = CheckList.of(m, [prop])
    states = ex.trace_states(v)
    assert replay(m, checks, states, v.actions, v.prop, v.kind) is None
    assert "not violate" in replay(m, checks, states[:-1], v.actions[:-1], v.prop, v.kind)
    assert "initial" in replay(m, checks, [states[-1]], [-1], v.prop, v.kind)
    wrong = [states[0], states[0]] if len(states) > 1 else states
    assert "does not lead" in replay(m, checks, wrong, v.actions[:2], v.prop, v.kind)


def _safety(model: str) -> list[str]:
    return [p.id for p in catalogue.properties_of(model)
            if not any(kinds.on_graph(c.kind) for c in p.checks)]


def _both(checker: osf_check.Checker) -> tuple:
    full = checker.explore()
    red = checker.por().explore()
    return full, red


#: parameters small enough for a complete search of every mutant in seconds; a mutant's
#: own parameters (the ones its bug needs) win over these
SMALL = {"graph-relay": {"intents": 1, "slugs": 1},
         "wire-relay": {"ops": 1},
         "two-phase": {"rms": 3}}


def _cases() -> list[tuple[str, str | None]]:
    return [(model, mu) for model in SMALL for mu in
            [None, *(x.name for x in catalogue.MUTANTS if x.model == model)]]


@pytest.mark.parametrize("model,mutant", _cases())
def test_verdicts_equal_with_and_without_por(model, mutant):
    mp = catalogue.mutant(model, mutant).params if mutant else {}
    params = {k: v for k, v in SMALL[model].items() if k not in mp}
    checker = osf_check.Checker(model).params(**params).mutant(mutant) \
        .properties(*_safety(model)).depth(None).engine("explicit").keep_going()
    full, red = _both(checker)
    assert full.complete and red.complete
    assert red.raw.verdict == full.raw.verdict
    assert red.status == full.status
    assert red.distinct <= full.distinct
    assert {v.kind for v in red.raw.violations} == {v.kind for v in full.raw.violations}


def _specs() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py"))


@pytest.mark.parametrize("spec", _specs(), ids=lambda p: p.stem)
def test_public_specs_verdicts_equal_with_and_without_por(spec):
    name = load(spec)
    safe = _safety(name)
    checker = osf_check.Checker(name).depth(None).engine("explicit").keep_going()
    if safe:
        checker = checker.properties(*safe)
    elif any(kinds.on_graph(c.kind) for p in catalogue.properties_of(name) for c in p.checks):
        pytest.skip(f"{spec.stem} has reach or fair properties only")
    full, red = _both(checker)
    assert red.status == full.status and red.raw.verdict == full.raw.verdict
    assert red.distinct <= full.distinct


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def test_explore_por_refuses_reach_and_fair_properties_in_one_line():
    code, out = _cli("explore", "--model", "graph-relay", "--por")
    assert code == 150
    assert "A2 (inv + reach + fair), A10 (reach)" in out and "Traceback" not in out


@pytest.mark.parametrize("args,says", [
    (["--engine", "vector"], "--por needs the explicit engine"),
    (["--symmetry"], "--por and --symmetry do not combine")])
def test_explore_por_refuses_what_it_cannot_do(args, says):
    code, out = _cli("explore", "--model", "two-phase", "--por", *args)
    assert code == 150 and says in out and "Traceback" not in out


def test_explore_por_reports_its_counts_in_text_and_json():
    base = ["explore", "--model", "graph-relay", "--param", "intents=1", "--param",
            "slugs=1", "--depth", "unbounded", "--property", "A1", "--property", "A3",
            "--por"]
    code, out = _cli(*base)
    assert code == 0, out
    assert "partial-order reduction:" in out and "by the cycle proviso" in out
    code, out = _cli(*base, "--json")
    doc = json.loads(out[out.index("{"):out.rindex("}") + 1])
    por = doc["models"][0]["por"]
    assert por["reduced"] > 0 and por["full"] >= por["proviso"]
    assert por["reduced"] + por["full"] <= doc["models"][0]["distinct_states"]


def test_a_por_counterexample_is_a_path_of_the_model():
    """Replayed before it is reported: its states follow from each other by the model's
    own steps, and its last state breaks the property."""
    r = osf_check.Checker("graph-relay").params(intents=1, slugs=1).mutant(
        "complete-overwrites-cancel").properties("A3").depth(None).por().explore()
    [v] = r.raw.violations
    m = r.model
    states = r.raw.exploration.trace_states(v)
    assert replay(m, CheckList.of(m, r.raw.properties), states, v.actions, v.prop,
                  v.kind) is None
