"""Successors of a frontier, over numpy columns: the model's actions compiled once.

:class:`Successors` holds what the vector engine needs of a model (the layout, each
action instance's guard and changed slots, the transition checks, the end-state
condition, the symmetry reduction) and expands one chunk of frontier keys at a time:
every instance evaluates its guard over the whole chunk (``If`` → ``where``, ``And`` →
``&``), its updates over the enabled rows, and its transition checks over the pairs.
:func:`expand_range` walks a range of the frontier chunk by chunk, so temporaries stay
bounded, and keeps of each successor its first occurrence that is not yet stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from osf_check.models.dsl import Model, ModelError
from osf_check.models.expr import Slot
from osf_check.properties.base import CheckList

from osf_check.explorer.compiled.npeval import np_eval
from osf_check.explorer.store.levels import first

if TYPE_CHECKING:
    from osf_check.explorer.store.levels import LevelStore
    from osf_check.explorer.symmetry import Reduction
    from osf_check.explorer.store.layout import Layout

__all__ = ["Successors", "Expansion", "expand_range", "action_dtype", "edge_action_dtype"]


class _Gather:
    """Columns of selected rows, gathered only when an expression reads them."""

    def __init__(self, cols: list[np.ndarray], rows: np.ndarray):
        self.cols, self.rows, self.got = cols, rows, {}

    def __getitem__(self, i: int) -> np.ndarray:
        c = self.got.get(i)
        if c is None:
            c = self.got[i] = self.cols[i][self.rows]
        return c

    def __len__(self) -> int:
        return len(self.cols)


class _Next:
    """The successor's columns: the changed ones, else the current ones."""

    def __init__(self, cur: _Gather):
        self.cur, self.changed = cur, {}

    def __getitem__(self, i: int) -> np.ndarray:
        c = self.changed.get(i)
        return c if c is not None else self.cur[i]

    def __setitem__(self, i: int, v: np.ndarray) -> None:
        self.changed[i] = v


def _truth(e: Any, cols: Any, n: int, nxt: Any = None) -> np.ndarray:
    """A predicate over ``n`` rows as a bool array of length ``n`` (constants broadcast)."""
    return np.broadcast_to(np.asarray(np_eval(e, cols, nxt, n=n), dtype=bool), (n,))


@dataclass
class Expansion:
    """What expanding part of a frontier found: candidate successors (``parts``: keys,
    parent ids, actions), counts, and the failures seen on the way."""

    fired: np.ndarray
    generated: int = 0
    trans_applied: dict[str, int] = field(default_factory=dict)
    trans_viol: list[tuple[str, int, int]] = field(default_factory=list)  # pid, source id, action
    stuck: int = -1  # a state with nothing enabled that may not end there
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)


def action_dtype(model: Model) -> type:
    """The integer type that names one of the model's action instances."""
    return np.int16 if len(model.instances) < 32_000 else np.int32


def edge_action_dtype(model: Model) -> type:
    """The type of a graph edge's action: one byte while the actions fit (graph-relay's
    do), since the graph keeps one an edge (the store's parent links keep theirs in
    :func:`action_dtype`, which its checkpoints name)."""
    return np.int8 if len(model.instances) <= 127 else action_dtype(model)


class Successors:
    """A model's actions over numpy columns, compiled once per run."""

    def __init__(self, model: Model, layout: "Layout", checks: CheckList, *,
                 deadlock: bool, reduce: "Reduction | None" = None):
        n = model.nslots
        self.model, self.layout, self.reduce, self.deadlock = model, layout, reduce, deadlock
        self.insts = model.instances
        self.updates = [[inst.updates.get(i, Slot(i)) for i in range(n)] for inst in self.insts]
        self.changed = [sorted(inst.updates) for inst in self.insts]
        self.trans = checks.trans
        self.act_dtype = action_dtype(model)

    def chunk(self, fkeys: np.ndarray, base: int, failed: set[str], out: Expansion) -> None:
        """Expand the frontier keys ``fkeys`` (ids ``base``…) into ``out``."""
        lay, fn = self.layout, len(fkeys)
        fcols = lay.unpack(fkeys)
        any_enabled = np.zeros(fn, dtype=bool)
        keys, par, act = [], [], []
        for ai, inst in enumerate(self.insts):
            rows = np.flatnonzero(_truth(inst.guard, fcols, fn))
            if rows.size == 0:
                continue
            any_enabled[rows] = True
            out.fired[ai] += rows.size
            sel = _Gather(fcols, rows)  # columns of the enabled rows, on demand
            nxt = self._next(ai, sel, rows.size)
            for pid, e in self.trans[ai]:
                out.trans_applied[pid] = out.trans_applied.get(pid, 0) + rows.size
                if pid not in failed:
                    ok = _truth(e, sel, rows.size, nxt)
                    if not ok.all():
                        out.trans_viol.append((pid, base + int(rows[np.argmin(ok)]), ai))
            if self.reduce is not None:  # the representative of the successor's class
                nxt.changed.update(self.reduce.canon_cols(
                    {i: np.asarray(nxt[i], dtype=np.int64) for i in self.reduce.slots}))
            keys.append(lay.patch(fkeys[rows], nxt.changed))
            par.append((rows + base).astype(np.int32))  # ids fit 32 bits
            act.append(np.full(rows.size, ai, dtype=self.act_dtype))
        if self.deadlock and out.stuck < 0 and not any_enabled.all():
            self._stuck(fcols, np.flatnonzero(~any_enabled), base, out)
        del fcols  # before the concatenation, which doubles the candidates
        if keys:
            ck = np.concatenate(keys)
            out.generated += len(ck)
            out.parts.append((ck, np.concatenate(par), np.concatenate(act)))

    def _next(self, ai: int, sel: _Gather, m: int) -> _Next:
        """The successors' columns under instance ``ai``, each checked against its domain."""
        nxt = _Next(sel)
        doms, model = self.model.slot_domains, self.model
        for i in self.changed[ai]:
            v = np.broadcast_to(np.asarray(np_eval(self.updates[ai][i], sel, n=m)),
                                (m,)).astype(np.int64)
            d = doms[i]
            if v.size and (v.min() < d.lo or v.max() > d.hi):
                bad = int(v[(v < d.lo) | (v > d.hi)][0])
                raise ModelError(f"action {self.insts[ai].label} sets {model.slot_names[i]} "
                                 f"to {bad}, outside its domain {d}: widen the domain or "
                                 f"strengthen the guard")
            nxt[i] = v
        return nxt

    def _stuck(self, fcols: list[np.ndarray], stuck: np.ndarray, base: int,
               out: Expansion) -> None:
        q = self.model.quiescent
        if q is not None:
            stuck = stuck[~_truth(q, [c[stuck] for c in fcols], stuck.size)]
        if stuck.size:
            out.stuck = base + int(stuck[0])


def expand_range(succ: Successors, store: "LevelStore", lo: int, hi: int, frontier_lo: int,
                 frontier_hi: int, *, chunk: int, failed: set[str], for_graph: bool,
                 tick: Callable[[int, int], None] | None = None) -> Expansion:
    """Successors of frontier states ``lo``..``hi`` (ids; the frontier is the store's
    last level, starting at ``frontier_lo``), in chunks; without ``for_graph`` only the
    least (action, parent) of each successor not yet stored is kept."""
    out = Expansion(np.zeros(len(succ.insts), dtype=np.int64))
    for clo in range(lo, hi, chunk):
        chi = min(clo + chunk, hi)
        if tick is not None:
            tick(clo - frontier_lo, frontier_hi - frontier_lo)
        before = len(out.parts)
        succ.chunk(store.frontier(clo - frontier_lo, chi - frontier_lo), clo, failed, out)
        if not for_graph and len(out.parts) > before:
            ck, cp, ca = out.parts[-1]
            uniq, rows = first(succ.layout.sortable(ck))  # least (action, parent): see least
            seen, _ = store.lookup(uniq)
            keep = rows[~seen]
            out.parts[-1] = (ck[keep], cp[keep], ca[keep])
    return out
