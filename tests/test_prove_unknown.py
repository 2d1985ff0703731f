"""A z3 ``unknown`` (its timeout) is no verdict: prove says timeout and exits 152, never
an internal error (153).  z3 is made to answer unknown where it would time out, so the
tests do not depend on the machine's speed."""

from __future__ import annotations

import pytest
import json

import z3
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.explorer import prove as prove_mod
from osf_check.explorer.symbolic import engine as symbolic  # where houdini looks it up


def _giving_up_in_houdini(monkeypatch) -> list[int]:
    """Houdini's filtering query answers unknown (every candidate holds initially, as
    the mined ones do); the other queries are z3's own.  Returns the calls counted."""
    real, calls = prove_mod.houdini, []

    def houdini(*a, **kw):
        calls.append(1)
        with monkeypatch.context() as mp:
            mp.setattr(symbolic, "_holds_initially", lambda *x: True)
            mp.setattr(z3.Solver, "check", lambda self, *x: z3.unknown)
            return real(*a, **kw)
    monkeypatch.setattr(prove_mod, "houdini", houdini)
    return calls


@pytest.mark.slow
def test_z3_giving_up_while_mining_invariants_is_a_timeout_not_an_internal_error(monkeypatch):
    calls = _giving_up_in_houdini(monkeypatch)
    r = CliRunner().invoke(main, ["prove", "--model", "graph-relay", "--property", "A1",
                                  "--timeout", "0.5", "--json"])
    assert calls, "the proof did not reach the mining"
    assert r.exit_code == 152, r.output
    doc = json.loads(r.output[r.output.index("{"):])
    (entry,) = doc["properties"]
    assert entry["status"] == "timeout" and "mining" in entry["note"]


def test_z3_giving_up_on_a_symmetry_is_no_proof_and_no_claim_of_asymmetry(monkeypatch):
    from osf_check.explorer.symmetry import prove_symmetric
    from osf_check.models.two_phase import SPEC
    m = SPEC.build({"rms": 3})
    assert prove_symmetric(m, [], m.symmetries) is None  # proved when z3 answers
    monkeypatch.setattr(z3.Solver, "check", lambda self, *x: z3.unknown)
    why = prove_symmetric(m, [], m.symmetries)
    assert why is not None and "could not be proved symmetric" in why
    assert "is not symmetric" not in why
