"""Symmetry reduction: classes counted exactly, claims tested, verdicts and shortest
counterexamples unchanged, counterexamples expanded back into the model's own steps."""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest

from osf_check.cli import main
from osf_check.explorer.check import check
from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.compiled.pycompile import compile_pred, compile_steps
from osf_check.explorer.symmetry import Reduction, _Set, apply, expand, prove_symmetric
from osf_check.explorer.vector.search import vector_bfs
from osf_check.models.dsl import SymmetricSet
from osf_check.models.errors import BadValue
from osf_check.models.expr import Or
from osf_check.models.two_phase import SPEC as TWO_PHASE
from osf_check.properties import catalogue, kinds

T1 = catalogue.properties_of("two-phase")


def _classes(model) -> int:
    """Reachable states up to permutation, by brute force: the smallest image of each
    state under every permutation of the set (what the sorted representative must match)."""
    ex = bfs(model, [], depth=None)
    st = _Set(model, model.symmetries[0])
    perms = list(itertools.permutations(range(st.k)))
    return len({min(apply(st, p, ex.state(i)) for p in perms) for i in range(ex.distinct)})


@pytest.mark.slow
@pytest.mark.parametrize("rms", [2, 3, 4, 5])
def test_two_phase_reduces_to_exactly_its_classes(rms):
    m = TWO_PHASE.build({"rms": rms})
    red = Reduction(m, m.symmetries)
    a = bfs(m, T1, depth=None, reduce=red)
    b = vector_bfs(m, T1, depth=None, reduce=red)
    assert a.distinct == b.distinct == _classes(m)
    assert a.generated == b.generated
    assert a.histogram() == b.histogram()


def test_pinned_class_counts():
    # rms=3, 4: brute force over every permutation (test above); 9 and 12: regression pins
    got = {n: vector_bfs(TWO_PHASE.build({"rms": n}), T1, depth=None,
                         reduce=Reduction(TWO_PHASE.build({"rms": n}),
                                          TWO_PHASE.build({"rms": n}).symmetries))
           for n in (3, 9, 12)}
    assert [(got[n].distinct, got[n].generated) for n in (3, 9, 12)] == [
        (80, 318), (2_232, 26_316), (6_656, 105_081)]


def _commit_on_any(rms: int):
    """TwoPhase with a *symmetric* bug: the manager commits once any manager is prepared."""
    m = TWO_PHASE.build({"rms": rms})
    tm_prep = m.var_by_name["tmPrepared"]
    from osf_check.models.expr import Slot
    insts = [dataclasses.replace(i, guard=Or(*(Slot(s) == 1 for s in tm_prep.slots))
                                 & (Slot(m.var_by_name["tmState"].first_slot) == 0))
             if i.name == "TMCommit" else i for i in m.instances]
    return dataclasses.replace(m, instances=insts, mutant="commit-on-any")


def _is_trace_of(model, states, acts, prop) -> None:
    assert states[0] in model.initial_states
    steps = compile_steps(model)
    for s, a, t in zip(states, acts[1:], states[1:]):
        assert steps[a](s) == t
    inv = compile_pred(next(c.inv(model) for c in prop.checks if c.kind == "inv"))
    assert not inv(states[-1])


@pytest.mark.parametrize("rms", [3, 4, 5])
@pytest.mark.parametrize("engine", [bfs, vector_bfs])
def test_a_symmetric_bug_gives_the_same_verdict_and_length(rms, engine):
    m = _commit_on_any(rms)
    assert prove_symmetric(m, T1, m.symmetries) is None
    red = Reduction(m, m.symmetries)
    full, reduced = engine(m, T1, depth=None), engine(m, T1, depth=None, reduce=red)
    assert [v.prop for v in full.violations] == [v.prop for v in reduced.violations] == ["T1"]
    v = reduced.violations[0]
    assert len(v.path) == len(full.violations[0].path)
    states, acts = expand(m, red, T1, v, [reduced.state(i) for i in v.path if i >= 0])
    assert len(states) == len(v.path)
    _is_trace_of(m, states, acts, T1[0])
    assert reduced.distinct < full.distinct


def test_expansion_is_not_a_copy_of_the_reduced_states():
    # a representative sorts the managers; the model's own first prepared one is rm 0
    m = _commit_on_any(3)
    red = Reduction(m, m.symmetries)
    ex = bfs(m, T1, depth=None, reduce=red)
    v = ex.violations[0]
    states, _ = expand(m, red, T1, v, [ex.state(i) for i in v.path if i >= 0])
    assert [red.canon(s) for s in states] == [ex.state(i) for i in v.path]


@pytest.mark.slow
@pytest.mark.parametrize("model", catalogue.default_models() + ["two-phase"])
def test_every_model_and_mutant_keeps_its_verdict(model):
    """Asked for symmetry, every model and mutant gets the verdict, the violated
    properties and the counterexample lengths it gets without, and says why where it
    does not reduce (of the safety properties, at a depth: a bounded search of classes
    leaves reach and fair checks inconclusive)."""
    small = {"two-phase": {"rms": 3}}.get(model, {})
    safety = [p.id for p in catalogue.properties_of(model)
              if not any(kinds.on_graph(c.kind) for c in p.checks)]
    for mu in [None, *(x.name for x in catalogue.MUTANTS if x.model == model)]:
        runs = [check(model, params=small, mutant=mu, depth=6 if model != "two-phase" else None,
                      props=safety, symmetry=s) for s in (False, True)]
        plain, red = runs
        assert red.verdict == plain.verdict, (model, mu)
        assert ([(v.prop, len(v.path)) for v in red.violations]
                == [(v.prop, len(v.path)) for v in plain.violations]), (model, mu)
        assert red.symmetry["used"] or red.symmetry["why"], (model, mu)
        if red.symmetry["used"]:
            for v in red.violations:
                states = red.exploration.trace_states(v)
                assert states[0] in red.model.initial_states
                steps = compile_steps(red.model)
                assert all(steps[a](s) == t for s, a, t in zip(states, v.actions[1:], states[1:]))


def test_wrong_claims_are_refused():
    m = TWO_PHASE.build({"rms": 3}, "commit-without-all-prepared")
    assert "TMCommit" in prove_symmetric(m, T1, m.symmetries)
    ok = TWO_PHASE.build({"rms": 3})
    # a property that reads manager 0 alone is not symmetric even where the model is
    from osf_check.properties.base import Check, Property
    from osf_check.models.two_phase import RM
    lop = Property("X1", "first-never-aborts", "two-phase", "rm 0 never aborts",
                   (Check("inv", lambda s, m: s.rmState[0] != RM.aborted),), ())
    assert "X1's invariant" in prove_symmetric(ok, [lop], ok.symmetries)
    # initial states that single one manager out
    odd = dataclasses.replace(ok, initial_states=[(1, 0, 0) + ok.initial_states[0][3:]])
    assert "initial states" in prove_symmetric(odd, [], odd.symmetries)
    # a set that is not one: the manager's state and the network's commit message
    wrong = dataclasses.replace(ok, symmetries=[SymmetricSet("mixed", 3, ("rmState",),
                                                             ("tmState",))])
    assert prove_symmetric(wrong, T1, wrong.symmetries) is not None


def test_references_are_renamed_with_the_elements():
    m = TWO_PHASE.build({"rms": 3})
    decl = SymmetricSet("rm", 3, ("rmState", "tmPrepared", "msgPrepared"), ("tmState",))
    st = _Set(m, decl)
    s = m.initial_states[0]
    s = (2, 0, 1) + (2,) + s[4:]  # tmState (as a reference) names element 2
    assert apply(st, (2, 0, 1), s)[3] == 1
    red = Reduction(m, [decl])
    import numpy as np
    cols = {i: np.array([s[i]]) for i in red.slots}
    got = red.canon_cols(cols)
    assert tuple(int(got[i][0]) if i in got else s[i] for i in range(m.nslots)) == red.canon(s)


def test_a_reduced_checkpoint_does_not_resume_unreduced(tmp_path):
    m = TWO_PHASE.build({"rms": 4})
    red = Reduction(m, m.symmetries)
    vector_bfs(m, T1, depth=None, reduce=red, checkpoint=tmp_path, checkpoint_every=0,
               stop_after_levels=3)
    with pytest.raises(BadValue, match="symmetry"):
        vector_bfs(m, T1, depth=None, resume=tmp_path)
    done = vector_bfs(m, T1, depth=None, reduce=red, resume=tmp_path)
    assert done.distinct == vector_bfs(m, T1, depth=None, reduce=red).distinct


def run_cli(args):
    from click.testing import CliRunner
    r = CliRunner().invoke(main, args)
    return r.exit_code, r.stdout, r.stderr


def test_cli_reports_the_reduction():
    code, out, _ = run_cli(["explore", "--model", "two-phase", "--param", "rms=6",
                            "--depth", "unbounded", "--symmetry", "--json"])
    doc = json.loads(out)
    m = doc["models"][0]
    assert code == 0 and m["symmetry"] == {"declared": ["rm"], "used": True, "why": None}
    assert m["distinct_states"] == vector_bfs(
        TWO_PHASE.build({"rms": 6}), T1, depth=None,
        reduce=Reduction(TWO_PHASE.build({"rms": 6}), TWO_PHASE.build({"rms": 6}).symmetries)
    ).distinct
    code, out, _ = run_cli(["explore", "--model", "two-phase", "--mutant",
                            "commit-without-all-prepared", "--depth", "unbounded", "--symmetry"])
    assert code == 12 and "symmetry: not used (rm is not symmetric" in out
    code, out, _ = run_cli(["explore", "--model", "graph-relay", "--depth", "2", "--symmetry"])
    assert "symmetry: one state per class of permuted intent (proved symmetric)" in out
    code, out, _ = run_cli(["explore", "--model", "graph-relay", "--mutant",
                            "fresh-key-on-retry", "--depth", "2", "--symmetry"])
    assert "symmetry: not used (intent is not symmetric: no action matches" in out
    code, out, _ = run_cli(["explore", "--model", "wire-relay", "--depth", "2", "--symmetry"])
    assert "symmetry: not used (the model declares no symmetric set)" in out


def test_declaring_a_set_checks_its_shape():
    from osf_check.models.dsl import Bool, Int, ModelBuilder, ModelError
    b = ModelBuilder("t")
    b.array("a", Bool(), 3, actor="x")
    b.array("c", Bool(), 2, actor="x")
    b.var("r", Int(0, 1), actor="x")
    with pytest.raises(ModelError, match="different lengths"):
        b.symmetric("s", arrays=("a", "c"))
    with pytest.raises(ModelError, match="cannot name every"):
        b.symmetric("s", arrays=("a",), refs=("r",))
    with pytest.raises(ModelError, match="no variable"):
        b.symmetric("s", arrays=("zz",))


LAMPS = '''
from osf_check import Bool, Check, ModelBuilder, ModelSpec, Param, Property
from osf_check.properties.base import Goal
from osf_check.models.expr import And, Or


def build(params, mutant):
    b = ModelBuilder("lamps", params, mutant, actors=("switch",))
    b.array("on", Bool(), 3, actor="switch")
    for_all = range(3)

    @b.action("switch", params={"i": for_all}, name="flip")
    def flip(s, i):
        return True, {s.on[i]: 1 - s.on[i]}

    b.symmetric("lamp", arrays=("on",))
    b.init(on=False)
    return b.build()


SPEC = ModelSpec(name="lamps", title="three interchangeable lamps", params=(),
                 mutants={}, build_fn=build)
PROPERTIES = (
    Property("L1", "never-all-on", "lamps", "Not every lamp is on (false).",
             (Check("inv", lambda s, m: Or(*(s.on[i] == 0 for i in range(3)))),), ()),
    Property("L2", "all-off-again", "lamps", "From anywhere, all lamps can be off again.",
             (Check("reach", lambda s, m: [Goal("all off", Or(True),
                                                And(*(s.on[i] == 0 for i in range(3))))]),),
             ()),
)
'''


def test_reach_properties_are_judged_on_classes(tmp_path):
    f = tmp_path / "lamps.py"
    f.write_text(LAMPS)
    code, out, _ = run_cli(["explore", "--model-file", str(f), "--depth", "unbounded",
                            "--property", "L2", "--symmetry", "--json"])
    m = json.loads(out)["models"][0]
    assert m["symmetry"]["used"] and m["distinct_states"] == 4  # 0, 1, 2 or 3 lamps on
    assert {p["id"]: p["status"] for p in m["properties"]} == {"L2": "holds"}
    assert code == 0 and m["verdict"] == "ok"
    code, out, _ = run_cli(["explore", "--model-file", str(f), "--depth", "unbounded",
                            "--property", "L2", "--json"])
    assert code == 0 and json.loads(out)["models"][0]["distinct_states"] == 8
    # and a safety violation found on classes is a real run of three flips
    code, out, _ = run_cli(["explore", "--model-file", str(f), "--depth", "unbounded",
                            "--property", "L1", "--symmetry", "--json"])
    v = json.loads(out)["violations"][0]
    assert code == 12 and v["length"] == 3
