"""The judge of a search: which properties failed, with their shortest paths.

It checks new states against the invariants and witness conditions, and turns what
an expansion reports (failed transition checks, a state with nothing enabled) into
:class:`~osf_check.explorer.explicit.bfs.Violation` records, one per property: the first
one found, which breadth-first order makes a shortest one.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from osf_check.models.dsl import Model
from osf_check.properties.base import CheckList

from osf_check.explorer.result import Violation
from osf_check.explorer.compiled.npeval import np_eval

__all__ = ["Judge"]

Path = Callable[[int], "tuple[list[int], list[int]]"]


class Judge:
    """Failed properties and their violations; ``path(id)`` walks the parent links."""

    def __init__(self, model: Model, checks: CheckList, path: Path):
        self.model, self.checks, self.path = model, checks, path
        self.failed: set[str] = set()
        self.violations: list[Violation] = []
        self.witness_seen = {k: False for k, _ in checks.witnesses}
        self.trans_applied = {k: 0 for k in checks.trans_props}

    def states(self, cols: list[np.ndarray], ids: np.ndarray) -> None:
        """Check states (their columns and ids) against every invariant and witness."""
        m = len(ids)
        for pid, e in self.checks.invs:
            if pid in self.failed:
                continue
            ok = np.broadcast_to(np.asarray(np_eval(e, cols, n=m), dtype=bool), (m,))
            if not ok.all():
                self.failed.add(pid)
                sid = int(ids[np.argmin(ok)])
                self.violations.append(Violation(pid, "inv", "invariant violated",
                                                 *self.path(sid)))
        for pid, e in self.checks.witnesses:
            if not self.witness_seen[pid] and np.any(np_eval(e, cols, n=m)):
                self.witness_seen[pid] = True

    def expansion(self, trans_applied: dict[str, int], trans_viol: list[tuple[str, int, int]],
                  stuck: int) -> None:
        """What expanding a whole level found.  Of the failed transition checks of a
        property, the least (source id, action) is kept, and the least stuck state: the
        explicit engine's first, however the level was cut into chunks or workers."""
        for pid, k in trans_applied.items():
            self.trans_applied[pid] += k
        for sid, ai, pid in sorted((s, a, p) for p, s, a in trans_viol):
            if pid not in self.failed:
                self.failed.add(pid)
                ids, acts = self.path(sid)
                self.violations.append(Violation(
                    pid, "trans", f"transition check failed on "
                    f"{self.model.instances[ai].label}", ids + [-1], acts + [ai]))
        if stuck >= 0 and "deadlock" not in self.failed:
            self.failed.add("deadlock")
            self.violations.append(Violation(
                "deadlock", "deadlock", "no action is enabled and the state is not a "
                "legitimate end state", *self.path(stuck)))

    # checkpoints ------------------------------------------------------------------
    def saved(self) -> dict:
        import dataclasses
        return {"failed": sorted(self.failed),
                "violations": [dataclasses.asdict(v) for v in self.violations],
                "witness_seen": self.witness_seen, "trans_applied": self.trans_applied}

    def restore(self, meta: dict) -> None:
        """Everything a run had learnt, not only its states: the verdicts so far and
        the coverage of the checks."""
        self.failed.update(meta["failed"])
        self.violations.extend(Violation(**v) for v in meta["violations"])
        self.witness_seen.update(meta["witness_seen"])
        self.trans_applied.update(meta["trans_applied"])
