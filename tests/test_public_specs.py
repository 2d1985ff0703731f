"""Public specifications of tlaplus/Examples written as model files with the DSL's
quantifiers and initial-state sets (``tests/public_specs/``), their distinct-state counts
pinned to TLC's.

TLC figures: TLC2 Version 2.19 of 08 August 2024 (rev: 5a47802), tlaplus/Examples at
commit 32a32c7b, one worker, as recorded in /work/tlc/results.md by the engineer who ran
them (command for EWD840, from ``specs/ewd840``: ``java -cp tla2tools.jar tlc2.TLC
-workers 1 -fp 0 -config EWD840.cfg EWD840.tla``)."""

from __future__ import annotations

from pathlib import Path

import z3

import osf_check
from osf_check.explorer.symbolic import Symbolic

HERE = Path(__file__).resolve().parent / "public_specs"


def test_ewd840_counts_equal_tlcs():
    """TLC, EWD840.cfg (N=3): 192 initial states, 302 distinct, depth 9 (TLC counts the
    initial state as depth 1; our BFS depth is the number of steps, 8)."""
    r = osf_check.Checker(HERE / "ewd840.py").depth(None).explore()
    assert r.distinct == 302  # TLC 2.19 (see the module docstring)
    assert len(r.model.initial_states) == 192  # TLC: "192 distinct states generated"
    assert len(r.histogram) - 1 == 9 - 1
    assert r.status == {"E1": "holds"}


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
