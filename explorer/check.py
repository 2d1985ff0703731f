"""One check of one model: BFS, graph checks, verdict, vacuity warnings.

This is the library entry point the CLI calls; it returns a :class:`ModelResult`
and prints nothing (progress goes to the callback it is given).

>>> r = check("two-phase", params={"rms": 3}, depth=None)
>>> r.exploration.distinct, r.exploration.generated, r.verdict
(288, 1146, 'ok')
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from osf_check.models.dsl import Model
from osf_check.exits import EXIT  # the exit codes by verdict (re-exported)
from osf_check.models.errors import BadValue
from osf_check.properties import catalogue, kinds
from osf_check.properties.base import Property

from . import engines
from .graph.checks import JUDGES as GRAPH_JUDGES
from .graph.checks import GraphReport, check_graph
from .result import Exploration, Progress, Violation

__all__ = ["ModelResult", "check", "prepare", "EXIT", "verdict_exit", "por_allowed"]



@dataclass
class ModelResult:
    model: Model
    properties: list[Property]
    exploration: Exploration
    graph: GraphReport | None
    status: dict[str, str]  # property id -> holds / violated / inconclusive / not checked
    warnings: list[str]
    verdict: str
    params_from_mutant: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    assumptions: dict[str, bool] = field(default_factory=dict)  # name -> in force
    #: symmetric sets the model declares, whether the search was reduced by them, and
    #: if not (though asked), why
    symmetry: dict[str, object] = field(default_factory=dict)
    #: workers asked for, partitions the search ran in, why fewer, bytes moved between them
    workers: dict[str, object] = field(default_factory=dict)
    #: a partial-order reduced search's counts (states expanded by a stubborn set, in
    #: full, in full by the cycle proviso); empty when not asked for
    por: dict[str, int] = field(default_factory=dict)

    @property
    def violations(self) -> list[Violation]:
        return self.exploration.violations


def check(model: str, *, params: dict[str, object] | None = None, mutant: str | None = None,
          props: Sequence[str] = (), drop: Sequence[str] = (), depth: int | None = 12, max_states: int | None = None,
          check_deadlock: bool = True, stop_on_violation: bool = True, strict: bool = False,
          extension_budget: int = 4_000_000, progress: Progress | None = None,
          log: Callable[[str], None] | None = None, engine: str = "auto",
          checkpoint: str | None = None, checkpoint_every: float = 300.0,
          resume: str | None = None, workers: int = 1,
          tick: Callable[[int, int], None] | None = None, symmetry: bool = False,
          cluster: str | None = None,
          running: Callable[[str, int, int], None] | None = None,
          por: bool = False, memory: int | None = None,
          spill_dir: str | None = None) -> ModelResult:
    """Explore ``model`` and check its properties; raises ``LookupError``/``ValueError`` on
    bad names or parameters (the CLI turns those into exit code 150)."""
    t0 = time.perf_counter()
    m, chosen, from_mutant = prepare(model, params=params, mutant=mutant, props=props, drop=drop)
    eng = engines.get(engine if not (por and engine == "auto") else _por_engine())
    _offered(eng, checkpoint=checkpoint or resume, cluster=cluster, por=por,
             memory=memory is not None)
    if por:
        por_allowed(chosen, symmetry)
    want_graph = any(kinds.on_graph(c.kind) for p in chosen for c in p.checks)
    reduce, sym, unjudged = _symmetry(m, chosen, symmetry, log)
    if reduce is not None:  # only what the reduced graph answers exactly is checked on it
        want_graph = want_graph and any(_on_graph(p) and p.id not in unjudged for p in chosen)
    ex = eng.search(m, chosen, engines.Search(
        depth=depth, max_states=max_states, keep_graph=want_graph,
        check_deadlock=check_deadlock, stop_on_violation=stop_on_violation, progress=progress,
        reduce=reduce, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
        resume=resume, workers=workers, tick=tick, cluster=cluster, por=por, memory=memory,
        spill_dir=spill_dir))
    if por:
        _replay_all(m, chosen, ex)
    if reduce is not None:
        from .symmetry import expand
        for v in ex.violations:
            v.states, v.actions = expand(m, reduce, chosen, v,
                                         [ex.state(i) for i in v.path if i >= 0])
        if want_graph and ex.stopped is None and not ex.complete:
            # a bounded run's reach checks search past the bound in the model itself,
            # whose states the reduced graph knows only by their representatives
            unjudged.update({p.id: "the search of classes was bounded (give --depth "
                             "unbounded)" for p in chosen if _on_graph(p)})
            want_graph = False
    status = {p.id: "holds" for p in chosen}
    for v in ex.violations:
        if v.prop in status:
            status[v.prop] = "violated"
    graph = None
    if want_graph and ex.stopped is None:
        if log:
            log(f"{model}: reach and fair checks on {ex.distinct:,} "
                + ("classes" if reduce is not None else "states"))
        before = len(ex.violations)
        # the goals in forked processes, but not next to a Ray client (its threads do
        # not survive a fork)
        graph = check_graph(ex, [p for p in chosen if p.id not in unjudged],
                            budget=extension_budget, log=log,
                            workers=workers if cluster is None else 1, running=running,
                            reduced=reduce is not None)
        unjudged.update(graph.why)
        if reduce is not None:
            _expand_graph(m, reduce, chosen, ex, ex.violations[before:])
        for pid, st in graph.checked.items():
            if status.get(pid) != "violated":
                status[pid] = st
    else:
        _graph_not_run(chosen, status, wanted=want_graph)
    warnings = _vacuity(m, chosen, ex)
    for pid, why in unjudged.items():
        if status.get(pid) != "violated":
            status[pid] = "inconclusive"
            warnings.append(f"{pid}: its reach and fair checks are not judged on the "
                            f"symmetry-reduced graph ({why}): leave out --symmetry to "
                            "check them")
    warnings += _unjudged(eng, chosen, status)
    return ModelResult(m, chosen, ex, graph, status, warnings,
                       _verdict(ex, status, warnings, strict), from_mutant,
                       time.perf_counter() - t0, assumptions_in_force(model, drop), sym,
                       _workers(ex, workers, eng, cluster),
                       ex.por.as_dict() if ex.por is not None else {})


def _graph_not_run(props: Sequence[Property], status: dict[str, str], *, wanted: bool
                   ) -> None:
    """The status of the graph kinds' properties when their checks did not run after a
    search that stopped early: not checked."""
    for p in props:
        if wanted and _on_graph(p) and status[p.id] == "holds":
            status[p.id] = "not checked"


def _on_graph(p: Property) -> bool:
    return any(kinds.on_graph(c.kind) for c in p.checks)


def _expand_graph(m: Model, red: object, props: Sequence[Property], ex: Exploration,
                  found: Sequence[Violation]) -> None:
    """The reach and fair counterexamples of a symmetry-reduced graph as the model's own
    traces: a path step by step, a fair cycle lap after lap until its real state comes
    back, checked fair on the model's states before it is reported (a lasso that is not
    is the reduction's fault: an internal error, never a verdict)."""
    from .symmetry import Reduction, expand, expand_lasso, lasso_fairness
    assert isinstance(red, Reduction)
    for v in found:
        reduced = [ex.state(i) for i in v.path]
        if v.loop_start is None or v.stutters:
            v.states, v.actions = expand(m, red, props, v, reduced)
            if v.kind == "reach" and v.stutters:
                _end_state(m, v)
            continue
        states, acts, loop_at = expand_lasso(m, red, v, reduced)
        ok, why = lasso_fairness(m, states, acts, loop_at)
        if not ok:
            raise RuntimeError(f"symmetry: the {v.prop} lasso lifted from the reduced graph "
                               f"is not fair on the model ({why})")
        laps = (len(states) - 1 - loop_at) // max(1, len(v.path) - 1 - v.loop_start)
        v.path = v.path[:v.loop_start + 1] + v.path[v.loop_start + 1:] * laps
        v.states, v.actions, v.loop_start = states, acts, loop_at


def _end_state(m: Model, v: Violation) -> None:
    """A reach counterexample said to end in an end state (nothing moves it on the
    reduced graph) whose real last state some step moves: the reduced graph's self-loop
    there was a step to another member of the class, so the trace ends without one."""
    from .compiled.pycompile import compile_steps
    assert v.states is not None
    last = v.states[-1]
    if any((t := f(last)) is not None and t != last for f in compile_steps(m)):
        v.loop_start, v.stutters = None, False
        v.message = v.message.replace(", then stutters forever (an end state)", "")


def _offered(eng: engines.Engine, **asked: object) -> None:
    """Refuse an option the engine does not offer, naming the engines that do."""
    flags = {"checkpoint": "--checkpoint and --resume need", "cluster": "--cluster needs",
             "por": "--por needs", "memory": "--memory needs"}
    for feature, value in asked.items():
        if value and feature not in eng.features:
            raise BadValue(f"{flags[feature]} {engines.needing(feature)}")


def _por_engine() -> str:
    """What ``auto`` runs with ``--por``: the first engine that offers it."""
    return next((e.name for e in engines.ENGINES.values() if "por" in e.features), "auto")


def por_allowed(props: Sequence[Property], symmetry: bool) -> None:
    """Refuse a reduced run of what the reduction does not preserve: reach and fair
    checks read the whole graph, and a symmetry reduction on top is not proved sound."""
    if symmetry:
        raise BadValue("--por and --symmetry do not combine: choose one")
    graph = [f"{p.id} ({p.kinds})" for p in props
             if any(kinds.on_graph(c.kind) for c in p.checks)]
    if graph:
        safe = [p.id for p in props if not any(kinds.on_graph(c.kind) for c in p.checks)]
        raise BadValue(f"--por checks safety properties only, and {', '.join(graph)} "
                       "read the whole graph: leave out --por, or choose others with "
                       f"--property ({', '.join(safe) or 'none is left'})")


def _replay_all(m: Model, props: Sequence[Property], ex: Exploration) -> None:
    """Every counterexample of a reduced search, replayed on the model before it is
    reported: one that does not replay is the reduction's fault, never the model's."""
    from osf_check.properties.base import CheckList
    from .por import replay
    checks = CheckList.of(m, props)
    for v in ex.violations:
        why = replay(m, checks, ex.trace_states(v), v.actions, v.prop, v.kind)
        if why is not None:
            raise RuntimeError(f"partial-order reduction: the {v.prop} counterexample does "
                               f"not replay on the model ({why})")


def _unjudged(eng: engines.Engine, props: Sequence[Property], status: dict[str, str]
              ) -> list[str]:
    """A property with checks of a kind no phase of this run judges is inconclusive, not
    "holds": say so (its status changes in place)."""
    out = []
    for p in props:
        left = [c.kind for c in p.checks
                if c.kind not in eng.judges and c.kind not in GRAPH_JUDGES]
        if left and status[p.id] != "violated":
            status[p.id] = "inconclusive"
            out.append(f"{p.id} {p.name}: its {' and '.join(dict.fromkeys(left))} checks "
                       f"are judged by no phase of the {eng.name} engine's run")
    return out


def _verdict(ex: Exploration, status: dict[str, str], warnings: list[str], strict: bool
             ) -> str:
    """The run's verdict: the most serious violation, else why there is none."""
    found = {kinds.verdict_of(v.kind) for v in ex.violations}
    for verdict in ("safety", "liveness", "deadlock"):
        if verdict in found:
            return verdict
    if ex.stopped in ("max-states", "state-ids") or "inconclusive" in status.values():
        return "incomplete"
    return "vacuous" if strict and warnings else "ok"


def _workers(ex: Exploration, asked: int, eng: engines.Engine, cluster: str | None
             ) -> dict[str, object]:
    """How the search was shared: a run that asked for more workers than it used says why."""
    used = int(getattr(ex, "partitions", 1))
    why = None
    if used < max(asked, 2 if cluster is not None else 1):
        why = (f"the {eng.name} engine runs in one process" if "workers" not in eng.features
               else f"the search ran in {used} partition(s)")
    return {"asked": asked, "partitions": used, "why": why, "cluster": cluster,
            "shuffled_bytes": int(getattr(ex, "shuffled", 0)),
            "shuffled_per_level": [int(x) for x in getattr(ex, "shuffled_levels", [])],
            "new_keys_per_level": [int(x) for x in getattr(ex, "new_keys_levels", [])],
            "stolen_chunks": int(getattr(ex, "stolen_chunks", 0))}


def _symmetry(m: Model, props: Sequence[Property], asked: bool,
              log: Callable[[str], None] | None
              ) -> tuple[object, dict[str, object], dict[str, str]]:
    """The reduction to search with (None: none), what to report about it, and the
    properties whose reach and fair checks it cannot judge, each with why."""
    sym: dict[str, object] = {"declared": [s.name for s in m.symmetries], "used": False,
                              "why": None}
    if not asked:
        return None, sym, {}
    if not m.symmetries:
        sym["why"] = "the model declares no symmetric set"
        return None, sym, {}
    from .symmetry import Reduction, prove
    proof = prove(m, props, m.symmetries)
    if proof.why is not None:
        sym["why"] = proof.why
        if log:
            log(f"{m.name}: no symmetry reduction ({proof.why})")
        return None, sym, {}
    sym["used"] = True
    return Reduction(m, m.symmetries), sym, {pid: why for pid, why in proof.graph.items()
                                             if why is not None}


def prepare(model: str, *, params: dict[str, object] | None = None, mutant: str | None = None,
            props: Sequence[str] = (), drop: Sequence[str] = ()
            ) -> tuple[Model, list[Property], dict[str, int]]:
    """Resolve names and parameters and build the model; ``LookupError``/``ValueError``
    name the first bad one.  Returns the model, the properties to check, and the
    parameters the mutant supplied."""
    spec = catalogue.spec(model)
    chosen = catalogue.select_properties(model, list(props))
    from_mutant: dict[str, int] = {}
    merged = dict(params or {})
    if mutant is not None:
        mu = catalogue.mutant(model, mutant)
        from_mutant = {k: v for k, v in mu.params.items() if k not in merged}
        merged = {**from_mutant, **merged}
    for a in drop:
        catalogue.assumption(model, a)
    return spec.build(merged, mutant, drop), chosen, from_mutant


def assumptions_in_force(model: str, drop: Sequence[str]) -> dict[str, bool]:
    return {a.name: a.name not in drop for a in catalogue.ASSUMPTIONS if a.model == model}


#: what to do about a limit never reached (a warning that says only what is wrong
#: leaves the user to guess whether the run can be trusted)
_PRESS = ": press it with a larger --depth or larger parameters (osf-check list)"


def _press(p: Property, doc: str) -> str:
    """What to run to reach a limit: the property's own options for it, if it names any
    (a larger depth alone would not reach it), else the general advice."""
    how = dict(p.press).get(doc)
    return f": press it with {how}" if how else _PRESS


def _vacuity(m: Model, props: Sequence[Property], ex: Exploration) -> list[str]:
    out = []
    if ex.stopped == "violation":
        return out  # an early stop is not evidence of vacuity
    fired: dict[str, int] = {}
    for inst, n in zip(m.instances, ex.fired):
        fired[inst.name] = fired.get(inst.name, 0) + n
    # a bounded run did not expand the states at its bound: "never" is of the others
    where = "" if ex.complete else f" in the {ex.expanded:,} states expanded (not those " \
        "at the bound)"
    if ex.por is not None:
        where += " of the partial-order reduced search (it skips states: --por left out " \
            "may find it enabled)"
    for name, n in fired.items():
        if n == 0:
            out.append(f"action {name} was never enabled{where}")
    for p in props:
        if p.witness is not None and not ex.witness_seen.get(p.id, True):
            out.append(f"{p.id} {p.name}: its premise never holds ({p.witness_doc})")
        for i, (doc, _) in enumerate(p.reaches):
            if not ex.witness_seen.get(f"{p.id}~{i}", True):
                out.append(f"{p.id} {p.name}: limit never reached ({doc}), so this run "
                           f"leaves it untested{_press(p, doc)}")
        if ex.trans_applied.get(p.id) == 0:
            out.append(f"{p.id} {p.name}: no transition it checks was ever taken")
    return out


def verdict_exit(verdicts: Sequence[str]) -> int:
    """One exit code for several models: the most serious verdict wins."""
    for v in ("safety", "liveness", "deadlock", "incomplete", "vacuous"):
        if v in verdicts:
            return EXIT[v]
    return 0
