"""Public specifications of tlaplus/Examples written as model files with the DSL's
quantifiers and initial-state sets (``tests/public_specs/``), their distinct-state counts
pinned to TLC's.

TLC figures: ``benchmarks/tlc/results.md`` (and ``results.json``), written by
``benchmarks/bench_tlc.py``: TLC2 Version 2.18 of 20 March 2023 (rev: 3ea3222), the
released v1.7.3 tla2tools.jar, tlaplus/Examples at commit 32a32c7b, one worker, each run
in a folder holding the published module(s) and the files of
``tests/public_specs/tlc/<run>/``, with the command
``java -XX:+UseParallelGC -cp tla2tools.jar tlc2.TLC -workers 1 -fp 0 -config X.cfg X.tla``
(for EWD840: ``-config EWD840.cfg EWD840.tla``).  ``benchmarks/tlc/README.md`` says how
to run them again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import z3

import osf_check
from osf_check.explorer.symbolic.engine import Symbolic

HERE = Path(__file__).resolve().parent / "public_specs"


def test_ewd840_counts_equal_tlcs():
    """TLC, EWD840.cfg (N=3): 192 initial states, 302 distinct, depth 9 (TLC counts the
    initial state as depth 1; our BFS depth is the number of steps, 8).  Liveness
    (terminated ~> terminationDetected, under WF_vars(System)) holds: TLC run ``ewd840``
    in benchmarks/tlc/results.md, 302 distinct, depth 9, no error."""
    r = osf_check.Checker(HERE / "ewd840.py").depth(None).explore()
    assert r.distinct == 302  # TLC 2.18 (see the module docstring)
    assert len(r.model.initial_states) == 192  # TLC: "192 distinct states generated"
    assert len(r.histogram) - 1 == 9 - 1
    assert r.status == {"E1": "holds", "E2": "holds"}  # TLC 2.18, ewd840


def test_an_initial_set_is_one_predicate_for_z3_not_one_constraint_per_state():
    """BMC and induction state ``init_all``'s set once (an enumeration of 524,288
    states at N=8 made BMC spend minutes on them)."""
    from osf_check.properties import catalogue
    osf_check.load_file(HERE / "ewd840.py")
    model = catalogue.MODELS["ewd840"].build({"nodes": 3}, None)
    sym = Symbolic(model)
    init = sym.init()
    # 192 states, one equation each, would be thousands of characters
    assert len(str(init)) < 200, str(init)[:300]
    solver = z3.Solver()
    solver.add(init, sym.domain(0))
    s0 = sym.state(0)
    found = set()
    while solver.check() == z3.sat:  # every initial state and no other
        mdl = solver.model()
        st = tuple(mdl.eval(v, model_completion=True).as_long() for v in s0)
        found.add(st)
        solver.add(z3.Or(*[v != x for v, x in zip(s0, st)]))
    assert found == set(model.initial_states)


def _cli(*args):
    from click.testing import CliRunner
    from osf_check.cli import main
    r = CliRunner().invoke(main, [str(a) for a in args])
    return r.exit_code, r.stdout


def test_missionaries_counts_equal_tlcs_and_its_answer_is_tlcs_length():
    """MissionariesAndCannibals.tla (``specifications/MissionariesAndCannibals/``).  TLC
    run ``missionaries_typeok`` (TypeOK only): 64 distinct, depth 13; TLC run
    ``missionaries`` (the published cfg): Solution violated, a 12-state trace (11 steps).
    Command: ``-config MissionariesAndCannibals.cfg MissionariesAndCannibals.tla``."""
    r = osf_check.Checker(HERE / "missionaries.py").depth(None).keep_going().explore()
    assert r.distinct == 64  # TLC 2.18
    assert len(r.histogram) == 13  # TLC's depth 13 counts states; 12 BFS levels past 0
    assert r.status == {"MC1": "violated"}
    doc = r.to_json()
    [v] = doc["violations"]
    assert v["length"] == 11  # TLC: 12 states
    last = v["trace"]["steps"][-1]
    assert last["state"]["east"] == {"#set": []}  # a set, shown as one
    assert last["state"]["west"] == {"#set": ["c1", "c2", "c3", "m1", "m2", "m3"]}
    assert last["label"] == "Move(load=c1+c2, b=E)"


def test_a_model_with_sets_is_explored_proved_and_rendered_through_the_cli(tmp_path):
    code, _ = _cli("explore", "--model-file", HERE / "missionaries.py", "--depth",
                   "unbounded", "--out", tmp_path)
    assert code == 12
    text = (tmp_path / "missionaries-MC1-inv.txt").read_text()
    assert "east          {c1, c2} → {}" in text
    assert "{c1, c2} → {}" in (tmp_path / "missionaries-MC1-inv.sequence.mmd").read_text()
    assert '"#set":[]' in (tmp_path / "report.html").read_text().replace(" ", "")
    itf = json.loads((tmp_path / "missionaries-MC1-inv.itf.json").read_text())
    assert itf["states"][-1]["east"] == {"#set": []}  # ITF's own form of a set
    assert itf["states"][0]["bank_of_boat"] == "E"
    for src in ("missionaries-MC1-inv.itf.json", "missionaries-MC1-inv.trace.json"):
        code, out = _cli("render", tmp_path / src, "--format", "text")
        assert code == 0 and "east          {c1, c2} → {}" in out, out[-400:]
    code, out = _cli("prove", "--model-file", HERE / "missionaries.py", "--json")
    [p] = json.loads(out)["properties"]
    assert code == 12 and (p["status"], p["k"]) == ("refuted", 11)
    code, out = _cli("prove", "--model-file", HERE / "ewd840.py", "--json")
    assert code == 0 and json.loads(out)["properties"][0]["status"] == "proved"


def test_the_api_proves_and_draws_a_model_with_sets(tmp_path):
    c = osf_check.Checker(HERE / "missionaries.py")
    p = c.prove()
    assert p.exit_code == 12
    r = c.depth(None).explore()
    assert "{c1, c2} → {}" in r.text()
    written = r.write(tmp_path)
    svg = tmp_path / "missionaries-MC1-inv.sequence.svg"
    assert svg in written and "{c1, c2} → {}" in svg.read_text()


def test_a_copy_with_other_initial_states_does_not_keep_the_old_predicate():
    import dataclasses
    from osf_check.properties import catalogue
    osf_check.load_file(HERE / "ewd840.py")
    model = catalogue.MODELS["ewd840"].build({"nodes": 3}, None)
    assert model.init_predicate() is not None
    one = dataclasses.replace(model, initial_states=model.initial_states[:1])
    assert one.init_predicate() is None
    assert str(Symbolic(one).init()).count("==") == 8  # the one state: 8 slots, 8 equations


# Specifications checked beside TLC runs made for these tests --------------------------------
# Each run's figures: benchmarks/tlc/results.md, by its name (TLC 2.18, the command and the
# folder as the module docstring says).
# Depth: TLC counts states (an initial state is depth 1), our histogram has one entry per
# BFS level (steps 0, 1, ...), so TLC's depth d is a histogram of d entries.  A TLC trace
# of n states is a counterexample of n - 1 steps here (``length``).

def _explore(name, mutant=None, **params):
    return (osf_check.Checker(HERE / f"{name}.py").mutant(mutant).params(**params)
            .depth(None).keep_going().explore())


def _violation(r, prop):
    [v] = [v for v in r.to_json()["violations"] if v["property"] == prop]
    return v


def test_diehard_counts_and_answer_equal_tlcs():
    """DieHard.tla (``specifications/DieHard/``).  TLC run ``diehard_typeok`` (TypeOK
    only): 16 distinct states, depth 8, no deadlock.  TLC run ``diehard`` (the published
    cfg, NotSolved): violated, a 7-state trace FillBigJug, BigToSmall, EmptySmallJug,
    BigToSmall, FillBigJug, BigToSmall (TLC stops there, at 14 distinct states; we
    keep going, so only the trace is compared)."""
    r = _explore("diehard")
    assert (r.distinct, len(r.histogram)) == (16, 8)  # TLC 2.18, diehard_typeok
    assert r.status == {"DH1": "violated"} and r.exit_code == 12
    v = _violation(r, "DH1")
    assert v["length"] == 7 - 1  # TLC 2.18, diehard: 7 states
    steps = v["trace"]["steps"]
    assert [st["label"] for st in steps[1:]] == [
        "FillBigJug", "BigToSmall", "EmptySmallJug", "BigToSmall", "FillBigJug",
        "BigToSmall"]
    assert steps[-1]["state"] == {"big": 4, "small": 3}


def test_tcommit_counts_equal_tlcs():
    """TCommit.tla (``specifications/transaction_commit/``), TLC run ``tcommit`` (the
    published cfg: RM = {r1, r2, r3}, CHECK_DEADLOCK FALSE): 34 distinct states, depth 7,
    TCConsistent holds."""
    r = osf_check.Checker(HERE / "tcommit.py").properties("TC1").depth(None).explore()
    assert (r.distinct, len(r.histogram)) == (34, 7)  # TLC 2.18, tcommit
    assert r.status == {"TC1": "holds"} and r.exit_code == 0


def test_twophase_counts_equal_tlcs():
    """TwoPhase.tla (``specifications/transaction_commit/``), TLC run ``twophase_tc``
    (RM = {r1, r2, r3}, invariants TPTypeOK and TC!TCConsistent, deadlock checked): 288
    distinct states, 1146 generated, depth 11, no error (so no deadlock: a state whose
    only steps leave it as it is, say every RM aborted, has those steps)."""
    r = _explore("twophase")
    assert (r.distinct, len(r.histogram)) == (288, 11)  # TLC 2.18, twophase_tc
    assert r.generated == 1146  # TLC 2.18 (equal here; see docs/tla-guide.md)
    assert r.status == {"TP1": "holds"} and r.exit_code == 0


def test_chameneos_counts_equal_tlcs():
    """Chameneos.tla (``specifications/Chameneos/``), TLC run ``chameneos`` (N = 2,
    M = 3, CHECK_DEADLOCK FALSE): 27 initial states, 492 distinct, depth 8, SumMet
    holds."""
    r = _explore("chameneos")
    assert len(r.model.initial_states) == 27  # TLC 2.18: "27 distinct states generated"
    assert (r.distinct, len(r.histogram)) == (492, 8)  # TLC 2.18, chameneos
    assert r.status == {"CH1": "holds"} and r.exit_code == 0


def test_chameneos_published_cfg_counts_equal_tlcs():
    """TLC run ``chameneos_44`` (the published cfg: N = 4, M = 4): 81 initial states,
    34534 distinct, 104697 generated, depth 13, SumMet holds."""
    r = _explore("chameneos", meetings=4, chameneoses=4)
    assert len(r.model.initial_states) == 81  # TLC 2.18, chameneos_44
    assert (r.distinct, len(r.histogram), r.generated) == (34534, 13, 104697)
    assert r.status == {"CH1": "holds"}


def test_chameneos_who_meet_take_the_complementary_colour():
    """The state counts above do not tell Complement's rule from "take the other's
    colour" (the colours play symmetric roles), so its steps are checked by hand: blue
    (1) waits, red (2) meets it, both turn yellow; yellow (3) meets a yellow, it stays."""
    from osf_check.models.expr import evaluate
    osf_check.load_file(HERE / "chameneos.py")
    from osf_check.properties import catalogue
    model = catalogue.MODELS["chameneos"].build({"meetings": 2, "chameneoses": 3}, None)
    by_label = {i.label: i for i in model.instances}

    def step(state, label):
        inst = by_label[label]
        assert evaluate(inst.guard, state), label
        nxt = list(state)
        for slot, e in inst.updates.items():
            nxt[slot] = evaluate(e, state)
        return tuple(nxt)

    def chameneoses(s):
        return [(c["colour"], c["met"]) for c in model.show_state(s)["chameneoses"]]

    s = model.parse_state({"chameneoses": [{"colour": c, "met": 0}
                                           for c in ("blue", "red", "yellow")],
                           "meetingPlace": 0, "numMeetings": 0})
    s = step(s, "Enter(cid=0)")
    s = step(s, "Meet(cid=1, other=0)")
    assert chameneoses(s) == [("yellow", 1), ("yellow", 1), ("yellow", 0)]
    s = step(step(s, "Enter(cid=2)"), "Meet(cid=0, other=2)")
    assert chameneoses(s) == [("yellow", 2), ("yellow", 1), ("yellow", 1)]
    assert model.show_state(s)["numMeetings"] == 2


def test_parreach_counts_equal_tlcs():
    """ParReach.tla (``specifications/MisraReachability/``), TLC run ``parreach`` (the
    published ``MCParReach.cfg``: four nodes, two processes, invariant Inv and property
    Refines): 1 initial state, 747 generated, 393 distinct, depth 18, no error; TLC run
    ``parreach_term`` (the same constants, Inv and the algorithm's Termination): the same
    figures, no error.  Command: ``-config MCParReach.cfg MCParReach.tla``.  PR2 is the
    safety part of Refines; PR3 (Termination) implies its fairness part, since
    Reachable's Next can change the mapped state exactly while some process is not
    Done."""
    r = _explore("parreach")
    assert len(r.model.initial_states) == 1  # TLC 2.18, parreach
    assert (r.distinct, len(r.histogram)) == (393, 18)  # TLC 2.18, parreach
    assert r.generated == 747  # TLC 2.18 (equal here; see docs/tla-guide.md)
    assert r.status == {"PR1": "holds", "PR2": "holds", "PR3": "holds"}
    assert r.exit_code == 0


def test_parreach_on_a_graph_reaching_every_node_counts_equal_tlcs():
    """TLC run ``parreach_graph`` (our ``MCParReachGraph.tla``: Succ is n1 -> {n2, n3},
    n2 -> {n4}, n3 -> {n4}, n4 -> {n1}, so every node is reachable; Inv, Refines and
    Termination): 1 initial state, 15119 generated, 5903 distinct, depth 28, no error."""
    r = _explore("parreach", graph=1)
    assert (r.distinct, len(r.histogram)) == (5903, 28)  # TLC 2.18, parreach_graph
    assert r.generated == 15119  # TLC 2.18, parreach_graph
    assert r.status == {"PR1": "holds", "PR2": "holds", "PR3": "holds"}


def test_parreach_without_fairness_need_not_terminate():
    """TLC run ``parreach_nofair`` (``MCParReachNoFair.cfg``: Spec without its WF
    conjuncts, property Termination): violated after the whole graph, 393 distinct
    states, a 16-state counterexample that ends stuttering.  TLC's lasso is not the
    shortest: ours is the initial state stuttering forever."""
    r = _explore("parreach", mutant="no-fairness")
    assert r.distinct == 393  # TLC 2.18, parreach_nofair
    assert r.status == {"PR1": "holds", "PR2": "holds", "PR3": "violated"}
    v = _violation(r, "PR3")
    assert (v["length"], v["trace"]["loop_start"]) == (0, 0)


@pytest.mark.parametrize("mutant,broken", [("b-skips-c", {"PR1": 2, "PR2": 6}),
                                           ("c-drops-w", {"PR2": 3})])
def test_parreach_invariant_and_refinement_can_fail(mutant, broken):
    """The mutants are ours, not TLC runs: they show that PR1 and PR2 find a broken
    step.  The counterexample lengths are regression pins."""
    r = _explore("parreach", mutant=mutant)
    assert {p for p, st in r.status.items() if st == "violated"} == set(broken)
    assert {p: _violation(r, p)["length"] for p in broken} == broken
