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
from osf_check.properties import catalogue
from osf_check.properties.base import Property

from .explicit.bfs import Exploration, Progress, Violation, bfs
from .graph.checks import GraphReport, check_graph
from osf_check.models.errors import BadValue

__all__ = ["ModelResult", "check", "prepare", "EXIT", "verdict_exit"]

#: exit codes (TLC's scheme) by verdict
EXIT = {"ok": 0, "deadlock": 11, "safety": 12, "liveness": 13, "vacuous": 14,
        "bad-input": 150, "incomplete": 152, "adapter": 154}


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

    @property
    def violations(self) -> list[Violation]:
        return self.exploration.violations


def _kind_verdict(kind: str) -> str:
    return {"inv": "safety", "trans": "safety", "deadlock": "deadlock"}.get(kind, "liveness")


def check(model: str, *, params: dict[str, object] | None = None, mutant: str | None = None,
          props: Sequence[str] = (), drop: Sequence[str] = (), depth: int | None = 12, max_states: int | None = None,
          check_deadlock: bool = True, stop_on_violation: bool = True, strict: bool = False,
          extension_budget: int = 4_000_000, progress: Progress | None = None,
          log: Callable[[str], None] | None = None, engine: str = "auto",
          checkpoint: str | None = None, checkpoint_every: float = 300.0,
          resume: str | None = None, workers: int = 1,
          tick: Callable[[int, int], None] | None = None, symmetry: bool = False,
          cluster: str | None = None,
          running: Callable[[str, int, int], None] | None = None) -> ModelResult:
    """Explore ``model`` and check its properties; raises ``LookupError``/``ValueError`` on
    bad names or parameters (the CLI turns those into exit code 150)."""
    t0 = time.perf_counter()
    m, chosen, from_mutant = prepare(model, params=params, mutant=mutant, props=props, drop=drop)
    want_graph = any(c.kind in ("reach", "fair") for p in chosen for c in p.checks)
    if engine not in ("auto", "explicit", "vector"):
        raise BadValue(f"unknown engine {engine!r} (explicit, vector or auto)")
    if engine == "explicit" and (checkpoint or resume):
        raise BadValue("--checkpoint and --resume need the vector engine")
    if engine == "explicit" and cluster is not None:
        raise BadValue("--cluster needs the vector engine")
    reduce, sym = _symmetry(m, chosen, symmetry, log)
    if reduce is not None:
        want_graph = False  # fairness names action instances, which permutations move
    if engine == "explicit":
        ex = bfs(m, chosen, depth=depth, max_states=max_states, keep_graph=want_graph,
                 check_deadlock=check_deadlock, stop_on_violation=stop_on_violation,
                 progress=progress, reduce=reduce)
    else:  # the vector engine gives the same counts and verdicts, faster
        from .vector.search import vector_bfs
        ex = vector_bfs(m, chosen, depth=depth, max_states=max_states, keep_graph=want_graph,
                        check_deadlock=check_deadlock, stop_on_violation=stop_on_violation,
                        progress=progress, checkpoint=checkpoint,
                        checkpoint_every=checkpoint_every, resume=resume, workers=workers,
                        tick=tick, reduce=reduce, cluster=cluster)
    if reduce is not None:
        from .symmetry import expand
        for v in ex.violations:
            v.states, v.actions = expand(m, reduce, chosen, v,
                                         [ex.state(i) for i in v.path if i >= 0])
    status = {p.id: "holds" for p in chosen}
    for v in ex.violations:
        if v.prop in status:
            status[v.prop] = "violated"
    graph = None
    if want_graph and ex.stopped is None:
        if log:
            log(f"{model}: reach and fair checks on {ex.distinct:,} states")
        # the goals in forked processes, but not next to a Ray client (its threads do
        # not survive a fork)
        graph = check_graph(ex, chosen, budget=extension_budget, log=log,
                            workers=workers if cluster is None else 1, running=running)
        for pid, st in graph.checked.items():
            if status.get(pid) != "violated":
                status[pid] = st
    elif reduce is not None:
        for p in chosen:
            if any(c.kind in ("reach", "fair") for c in p.checks):
                status[p.id] = "inconclusive"
    elif want_graph:
        for p in chosen:
            if status[p.id] == "holds" and any(c.kind in ("reach", "fair") for c in p.checks):
                status[p.id] = "not checked"
    warnings = _vacuity(m, chosen, ex)
    if reduce is not None and "inconclusive" in status.values():
        warnings.append("reach and fair checks are not run on a symmetry-reduced graph: "
                        "leave --symmetry out to check them")
    kinds = {_kind_verdict(v.kind) for v in ex.violations}
    if "safety" in kinds:
        verdict = "safety"
    elif "liveness" in kinds:
        verdict = "liveness"
    elif "deadlock" in kinds:
        verdict = "deadlock"
    elif ex.stopped in ("max-states", "state-ids") or "inconclusive" in status.values():
        verdict = "incomplete"
    elif strict and warnings:
        verdict = "vacuous"
    else:
        verdict = "ok"
    return ModelResult(m, chosen, ex, graph, status, warnings, verdict, from_mutant,
                       time.perf_counter() - t0, assumptions_in_force(model, drop), sym,
                       _workers(ex, workers, engine, cluster))


def _workers(ex: Exploration, asked: int, engine: str, cluster: str | None
             ) -> dict[str, object]:
    """How the search was shared: a run that asked for more workers than it used says why."""
    used = int(getattr(ex, "partitions", 1))
    why = None
    if used < max(asked, 2 if cluster is not None else 1):
        why = ("the explicit engine runs in one process" if engine == "explicit" else
               f"the search ran in {used} partition(s)")
    return {"asked": asked, "partitions": used, "why": why, "cluster": cluster,
            "shuffled_bytes": int(getattr(ex, "shuffled", 0)),
            "shuffled_per_level": [int(x) for x in getattr(ex, "shuffled_levels", [])],
            "new_keys_per_level": [int(x) for x in getattr(ex, "new_keys_levels", [])],
            "stolen_chunks": int(getattr(ex, "stolen_chunks", 0))}


def _symmetry(m: Model, props: Sequence[Property], asked: bool,
              log: Callable[[str], None] | None) -> tuple[object, dict[str, object]]:
    """The reduction to search with (None: none) and what to report about it."""
    sym: dict[str, object] = {"declared": [s.name for s in m.symmetries], "used": False,
                              "why": None}
    if not asked:
        return None, sym
    if not m.symmetries:
        sym["why"] = "the model declares no symmetric set"
        return None, sym
    from .symmetry import Reduction, prove_symmetric
    why = prove_symmetric(m, props, m.symmetries)
    if why is not None:
        sym["why"] = why
        if log:
            log(f"{m.name}: no symmetry reduction ({why})")
        return None, sym
    sym["used"] = True
    return Reduction(m, m.symmetries), sym


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
    for name, n in fired.items():
        if n == 0:
            out.append(f"action {name} was never enabled{where}")
    for p in props:
        if p.witness is not None and not ex.witness_seen.get(p.id, True):
            out.append(f"{p.id} {p.name}: its premise never holds ({p.witness_doc})")
        for i, (doc, _) in enumerate(p.reaches):
            if not ex.witness_seen.get(f"{p.id}~{i}", True):
                out.append(f"{p.id} {p.name}: limit never reached ({doc}), so this run "
                           f"leaves it untested{_PRESS}")
        if ex.trans_applied.get(p.id) == 0:
            out.append(f"{p.id} {p.name}: no transition it checks was ever taken")
    return out


def verdict_exit(verdicts: Sequence[str]) -> int:
    """One exit code for several models: the most serious verdict wins."""
    for v in ("safety", "liveness", "deadlock", "incomplete", "vacuous"):
        if v in verdicts:
            return EXIT[v]
    return 0
