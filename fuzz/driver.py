"""Fuzz the implementation against the model: a transition tour, goals, then Hypothesis.

1. **Tour**: the explorer's graph to a depth is the coverage map.  A depth-first
   walk over its BFS tree drives the implementation through every state and every
   transition of that graph (snapshots of the implementation let each state's
   transitions be tried in turn), checking at each step that the implementation
   went to exactly the model's successor and that every property holds on it.
2. **Goals** (:mod:`.goals`): each property's premise and each limit pressed, reached
   by its shortest path in the model, at wider parameters where the run's cannot, and
   tried with every step the model enables there.
3. **Hypothesis**: a rule-based state machine draws, at each step, an action the
   model enables (plus storage crashes and clock jumps) for longer and more varied
   runs than the tour; Hypothesis shrinks a failure to a short one.

A failure comes back as the path of action instances that shows it; the CLI turns
it into a standard trace.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.compiled.pycompile import compile_pack, compile_pred, compile_steps, compile_trans
from osf_check.models.dsl import Model
from osf_check.models.expr import Const
from osf_check.properties import catalogue
from osf_check.properties.base import CheckList

from . import hidden, mutants, stories
from . import profiles  # noqa: F401  (registers the Hypothesis profiles)
from .graph_harness import IMPL_MUTANTS as GRAPH_MUTANTS
from .graph_harness import GraphHarness
from .harness import Crash, Divergence, Violation, crash_site
from .payloads import ERRORS, HALF, TOUR_RESULTS, concrete, tour_result  # noqa: F401
from .payloads import chosen, data_classes, handed_from, step_data
from .wire_harness import IMPL_MUTANTS as WIRE_MUTANTS
from .wire_harness import WireHarness
from osf_check.models.errors import BadValue

#: the systems with an implementation, their mutants, and the tour's default depth (deep
#: enough to reach each system's shortest known bug: graph-relay 8 steps, wire-relay 9)
SYSTEMS = ("graph-relay", "wire-relay")
IMPL_MUTANTS = {"graph-relay": tuple(GRAPH_MUTANTS), "wire-relay": tuple(WIRE_MUTANTS)}
TOUR_DEPTH = {"graph-relay": 8, "wire-relay": 9}

Harness = GraphHarness | WireHarness

__all__ = ["FuzzReport", "Checker", "ReplayStep", "FOLLOWED", "PARTED", "VIOLATED", "DIVERGED",
           "tour", "hypothesis_run", "make_harness", "SYSTEMS", "IMPL_MUTANTS", "TOUR_DEPTH",
           "step_data", "handed_from", "data_along"]


def classified(result_for: Callable[[int, str], Any], seen: set[str]
               ) -> Callable[[int, str], Any]:
    """``result_for``, noting the data class of each value it hands over in ``seen``."""
    def handing(r: int, status: str) -> Any:
        got = result_for(r, status)
        seen.update(data_classes(got, status))
        return got
    return handing


def data_along(model: Model, mutant: str | None, path: list[int], *, seed: int = 0,
               harness: Callable[..., Harness] | None = None
               ) -> list[dict[str, Any] | None]:
    """The data each step of ``path`` hands the implementation when it is driven with the
    tour's data (:func:`tour_result`), up to the step that fails: the tour, the goals and
    a shrunk walk choose theirs that way, and the status a Graph's result is chosen for
    (a stopped Graph's is cancelled) is the implementation's to decide."""
    chk = Checker(model)
    handed: list[Any] = []

    def result_for(r: int, status: str) -> Any:
        handed.append(tour_result(r, status))
        return handed[-1]

    out: list[dict[str, Any] | None] = []
    h = (harness or make_harness)(model, mutant, None, seed, result_for)
    s = h.abstract()
    try:
        for ai in path:
            handed.clear()
            try:
                s = chk.check(h, ai, s)
            except Divergence:
                break
            finally:
                out.append(step_data(handed[-1]) if handed else None)
    finally:
        h.close()
    return out + [None] * (len(path) - len(out))


@dataclass
class FuzzReport:
    model: str
    mutant: str | None
    steps: int = 0
    examples: int = 0
    seconds: float = 0.0
    states_covered: int = 0
    states_total: int = 0
    edges_covered: int = 0
    edges_total: int = 0
    #: of the covered transitions, those covered only inside a step of the implementation
    #: that took several model steps at once (their ends between were not observed)
    edges_taken: int = 0
    failure: str | None = None
    path: list[int] = field(default_factory=list)  # instance indices from the initial state
    hypothesis_steps: int = 0
    hypothesis_examples: int = 0
    visited: set[tuple] = field(default_factory=set)
    #: the explored map Hypothesis starts from (states within its depth) and how many of
    #: them its walks went through
    map_states: int = 0
    map_visited: int = 0
    #: transitions the tour could not try: the harness did not return to their source
    unreached: int = 0
    #: distinct states the walks reached with each long-story feature (fuzz.stories)
    stories: dict[str, int] = field(default_factory=dict)
    #: the long stories the parameters rule out, each with the parameter that allows it
    out_of_reach: dict[str, str] = field(default_factory=dict)
    #: the tour's coverage as it went: (seconds, steps, states, transitions) samples
    coverage: list[tuple[float, int, int, int]] = field(default_factory=list)
    #: each goal of the properties (fuzz.goals.Reached) and what was tried there
    goals: list[Any] = field(default_factory=list)
    #: the parameters ``path`` is at, where not the run's (a goal found at wider ones)
    params: dict[str, Any] | None = None
    #: the concrete data each step of ``path`` handed the implementation (None where a step
    #: hands none), as a step's ``data`` in the driver protocol; None: not yet recorded
    data: list[dict[str, Any] | None] | None = None
    #: the Hypothesis seed of the failing walks (the run's seed for the other phases)
    seed: int | None = None
    #: each Hypothesis seed run, in order
    seeds: list[int] = field(default_factory=list)
    #: the classes of concrete data handed to the implementation (payloads.data_classes)
    #: and tried on it by the harness's own probes (keys, frames, arguments)
    data_classes: set[str] = field(default_factory=set)
    #: the answers the harness delivered late, each with what it came after
    late_answers: set[str] = field(default_factory=set)

    @property
    def state_coverage(self) -> float:
        return self.states_covered / self.states_total if self.states_total else 0.0

    @property
    def edge_coverage(self) -> float:
        return self.edges_covered / self.edges_total if self.edges_total else 0.0


def differences(model: Model, expected: tuple | None, got: tuple) -> str:
    """Where the implementation's state differs from the model's successor, each slot with
    both values as the model names them (``None``: the model does not enable the step).

    >>> from osf_check.models.two_phase import SPEC
    >>> m = SPEC.build({"rms": 2})
    >>> s = m.initial_states[0]
    >>> differences(m, s, (1,) + s[1:])
    'rmState[0]: the model working, the implementation prepared'
    """
    if expected is None:
        return "action not enabled in the model"
    doms = model.slot_domains
    return "; ".join(f"{n}: the model {doms[i].show(x)}, the implementation {doms[i].show(y)}"
                     for i, (n, x, y) in enumerate(zip(model.slot_names, expected, got))
                     if x != y)


class Checker:
    """Checks one implementation step against the model and the properties."""

    def __init__(self, model: Model):
        self.model = model
        self.steps = compile_steps(model)
        self.by_name: dict[str, list[int]] = {}
        for i in model.instances:
            self.by_name.setdefault(i.name, []).append(i.index)
        props = catalogue.properties_of(model.name)
        checks = CheckList.of(model, props).compiled(compile_pred, compile_trans)
        self.invs, self.trans = checks.invs, checks.trans
        #: the model steps taken after the one asked for in the last step checked: by the
        #: implementation unasked, or driven to show what a divergence breaks
        self.hidden: list[int] = []
        #: where the implementation left the model: how many of :attr:`hidden` were driven
        #: from its own state, and that state (None: it did not, or nothing was driven)
        self.parted: tuple[int, tuple] | None = None

    def enabled(self, s: tuple) -> list[int]:
        return [i for i, f in enumerate(self.steps) if f(s) is not None]

    def check(self, h: Harness, ai: int, before: tuple) -> tuple:
        """Take action ``ai`` on the implementation and judge it; returns its abstract
        state after.  Raises :class:`Divergence` (or a :class:`Violation`, or a
        :class:`Crash` when the implementation raised)."""
        try:
            return self._check(h, ai, before)
        except Divergence:
            raise
        except Exception as e:
            site = crash_site(e)
            if site is None:
                raise  # the checker's own code: an internal error
            label = self.model.instances[ai].label
            raise Crash(f"the implementation raised {type(e).__name__} on {label}: {e} "
                        f"({site})") from e

    def _check(self, h: Harness, ai: int, before: tuple) -> tuple:
        inst = self.model.instances[ai]
        self.hidden, self.parted = [], None
        outs = h.apply(inst)
        # the store is observed, never fixed up: an open transaction is the implementation's
        # failure here, not a crash of the snapshot that would copy it
        open_write = getattr(h, "uncommitted", lambda: None)()
        if open_write:
            raise Violation(f"after {inst.label}, {open_write}")
        after = h.abstract()
        end, note = self._took(h, ai, before, after)
        broken = self._broken(h, ai, before, after, self.hidden)  # first: its own state
        if broken:
            raise Violation(broken)
        if end != after:
            raise self._consequence(h, f"the implementation diverged from the model on "
                                       f"{inst.label}: {differences(self.model, end, after)}"
                                       f"{note}", after)
        # the desktop's own decisions: it offers exactly what the model enables
        decided = {i.label for i in self.model.instances
                   if i.name in h.DECIDES and self.steps[i.index](after)
                   is not None}
        offered = h.offers()
        if offered != decided:
            raise Divergence(f"after {inst.label} the desktop would take "
                             f"{sorted(offered - decided) or 'nothing'} where the model enables "
                             f"{sorted(decided - offered) or 'nothing more'}")
        why = h.probe(lambda name: any(self.steps[i](after) is not None
                                       for i in self.by_name.get(name, ())))
        if why:
            raise Divergence(f"after {inst.label}, {why}")
        for k in inst.outputs:
            want = inst.output(k, before)
            if outs.get(k) != want:
                raise Divergence(f"{inst.label} answered {outs.get(k)!r}, the model {want!r}")
        return after

    def off_model(self, h: Harness, ai: int, before: tuple,
                  recorded: dict[str, Any]) -> tuple[str, str]:
        """What the implementation does with a step the model does not enable here (a
        model mutant's counterexample takes one: its bug), as a replay outcome and a
        note.  The properties judge it only if the implementation took the step as the
        trace records it: a transition check reads the step's name, which the harness
        asks for whether or not the implementation then does it (a correct relay drops
        the answer it was asked to deliver)."""
        from osf_check.driver.protocol import AdapterError
        inst = self.model.instances[ai]
        nor = "the model does not enable this step here, nor does the implementation"
        if inst.name in h.DECIDES and inst.label not in h.offers():
            return PARTED, f"{nor} offer it"
        try:
            h.apply(inst)
            after = h.abstract()
        except AdapterError:
            raise
        except Exception as e:  # (the implementation refused it, as it should)
            return PARTED, f"{nor} take it ({type(e).__name__}: {e})"
        got = self.model.show_state(after)
        differ = [k for k, v in recorded.items() if k in got and got[k] != v]
        off = "a step the model does not enable here"
        if differ:
            # parted only if what it did instead is the model's: nothing, or one of the
            # model's own steps (the correct relay drops a stale answer: drop_response)
            same = after == before or any(f(before) == after for f in self.steps)
            return (PARTED, f"{nor} take it (its state differs from the trace in "
                            f"{', '.join(differ)})") if same else \
                (DIVERGED, f"asked for {off}, the implementation reaches a state no step of "
                           f"the model reaches from here")
        broken = self._broken(h, ai, before, after)
        return (VIOLATED, f"{broken}, {off}") if broken else \
            (DIVERGED, f"the implementation takes this step, {off}")

    def _took(self, h: Harness, ai: int, before: tuple,
              after: tuple) -> tuple[tuple | None, str]:
        """The model state the implementation's answer to ``ai`` must be in, and what to
        add to a divergence's sentence.  The model steps it took after ``ai`` (declared by
        its adapter, or found among its own steps) are left in :attr:`hidden`."""
        expected = self.steps[ai](before)
        said = getattr(h, "took", lambda: None)()
        if said is not None:
            self.hidden = hidden.declared(self.model, self.steps, ai, before, said)
            return self._end(ai, before, self.hidden), f" (it says it took {', '.join(said)})"
        own = [i.index for i in self.model.instances if i.name in getattr(h, "hides", ())]
        if expected is None or expected == after or not own:
            return expected, ""
        found = hidden.search(self.steps, own, expected, after)
        if isinstance(found, str):
            return expected, f"; {found}"
        self.hidden = found
        return after, ""

    def _consequence(self, h: Harness, diverged: str, after: tuple) -> Divergence:
        """A divergence, as the property it breaks where it breaks one soon: the model's
        shortest way from the implementation's state to a broken invariant is driven on
        the implementation, and the state it is then observed in judged (a prediction
        alone is no finding).  The steps driven join :attr:`hidden`, so the trace shows
        them; where the implementation breaks nothing, the divergence as it is."""
        from osf_check.driver.protocol import AdapterError
        way = hidden.breaking(self.steps, self.invs, after) or []
        try:
            for n, bi in enumerate(way):
                inst = self.model.instances[bi]
                h.apply(inst)
                seen = h.abstract()
                broken = [pid for pid, f in self.invs if not f(seen)]
                if broken:
                    self.hidden += way[:n + 1]
                    self.parted = (n + 1, after)
                    return Violation(f"property {broken[0]} violated by the implementation "
                                     f"after {inst.label}, once "
                                     f"{diverged.replace('the implementation', 'it', 1)}")
        except AdapterError:
            raise
        except Exception:  # noqa: BLE001 (the implementation gave up: the divergence stands)
            pass
        return Divergence(diverged)

    def _end(self, ai: int, before: tuple, more: list[int]) -> tuple:
        s = before
        for bi in [ai, *more]:
            s = self.steps[bi](s)
        return s

    def _broken(self, h: Harness, ai: int, before: tuple, after: tuple,
                more: list[int] | tuple = ()) -> str | None:
        """The first property the implementation's step broke, on its own state: an
        invariant after it, a transition check on each model step it took (``ai``, then
        ``more``), what the harness saw (A8)."""
        label = self.model.instances[ai].label
        for pid, f in self.invs:
            if not f(after):
                return f"property {pid} violated by the implementation after {label}"
        s = before
        for bi in [ai, *more]:
            t = self.steps[bi](s) if more else after
            for pid, f in self.trans[bi]:
                if not f(s, t):
                    return (f"property {pid} violated by the implementation on "
                            f"{self.model.instances[bi].label}")
            s = t
        return h.violations[0] if h.violations else None


def make_harness(model: Model, mutant: str | None, tmpdir: str | None, seed: int = 0,
                 result_for: Callable[[int, str], Any] | None = None) -> Harness:
    """The model's harness, its database a file in ``tmpdir`` (None: in memory, for
    snapshots)."""
    if model.name == "wire-relay":
        path = os.path.join(tmpdir, "claims.sqlite") if tmpdir else ":memory:"
        return WireHarness(model, path, mutant=mutant, seed=seed)
    if model.name != "graph-relay":
        raise BadValue(f"no implementation of {model.name} to drive; the fuzzer knows "
                         f"graph-relay and wire-relay")
    path = os.path.join(tmpdir, "outbox.sqlite") if tmpdir else ":memory:"
    return GraphHarness(model, path, mutant=mutant, seed=seed, result_for=result_for)


def model_for(name: str, mutant: str | None, params: dict | None = None) -> Model:
    """The model the implementation is checked against: always the correct one (a bug of
    the implementation shows as a broken property or as a step the model would not take),
    at the parameters the paired model mutant needs to show the bug."""
    from osf_check.explorer.check import prepare
    merged = dict(params or {})
    if name in SYSTEMS:
        mutants.lookup(name, mutant)  # an unknown name is refused, never run as the correct code
    paired = [m for m in catalogue.MUTANTS if m.model == name and m.name == mutant]
    if paired:  # implementation-only mutants (truncate-by-bytes, …) need no parameters
        merged = {**paired[0].params, **merged}
    m, _, _ = prepare(name, params=merged)
    return m


def offered(model: Model, harness: Callable[..., Harness] | None, seed: int = 0) -> Model:
    """``model`` as the fuzzer drives the implementation ``harness`` builds: the steps the
    implementation cannot be asked to take (an adapter's whose welcome does not announce
    them, ``External.skips``) are never enabled, so the tour, the walks and the goals
    never ask for them and the coverage does not count them.

    Each instance keeps its index and label, so that paths read the same on either model;
    a step left out reaches no state the others do not (the late steps: new transitions
    only), so only the transitions counted change.

    Parameters
    ----------
    model : the model the implementation is checked against (:func:`model_for`)
    harness : the harness factory (None: the in-process harness, which takes every step)
    seed : the run's seed (an adapter is greeted with it)

    Returns
    -------
    Model
        ``model`` itself when nothing is left out, else a copy whose left-out instances'
        guards are false.
    """
    ask = getattr(harness, "skips", None)
    skips = set(ask(model, seed)) if ask is not None else set()
    if not skips:
        return model
    never = Const(False)
    return dataclasses.replace(model, instances=[
        dataclasses.replace(i, guard=never) if i.name in skips else i for i in model.instances])


def tour(name: str, *, mutant: str | None = None, depth: int = 8, seed: int = 0,
         params: dict | None = None, result_for: Callable[[int, str], Any] | None = None,
         log: Callable[[str], None] | None = None,
         harness: Callable[..., Harness] | None = None,
         tick: Callable[[int, int], None] | None = None) -> FuzzReport:
    """Drive the implementation through every state and transition within ``depth``; a
    failure is then looked for again at smaller depths, so that the path it comes back
    with is a shortest one.

    Coverage counts what the implementation was *observed* to do: an edge is covered
    when the abstraction of the implementation was the edge's source before the step
    and its target after it.  ``harness`` builds the harness (default
    :func:`make_harness`), for implementations driven some other way; ``tick(covered,
    total)`` reports transitions covered as the tour goes.  The model's other
    configurations are fuzzed by :func:`.sweep.fuzz_others`."""
    rep = _tour(name, mutant=mutant, depth=depth, seed=seed, params=params,
                result_for=result_for, log=log, harness=harness, tick=tick)
    if rep.failure:
        for d in range(1, len(rep.path)):
            short = _tour(name, mutant=mutant, depth=d, seed=seed, params=params,
                          result_for=result_for, harness=harness)
            if short.failure:
                rep.failure, rep.path = short.failure, short.path
                break
    return rep


def _edges_taken(ex: Any, pack: Callable[[tuple], Any], chk: Checker, u: int,
                 before: tuple, taken: list[int],
                 target: int | None) -> list[tuple[int, int, int]]:
    """The map's edges one step covered: ``(u, a, target)``; or, where the implementation
    took several model steps at once (``taken``: the one asked for, then those it took
    by itself) and ended where the model's steps end, each of them.  Only the end is
    observed; the steps between are counted because the implementation said it took
    them (or the checker found them) and its end state is theirs.  ``before`` is
    state ``u``, where the implementation stood."""
    if target is None:
        return []
    if len(taken) == 1:
        return [(u, taken[0], target)]
    edges, here, state = [], u, before
    for x in taken:
        state = chk.steps[x](state)
        nxt = ex.ids.get(pack(state)) if state is not None else None
        if nxt is None:
            return [(u, taken[0], target)]  # (beyond the map's depth: the first step only)
        edges.append((here, x, nxt))
        here = nxt
    return edges if here == target else [(u, taken[0], target)]


def _tour(name: str, *, mutant: str | None = None, depth: int = 8, seed: int = 0,
          params: dict | None = None, result_for: Callable[[int, str], Any] | None = None,
          log: Callable[[str], None] | None = None,
          harness: Callable[..., Harness] | None = None,
          tick: Callable[[int, int], None] | None = None) -> FuzzReport:
    t0 = time.perf_counter()
    model = offered(model_for(name, mutant, params), harness, seed)
    ex = bfs(model, [], depth=depth, keep_graph=True, check_deadlock=False)
    src, dst, act = (list(a) for a in ex.edges)  # type: ignore[misc]
    depth_of = {}
    for lv, lo in enumerate(ex.level_start):
        hi = ex.level_start[lv + 1] if lv + 1 < len(ex.level_start) else ex.distinct
        for i in range(lo, hi):
            depth_of[i] = lv
    out: dict[int, list[tuple[int, int]]] = {}
    for u, v, a in zip(src, dst, act):
        out.setdefault(u, []).append((v, a))
    graph_edges = set(zip(src, act, dst))
    rep = FuzzReport(name, mutant, states_total=ex.distinct, edges_total=len(graph_edges))
    chk = Checker(model)
    pack = compile_pack(model)
    handing = classified(result_for or tour_result, rep.data_classes)
    h = (harness or make_harness)(model, mutant, None, seed, handing)
    if h.abstract() != model.initial_states[0]:
        raise Divergence("the implementation's initial state is not the model's")
    covered_states = {0}
    # (source, action, target) seen done -> whether both its ends were observed (False:
    # only as one of several model steps the implementation took at once)
    observed: dict[tuple[int, int, int], bool] = {}
    n_edges = 0  # of them, transitions of the map
    rep.coverage.append((time.perf_counter() - t0, 0, 1, 0))
    path: list[list[int]] = []  # each step asked for, then the ones it took unasked
    stack = [(0, iter(out.get(0, [])))]
    snaps = {0: h.snapshot()}
    here: int | None = 0  # the state the harness stands in, untouched since its snapshot
    entered = {0}  # the states whose transitions the tour tries (each once)
    merges = False  # the implementation took several model steps in one (fuzz.hidden)
    try:
        while stack:
            u, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                gone = snaps.pop(u, None)
                if gone is not None:
                    h.forget(gone)
                if path:
                    path.pop()
                continue
            v, a = nxt
            if here != u:  # every transition is tried from its source's snapshot
                h.restore(snaps[u])
            here = None
            before = h.abstract()
            if before != ex.state(u):
                rep.unreached += 1  # the harness did not get back to u: not covered
                continue
            path.append([a])
            after = chk.check(h, a, before)
            path[-1] += chk.hidden
            merges = merges or bool(chk.hidden)
            rep.steps += 1
            target = ex.ids.get(pack(after))
            edges = _edges_taken(ex, pack, chk, u, before, [a, *chk.hidden], target)
            for edge in edges:
                if edge in graph_edges and edge not in observed:
                    n_edges += 1
                observed[edge] = observed.get(edge, False) or len(edges) == 1
                covered_states.add(edge[2])
            if rep.steps % 256 == 0:
                # (a restored snapshot forgets what the harness tried after it)
                rep.data_classes |= getattr(h, "classes", set())
                rep.late_answers |= getattr(h, "late", set())
                rep.coverage.append((time.perf_counter() - t0, rep.steps, len(covered_states),
                                     n_edges))
                if tick is not None:
                    tick(n_edges, rep.edges_total)
            land = _landed(ex, u, a, v, target, merges, entered)
            if land is not None and depth_of[land] < depth:
                snaps[land] = h.snapshot()
                here = land
                entered.add(land)
                stack.append((land, iter(out.get(land, []))))
            else:
                path.pop()
    except Divergence as e:
        rep.failure = str(e)
        rep.path = [x for seg in path for x in seg] + (chk.hidden if path else [])
    finally:
        rep.data_classes |= getattr(h, "classes", set())
        rep.late_answers |= getattr(h, "late", set())
        h.close()
    rep.edges_covered = len(observed.keys() & graph_edges)
    rep.edges_taken = sum(1 for e, whole in observed.items() if not whole and e in graph_edges)
    rep.states_covered = len(covered_states)
    rep.seconds = time.perf_counter() - t0
    rep.coverage.append((rep.seconds, rep.steps, rep.states_covered, rep.edges_covered))
    if log:
        log(f"tour: {rep.steps:,} steps, {rep.states_covered:,}/{rep.states_total:,} states, "
            f"{rep.edges_covered:,}/{rep.edges_total:,} transitions in {rep.seconds:.1f} s")
    return rep


def _landed(ex: Any, u: int, a: int, v: int, target: int | None, merges: bool,
             entered: set[int]) -> int | None:
    """The state the tour goes on from after the step ``(u, a, v)`` that left the
    implementation in ``target`` (None: outside the map), if it goes on: by the explored
    tree's edges; and, for an implementation that takes several model steps in one, from
    each state of the map the first time it lands there, since the tree may pass through
    states such an implementation never rests in."""
    if target is None or target in entered:
        return None
    if merges or (target == v and ex.parent[v] == u and ex.via[v] == a):
        return target
    return None


def hypothesis_run(name: str, *, mutant: str | None = None, examples: int = 50,
                   steps: int = 40, seed: int = 0, profile: str | None = None,
                   params: dict | None = None, rep: FuzzReport | None = None,
                   start_depth: int = 8, hypothesis_shrink: bool = False,
                   db: str | None = None,
                   tick: Callable[[int, int], None] | None = None,
                   harness: Callable[..., Harness] | None = None,
                   seeds: Sequence[int] | None = None) -> FuzzReport:
    """Random walks chosen by Hypothesis among the actions the model enables
    (:mod:`.walks`).

    No example database is used unless ``db`` names a directory: then failures found
    before are replayed first (a run is then reproducible only with the same database).

    Each example starts from a state of the explorer's graph within ``start_depth``
    (reached by its shortest path, checked step by step like the rest), so the random
    part begins where the tour stopped; shrinking moves the start towards the initial
    state and drops steps.  ``seeds`` (default: ``seed`` alone) share the examples, each
    seed its own walks in turn, until one fails (``rep.seed``)."""
    from .walks import Walks

    order = list(seeds) if seeds else [seed]
    model = offered(model_for(name, mutant, params), harness, order[0])
    rep = rep or FuzzReport(name, mutant)
    tree = bfs(model, [], depth=start_depth, keep_graph=True, check_deadlock=False)
    chk = Checker(model)
    t0 = time.perf_counter()
    mapped: set[tuple] = set()
    for sd, n in zip(order, split(examples, len(order))):
        w = Walks(model, chk, harness or make_harness, tree, rep, mutant, sd, examples, tick)
        mapped = w.mapped
        rep.seeds.append(sd)
        if _walk(w, rep, profile, n, steps, hypothesis_shrink, db, harness):
            break
    rep.seconds += time.perf_counter() - t0
    rep.map_states = len(mapped)
    rep.map_visited = len(rep.visited & mapped)
    rep.stories = stories.count(model, sorted(rep.visited))
    rep.out_of_reach = stories.out_of_reach(model)
    return rep


def split(examples: int, parts: int) -> list[int]:
    """``examples`` shared by ``parts`` seeds, the first ones taking what is left over.

    >>> split(300, 3), split(10, 4)
    ([100, 100, 100], [3, 3, 2, 2])
    """
    return [examples // parts + (k < examples % parts) for k in range(parts)]


def _walk(w: Any, rep: FuzzReport, profile: str | None, examples: int, steps: int,
          shrink: bool, db: str | None, harness: Callable[..., Harness] | None) -> bool:
    """One seed's walks; a failure (True) goes to ``rep`` with its path and data."""
    from .walks import run_walks, walk_settings
    failure = run_walks(w, walk_settings(profile, examples, steps, shrink, db), w.seed)
    if failure is None:
        return False
    # the walk's own data until a shorter path fails with the tour's (see data_along)
    rep.failure, rep.path, rep.data, rep.seed = failure, list(w.path), list(w.data), w.seed
    short = shrink_path(w.model, w.mutant, rep.path, seed=w.seed, harness=harness)
    if short is not None:
        (rep.path, rep.failure), rep.data = short, None
    return True


def _fails(model: Model, chk: Checker, mutant: str | None, path: list[int],
           seed: int, harness: Callable[..., Harness] | None = None) -> str | None:
    """The failure this path of model steps shows on the implementation (None: it passes,
    or it is not a path of the model)."""
    h = (harness or make_harness)(model, mutant, None, seed, tour_result)
    s = h.abstract()
    todo = list(path)
    try:
        while todo:
            ai = todo.pop(0)
            if chk.steps[ai](s) is None:
                return None
            s = chk.check(h, ai, s)
            if todo[:len(chk.hidden)] != chk.hidden:  # the path leaves out steps it took
                return None
            del todo[:len(chk.hidden)]
    except Divergence as e:
        return str(e)
    finally:
        h.close()
    return None


def parted_along(model: Model, mutant: str | None, path: list[int], *, seed: int = 0,
                 harness: Callable[..., Harness] | None = None) -> tuple[int, tuple] | None:
    """Where the implementation left the model on ``path``, for :func:`path_trace`: the
    number of steps after which it was in a state of its own, and that state (None: the
    path is the model's throughout)."""
    steps, s = compile_steps(model), model.initial_states[0]
    for ai in path:
        s = steps[ai](s)
        if s is None:
            break
    else:
        return None
    chk = Checker(model)
    _fails(model, chk, mutant, path, seed, harness)
    if chk.parted is None:
        return None
    driven, state = chk.parted
    return len(path) - driven, state


def shrink_path(model: Model, mutant: str | None, path: list[int], *, seed: int = 0,
                harness: Callable[..., Harness] | None = None
                ) -> tuple[list[int], str] | None:
    """A shorter path of model steps that still makes the implementation fail.  First the
    loops of the model's path are cut (a segment that comes back to a model state it
    started from, longest first), then chunks and single steps (ddmin, greedy), each cut
    kept only if the rest is a path of the model that still fails.  None if the path alone
    does not fail (the failure needed a storage crash between steps)."""
    chk = Checker(model)
    why = _fails(model, chk, mutant, path, seed, harness)
    if why is None:
        return None
    cur = list(path)

    def states_along(p: list[int]) -> list[tuple]:
        # up to the model's last step: a cut path may fail before its end, and what is
        # left after that is not a path of the model (the chunks cut it off)
        out = [model.initial_states[0]]
        for ai in p:
            nxt = chk.steps[ai](out[-1])
            if nxt is None:
                break
            out.append(nxt)
        return out

    changed = True
    while changed:
        changed = False
        sts = states_along(cur)
        loops = sorted(((i, j) for i in range(len(sts)) for j in range(i + 1, len(sts))
                        if sts[i] == sts[j]), key=lambda ij: ij[0] - ij[1])
        for i, j in loops:
            w = _fails(model, chk, mutant, cur[:i] + cur[j:], seed, harness)
            if w is not None:
                cur, why, changed = cur[:i] + cur[j:], w, True
                break
        if changed:
            continue
        chunk = max(1, len(cur) // 2)
        while chunk >= 1 and not changed:
            for i in range(0, len(cur) - chunk + 1, chunk):
                cand = cur[:i] + cur[i + chunk:]
                w = _fails(model, chk, mutant, cand, seed, harness) if cand else None
                if w is not None:
                    cur, why, changed = cand, w, True
                    break
            chunk //= 2
    return cur, why


def path_trace(model: Model, path: list[int], *, message: str, mutant: str | None, seed: int,
               prop: str = "conformance",
               data: list[dict[str, Any] | None] | None = None,
               parted: tuple[int, tuple] | None = None) -> dict[str, Any]:
    """A fuzz failure as a standard trace: the model's states along the failing path, each
    step with the concrete ``data`` it handed the implementation, so that a replay of the
    trace alone hands the same.  ``parted`` (from :func:`parted_along`): after that many
    steps the implementation was in that state, not the model's, and the steps after it
    were driven from there to show the property the divergence breaks."""
    from osf_check.traces.format import make_trace
    steps = compile_steps(model)
    states = [model.initial_states[0]]
    acts: list[int | None] = [None]
    for k, ai in enumerate(path):
        # the steps driven after a divergence go from the implementation's state
        at = parted[1] if parted is not None and k == parted[0] else states[-1]
        nxt = steps[ai](at)
        if nxt is None:  # the implementation did something the model does not: stop there
            break
        states.append(nxt)
        acts.append(ai)
    pid = message.split("property ")[1].split()[0] if "property " in message else prop
    from .oracles import CONCRETE
    names = CONCRETE | {p.id: p.name for p in catalogue.properties_of(model.name)}
    tr = make_trace(model, states, acts, prop={"id": pid, "name": names.get(pid, pid),
                                               "kind": "fuzz"},
                    message=message, seed=seed, source="fuzz")
    tr["mutant"] = mutant
    handed = list(data or ()) + [None] * len(path)
    for step, ai, d in zip(tr["steps"][1:], acts[1:], handed):
        inst = model.instances[ai]  # type: ignore[index]
        full = {**chosen(model, inst.name, dict(inst.args)), **(d or {})}
        if full:  # every input the step message carried, as it carried them
            step["data"] = full
    return tr


#: how a replayed step went: the implementation took it as the trace records it; it did
#: what the correct model does, which is not what the trace records (a model mutant's
#: counterexample: the bug does not reproduce); it broke a property; it did what the
#: correct model does not
FOLLOWED, PARTED, VIOLATED, DIVERGED = "followed", "parted", "violated", "diverged"


@dataclass
class ReplayStep:
    index: int
    label: str
    outcome: str
    note: str = ""

    @property
    def ok(self) -> bool:
        """The implementation took the step as the trace records it."""
        return self.outcome == FOLLOWED


def _same_shape(model: Model, init: tuple, trace: dict[str, Any]) -> None:
    """Refuse a trace whose states the implementation's abstraction cannot show: a
    counterexample of a model mutant whose model sizes its variables otherwise (a run
    for every fresh key, a key without the method), compared with the implementation's
    state, differed at its first step on the buggy implementation and on the correct
    one alike."""
    got = model.show_state(init)
    first = trace["steps"][0]["state"] if trace.get("steps") else {}
    odd = [k for k, v in first.items() if k in got and isinstance(v, list)
           and (not isinstance(got[k], list) or len(got[k]) != len(v))]
    if not odd:
        return
    k = odd[0]
    sizes = f"{k} holds {len(first[k])} where the implementation's model holds " \
            f"{len(got[k]) if isinstance(got[k], list) else 'one value'}"
    mu = trace.get("mutant")
    whose = (f"a counterexample of the model mutant {mu}, whose model keeps what the "
             f"implementation's abstraction cannot show; `osf-check fuzz --mutant {mu}` "
             "drives the implementation mutant itself") if mu else \
        "a trace of another version of the model, or of other parameters"
    raise BadValue(f"the trace's states are not the implementation's model's ({sizes}): "
                   f"{whose}")


def _failed_at(model: Model, steps: list[dict[str, Any]], step: dict[str, Any],
               more: list[int], e: Divergence) -> list[ReplayStep]:
    """The replay's last rows: the step that failed, and the steps the checker drove after
    it to show the property a divergence breaks, where the trace records them too."""
    how = VIOLATED if isinstance(e, Violation) else DIVERGED
    pos = steps.index(step)
    rest = steps[pos + 1:pos + 1 + len(more)]
    if not more or [s["label"] for s in rest] != [model.instances[b].label for b in more]:
        return [ReplayStep(step["index"], step["label"], how, str(e))]
    return [ReplayStep(step["index"], step["label"], DIVERGED, "diverged here"),
            *(ReplayStep(s["index"], s["label"], how, str(e)) for s in rest)]


def _took_as_recorded(model: Model, step: dict[str, Any], todo: list[dict[str, Any]],
                      hidden: list[int]) -> list[dict[str, Any]] | ReplayStep:
    """The trace's steps the implementation took with ``step`` (it first, then the ones it
    took by itself, which the trace records as the steps that follow); where they are not
    the ones the trace records next, the row that says so."""
    labels = [model.instances[b].label for b in hidden]
    recorded = [x["label"] for x in todo[:len(labels)]]
    if recorded == labels:
        return [step, *todo[:len(labels)]]
    return ReplayStep(step["index"], step["label"], PARTED,
                      f"the implementation does what the model does, and took "
                      f"{', '.join(labels)} by itself with it where the trace goes on with "
                      f"{', '.join(recorded) or 'nothing'}")


def replay(trace: dict[str, Any], *, mutant: str | None = None, seed: int | None = None,
           harness: Callable[..., Harness] | None = None) -> list[ReplayStep]:
    """Run a trace (from explore, prove or fuzz) against the implementation, step by step
    (``harness`` builds it, as for :func:`tour`), at the trace's seed unless ``seed`` is
    given.  A step that records its concrete ``data`` hands the implementation exactly
    that; any other the tour's."""
    model = model_for(trace["model"], mutant, trace["params"])
    chk = Checker(model)
    labels = {i.label: i.index for i in model.instances}
    out: list[ReplayStep] = []
    handing: dict[str, Any] = {}  # the data of the step being replayed

    def result_for(r: int, status: str) -> Any:
        data = handing.get("data") or {}
        return handed_from(data) if "result" in data else tour_result(r, status)

    seed = trace.get("seed", 0) if seed is None else seed
    h = (harness or make_harness)(model, mutant, None, seed, result_for)
    s = h.abstract()
    try:
        _same_shape(model, s, trace)
        todo = list(trace["steps"][1:])
        while todo:
            step = todo.pop(0)
            ai = labels.get(step["label"])
            if ai is None:  # the trace is corrupted, or of another model: bad input
                raise BadValue(f"step {step['index']}: {step['label']!r} is no action of "
                               f"{model.name} at these parameters (a corrupted trace, or one "
                               f"of another version of the model)")
            handing["data"] = step.get("data")
            if chk.steps[ai](s) is None:
                out.append(ReplayStep(step["index"], step["label"],
                                      *chk.off_model(h, ai, s, step["state"])))
                break
            try:
                s = chk.check(h, ai, s)
            except Divergence as e:
                out += _failed_at(model, trace["steps"], step, chk.hidden, e)
                break
            took = _took_as_recorded(model, step, todo, chk.hidden)
            if isinstance(took, ReplayStep):
                out.append(took)
                break
            # the trace's own record of the state (the variables both models have); the
            # implementation's is the correct model's here (check saw to that)
            got = model.show_state(s)
            differ = [k for k, v in took[-1]["state"].items() if k in got and got[k] != v]
            if differ:
                out.append(ReplayStep(step["index"], step["label"], PARTED,
                                      f"the implementation does what the model does; its state "
                                      f"differs from the trace in {', '.join(differ)}"))
                break
            out += [ReplayStep(x["index"], x["label"], FOLLOWED) for x in took]
            del todo[:len(took) - 1]
    finally:
        h.close()
    return out
