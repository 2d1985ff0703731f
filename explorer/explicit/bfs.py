"""The explicit engine: breadth-first search with parent links.

States are deduplicated on their packed integer; every state found is checked
against the invariants, every edge against the transition checks.  Because the
search is breadth-first and action instances are tried in their (fixed) order of
definition, the first violation found is a shortest one and the same command
always prints the same trace.
"""

from __future__ import annotations

import time
from array import array
from typing import TYPE_CHECKING, Sequence

from osf_check.models.dsl import Model
from osf_check.properties.base import CheckList, Property

from osf_check.explorer.compiled.pycompile import (compile_level, compile_pack, compile_pred,
                                                   compile_trans)
# the search's result types, re-exported: the engines and their callers name them here
from osf_check.explorer.result import Exploration, Progress, Violation

if TYPE_CHECKING:
    from osf_check.explorer.symmetry import Reduction

__all__ = ["Violation", "Exploration", "bfs", "Progress"]



def bfs(model: Model, props: Sequence[Property], *, depth: int | None = 12,
        max_states: int | None = None, keep_graph: bool = False,
        check_deadlock: bool = True, stop_on_violation: bool = True,
        progress: Progress | None = None, reduce: "Reduction | None" = None,
        por: bool = False) -> Exploration:
    """Explore ``model`` breadth-first to ``depth`` steps (``None``: no bound).

    With ``stop_on_violation`` the search finishes the level on which the first
    violation was found (so every shortest violation of that length is reported)
    and stops.  ``keep_graph`` records every edge for the reach and fair checks.
    ``reduce`` (a :class:`~osf_check.explorer.symmetry.Reduction` whose claim was tested)
    stores one representative per class of symmetric states.  ``por`` fires a stubborn
    set at each state (:mod:`osf_check.explorer.por`): safety checks and deadlocks only,
    counterexamples not always shortest, no graph.
    """
    if por and (keep_graph or reduce is not None):
        raise ValueError("partial-order reduction keeps no graph and takes no symmetry")
    t0 = time.perf_counter()
    pack = compile_pack(model)
    ex = Exploration(model, depth)
    ex.fired = [0] * len(model.instances)

    plain = CheckList.of(model, props)
    checks = plain.compiled(compile_pred, compile_trans)
    invs, witnesses, trans = checks.invs, checks.witnesses, checks.trans
    ex.witness_seen.update((k, False) for k, _ in witnesses)
    ex.trans_applied.update((k, 0) for k in checks.trans_props)
    quiet = compile_pred(model.quiescent) if model.quiescent is not None else (lambda s: False)
    failed: set[str] = set()

    def violate(prop: str, kind: str, msg: str, sid: int, extra: int | None = None) -> None:
        failed.add(prop)
        ids, acts = ex.path_to(sid)
        if extra is not None:  # an edge whose target is not (yet) a state of its own
            ids.append(-1)
            acts.append(extra)
        ex.violations.append(Violation(prop, kind, msg, ids, acts))

    ids = ex.ids
    packed, parent, via = ex.packed, ex.parent, ex.via
    frontier: list[tuple[int, tuple, int]] = []

    def add_new(s: tuple, p: int, par: int, act: int) -> int:
        sid = len(packed)
        ids[p] = sid
        packed.append(p)
        parent.append(par)
        via.append(act)
        for pid, f in invs:
            if pid not in failed and not f(s):
                violate(pid, "inv", "invariant violated", sid)
        for pid, f in witnesses:
            if not ex.witness_seen[pid] and f(s):
                ex.witness_seen[pid] = True
        frontier.append((sid, s, p))
        return sid

    def on_trans(ai: int, sid: int, s: tuple, t: tuple) -> None:
        for pid, chk in trans[ai]:
            ex.trans_applied[pid] += 1
            if pid not in failed and not chk(s, t):
                # the shortest path to t may not go through this edge
                violate(pid, "trans", f"transition check failed on "
                        f"{model.instances[ai].label}", sid, extra=ai)

    def on_stuck(sid: int, s: tuple) -> None:
        if check_deadlock and "deadlock" not in failed and not quiet(s):
            violate("deadlock", "deadlock", "no action is enabled and the state is not a "
                    "legitimate end state", sid)

    ex.level_start.append(0)
    for s in model.initial_states:
        if reduce is not None:
            s = reduce.canon(s)
        p = pack(s)
        if p not in ids:
            add_new(s, p, -1, -1)
    ex.generated = len(model.initial_states)
    src_e, dst_e, act_e = array("q"), array("q"), array("q")
    if por:
        from osf_check.explorer.por import PartialOrder, PorStats, expander
        stats = ex.por = PorStats()
        expand_level = expander(PartialOrder(model, plain), stats)
    else:
        expand_level = compile_level(model, {i for i, t in enumerate(trans) if t},
                                     keep_graph, reduce.canon if reduce is not None else None)
    limit = max_states if max_states is not None else 1 << 62
    level = 0
    clock = [t0]

    def tick(sid: int) -> None:
        if progress is not None:
            now = time.perf_counter()
            if now - clock[0] >= 1.0:
                clock[0] = now
                progress(level + 1, len(packed), ex.generated, now - t0)

    while frontier:
        if ex.violations and stop_on_violation:
            ex.stopped = "violation"
            break
        if depth is not None and level >= depth:
            break
        current, frontier = frontier, []
        ex.level_start.append(len(packed))
        gen, stop_at = expand_level(current, ids, add_new, ex.fired, on_trans, src_e, dst_e,
                                    act_e, limit, packed, tick, on_stuck)
        ex.generated += gen
        if stop_at >= 0:
            ex.expanded = stop_at + 1
            ex.stopped = "max-states"
            break
        ex.expanded = current[-1][0] + 1 if current else ex.expanded
        level += 1
        if not frontier:
            ex.level_start.pop()  # the level we opened found nothing new
    if ex.level_start and ex.level_start[-1] == len(packed):
        ex.level_start.pop()
    ex.complete = not frontier and ex.stopped is None
    if ex.complete:
        ex.expanded = len(packed)
    if keep_graph:
        ex.edges = (src_e, dst_e, act_e)
    ex.seconds = time.perf_counter() - t0
    return ex

