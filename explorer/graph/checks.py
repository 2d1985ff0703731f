"""Checks on the explored state graph: reachability (``reach``) and fair liveness (``fair``).

Both run after the BFS on the graph it recorded.  A state whose future was cut by
the depth bound is never reported as a violation on the strength of the missing
part: a ``reach`` candidate (a premise state from which no goal state is reachable
in the explored graph) is resolved by searching its own future past the bound,
which either finds a goal state (no violation) or exhausts that future (a real
violation); a ``fair`` counterexample is a real cycle of explored edges, among
states whose successors were all computed, on which the fairness assumption
holds edge by edge, or a path to such a state where stuttering forever is fair
(``docs/liveness.md`` states the semantics).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from osf_check.properties.base import Goal, Property

from osf_check.explorer.result import Exploration, Violation, WorkerLost
from osf_check.explorer.compiled.npeval import np_eval, packed_array, unpack_columns
from osf_check.explorer.compiled.pycompile import compile_pack, compile_pred, compile_steps
from osf_check.explorer.store.allocator import give_back_freed
from osf_check.explorer.store.levels import get_bits, set_bits

if TYPE_CHECKING:  # networkx is imported where a lasso is drawn: it costs a quarter
    import networkx as nx  # of a second at every start of the CLI

__all__ = ["GraphReport", "check_graph", "fairness_of_cycle", "moving_self_loops", "JUDGES"]

#: the property kinds these checks judge, on the graph a search kept
JUDGES = frozenset({"reach", "fair"})


@dataclass
class GraphReport:
    """What the graph checks did, per property id."""

    checked: dict[str, str] = field(default_factory=dict)  # id -> "holds"/"violated"/"inconclusive"
    extension_states: int = 0
    unresolved: dict[str, int] = field(default_factory=dict)
    #: premise states on the bound itself (nothing of their future computed): not judged
    undecided: dict[str, int] = field(default_factory=dict)
    #: why a property was left inconclusive without being checked (id -> one line)
    why: dict[str, str] = field(default_factory=dict)


class _Graph:
    """The explored graph as arrays (CSR): successors of each state id, and predicates
    of the states evaluated column-wise with numpy."""

    def __init__(self, ex: Exploration):
        n = ex.distinct
        self.n = n
        # BFS expands states in id order, so edges are already sorted by source; offsets
        # in 32 bits while the edges fit, so that the ids and edge positions read from
        # them (a search's frontier, its slices) are 32-bit too
        off, self.dst, self.act = ex.edges_by_source()
        self.off = off.astype(np.int32 if len(self.dst) < 2**31 - 1 else np.int64, copy=False)
        self.expanded = ex.expanded
        self.ex = ex
        columns = getattr(ex, "columns", None)  # the vector engine's: no Python per state
        self.cols = columns() if columns else unpack_columns(packed_array(ex.packed, ex.model),
                                                             ex.model)
        self._enabled: dict[int, frozenset[int]] = {}

    def pred(self, e) -> np.ndarray:
        return np.broadcast_to(np.asarray(np_eval(e, self.cols, n=self.n), dtype=bool), (self.n,))

    def forget_columns(self) -> None:
        """Drop the slots decoded for the predicates so far, where they are decoded on
        demand (the vector engine's :class:`~osf_check.explorer.store.layout.Columns`):
        a goal's columns, a byte or two a state each, would stay under the next goal's
        peak."""
        forget = getattr(self.cols, "forget", None)
        if forget is not None:
            forget()

    def state(self, i: int) -> tuple:
        return self.ex.state(i)

    def succ(self, u: int) -> list[tuple[int, int]]:
        a, b = self.off[u], self.off[u + 1]
        return list(zip(self.dst[a:b].tolist(), self.act[a:b].tolist()))

    @cached_property
    def nacts(self) -> int:
        """One more than the largest action on an edge (1 without edges)."""
        return int(self.act.max()) + 1 if len(self.act) else 1

    def backward(self, mark: np.ndarray) -> np.ndarray:
        """Every state from which a marked state is reachable (marked ones included).

        Read from the forward edges, with no reverse graph: a state is marked once one
        of its successors is, until a pass over the states left changes nothing (the
        least fixpoint: backward reachability).  A reverse graph costs 4 bytes an edge
        and more while it is built: on graph-relay's complete run it made the peak.
        The states left are read from the highest id down, where BFS ids put most
        successors, so that most marks travel a whole path in one pass; a pass reads
        only the edges of states not yet marked.

        A graph whose marks travel a few states a round (a long chain: a counter's
        states, one a level) would cost a round per state over the slice's edges:
        after :data:`_PASSES` passes, or a slice that needs more than
        :data:`_ROUNDS` rounds, what is left is searched over a reverse graph of the
        unmarked states' edges only (:meth:`_backward_rest`)."""
        mark = mark.copy()
        if not mark.any():  # (a complete run's cut-off states: none)
            return mark
        left = np.flatnonzero(~mark).astype(self.off.dtype)
        for _ in range(_PASSES):
            changed, cut = self._pull(mark, left)
            left = left[~mark[left]]
            if not (changed and left.size):
                return mark
            if cut:
                break
        return self._backward_rest(mark, left)

    def _pull(self, mark: np.ndarray, left: np.ndarray) -> tuple[bool, bool]:
        """One pass of :meth:`backward` over the states ``left`` (sorted), a slice of
        their edges at a time from the highest ids down; within a slice, until it
        marks nothing more (a path inside it) or :data:`_ROUNDS` rounds.  Whether it
        marked a state, and whether a slice was cut short."""
        changed = cut = False
        for u, v, lens, idx in _slices(self.off, left, len(self.dst), backwards=True):
            d = self.dst[idx]
            del idx
            src = np.repeat(left[u:v], lens)
            for _ in range(_ROUNDS):
                hit = mark[d]
                if not hit.any():
                    break
                mark[src[hit]] = True
                changed = True
                keep = ~mark[src]  # the edges of states still unmarked
                d, src = d[keep], src[keep]
                if not d.size:
                    break
            else:
                cut = True
        return changed, cut

    def _backward_rest(self, mark: np.ndarray, left: np.ndarray) -> np.ndarray:
        """Finish :meth:`backward` breadth-first over the reverse of the edges out of
        the states ``left`` (the unmarked ones): a level of predecessors at a time,
        each found by a binary search in the edges sorted by target."""
        lens = (self.off[1:][left] - self.off[left]).astype(np.int64)
        idx = _run_indices(self.off[left].astype(np.int64), lens, int(lens.sum()))
        dst = self.dst[idx]
        src = np.repeat(left, lens)
        del idx, lens
        order = np.argsort(dst, kind="stable")
        dst, src = dst[order], src[order]
        del order
        frontier = np.unique(dst[mark[dst]])
        while frontier.size:
            a = np.searchsorted(dst, frontier, side="left")
            b = np.searchsorted(dst, frontier, side="right")
            preds = src[_run_indices(a, b - a, int((b - a).sum()))]
            preds = np.unique(preds[~mark[preds]])
            mark[preds] = True
            frontier = preds
        return mark

    def forward(self, seeds: np.ndarray, region: np.ndarray) -> tuple[np.ndarray, list]:
        """Every state reachable from a seed through states of ``region`` (the seeds, in
        it, included), and how the search reached each: per level, the new states
        (sorted), a parent of each and the action of that step (for a path back)."""
        open_ = region & ~seeds  # where the search may still go: one gather per edge
        levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        # ids in the offsets' type (32 bits while they fit): the levels keep a parent each
        frontier = np.flatnonzero(seeds).astype(self.off.dtype)
        while frontier.size:
            got = []
            # a slice at a time; a state reached in an earlier slice is taken from there:
            # its first edge in the frontier's order, as over the whole frontier at once
            for u, v, lens, idx in _slices(self.off, frontier, len(self.dst)):
                d = self.dst[idx]
                keep = open_[d]
                if not keep.any():
                    continue
                d, first = np.unique(d[keep], return_index=True)
                src = np.repeat(frontier[u:v], lens)[keep][first]
                got.append((d, src, self.act[idx][keep][first]))
                open_[d] = False
            if not got:
                break
            d, src, act = (np.concatenate(x) for x in zip(*got))
            o = np.argsort(d, kind="stable")
            levels.append((d[o], src[o], act[o]))
            frontier = d[o]
        return seeds | (region & ~open_), levels

    def enabled(self, u: int) -> frozenset[int]:
        """The actions that can take a step from ``u`` that moves it (a self-loop is a
        stuttering step: it enables nothing, as in TLA+'s ``ENABLED <A>_vars``)."""
        got = self._enabled.get(u)
        if got is None:
            a, b = self.off[u], self.off[u + 1]
            moves = self.dst[a:b] != u
            got = self._enabled[u] = frozenset(self.act[a:b][moves].tolist())
        return got


def check_graph(ex: Exploration, props: Sequence[Property], *, budget: int = 4_000_000,
                log: Callable[[str], None] | None = None, workers: int = 1,
                running: Callable[[str, int, int], None] | None = None,
                reduced: bool = False) -> GraphReport:
    """Run the reach and fair checks of ``props`` on ``ex``; add violations to ``ex``.
    ``log`` receives one line per goal checked, with its verdict and time (progress);
    ``running(what, done, total)`` is told of each goal as it starts (a live display
    names the check under way, not the last one finished).

    With ``workers`` > 1 and every state expanded (so no search past the bound, whose
    budget the goals share), the goals are checked in that many forked processes, which
    read the graph without copying it; the report and violations are the same as in
    one process (a property's goals after its first violated one are left out).

    With ``reduced`` (``ex`` is a symmetry-reduced graph), a self-loop may stand for a
    step to another member of the class, which moves the state: the fair checks read a
    self-loop as stuttering, so they are left inconclusive if any self-loop moves."""
    model = ex.model
    rep = GraphReport()
    todo = [(p, c) for p in props for c in p.checks if c.kind in JUDGES]
    if not todo:
        return rep
    g = _Graph(ex)
    if reduced and any(c.kind == "fair" for _, c in todo):
        moving = moving_self_loops(g)
        if moving:
            why = (f"{moving:,} self-loops of the symmetry-reduced graph are steps to "
                   "another member of the class, which the fair checks would read as "
                   "stuttering")
            for p in {p.id: p for p, c in todo if c.kind == "fair"}.values():
                rep.checked[p.id], rep.why[p.id] = "inconclusive", why
            todo = [(p, c) for p, c in todo if p.id not in rep.why]
    ext = _Extension(ex, budget)
    jobs = [(p, c, goal) for p, c in todo for goal in c.goals(model)]
    done = iter(_parallel(g, ex, ext, jobs, workers)) \
        if workers > 1 and len(jobs) > 1 and g.expanded == g.n else None
    started = 0
    for p, c in todo:
        status = "holds"
        goals = c.goals(model)
        for k, goal in enumerate(goals):
            if running:
                running(f"{c.kind} {p.id} {goal.label}", started, len(jobs))
            started += 1
            if done is None:
                res, und, _, secs = _goal(g, ex, ext, p, c.kind, goal)
            else:
                res, und, found, secs = next(done)
                ex.violations += found
            if c.kind == "reach":
                rep.undecided[p.id] = rep.undecided.get(p.id, 0) + und
            if log:
                log(f"  {c.kind} {p.id} {goal.label}: {res} ({secs:.1f} s)")
            if res == "violated":
                status = "violated"
                for _ in goals[k + 1:] if done is not None else ():
                    next(done)  # checked too, but one process would not have: left out
                break
            if res == "inconclusive":
                status = "inconclusive"
        prev = rep.checked.get(p.id)
        if prev != "violated":
            rep.checked[p.id] = status if prev in (None, "holds") or status == "violated" else prev
    rep.extension_states = ext.used
    rep.unresolved = ext.unresolved
    return rep


def moving_self_loops(g: _Graph) -> int:
    """How many self-loops of ``g`` are steps that change the state: none in a graph of
    states, some in a symmetry-reduced one where a step leads to another member of its
    source's class.  Each action's updates are evaluated over its self-loops' sources,
    a slice at a time."""
    insts = g.ex.model.instances
    moving = 0
    everyone = np.arange(g.n, dtype=g.off.dtype)
    for u, v, deg, idx in _slices(g.off, everyone, len(g.dst)):
        src = np.repeat(everyone[u:v], deg)
        loop = g.dst[idx] == src
        ids, acts = src[loop], g.act[idx][loop]
        del src, loop, idx
        for a in np.unique(acts).tolist():
            cur = _Rows(g.cols, ids[acts == a])
            k = len(cur.ids)
            moved = np.zeros(k, dtype=bool)
            for i, e in insts[a].updates.items():
                moved |= np.broadcast_to(np.asarray(np_eval(e, cur, n=k)), (k,)) != cur[i]
            moving += int(moved.sum())
    return moving


class _Rows:
    """Columns of some states (``ids``), gathered when an expression reads them."""

    def __init__(self, cols: Any, ids: np.ndarray):
        self.cols, self.ids, self.got = cols, ids, {}

    def __getitem__(self, i: int) -> np.ndarray:
        c = self.got.get(i)
        if c is None:
            c = self.got[i] = np.asarray(self.cols[i])[self.ids]
        return c

    def __len__(self) -> int:
        return len(self.cols)


def _goal(g: _Graph, ex: Exploration, ext: "_Extension", p: Property, kind: str, goal: Goal
          ) -> tuple[str, int, list[Violation], float]:
    """One goal checked: its result, the premise states left undecided at the bound, the
    violations it added to ``ex`` and the seconds it took."""
    t0, before = time.perf_counter(), len(ex.violations)
    und = [0]
    # the last goal's slices (each below the allocator's mapping threshold) are freed
    # but kept for reuse; this goal's arrays are of other sizes, and the memory kept
    # would add to its resident peak
    give_back_freed()
    res = _reach(g, ex, ext, p, goal, und) if kind == "reach" else _fair(g, ex, p, goal)
    return res, und[0], ex.violations[before:], time.perf_counter() - t0


#: what forked goal checkers read (set before the fork, so never pickled)
_SHARED: tuple = ()


def _one(i: int) -> tuple[str, int, list[Violation], float]:
    g, ex, ext, jobs = _SHARED
    p, c, goal = jobs[i]
    return _goal(g, ex, ext, p, c.kind, goal)


def _parallel(g: _Graph, ex: Exploration, ext: "_Extension", jobs: list, workers: int):
    """Each goal's :func:`_goal` in forked processes, yielded in ``jobs``' order; the
    fair goals are handed out first, they take longest."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _SHARED
    _SHARED = (g, ex, ext, jobs)
    fair = [i for i, j in enumerate(jobs) if j[1].kind == "fair"]
    reach = [i for i, j in enumerate(jobs) if j[1].kind != "fair"]
    try:
        with ProcessPoolExecutor(min(workers, len(jobs)),
                                 mp_context=mp.get_context("fork")) as pool:
            futures = {i: pool.submit(_one, i) for i in fair + reach}
            for i in range(len(jobs)):
                yield futures[i].result()
    except BrokenProcessPool:
        raise WorkerLost("a process checking reach and fair goals died (killed, out of "
                         "memory?)") from None
    finally:
        _SHARED = ()


# ---------------------------------------------------------------------------
# reach

class _Extension:
    """Searches the future of a state past the depth bound, sharing what it learns.

    It first follows only the actions the model declares fair (the protocol's own
    progress, which is how a goal is usually reached) and, only if that finds no
    goal state, the whole future, which must then be exhausted to prove a violation.
    """

    def __init__(self, ex: Exploration, budget: int):
        self.ex = ex
        self.steps = compile_steps(ex.model)
        members = {a for fs in ex.model.fair_sets() for a in fs.instances}
        self.fair = [i.index in members for i in ex.model.instances]
        self.pack = compile_pack(ex.model)
        self.budget = budget
        self.used = 0
        self.unresolved: dict[str, int] = {}
        self.good: set[int] = set()  # packed states known to reach the current goal

    def reaches(self, start: tuple, goal: Callable[[tuple], bool], known_good: Callable[[int], bool]
                ) -> bool | None:
        """True: a goal state is reachable; False: the whole future lacks one; None: budget."""
        if self._dive(start, goal, known_good):
            return True
        for detours in (0, 1, 2):
            if self._search(start, goal, known_good, detours, 20_000):
                return True
        return self._search(start, goal, known_good, None, None)

    def _dive(self, start, goal, known_good, limit: int = 2_000) -> bool:
        """Depth-first along fair actions: the protocol simply making progress."""
        pack = self.pack
        fair_steps = [f for f, is_fair in zip(self.steps, self.fair) if is_fair]
        seen: set[int] = set()
        stack = [(start, pack(start), 0)]
        trail: list[int] = []
        while stack and len(seen) < limit:
            s, p, k = stack.pop()
            del trail[k:]
            trail.append(p)
            if p in self.good or goal(s) or known_good(p):
                self.good.update(trail)
                self.used += len(seen) + 1
                return True
            if p in seen:
                continue
            seen.add(p)
            for f in reversed(fair_steps):
                t = f(s)
                if t is not None:
                    stack.append((t, pack(t), k + 1))
        self.used += len(seen)
        return False

    def _search(self, start, goal, known_good, detours: int | None, limit: int | None
                ) -> bool | None:
        """BFS that takes fair actions freely and at most ``detours`` others (None: any)."""
        pack, steps, fair = self.pack, self.steps, self.fair
        p0 = pack(start)
        parent: dict[int, int] = {p0: -1}
        used: dict[int, int] = {p0: 0}
        q = deque([(p0, start)])
        seen = 0
        while q:
            p, s = q.popleft()
            if p in self.good or goal(s) or known_good(p):
                while p != -1:  # the path back to start reaches the goal too
                    self.good.add(p)
                    p = parent[p]
                return True
            u = used[p]
            for f, is_fair in zip(steps, fair):
                if detours is not None and not is_fair and u >= detours:
                    continue
                t = f(s)
                if t is None:
                    continue
                pt = pack(t)
                ut = u if is_fair else u + 1
                if pt not in used or used[pt] > ut:
                    if pt not in parent:
                        seen += 1
                        self.used += 1
                    parent[pt] = p
                    used[pt] = ut
                    q.append((pt, t))
                    if self.used > self.budget or (limit is not None and seen > limit):
                        return None
        return False


def _reach(g: _Graph, ex: Exploration, ext: _Extension, p: Property, goal: Goal,
           rep_undecided: list[int]) -> str:
    prem_m = g.pred(goal.premise)
    goal_m = g.pred(goal.goal)
    g.forget_columns()  # (an extension's search reads states, not columns)
    good = g.backward(goal_m)
    del goal_m
    unexp = np.zeros(g.n, dtype=bool)
    unexp[g.expanded:] = True
    cut = g.backward(unexp)  # futures that run into the bound
    ext.good = set()
    gl = compile_pred(goal.goal)
    # ex.ids is read only when an extension runs (a complete run never builds it)
    known = lambda pk: (i := ex.ids.get(pk)) is not None and bool(good[i])  # noqa: E731
    bad: list[int] = []
    unresolved = 0
    # deepest level first: a state resolved there makes every state that can reach it
    # good too, which settles most shallower candidates without a search
    bounds = ex.level_start + [g.n]
    for lv in range(len(ex.level_start) - 1, -1, -1):
        lo, hi = bounds[lv], bounds[lv + 1]
        cand = np.flatnonzero(prem_m[lo:hi] & ~good[lo:hi]) + lo
        if lo >= g.expanded:
            # at the bound: nothing of their future was computed; never judged
            rep_undecided[0] += len(cand)
            continue
        fresh = []
        for i in cand.tolist():
            res = False if not cut[i] else ext.reaches(g.state(i), gl, known)
            if res is True:
                fresh.append(i)
            elif res is False:
                bad.append(i)  # its whole future is explored and holds no goal state
            else:
                unresolved += 1
        if fresh:
            # good is closed under predecessors: searching from it too reads only the
            # edges of the states not good yet
            mark = good.copy()
            mark[fresh] = True
            good = g.backward(mark)
    if bad:
        i = min(bad)  # BFS order: the shortest prefix
        path, acts = ex.path_to(i)
        end = not g.enabled(i)  # nothing moves it: the behaviour stutters there forever
        ex.violations.append(Violation(
            p.id, "reach", f"{goal.label}: from this state no state where the goal holds is "
            f"reachable (its whole future was explored)"
            + (", then stutters forever (an end state)" if end else "")
            + f"; {_goal_text(ex.model, goal)}", path, acts,
            loop_start=len(path) - 1 if end else None, stutters=end))
        return "violated"
    if unresolved:
        ext.unresolved[p.id] = ext.unresolved.get(p.id, 0) + unresolved
        return "inconclusive"
    return "holds"


# ---------------------------------------------------------------------------
# fair
#
# A fair check reads its goal as TLA+ does: a behaviour is a path of explored steps
# that either cycles forever or, from some state on, stutters forever (an end state
# is one where it stutters).  Stuttering in a state is fair unless a fair set is
# enabled there or a fair-state condition fails there.  A self-loop edge (a step that
# leaves the state as it is) is a stuttering step: it neither enables a set nor is
# one of its steps (TLA+'s ``<A>_vars``).  Every form is the search for a fair
# behaviour that starts at a seed state and stays inside a region from there on:
#
#   premise ~> goal  seeds: premise & ~goal   region: ~goal
#   <>goal           seeds: initial & ~goal   region: ~goal
#   []<>goal         seeds: ~goal             region: ~goal
#   []goal           seeds: ~goal             region: every state
#   <>[]goal         seeds: initial           region: every state, ~goal infinitely often

_MESSAGES = {
    "~>": "the premise holds and the goal never holds from then on",
    "<>": "the goal never holds",
    "[]<>": "from some point on the goal never holds again",
    "[]": "the goal fails in a state of a fair behaviour",
    "<>[]": "the goal fails infinitely often",
}


def _goal_text(model: Any, goal: Goal) -> str:
    """Which goal a counterexample never meets, in the model's names (the label alone,
    "run 0", does not say)."""
    from osf_check.models.expr import show
    return f"the goal: {show(goal.goal, model.slot_names, model.slot_domains)}"


def _fair(g: _Graph, ex: Exploration, p: Property, goal: Goal) -> str:
    model = ex.model
    bad = ~g.pred(goal.goal)
    seeds, region, extra = _form(g, ex, goal, bad)
    seeds = seeds.copy()
    seeds[g.expanded:] = False  # only states whose successors are all known
    if not seeds.any():
        return "holds"
    inside, levels = (seeds, []) if region is None else g.forward(seeds, region)
    inside = inside.copy()
    inside[g.expanded:] = False
    sets = model.fair_sets()
    f = _fairness(g, sets)
    conds = [e for _, e in model.fair_states] + extra
    masks = [g.pred(e) for e in conds]
    g.forget_columns()  # every predicate of the goal is read: its columns are not
    comp = _find_fair_scc(g, inside, masks, f, stutter=True)
    if isinstance(comp, int):
        stop = comp
        path, acts = _path_into(ex, levels, stop)
        ex.violations.append(Violation(
            p.id, "fair", f"{goal.label}: {_MESSAGES[goal.form]}, then stutters forever "
            f"(no fair action can move it); {_goal_text(model, goal)}", path, acts,
            loop_start=len(path) - 1,
            stutters=True))
        return "violated"
    if comp is None:
        return "holds"
    states = _States(g)
    fair_states = [compile_pred(e) for e in conds]
    # enter the cycle at a seed when one is on it: the path to it is the search's own
    on = comp[seeds[comp]]
    entry = int(on[0]) if on.size else int(comp[0])
    prefix, cycle = _lasso(_subgraph(g, comp), set(comp.tolist()), g, fair_states, sets, states,
                           entry)
    path, acts = _path_into(ex, levels, prefix)
    loop_at = len(path) - 1
    for u, v, a in cycle:
        path.append(v)
        acts.append(a)
    ok, why = fairness_of_cycle([(u, a) for u, _, a in cycle], g, fair_states, sets, states)
    assert ok, f"internal error: the lasso found is not fair ({why})"
    ex.violations.append(Violation(
        p.id, "fair", f"{goal.label}: {_MESSAGES[goal.form]} (a fair cycle); "
        f"{_goal_text(model, goal)}", path, acts, loop_start=loop_at))
    return "violated"


def _form(g: _Graph, ex: Exploration, goal: Goal, bad: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray | None, list]:
    """The seeds, the region (None: the seeds themselves, closed under the region) and
    the extra infinitely-often conditions of ``goal``'s form (see the table above)."""
    from osf_check.models.expr import Not
    if goal.form == "~>":
        return g.pred(goal.premise) & bad, bad, []
    if goal.form == "[]<>":
        return bad, None, []
    initial = np.zeros(g.n, dtype=bool)
    initial[:ex.level_start[1] if len(ex.level_start) > 1 else g.n] = True
    if goal.form == "<>":
        return initial & bad, bad, []
    if goal.form == "[]":
        return bad, np.ones(g.n, dtype=bool), []
    assert goal.form == "<>[]", goal.form  # Check.goals refuses the others
    return initial, np.ones(g.n, dtype=bool), [Not(goal.goal)]


def _path_into(ex: Exploration, levels: list, target: int) -> tuple[list[int], list[int]]:
    """The path from an initial state to ``target``: the search's path to the seed the
    region's search (:meth:`_Graph.forward`, ``levels``) reached it from, then that
    search's steps."""
    tail: list[tuple[int, int]] = []
    cur = target
    for d, par, a in reversed(levels):
        k = int(np.searchsorted(d, cur))
        if k < len(d) and d[k] == cur:
            tail.append((cur, int(a[k])))
            cur = int(par[k])
    path, acts = ex.path_to(cur)
    for v, a in reversed(tail):
        path.append(v)
        acts.append(a)
    return path, acts


def _subgraph(g: _Graph, comp: np.ndarray) -> "nx.DiGraph":
    """The component's moving edges (no self-loop) as a networkx graph, for the lasso."""
    import networkx as nx  # (see the imports at the top)
    inside = np.zeros(g.n, dtype=bool)
    inside[comp] = True
    G = nx.DiGraph()
    G.add_nodes_from(comp.tolist())
    for u, v, deg, idx in _out_edges(g, comp):
        d = g.dst[idx]
        src = np.repeat(comp[u:v], deg)
        keep = inside[d] & (d != src)
        G.add_edges_from(zip(src[keep].tolist(), d[keep].tolist()))
    return G


class _States:
    """Unpacked states on demand (the fair search touches few of them)."""

    def __init__(self, g: _Graph):
        self.g = g
        self.cache: dict[int, tuple] = {}

    def __getitem__(self, i: int) -> tuple:
        got = self.cache.get(i)
        if got is None:
            got = self.cache[i] = self.g.state(i)
        return got


@dataclass
class _Fairness:
    """The model's fairness sets as tables over actions (no edge is read to build it).
    An action may belong to several sets: ``layers[k][a]`` is the column of the k-th
    set action ``a`` belongs to (-1: none), one layer per set an action is in at most."""

    layers: list[np.ndarray]
    nf: int  # columns (one per set; at least 1)
    strong: np.ndarray  # column -> the set is strongly fair
    weak: list[tuple[int, np.ndarray]]  # (column, action -> member) of each weak set
    member: np.ndarray  # action -> in some set


#: edges per slice: a slice's temporaries (positions, targets, sources, actions, each
#: edge's fair-set column, masks: about 20 bytes an edge) stay near 100 MB however
#: large the graph; at 1 << 24 they were 0.5 GB, on top of the alive subgraph
_STEP = 1 << 22
#: passes of the backward search over the forward edges before what is left is searched
#: over a reverse graph of its own edges (graph-relay's reach goals take 4 or 5)
_PASSES = 8
#: rounds within one slice of a pass before the pass is cut short
_ROUNDS = 64


def _fairness(g: _Graph, sets: Sequence) -> _Fairness:
    """:class:`_Fairness` of ``sets`` (``Model.fair_sets()``); members past every edge's
    action are never enabled, and a set none of whose members is ever enabled asks
    nothing."""
    nacts = g.nacts
    cols_of: dict[int, list[int]] = {}
    weak = []
    for c, fs in enumerate(sets):
        mine = [a for a in fs.instances if a < nacts]
        for a in mine:
            cols_of.setdefault(a, []).append(c)
        if fs.kind == "weak" and mine:
            m = np.zeros(nacts + 1, dtype=bool)
            m[mine] = True
            weak.append((c, m))
    layers = [np.full(nacts + 1, -1, dtype=np.int16)  # read once per edge: keep it narrow
              for _ in range(max(map(len, cols_of.values()), default=1))]
    for a, cs in cols_of.items():
        for k, c in enumerate(cs):
            layers[k][a] = c
    strong = np.array([fs.kind == "strong" for fs in sets] + [False], dtype=bool)
    member = layers[0] >= 0
    return _Fairness(layers, max(1, len(sets)), strong, weak, member)


def _cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _out_edges(g: _Graph, ids: np.ndarray):
    """The edges out of states ``ids`` (sorted), in blocks of about ``_STEP`` edges
    (:func:`_slices` of the graph).  Reads only those edges, not the whole graph: the
    sets the fair search refines shrink fast."""
    return _slices(g.off, ids, len(g.dst))


#: states per block of :func:`_slices`: their edges' starts and counts are read a block
#: at a time, not for every state asked for at once (a frontier or the alive states are
#: millions: 20 bytes a state of temporaries beside the slices)
_IDS = 1 << 20


def _slices(off: np.ndarray, ids: np.ndarray, edges: int, backwards: bool = False):
    """The edges of states ``ids`` in the CSR whose rows start at ``off`` (``edges`` in
    all), in blocks of about ``_STEP`` edges: for each block, the range ``u, v`` of
    ``ids`` it covers, each of those states' edge count and its edges' positions (a
    state's edges together, in ``ids``' order).  With ``backwards``, the blocks come
    from the last one to the first."""
    # positions in 32 bits while the edges fit: the largest temporary of a slice
    it = np.int32 if edges < 2**31 - 1 else np.int64
    k = len(ids)
    firsts = range(0, k, _IDS)
    for b0 in reversed(firsts) if backwards else firsts:
        b1 = min(b0 + _IDS, k)
        starts = off[ids[b0:b1]].astype(it)
        deg = off[1:][ids[b0:b1]].astype(it) - starts
        cuts = _cuts(deg)
        pairs = list(zip(cuts, cuts[1:]))
        for u, v in reversed(pairs) if backwards else pairs:
            d = deg[u:v]
            yield b0 + u, b0 + v, d, _run_indices(starts[u:v], d, int(d.sum()))


def _cuts(deg: np.ndarray) -> list[int]:
    """Where blocks of about ``_STEP`` edges start among states of degrees ``deg`` (and
    the end); a state with more edges is a block of its own."""
    ends = np.cumsum(deg, dtype=np.int64)  # edges of the first u + 1 states
    cuts, u, k = [0], 0, len(deg)
    while u < k:
        v = int(np.searchsorted(ends, (ends[u - 1] if u else 0) + _STEP, side="right"))
        u = min(max(v, u + 1), k)
        cuts.append(u)
    return cuts


def _run_indices(starts: np.ndarray, lens: np.ndarray, total: int) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + lens[i] - 1`` of every run, end to end
    (``total`` of them), in the dtype of ``starts``: one repeat and one arange.

    >>> _run_indices(np.array([5, 0, 9]), np.array([2, 0, 3]), 5).tolist()
    [5, 6, 9, 10, 11]
    """
    idx = np.repeat((starts - (np.cumsum(lens) - lens)).astype(starts.dtype, copy=False), lens)
    idx += np.arange(total, dtype=idx.dtype)
    return idx


@dataclass
class _Alive:
    """The subgraph of the alive states, renumbered ``0..k-1`` in id order (``ids``):
    its CSR (``indptr``, ``dst``) and each kept edge's action; and, from every edge out
    of an alive state (wherever it goes), what fairness reads: the edges of strongly
    fair sets (source, set's column) and the states enabling each weakly fair set.
    Self-loops are left out everywhere: they are stuttering steps."""

    ids: np.ndarray
    indptr: np.ndarray
    dst: np.ndarray
    act: np.ndarray
    strong_src: np.ndarray
    strong_col: np.ndarray
    weak_en: dict[int, np.ndarray]
    #: a step of a fair set can move the state (stuttering there forever is unfair)
    fair_moves: np.ndarray


def _alive_csr(g: _Graph, alive: np.ndarray, f: _Fairness) -> _Alive:
    """:class:`_Alive` for ``alive``: only the alive states' edges are read, a block at a
    time."""
    ids = np.flatnonzero(alive)
    k = len(ids)
    new = np.full(g.n, -1, dtype=np.int32)
    new[ids] = np.arange(k, dtype=np.int32)
    counts = np.zeros(k, dtype=np.int64)
    weak_en = {c: np.zeros(k, dtype=bool) for c, _ in f.weak}
    fair_moves = np.zeros(k, dtype=bool)
    # the kept edges go straight into arrays sized for every edge read, cut to size at
    # the end (in place): a list of slices joined would hold the subgraph twice
    reads = int((g.off[ids + 1].astype(np.int64) - g.off[ids]).sum())
    dst, act, at = np.empty(reads, dtype=np.int32), np.empty(reads, dtype=g.act.dtype), 0
    ssrc, scol = [], []
    for u, v, deg, idx in _out_edges(g, ids):
        a_, gd = g.act[idx], g.dst[idx]
        del idx
        src = np.repeat(np.arange(u, v, dtype=np.int32), deg)  # local ids
        move = gd != ids[src]  # a self-loop is a stuttering step
        if not move.all():
            a_, gd, src = a_[move], gd[move], src[move]
        del move
        nd = new[gd]
        del gd
        for layer in f.layers:
            c = layer[a_]
            st = f.strong[c]  # (column -1 reads the last entry: False)
            ssrc.append(src[st])
            scol.append(c[st].astype(np.int16))
        for c, m in f.weak:
            weak_en[c][src[m[a_]]] = True
        fair_moves[src[f.member[a_]]] = True
        keep = nd >= 0
        counts[u:v] = np.bincount(src[keep] - u, minlength=v - u)
        kept = int(counts[u:v].sum())
        dst[at:at + kept] = nd[keep]
        act[at:at + kept] = a_[keep]
        at += kept
    dst.resize(at, refcheck=False)
    act.resize(at, refcheck=False)
    indptr = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return _Alive(ids, indptr, dst, act, _cat(ssrc, np.int32), _cat(scol, np.int16), weak_en,
                  fair_moves)


def _taken_inside(indptr: np.ndarray, dst: np.ndarray, act: np.ndarray, label: np.ndarray,
                  f: _Fairness, nc: int) -> np.ndarray:
    """One bit per (component, fair set): a step of the set is taken on an edge inside
    the component.  Sources come in blocks whose edges fit a slice; a source's label is
    repeated over its edges (no gather)."""
    taken = np.zeros(-(-nc * f.nf // 8), dtype=np.uint8)
    n = len(label)
    u = 0
    while u < n:
        v = int(np.searchsorted(indptr, indptr[u] + _STEP, side="right")) - 1
        v = min(max(v, u + 1), n)
        e0, e1 = int(indptr[u]), int(indptr[v])
        if e1 > e0:
            ls = np.repeat(label[u:v], np.diff(indptr[u:v + 1]))
            same = ls == label[dst[e0:e1]]
            for layer in f.layers:
                c = layer[act[e0:e1]]
                inside = same & (c >= 0)
                set_bits(taken, ls[inside].astype(np.int64) * f.nf + c[inside])
        u = v
    return taken


def strong_components(indptr: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """A label per state (equal labels: one strongly connected component) of the graph
    whose CSR rows are ``indptr``, ``dst``; rows may repeat a target (two actions to one
    state) and are not sorted.

    scipy's search needs each row's targets sorted and each once: given 8-bit weights
    it converts the matrix to that form itself, with a copy of the targets and weights
    of 8 bytes an edge; given float64 weights it uses the rows as they are, and with a
    repeated target its components came out wrong or its search never ended (scipy
    1.17; a test keeps this in check).  So the rows are put in that form here, a slice
    at a time (:func:`_canonical`), and the weights, never read, are one float64 seen
    at every edge (no memory): 4 bytes an edge where scipy's conversion took 13.

    >>> strong_components(np.array([0, 2, 3, 3]), np.array([1, 1, 0])).tolist()[:2]
    [0, 0]
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components
    n = len(indptr) - 1
    ptr, tgt = _canonical(indptr, dst)
    ones = np.broadcast_to(np.float64(1), tgt.shape)
    m = csr_matrix((ones, tgt, ptr), shape=(n, n))
    return connected_components(m, directed=True, connection="strong")[1]


def _canonical(indptr: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR ``indptr``, ``dst`` with each row's targets sorted and each once (scipy's
    canonical form), in 32-bit indices while they fit; rows a slice of about ``_STEP``
    edges at a time (scipy sorts and merges a copy of the slice in place), written into
    one array cut to size at the end.

    >>> p, d = _canonical(np.array([0, 3, 3, 5]), np.array([2, 0, 2, 1, 1]))
    >>> p.tolist(), d.tolist()
    ([0, 2, 2, 3], [0, 2, 1])
    """
    from scipy.sparse import csr_matrix
    n = len(indptr) - 1
    it = np.int32 if len(dst) < 2**31 - 1 and n < 2**31 - 1 else np.int64
    out = np.empty(len(dst), dtype=it)
    ptr = np.zeros(n + 1, dtype=it)
    at, u = 0, 0
    while u < n:
        v = int(np.searchsorted(indptr, indptr[u] + _STEP, side="right")) - 1
        v = min(max(v, u + 1), n)
        e0, e1 = int(indptr[u]), int(indptr[v])
        rows = csr_matrix((np.ones(e1 - e0, dtype=np.int8), dst[e0:e1].astype(it),
                           (indptr[u:v + 1] - e0).astype(it)), shape=(v - u, n))
        rows.sum_duplicates()  # (in place, on the copy: the caller reads dst again)
        out[at:at + rows.nnz] = rows.indices[:rows.nnz]
        ptr[u + 1:v + 1] = np.diff(rows.indptr)
        at += rows.nnz
        u = v
    np.cumsum(ptr, out=ptr)
    out.resize(at, refcheck=False)
    return ptr, out


def _find_fair_scc(g: _Graph, alive: np.ndarray, fair_masks: list[np.ndarray],
                   f: _Fairness, stutter: bool = False) -> np.ndarray | int | None:
    """Streett-style refinement over strongly connected components (scipy): a component
    (more than one state: a single state's behaviour is stuttering, judged apart) is
    fair when it visits every fair-state condition, takes inside it a step of every
    strongly fair set enabled in it, and does not keep a weakly fair set enabled
    everywhere without taking its steps.  States enabling a strongly fair set never
    taken inside their component are removed and the rest is split again.  Returns the
    fair component with the smallest state id (shortest prefix), or None.

    Each round works on the alive states alone, renumbered (:class:`_Alive`): scipy's
    work, the edges read and the per-state arrays scale with them, and they shrink fast.

    With ``stutter``, the first round first looks for a state where stuttering forever
    is fair (every condition of ``fair_masks`` holds, no fair set can move it) and
    returns the first one's id (an int) if there is one: the edges are read once for
    both."""
    while alive.any():
        give_back_freed()  # the last round's slices: not resident under this one's
        found, got = _fair_round(g, alive, fair_masks, f, stutter)
        if found:
            return got
        alive, stutter = got, False
    return None


def _fair_round(g: _Graph, alive: np.ndarray, fair_masks: list[np.ndarray], f: _Fairness,
                stutter: bool) -> tuple[bool, Any]:
    """One round of :func:`_find_fair_scc` on the states ``alive``: ``(True, its
    result)``, or ``(False, the states alive in the next round)``.  Its subgraph goes
    as it returns: the next round's would otherwise be built beside it."""
    s = _alive_csr(g, alive, f)
    if stutter:
        free = ~s.fair_moves
        for fm in fair_masks:
            free &= fm[s.ids]
        if free.any():
            return True, int(s.ids[np.argmax(free)])
    give_back_freed()  # the subgraph's slices, before scipy's arrays
    label = strong_components(s.indptr, s.dst)
    sizes = np.bincount(label)
    nc = len(sizes)
    taken = _taken_inside(s.indptr, s.dst, s.act, label, f, nc)
    real = sizes > 1  # a cycle of moving steps
    # states enabling a strongly fair set their component never takes inside
    bad = np.zeros(len(label), dtype=bool)
    bad[s.strong_src[~get_bits(taken, label[s.strong_src].astype(np.int64) * f.nf
                               + s.strong_col)]] = True
    bad &= real[label]
    comp_ok = real.copy()
    for fm in fair_masks:
        has = np.zeros(nc, dtype=bool)
        has[label[fm[s.ids]]] = True
        comp_ok &= has
    for c, en in s.weak_en.items():
        everywhere = np.bincount(label[en], minlength=nc) >= sizes
        took = get_bits(taken, np.arange(nc, dtype=np.int64) * f.nf + c)
        comp_ok &= ~(everywhere & ~took)
    # components whose states are all good and meet the state conditions are fair
    bad_comp = np.zeros(nc, dtype=bool)
    bad_comp[label[bad]] = True
    hit = np.flatnonzero((comp_ok & ~bad_comp)[label])
    if hit.size:  # ids are in id order: the first hit has the smallest id
        return True, s.ids[label == label[hit[0]]]
    if not bad.any():
        return True, None
    # drop the bad states, and whole components that are no cycle or miss a fair-state
    # condition or a weakly fair set (their parts would miss it too)
    alive = np.zeros(g.n, dtype=bool)
    alive[s.ids[~bad & real[label] & comp_ok[label]]] = True
    return False, alive


def _lasso(S: nx.DiGraph, comp: set[int], g: _Graph, fair_states, sets, states, entry: int):
    import networkx as nx
    # what the cycle must visit: a state of each fairness condition, a step of each
    # strongly fair set enabled in the SCC, a step or a disabling state of each weak one
    targets: list[tuple[str, tuple[int, ...]]] = []
    for f in fair_states:
        targets.append(("state", (min(u for u in comp if f(states[u])),)))

    def edge_of(members: frozenset[int]) -> tuple[int, int, int]:
        return min((u, v, a) for u in comp for v, a in g.succ(u)
                   if a in members and v in comp and v != u)

    for fs in sets:
        members = frozenset(fs.instances)
        if fs.kind == "strong":
            if any(g.enabled(u) & members for u in comp):
                targets.append(("edge", edge_of(members)))
        else:
            off = [u for u in comp if not g.enabled(u) & members]
            targets.append(("state", (min(off),)) if off else ("edge", edge_of(members)))

    def act(u: int, v: int, want: int | None = None) -> int:
        acts = [b for w, b in g.succ(u) if w == v]
        return want if want in acts else min(acts)

    cycle: list[tuple[int, int, int]] = []
    cur = entry
    for kind, t in targets:
        walk = nx.shortest_path(S, cur, t[0])
        cycle += [(a, b, act(a, b)) for a, b in zip(walk, walk[1:])]
        cur = t[0]
        if kind == "edge":
            u, v, a = t
            cycle.append((u, v, act(u, v, a)))
            cur = v
    if cur != entry or not cycle:
        if cur == entry:  # nothing to visit: any cycle through entry
            nxt = min(S.successors(entry))
            cycle.append((entry, nxt, act(entry, nxt)))
            cur = nxt
        walk = nx.shortest_path(S, cur, entry)
        cycle += [(a, b, act(a, b)) for a, b in zip(walk, walk[1:])]
    return entry, cycle


def fairness_of_cycle(cycle: list[tuple[int, int]], g: _Graph, fair_states, sets, states
                      ) -> tuple[bool, str]:
    """Check a cycle (state, action taken) edge by edge against the fairness assumption:
    ``fair_states`` (compiled conditions) and ``sets`` (``Model.fair_sets()``)."""
    on = [u for u, _ in cycle]
    taken = {a for _, a in cycle}
    for k, f in enumerate(fair_states):
        if not any(f(states[u]) for u in on):
            return False, f"fair state condition {k} never holds on the cycle"
    for fs in sets:
        members = frozenset(fs.instances)
        if taken & members:
            continue
        if fs.kind == "strong" and any(g.enabled(u) & members for u in on):
            return False, f"strongly fair {fs.name} enabled on the cycle but never taken"
        if fs.kind == "weak" and all(g.enabled(u) & members for u in on):
            return False, f"weakly fair {fs.name} always enabled on the cycle but never taken"
    return True, ""
