"""``prove`` never says "proved" for a broken property and never "unknown" for a bug
within its sample: each rule has a case that the unsound version got wrong."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest
from click.testing import CliRunner

from osf_check.explorer.prove import prove
from osf_check.cli import main
from osf_check.properties import catalogue
from osf_check.report import result_schema

SAFETY_MUTANTS = [mu for mu in catalogue.MUTANTS if mu.model in ("graph-relay", "wire-relay")
                  and any(c.kind in ("inv", "trans")
                          for p in catalogue.properties_of(mu.model) if p.id in mu.breaks
                          for c in p.checks)]


def test_assuming_the_property_being_proved_is_bad_input():
    r = CliRunner().invoke(main, ["prove", "--model", "graph-relay", "--mutant",
                                  "fresh-key-on-retry", "--property", "A1", "--k", "2",
                                  "--assume", "A1"])
    assert r.exit_code == 150, r.output
    assert len(r.stderr.strip().splitlines()) == 1
    assert "cannot be assumed to prove itself" in r.stderr


@pytest.mark.parametrize("assumed, kind", [("A10", "reach"), ("A3", "trans")])
def test_assuming_a_property_without_an_invariant_is_bad_input(assumed, kind):
    """prove assumes an assumed property's invariants (inv checks) and nothing else: it
    said "proved (k=1, assuming A10)" of a proof that had assumed nothing."""
    r = CliRunner().invoke(main, ["prove", "--model", "graph-relay", "--property", "A4",
                                  "--assume", assumed, "--no-mine"])
    assert r.exit_code == 150, r.output
    assert len(r.stderr.strip().splitlines()) == 1
    assert f"--assume {assumed}: {assumed} has no invariant to assume ({kind})" in r.stderr


def test_an_unknown_assumption_is_bad_input():
    r = CliRunner().invoke(main, ["prove", "--model", "graph-relay", "--assume", "A99"])
    assert r.exit_code == 150 and "has no property 'A99'" in r.stderr


@pytest.fixture
def a1_copy(monkeypatch):
    """A second property with A1's invariant under another id: assuming it is, for the
    old unsound induction, assuming A1 at the very state being checked."""
    a1 = next(p for p in catalogue.PROPERTIES if p.id == "A1")
    copy = dataclasses.replace(a1, id="A1X", name="single-run-per-key-again")
    monkeypatch.setattr(catalogue, "PROPERTIES", catalogue.PROPERTIES + (copy,))
    return copy


@pytest.mark.slow
def test_an_assumption_is_proved_along_not_taken_on_faith(a1_copy):
    # fresh-key-on-retry breaks A1 (and so its copy) in 3 steps; BMC to 2 cannot see it.
    # Asserting A1X on the checked state made the old induction say "proved".
    _, [res] = prove("graph-relay", mutant="fresh-key-on-retry", props=["A1"], k=2,
                     assume=["A1X"], mine=False, sample_depth=2)
    assert res.status == "unknown", (res.status, res.note)
    # with the sample reaching the bug, it is refuted with the shortest trace
    _, [res] = prove("graph-relay", mutant="fresh-key-on-retry", props=["A1"], k=2,
                     assume=["A1X"], mine=False)
    assert res.status == "refuted" and res.k == 3


@pytest.mark.slow
def test_an_assumption_that_holds_still_helps_prove(a1_copy):
    _, [res] = prove("graph-relay", props=["A1"], k=2, assume=["A1X"], mine=True)
    assert res.status == "proved" and res.assumed == ["A1X"]


@pytest.mark.slow
def test_the_sample_refutes_a_bug_deeper_than_the_bmc_bound():
    # BMC to 2 cannot reach the 3-step bug; the BFS sample to depth 12 contains it
    _, [res] = prove("graph-relay", mutant="fresh-key-on-retry", props=["A1"], k=2,
                     mine=False)
    assert res.status == "refuted" and res.k == 3
    assert res.trace is not None and len(res.trace[1]) == 3


@pytest.mark.slow
def test_bmc_deepens_before_unknown_when_the_sample_is_cut():
    # a sample of 50 states covers almost nothing: BMC must deepen to find the bug
    _, [res] = prove("graph-relay", mutant="outbox-off", props=["A2"], k=2, mine=False,
                     sample_states=50)
    assert res.status == "refuted" and res.k == 6
    assert any(q.startswith("bmc from depth") for q, _ in res.queries)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", SAFETY_MUTANTS, ids=[m.name for m in SAFETY_MUTANTS])
def test_prove_with_default_flags_refutes_every_safety_mutant(mutant):
    r = CliRunner().invoke(main, ["prove", "--model", mutant.model, "--mutant", mutant.name,
                                  "--json"])
    assert r.exit_code == 12, r.output
    doc = json.loads(r.stdout)
    status = {p["id"]: p["status"] for p in doc["properties"]}
    safety = [pid for pid in mutant.breaks
              if any(c.kind in ("inv", "trans") for p in catalogue.properties_of(mutant.model)
                     if p.id == pid for c in p.checks)]
    assert any(status[pid] == "refuted" for pid in safety), status
    assert "proved" not in {status[pid] for pid in safety}, status


@pytest.mark.slow
def test_a_sample_of_every_reachable_state_proves_without_z3():
    """A BFS that runs out of new states has checked every reachable state and every
    step out of them: TwoPhase's 288 states.  prove said "unknown" there (induction
    failed, no violation "within depth 12"), as if the rest of the space were unseen."""
    _, [res] = prove("two-phase", params={"rms": 3}, k=4)
    assert (res.status, res.method, res.queries) == ("proved", "every reachable state", [])
    assert "every reachable state, 288 to depth 10" in res.note
    # a sample cut short (by its depth or its number of states) proves nothing alone
    for cut in ({"sample_depth": 4}, {"sample_states": 100}):
        _, [res] = prove("two-phase", params={"rms": 3}, k=4, **cut)
        assert res.method != "every reachable state" and res.status == "unknown", cut
    _, [res] = prove("two-phase", params={"rms": 3}, mutant="commit-without-all-prepared")
    assert res.status == "refuted" and res.method is None


LATCH = '''
from osf_check import Check, Goal, Int, ModelBuilder, ModelSpec, Property

def build(params, mutant):
    b = ModelBuilder("latch", params, mutant, actors=("c",))
    b.var("x", Int(0, 2), actor="c")
    b.var("stuck", Int(0, 1), actor="c")

    @b.action("c", name="Inc")
    def inc(s):
        return (s.x < 2) & (s.stuck == 0), {s.x: s.x + 1}

    @b.action("c", name="Jam")
    def jam(s):
        return s.stuck == 0, {s.stuck: 1}

    @b.action("c", name="Idle")
    def idle(s):
        return True, {}
    b.init(x=0, stuck=0)
    return b.build()

SPEC = ModelSpec(name="latch", title="latch", params=(), mutants={}, build_fn=build)

PROPERTIES = (
    Property("L1", "in-range-and-reaches-two", "latch",
             "x stays in 0..2 (holds), and x = 2 is reachable from every state (it is not: "
             "a jam stops the count)",
             (Check("inv", lambda s, m: s.x <= 2),
              Check("reach", lambda s, m: [Goal("two", s.x >= 0, s.x == 2)])), ()),
)
'''


@pytest.mark.parametrize("sample_depth", ["12", "0"])
def test_a_property_whose_reach_part_prove_does_not_decide_is_not_called_proved(
        tmp_path, sample_depth):
    """prove decides inv and trans checks only.  A property that has reach or fair checks
    too (A2, and any a user writes) had its safety checks proved and was reported
    "proved" as a whole: here explore finds its reach check violated."""
    f = tmp_path / "latch.py"
    f.write_text(LATCH)
    ex = CliRunner().invoke(main, ["explore", "--model-file", str(f), "--depth", "unbounded",
                                   "--json"])
    assert ex.exit_code == 13, ex.output  # the reach part fails
    r = CliRunner().invoke(main, ["prove", "--model-file", str(f), "--sample-depth",
                                  sample_depth, "--json"])
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    [p] = doc["properties"]
    assert r.exit_code == 0 and p["status"] == "proved in part" and p["unchecked"] == ["reach"], p
    assert p["method"] == ("every reachable state" if sample_depth == "12" else "k-induction")
    text = CliRunner().invoke(main, ["prove", "--model-file", str(f), "--sample-depth",
                                     sample_depth]).stdout
    assert "L1 in-range-and-reaches-two" in text and "proved in part" in text, text
    assert "its reach checks are explore's: not checked here" in text, text
