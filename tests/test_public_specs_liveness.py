"""Liveness of public specifications of tlaplus/Examples (``tests/public_specs/``),
verdicts, distinct-state counts and counterexamples checked beside TLC.

TLC figures: ``benchmarks/tlc/results.md`` (and ``results.json``), by run name, written
by ``benchmarks/bench_tlc.py``: TLC2 Version 2.18 of 20 March 2023 (rev: 3ea3222), the
released v1.7.3 tla2tools.jar, tlaplus/Examples at commit 32a32c7, each run in a folder
holding the published module(s) and the .cfg (and MC*.tla, where the run checks
something the module does not define) kept in ``tests/public_specs/tlc/<run>/``, with
the command
``java -XX:+UseParallelGC -cp tla2tools.jar tlc2.TLC -workers 1 -fp 0 -config X.cfg X.tla``.

Comparing counterexamples: TLC prints a lasso of n states, then either "Stuttering" (the
behaviour stays in state n for ever) or "Back to state k" (a step from state n to state
k).  Ours is a list of states and either ``stutters`` (it stays in the last one) or
``loop_start``: the last state shown is state ``loop_start`` again, closing the cycle.
A stuttering lasso of n states is ``length`` n - 1 here; a cycle TLC prints as n states
and "Back to state k" is n + 1 states here, the last a repeat, unless TLC's own last
state already repeats one (TLC tells states apart by its tableau too: see
``alloc_wf``).  TLC does not look for a shortest lasso (its lasso for TCommit below is 4
states where 1 suffices), so lengths are compared where every counterexample has the
same length, and elsewhere the test says what TLC printed and checks ours is a shortest
(hand count)."""

from __future__ import annotations

from pathlib import Path

import pytest

import osf_check

HERE = Path(__file__).resolve().parent / "public_specs"


def _explore(name, *props, mutant=None, **params):
    c = osf_check.Checker(HERE / f"{name}.py").mutant(mutant).params(**params)
    return c.properties(*props).depth(None).keep_going().explore()


def _lasso(r, prop):
    """A counterexample's states, its loop index and whether it stutters."""
    [v] = [v for v in r.to_json()["violations"] if v["property"] == prop]
    tr = v["trace"]
    return [st["state"] for st in tr["steps"]], tr["loop_start"], tr["stutters"], tr["steps"]


# DiningPhilosophers: weak fairness of each philosopher's set of actions ------------------

def test_dining_philosophers_nobody_starves_as_tlc_says():
    """DiningPhilosophers.tla (``specifications/DiningPhilosophers/``), TLC run
    ``dining`` (the published cfg, NP = 5): 67 distinct states, depth 29, TypeOK,
    ExclusiveAccess and NobodyStarves hold (and no deadlock)."""
    r = _explore("dining")
    assert (r.distinct, len(r.histogram)) == (67, 29)  # TLC 2.18, dining
    assert r.status == {"DP1": "holds", "DP2": "holds"} and r.exit_code == 0


def test_dining_philosophers_without_fairness_starve():
    """TLC run ``dining_nofair`` (Spec without ``\\A self: WF_vars(Philosopher(self))``):
    NobodyStarves violated, 67 distinct states; TLC prints a 27-state lasso then
    "Stuttering" (in every reachable state some philosopher is hungry, so stuttering
    anywhere is a counterexample).  Ours is a shortest (hand count): the initial state,
    every philosopher hungry, then stuttering."""
    r = _explore("dining", "DP2", mutant="no-fairness")
    assert r.distinct == 67  # TLC 2.18, dining_nofair
    assert r.status == {"DP2": "violated"} and r.exit_code == 13
    states, loop, stutters, _ = _lasso(r, "DP2")
    assert (len(states), loop, stutters) == (1, 0, True)
    assert states[0]["hungry"] == [True] * 5


# TokenRing (EWD 426): WF_vars(Next), CHECK_DEADLOCK FALSE, <>[] -------------------------

def test_token_ring_stabilizes_as_tlc_says():
    """TokenRing.tla (``specifications/ewd426/``), TLC run ``token_ring`` (N = M = 4,
    CHECK_DEADLOCK FALSE, the published cfg's figures at a smaller N and M and without
    its ALIAS): 256 initial states, 256 distinct, depth 1, Stab (<>[]UniqueToken)
    holds."""
    r = _explore("token_ring")
    assert len(r.model.initial_states) == 256  # TLC 2.18: "256 distinct states generated"
    assert (r.distinct, len(r.histogram)) == (256, 1)  # TLC 2.18, token_ring
    assert r.status == {"TR1": "holds"} and r.exit_code == 0


def test_token_ring_without_fairness_may_stop_unstable():
    """TLC run ``token_ring_nofair`` (``Init /\\ [][Next]_vars``, no fairness at all):
    Stab violated, 256 distinct, a 1-state lasso then "Stuttering" (in a state where
    UniqueToken is false).  Every shortest counterexample is that: one initial state
    without a unique token, then stuttering; lengths equal."""
    r = _explore("token_ring", mutant="no-fairness")
    assert r.distinct == 256  # TLC 2.18, token_ring_nofair
    assert r.status == {"TR1": "violated"} and r.exit_code == 13
    states, loop, stutters, _ = _lasso(r, "TR1")
    assert (len(states), loop, stutters) == (1, 0, True)  # TLC 2.18: 1 state, Stuttering


# SimpleAllocator: strong fairness over a set of actions ---------------------------------

def test_simple_allocator_liveness_holds_as_tlc_says():
    """SimpleAllocator.tla (``specifications/allocator/``), TLC run ``alloc``
    (Clients = {c1, c2}, Resources = {r1, r2}, SPECIFICATION SimpleAllocator): 64
    distinct states, 199 generated, depth 5; TypeInvariant, ResourceMutex,
    ClientsWillReturn, ClientsWillObtain and InfOftenSatisfied hold (no deadlock)."""
    r = _explore("allocator")
    assert (r.distinct, len(r.histogram)) == (64, 5)  # TLC 2.18, alloc
    assert r.generated == 199  # TLC 2.18
    assert r.status == {"SA1": "holds", "SA2": "holds", "SA3": "holds", "SA4": "holds"}
    assert r.exit_code == 0


def test_simple_allocator_with_three_clients_as_tlc_says():
    """TLC run ``alloc_3c2r`` (the published cfg: Clients = {c1, c2, c3}): 400 distinct,
    1633 generated, depth 6, everything holds."""
    r = _explore("allocator", clients=3)
    assert (r.distinct, len(r.histogram), r.generated) == (400, 6, 1633)  # TLC 2.18
    assert set(r.status.values()) == {"holds"} and r.exit_code == 0


# the 5-state lasso both TLC and we print: c2 asks for both resources and gets r1, c1
# asks for both and gets r2; neither need return what it holds, so both wait for ever
DEADLY_EMBRACE = ["Request", "Allocate", "Request", "Allocate"]


def test_simple_allocator2_clients_will_obtain_fails_as_tlc_says():
    """SimpleAllocator2 (returns fair only once a request is granted), TLC run
    ``alloc2_obtain``: 64 distinct, ClientsWillObtain violated, 5 states (Request,
    Allocate, Request, Allocate) then "Stuttering".  Every counterexample is at least
    that long (hand count: two clients each need a request and an allocation before
    neither can go on; one client alone is served, its Allocate set being strongly
    fair): lengths equal."""
    r = _explore("allocator", "SA3", mutant="weak-return")
    assert r.distinct == 64  # TLC 2.18, alloc2_obtain
    assert r.status == {"SA3": "violated"} and r.exit_code == 13
    states, loop, stutters, steps = _lasso(r, "SA3")
    assert (len(states), loop, stutters) == (5, 4, True)  # TLC 2.18: 5 states, Stuttering
    assert [st["label"].split("(")[0] for st in steps[1:]] == DEADLY_EMBRACE
    assert states[-1] == {  # [Clients -> SUBSET Resources], shown as ITF's map of sets
        "unsat": {"#map": [["c1", {"#set": ["r1"]}], ["c2", {"#set": ["r2"]}]]},
        "alloc": {"#map": [["c1", {"#set": ["r2"]}], ["c2", {"#set": ["r1"]}]]}}


def test_simple_allocator2_inf_often_satisfied_fails_as_tlc_says():
    """TLC run ``alloc2_infoften``: InfOftenSatisfied violated, the same 5 states then
    "Stuttering" (the same hand count)."""
    r = _explore("allocator", "SA4", mutant="weak-return")
    assert r.status == {"SA4": "violated"} and r.exit_code == 13
    states, loop, stutters, steps = _lasso(r, "SA4")
    assert (len(states), loop, stutters) == (5, 4, True)  # TLC 2.18: 5 states, Stuttering
    assert [st["label"].split("(")[0] for st in steps[1:]] == DEADLY_EMBRACE


def test_simple_allocator2_clients_still_return():
    """TLC run ``alloc2_return``: under SimpleAllocator2 ClientsWillReturn holds (64
    distinct, depth 5)."""
    r = _explore("allocator", "SA2", mutant="weak-return")
    assert (r.distinct, len(r.histogram)) == (64, 5)  # TLC 2.18, alloc2_return
    assert r.status == {"SA2": "holds"} and r.exit_code == 0


def test_weak_fairness_of_the_allocations_lets_a_client_wait_for_ever():
    """What the strong fairness buys: TLC run ``alloc_wf`` (MCSimpleAllocator.tla:
    SimpleAllocator with ``WF_vars(\\E S: Allocate(c, S))``), ClientsWillObtain
    violated: 5 states (c1 asks for r1, c2 asks for r1, c2 gets it, c2 returns it) then
    "Back to state 3"; TLC's state 5 is its state 2 again (TLC tells them apart by its
    tableau).  Ours: the same 5 states, the last equal to state 2 (loop index 1); c1's
    allocation is enabled only when r1 is free, never continuously."""
    r = _explore("allocator", "SA3", mutant="weak-allocate")
    assert r.distinct == 64  # TLC 2.18, alloc_wf
    assert r.status == {"SA3": "violated"} and r.exit_code == 13
    states, loop, stutters, steps = _lasso(r, "SA3")
    assert (len(states), loop, stutters) == (5, 1, False)  # TLC 2.18: 5 states
    assert states[-1] == states[1]
    assert [st["label"] for st in steps[1:]] == [
        "Request(c=c1, S={r1})", "Request(c=c2, S={r1})", "Allocate(c=c2, S={r1})",
        "ReturnAll(c=c2)"]


# TCommit: no fairness at all ------------------------------------------------------------

def test_tcommit_without_fairness_need_not_decide():
    """TCommit.tla's TCSpec has no fairness.  TLC run ``tcommit_decided``
    (MCTCommit.tla: AllDecide == <>(\\A rm: rmState[rm] \\in {"committed",
    "aborted"}), RM = {r1, r2, r3}, CHECK_DEADLOCK FALSE): violated, 34 distinct; TLC
    prints 4 states (Decide, Decide, Prepare) then "Stuttering".  Not a shortest lasso:
    the initial state violates AllDecide if the behaviour stutters there for ever (hand
    count: 1 state), which is what we print."""
    r = _explore("tcommit", "TC2")
    assert r.distinct == 34  # TLC 2.18, tcommit_decided
    assert r.status == {"TC2": "violated"} and r.exit_code == 13
    states, loop, stutters, _ = _lasso(r, "TC2")
    assert (states, loop, stutters) == ([{"rmState": ["working"] * 3}], 0, True)


# EWD840: weak fairness of the token's actions only ---------------------------------------

def test_ewd840_without_fairness_need_not_detect_termination():
    """EWD840.tla (``specifications/ewd840/``) with ``WF_vars(System)`` dropped, TLC run
    ``ewd840_nofair`` (N = 3, CHECK_DEADLOCK FALSE): Liveness violated, 302 distinct;
    TLC prints 3 states (an initial state with every node inactive, InitiateProbe,
    PassToken) then "Stuttering", a longer lasso than needed: that initial state has a
    black token, so termination is not detected there, and stuttering in it for ever
    is already a counterexample (hand count: 1 state), which is what we print.  With the
    fairness, Liveness holds (``test_ewd840_counts_equal_tlcs``)."""
    r = _explore("ewd840", "E2", mutant="no-fairness")
    assert r.distinct == 302  # TLC 2.18, ewd840_nofair
    assert r.status == {"E2": "violated"} and r.exit_code == 13
    states, loop, stutters, _ = _lasso(r, "E2")
    assert (len(states), loop, stutters) == (1, 0, True)
    assert states[0]["active"] == [False] * 3 and states[0]["tcolor"] == "black"


def test_the_cli_reports_simple_allocator2_as_a_user_runs_it():
    """The same run as ``test_simple_allocator2_clients_will_obtain_fails_as_tlc_says``
    through ``osf-check explore``: exit 13, and the text says the last state stutters."""
    from click.testing import CliRunner
    from osf_check.cli import main
    path = str(HERE / "allocator.py")
    r = CliRunner().invoke(main, ["explore", "--model-file", path, "--mutant",
                                  "weak-return", "--property", "SA3", "--depth",
                                  "unbounded"])
    assert r.exit_code == 13, r.output[-500:]
    assert "then stutters forever in state 4" in r.stdout
    r = CliRunner().invoke(main, ["explore", "--model-file", path, "--mutant",
                                  "SimpleAllocator2", "--depth", "unbounded"])
    assert r.exit_code == 150 and "Traceback" not in r.output
    assert "unknown mutant" in r.output and "weak-return" in r.output


# the same specifications at other parameters ----------------------------------------------
# (run, model file, mutant, parameters, properties checked, TLC's distinct states,
# depth and generated states, and every verdict): one TLC 2.18 run each, its cfg in
# tests/public_specs/tlc/<run>/, its figures in benchmarks/tlc/results.md;
# SimpleAllocator2 is the mutant weak-return.
OTHER_PARAMETERS = [
    ("dp2", "dining", None, {"np": 2}, (), 11, 11, 23, "holds"),
    ("dp3", "dining", None, {"np": 3}, (), 19, 17, 58, "holds"),
    ("dp4", "dining", None, {"np": 4}, (), 35, 23, 141, "holds"),
    ("tr32", "token_ring", None, {"nodes": 3, "values": 2}, (), 8, 1, 20, "holds"),
    ("tr53", "token_ring", None, {"nodes": 5, "values": 4}, (), 1024, 1, 4352, "holds"),
    ("a23", "allocator", None, {"resources": 3}, (), 512, 5, 2331, "holds"),
    ("a12w", "allocator", "weak-return", {"clients": 1}, ("SA3", "SA4"), 9, 3, 18, "holds"),
    ("tc5", "tcommit", None, {"rms": 5}, ("TC1",), 274, 11, 1296, "holds"),
    ("tp4", "twophase", None, {"rms": 4}, (), 1568, 14, 8258, "holds"),
    ("ch34", "chameneos", None, {"meetings": 3, "chameneoses": 4}, (), 14138, 11, 42105,
     "holds"),
]


@pytest.mark.parametrize("run,name,mutant,params,props,distinct,depth,generated,verdict",
                         OTHER_PARAMETERS, ids=[p[0] for p in OTHER_PARAMETERS])
def test_counts_and_verdicts_equal_tlcs_at_other_parameters(
        run, name, mutant, params, props, distinct, depth, generated, verdict):
    """A single client of SimpleAllocator2 (``a12w``) is always served: nobody else can
    hold what it waits for, and its Allocate set is strongly fair."""
    r = _explore(name, *props, mutant=mutant, **params)
    assert (r.distinct, len(r.histogram), r.generated) == (distinct, depth, generated)
    assert set(r.status.values()) == {verdict} and r.exit_code == 0


def test_simple_allocator2_with_three_clients_fails_as_tlc_says():
    """TLC run ``a32w`` (Clients = {c1, c2, c3}, SimpleAllocator2, ClientsWillObtain):
    400 distinct, violated, TLC prints 6 states then "Stuttering".  Ours is the 5-state
    deadly embrace of two clients (the shortest, by the hand count of the two-client
    test; the third client stays idle), so here TLC's lasso is one state longer."""
    r = _explore("allocator", "SA3", mutant="weak-return", clients=3)
    assert r.distinct == 400  # TLC 2.18, a32w
    assert r.status == {"SA3": "violated"} and r.exit_code == 13
    states, loop, stutters, steps = _lasso(r, "SA3")
    assert (len(states), loop, stutters) == (5, 4, True)
    assert [st["label"].split("(")[0] for st in steps[1:]] == DEADLY_EMBRACE


# strong fairness judged on cycles, not on whole components --------------------------------

def test_a_strongly_fair_action_enabled_off_a_fair_cycle_does_not_save_the_goal():
    """``tests/public_specs/sf_subcycle.py`` and its TLA+ twin, TLC run ``sf_subcycle``
    (SFSub.tla): 4 distinct states, Reach2 violated, 2 states (x = 0, x = 3) then "Back
    to state 1".  Ours: the same cycle, shown closed (its last state is state 0
    again)."""
    r = _explore("sf_subcycle")
    assert r.distinct == 4  # TLC 2.18, sf_subcycle
    assert r.status == {"SF1": "violated"} and r.exit_code == 13
    states, loop, stutters, _ = _lasso(r, "SF1")
    assert ([s["x"] for s in states], loop, stutters) == ([0, 3, 0], 0, False)


def test_weak_fairness_of_a_set_is_not_weak_fairness_of_each():
    """``tests/public_specs/wf_set.py`` and its TLA+ twin, TLC runs ``wf_set``: with
    ``WF_x(A \\/ B)`` (SpecSet) Reach2 holds, 3 distinct states; with ``WF_x(A) /\\
    WF_x(B)`` (SpecEach) it is violated, 2 states (x = 0, x = 1) then "Back to state
    1".  Ours: the same cycle, shown closed."""
    r = _explore("wf_set")
    assert r.distinct == 3 and r.status == {"WS1": "holds"}  # TLC 2.18, SpecSet
    r = _explore("wf_set", mutant="each")
    assert r.status == {"WS1": "violated"} and r.exit_code == 13  # TLC 2.18, SpecEach
    states, loop, stutters, _ = _lasso(r, "WS1")
    assert ([s["x"] for s in states], loop, stutters) == ([0, 1, 0], 0, False)
