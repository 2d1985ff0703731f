"""The benchmark's one property: TCConsistent of TwoPhase.tla."""

from __future__ import annotations

from osf_check.models.expr import And, Implies
from osf_check.models.two_phase import RM, SPEC

from .base import Check, Property, mutant_catalogue

MODEL = "two-phase"


def consistent(s, m):
    n = m.params["rms"]
    return And(*(Implies(s.rmState[a] == RM.committed, s.rmState[b] != RM.aborted)
                 for a in range(n) for b in range(n)))


PROPERTIES = (
    Property("T1", "tc-consistent", MODEL,
             "No resource manager commits while another aborts (TCConsistent).",
             (Check("inv", consistent),), ("commit-without-all-prepared",),
             witness=lambda s, m: And(*(s.rmState[r] == RM.committed
                                        for r in range(m.params["rms"]))),
             witness_doc="every resource manager committed"),
)
MUTANTS = mutant_catalogue(MODEL, PROPERTIES, dict(SPEC.mutants), where={}, default_where="tm")
