"""Fuzz the implementation against the model: a transition tour, then Hypothesis.

1. **Tour**: the explorer's graph to a depth is the coverage map.  A depth-first
   walk over its BFS tree drives the implementation through every state and every
   transition of that graph (snapshots of the implementation let each state's
   transitions be tried in turn), checking at each step that the implementation
   went to exactly the model's successor and that every property holds on it.
2. **Hypothesis**: a rule-based state machine draws, at each step, an action the
   model enables (plus storage crashes and clock jumps) for longer and more varied
   runs than the tour; Hypothesis shrinks a failure to a short one.

A failure comes back as the path of action instances that shows it; the CLI turns
it into a standard trace.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from explorer.explicit import bfs
from explorer.pycompile import compile_pred, compile_steps, compile_trans
from models.dsl import Model
from models.expr import evaluate
from properties import catalogue

from .graph_harness import Divergence, GraphHarness

__all__ = ["FuzzReport", "Checker", "tour", "hypothesis_run", "make_harness"]


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
    failure: str | None = None
    path: list[int] = field(default_factory=list)  # instance indices from the initial state
    hypothesis_steps: int = 0
    hypothesis_examples: int = 0
    visited: set[tuple] = field(default_factory=set)

    @property
    def state_coverage(self) -> float:
        return self.states_covered / self.states_total if self.states_total else 0.0

    @property
    def edge_coverage(self) -> float:
        return self.edges_covered / self.edges_total if self.edges_total else 0.0


class Checker:
    """Checks one implementation step against the model and the properties."""

    def __init__(self, model: Model):
        self.model = model
        self.steps = compile_steps(model)
        props = catalogue.properties_of(model.name)
        self.invs = [(p.id, compile_pred(c.inv(model))) for p in props for c in p.checks
                     if c.kind == "inv"]
        self.trans: list[list[tuple[str, Callable]]] = [[] for _ in model.instances]
        for p in props:
            for c in p.checks:
                if c.kind == "trans":
                    for inst in model.instances:
                        e = c.trans(model, inst)
                        if e is not None:
                            self.trans[inst.index].append((p.id, compile_trans(e)))

    def enabled(self, s: tuple) -> list[int]:
        return [i for i, f in enumerate(self.steps) if f(s) is not None]

    def check(self, h: GraphHarness, ai: int, before: tuple) -> tuple:
        inst = self.model.instances[ai]
        outs = h.apply(inst)
        after = h.abstract()
        # properties first: on the implementation's own state
        for pid, f in self.invs:
            if not f(after):
                raise Divergence(f"property {pid} violated by the implementation after "
                                 f"{inst.label}")
        for pid, f in self.trans[ai]:
            if not f(before, after):
                raise Divergence(f"property {pid} violated by the implementation on "
                                 f"{inst.label}")
        if h.a8:
            raise Divergence(f"property A8 violated by the implementation: {h.a8[0]}")
        expected = self.steps[ai](before)
        if expected != after:
            diff = [n for n, x, y in zip(self.model.slot_names, expected or (), after) if x != y]
            raise Divergence(f"the implementation diverged from the model on {inst.label}: "
                             f"{', '.join(diff) or 'action not enabled in the model'}")
        # the desktop's own decisions: it offers exactly what the model enables
        decided = {i.label for i in self.model.instances
                   if i.name in ("start_graph", "refuse", "tick") and self.steps[i.index](after)
                   is not None}
        offered = h.offers()
        if offered != decided:
            raise Divergence(f"after {inst.label} the desktop would take "
                             f"{sorted(offered - decided) or 'nothing'} where the model enables "
                             f"{sorted(decided - offered) or 'nothing more'}")
        for k, (d, e) in inst.outputs.items():
            want = d.show(evaluate(e, before))
            if outs.get(k) != want:
                raise Divergence(f"{inst.label} answered {outs.get(k)!r}, the model {want!r}")
        return after


def make_harness(model: Model, mutant: str | None, tmpdir: str | None, seed: int = 0,
                 result_for: Callable[[int], Any] | None = None) -> GraphHarness:
    """A harness whose outbox is a file in ``tmpdir`` (None: in memory, for snapshots)."""
    path = os.path.join(tmpdir, "outbox.sqlite") if tmpdir else ":memory:"
    return GraphHarness(model, path, mutant=mutant, seed=seed, result_for=result_for)


def model_for(name: str, mutant: str | None, params: dict | None = None) -> Model:
    """The model the implementation is checked against: always the correct one (a bug of
    the implementation shows as a broken property or as a step the model would not take)."""
    from explorer.check import prepare
    m, _, _ = prepare(name, params=params)
    return m


#: results the tour's Graphs produce: Japanese that fits in 100,000 characters but not in
#: 100,000 bytes, and an ASCII text that does not fit at all
TOUR_RESULTS = ("日本語の結果です。" * 4_000, "x" * 100_050)


def tour_result(r: int) -> str:
    return TOUR_RESULTS[r % len(TOUR_RESULTS)]


def tour(name: str, *, mutant: str | None = None, depth: int = 8, seed: int = 0,
         params: dict | None = None, result_for: Callable[[int], Any] | None = None,
         log: Callable[[str], None] | None = None) -> FuzzReport:
    """Drive the implementation through every state and transition within ``depth``; a
    failure is then looked for again at smaller depths, so that the path it comes back
    with is a shortest one."""
    rep = _tour(name, mutant=mutant, depth=depth, seed=seed, params=params,
                result_for=result_for, log=log)
    if rep.failure:
        for d in range(1, len(rep.path)):
            short = _tour(name, mutant=mutant, depth=d, seed=seed, params=params,
                          result_for=result_for)
            if short.failure:
                rep.failure, rep.path = short.failure, short.path
                break
    return rep


def _tour(name: str, *, mutant: str | None = None, depth: int = 8, seed: int = 0,
          params: dict | None = None, result_for: Callable[[int], Any] | None = None,
          log: Callable[[str], None] | None = None) -> FuzzReport:
    t0 = time.perf_counter()
    model = model_for(name, mutant, params)
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
    rep = FuzzReport(name, mutant, states_total=ex.distinct, edges_total=len(src))
    chk = Checker(model)
    result_for = result_for or tour_result
    covered_states = {0}
    if True:
        h = make_harness(model, mutant, None, seed, result_for)
        if h.abstract() != model.initial_states[0]:
            raise Divergence("the implementation's initial state is not the model's")
        path: list[int] = []
        stack = [(0, iter(out.get(0, [])), None)]
        snaps = {0: h.snapshot()}
        try:
            while stack:
                u, it, _ = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    snaps.pop(u, None)
                    if path:
                        path.pop()
                    if stack:
                        h.restore(snaps[stack[-1][0]])
                    continue
                v, a = nxt
                h.restore(snaps[u])
                before = ex.state(u)
                path.append(a)
                chk.check(h, a, before)
                rep.steps += 1
                rep.edges_covered += 1
                covered_states.add(v)
                if ex.parent[v] == u and ex.via[v] == a and depth_of[v] < depth:
                    snaps[v] = h.snapshot()
                    stack.append((v, iter(out.get(v, [])), a))
                else:
                    path.pop()
        except Divergence as e:
            rep.failure = str(e)
            rep.path = list(path)
        finally:
            h.desktop.outbox.close()
    rep.states_covered = len(covered_states)
    rep.seconds = time.perf_counter() - t0
    if log:
        log(f"tour: {rep.steps:,} steps, {rep.states_covered:,}/{rep.states_total:,} states, "
            f"{rep.edges_covered:,}/{rep.edges_total:,} transitions in {rep.seconds:.1f} s")
    return rep


def hypothesis_run(name: str, *, mutant: str | None = None, examples: int = 50,
                   steps: int = 40, seed: int = 0, profile: str | None = None,
                   params: dict | None = None, rep: FuzzReport | None = None) -> FuzzReport:
    """Random walks chosen by Hypothesis among the actions the model enables."""
    import hypothesis.strategies as st
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

    model = model_for(name, mutant, params)
    chk = Checker(model)
    rep = rep or FuzzReport(name, mutant)
    texts = st.one_of(
        st.text(max_size=40),
        st.sampled_from(["日本語の結果" * 5_000, "日本語" * 40_000, "x" * 99_900, "😀" * 49_990,
                         "𝄞" * 30_000 + "z" * 40_000]))
    record: dict[str, Any] = {"path": []}

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.tmp = tempfile.TemporaryDirectory()
            self.results: dict[int, Any] = {}
            self.h = make_harness(model, mutant, self.tmp.name, seed,
                                  lambda r: self.results.get(r, "done"))
            self.s = self.h.abstract()
            record["path"] = []
            rep.hypothesis_examples += 1

        @rule(data=st.data())
        def step(self, data: Any) -> None:
            en = chk.enabled(self.s)
            if not en:
                return
            ai = data.draw(st.sampled_from(en), label="action")
            inst = model.instances[ai]
            if inst.name == "graph_finish":
                self.results[inst.args["r"]] = data.draw(texts, label="result")
            record["path"].append(ai)
            self.s = chk.check(self.h, ai, self.s)
            rep.visited.add(self.s)
            rep.hypothesis_steps += 1

        @rule()
        def storage_crash(self) -> None:
            # the outbox database is closed and reopened between two steps
            self.h.desktop.reopen()
            if self.h.abstract() != self.s:
                raise Divergence("reopening the outbox database lost or changed a completion")

        @rule(seconds=st.sampled_from([1.0, 3.0, 20.0, 3600.0]))
        def clock_jump(self, seconds: float) -> None:
            self.h.desktop.clock.advance(seconds)

        def teardown(self) -> None:
            self.h.desktop.outbox.close()
            self.tmp.cleanup()

    base = settings.get_profile(profile) if profile else settings()
    s = settings(base, max_examples=examples, stateful_step_count=steps,
                 suppress_health_check=list(HealthCheck), deadline=None)
    t0 = time.perf_counter()
    try:
        run_state_machine_as_test(Machine, settings=s)
    except Divergence as e:
        rep.failure = str(e)
        rep.path = list(record["path"])
    rep.seconds += time.perf_counter() - t0
    return rep



def path_trace(model: Model, path: list[int], *, message: str, mutant: str | None, seed: int,
               prop: str = "conformance") -> dict[str, Any]:
    """A fuzz failure as a standard trace: the model's states along the failing path."""
    from traces.format import make_trace
    steps = compile_steps(model)
    states = [model.initial_states[0]]
    acts: list[int | None] = [None]
    for ai in path:
        nxt = steps[ai](states[-1])
        if nxt is None:  # the implementation did something the model does not: stop there
            break
        states.append(nxt)
        acts.append(ai)
    pid = message.split("property ")[1].split()[0] if "property " in message else prop
    tr = make_trace(model, states, acts, prop={"id": pid, "name": pid, "kind": "fuzz"},
                    message=message, seed=seed, source="fuzz")
    tr["mutant"] = mutant
    return tr


@dataclass
class ReplayStep:
    index: int
    label: str
    ok: bool
    note: str = ""


def replay(trace: dict[str, Any], *, mutant: str | None = None, seed: int = 0) -> list[ReplayStep]:
    """Run a trace (from explore, prove or fuzz) against the implementation, step by step."""
    model = model_for(trace["model"], mutant, trace["params"])
    if trace["model"] != "graph-relay":
        raise ValueError(f"no implementation of {trace['model']} to replay against yet")
    chk = Checker(model)
    labels = {i.label: i.index for i in model.instances}
    out: list[ReplayStep] = []
    h = make_harness(model, mutant, None, seed, tour_result)
    s = h.abstract()
    try:
        for step in trace["steps"][1:]:
            ai = labels.get(step["label"])
            if ai is None:
                out.append(ReplayStep(step["index"], step["label"], False,
                                      "no such action in the model at these parameters"))
                break
            if chk.steps[ai](s) is None:
                out.append(ReplayStep(step["index"], step["label"], False,
                                      "the model does not enable this step here"))
                break
            try:
                s = chk.check(h, ai, s)
            except Divergence as e:
                out.append(ReplayStep(step["index"], step["label"], False, str(e)))
                break
            # the trace's own record of the state (the variables both models have)
            got = model.show_state(s)
            differ = [k for k, v in step["state"].items() if k in got and got[k] != v]
            if differ:
                out.append(ReplayStep(step["index"], step["label"], False,
                                      f"the implementation's state differs from the trace in "
                                      f"{', '.join(differ)}"))
                break
            out.append(ReplayStep(step["index"], step["label"], True))
    finally:
        h.desktop.outbox.close()
    return out
