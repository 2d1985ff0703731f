"""The symbolic engine (z3): the DSL as z3 terms (:class:`Symbolic`), bounded model
checking, k-induction and invariant mining, which ``prove`` and the symmetry proof use;
and the timing analysis of the documents' deadlines (:mod:`.timing`).
"""

from .engine import (BmcResult, InductionResult, PropertyChecks, SolverGaveUp, Symbolic, bmc,
                     houdini, k_induction, set_seed, to_z3)

__all__ = ["BmcResult", "InductionResult", "PropertyChecks", "SolverGaveUp", "Symbolic", "bmc",
           "houdini", "k_induction", "set_seed", "to_z3"]
