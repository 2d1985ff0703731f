"""The fuzzer's goals: the states where a property has something to check.

Each property names a premise that some run must meet (its witness: "a success reached
a phone") and the scaled-down limits it speaks of, pressed ("a key holds its cap of
joined copies while one more copy is about to claim").  The tour covers every state to
a fixed depth and the walks go where chance takes them: a goal beyond both is never
given to the implementation, and a bug that shows only there passes.  So each goal is
looked for in the model breadth-first (a shortest path to it), the implementation is
driven there, and it is given every step the model enables from it, each judged as the
tour judges a step.

A goal the run's parameters cannot reach within :data:`SEARCH_STATES` states is looked
for again at its own wider parameters (:data:`WIDER`): at the wire defaults (one retry,
so two copies of a key) no third copy ever comes to be refused by the cap of one joined
copy, and a relay without that check passed every other phase.  Besides the properties'
own, :data:`EXTRA` names goals for the implementation alone: each pending limit met
while the other three are not (at the defaults all four are 1, so a relay that holds one
scope to another's limit passed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from osf_check.explorer.explicit.bfs import bfs
from osf_check.models.dsl import Model
from osf_check.models.expr import Not
from osf_check.properties import catalogue, wire_relay
from osf_check.properties.base import Check, Property

from . import hidden
from .driver import (Checker, Divergence, Harness, make_harness, model_for, offered, shrink_path,
                     tour_result)

#: goals beyond the properties' own, per system: (property, label, condition, parameters
#: over the defaults where it is reached)
EXTRA: dict[str, tuple[tuple[str, str, Callable[..., Any], dict[str, int]], ...]] = {
    "wire-relay": tuple(("B8", label, cond, at) for label, cond, at in wire_relay.B8_ALONE),
}
#: per system and goal, parameters (over the run's) at which the model reaches what the
#: defaults cannot; tests check that each goal the defaults miss is reached there
WIDER: dict[str, dict[str, dict[str, int]]] = {
    "graph-relay": {},
    "wire-relay": {
        # a third copy of a key
        "waiters per key (waiters)": {"retries": 2, "light_slots": 3},
        # two scope keys: the default workload's two operations share one, which the cap
        # of one row admits
        "durable rows (row_cap)": {"workload": 2},
        **{label: at for _, label, _, at in EXTRA["wire-relay"]},
    },
}
#: the states a search for goals may store at one set of parameters (the wire defaults
#: hold 495,514 states within depth 12, about 3.5 s)
SEARCH_STATES = 500_000


@dataclass(frozen=True)
class Goal:
    """A state some property needs the implementation to be tried in."""

    prop: str
    label: str
    cond: Callable[..., Any]


@dataclass
class Reached:
    """Where a goal was found and what was tried there."""

    goal: Goal
    #: the parameters beyond the run's at which it was found ({} at the run's own)
    wider: dict[str, int] = field(default_factory=dict)
    path: list[int] | None = None
    #: steps the model enables in the goal state, each given to the implementation
    tried: int = 0
    #: when not found: why ("unreachable" on a complete search, else the bound)
    why: str = ""

    @property
    def depth(self) -> int | None:
        return None if self.path is None else len(self.path)

    def json(self) -> dict[str, Any]:
        return {"property": self.goal.prop, "goal": self.goal.label, "depth": self.depth,
                "parameters": self.wider, "steps_tried": self.tried,
                "not_reached": self.why or None}


def of(system: str) -> list[Goal]:
    """The goals of a system's properties: each premise, then each limit pressed.

    >>> [g.label for g in of("wire-relay") if g.prop == "B8"][6:8]
    ['waiters per key (waiters)', 'light slots (light_slots)']
    """
    out = []
    for p in catalogue.properties_of(system):
        if p.witness is not None:
            out.append(Goal(p.id, p.witness_doc, p.witness))
        out += [Goal(p.id, doc, f) for doc, f in p.reaches]
    return out + [Goal(prop, label, cond) for prop, label, cond, _ in EXTRA.get(system, ())]


def shortest(model: Model, goals: Sequence[Goal], max_states: int = SEARCH_STATES
             ) -> tuple[dict[int, list[int]], str]:
    """A shortest path (action instances from the initial state) to each goal the model
    reaches within ``max_states`` states, by index; and what a goal not found means:
    unreachable (the search was complete) or beyond the bound.

    A goal is searched for as an invariant that says it never holds: the breadth-first
    search's counterexample to it is a shortest path to it.  A search stops at the end
    of the level where it met its first goal, so one is run per depth that holds goals."""
    found: dict[int, list[int]] = {}
    left = list(range(len(goals)))
    why = ""
    while left:
        props = [Property(f"g{i}", goals[i].label, model.name, "", (Check(
            "inv", (lambda c: lambda s, m: Not(c(s, m)))(goals[i].cond)),), ()) for i in left]
        ex = bfs(model, props, depth=None, max_states=max_states, check_deadlock=False)
        for v in ex.violations:
            found[int(v.prop[1:])] = [a for a in v.actions[1:]]
        left = [i for i in left if i not in found]
        if not ex.violations:
            why = "unreachable (every state searched)" if ex.complete else \
                f"not within the first {ex.distinct:,} states (depth {ex.depth_reached})"
            break
    return found, why


def reach(name: str, *, mutant: str | None = None, seed: int = 0,
          params: dict[str, Any] | None = None,
          harness: Callable[..., Harness] | None = None,
          max_states: int = SEARCH_STATES,
          wider: dict[str, dict[str, int]] | None = None,
          tick: Callable[[int, int], None] | None = None
          ) -> tuple[list[Reached], tuple[str, list[int], dict[str, Any]] | None]:
    """Drive the implementation to each goal of ``name`` and through every step the model
    enables there.  Returns what was reached, and the first failure as (what the
    implementation did wrong, the path of action instances, the parameters that path is
    at), or None.  ``wider`` (default :data:`WIDER`'s) gives, by goal label, where to look
    for a goal the run's parameters do not reach."""
    goals = of(name)
    base = dict(params or {})
    out = [Reached(g) for g in goals]
    wide = WIDER.get(name, {}) if wider is None else wider
    sets: list[dict[str, int]] = [{}]
    for g in goals:
        if g.label in wide and wide[g.label] not in sets:
            sets.append(dict(wide[g.label]))
    done = 0
    for extra in sets:
        # at the run's parameters every goal; then each goal at its own wider ones only
        left = [i for i, r in enumerate(out) if r.path is None and
                (not extra or wide.get(goals[i].label) == extra)]
        if not left:
            continue
        at = {**base, **extra}
        model = offered(model_for(name, mutant, at), harness, seed)
        found, why = shortest(model, [goals[i] for i in left], max_states)
        chk = Checker(model)
        for j, i in enumerate(left):
            if j not in found:
                if not out[i].why:  # the run's own parameters say first why it is missing
                    out[i].why = why
                continue
            out[i].path, out[i].wider, out[i].why = found[j], extra, ""
            failure, tried = _drive(model, chk, mutant, found[j], seed, harness)
            out[i].tried = tried
            done += 1
            if tick is not None:
                tick(done, len(goals))
            if failure is not None:
                why_, path = failure
                short = shrink_path(model, mutant, path, seed=seed, harness=harness)
                if short is not None:
                    path, why_ = short
                where = f", at {' '.join(f'--param {k}={v}' for k, v in extra.items())}" \
                    if extra else ""
                for r in out:  # a count of goals reached is then partial: say so
                    if r.path is None:
                        r.why = (f"{r.why}; " if r.why else "") + "the run stopped at its " \
                            "first failure before looking further"
                return out, (f"{why_} (driven to the goal {goals[i].prop} "
                             f"{goals[i].label}{where})", path, at)
    return out, None


def _drive(model: Model, chk: Checker, mutant: str | None, path: list[int], seed: int,
           harness: Callable[..., Harness] | None
           ) -> tuple[tuple[str, list[int]] | None, int]:
    """Walk ``path`` on a fresh implementation, then try each step the model enables at
    its end from a snapshot: the failure (message, path) if one, and the steps tried."""
    h = (harness or make_harness)(model, mutant, None, seed, tour_result)
    done: list[int] = []
    tried = 0
    try:
        s = h.abstract()
        if s != model.initial_states[0]:
            raise Divergence("the implementation's initial state is not the model's")
        todo = list(path)
        while todo and chk.steps[todo[0]](s) is not None:
            ai = todo.pop(0)
            done.append(ai)
            s = chk.check(h, ai, s)
            done += chk.hidden  # steps the implementation took by itself, as the path may
            todo = hidden.unasked(todo, chk.hidden)
        snap = h.snapshot()
        for ai in chk.enabled(s):
            h.restore(snap)
            done.append(ai)
            chk.check(h, ai, s)
            done.pop()
            tried += 1
        h.forget(snap)
    except Divergence as e:
        return (str(e), done), tried
    finally:
        h.close()
    return None, tried


def summary(reached: Sequence[dict[str, Any]], seconds: float | None = None) -> str:
    """One line for the console, from :meth:`Reached.json`'s records: how many goals were
    driven to, those found only at wider parameters, and those not reached.

    >>> g = Goal("B8", "waiters per key (waiters)", None)
    >>> print(summary([Reached(g, {"retries": 2}, [0] * 10, 7).json(),
    ...                Reached(g, why="unreachable").json()], 1.25))
    goals: 1 of 2 reached in 1.2 s, each tried with every step the model enables there (waiters per key (waiters) at retries=2, depth 10); not reached: B8 waiters per key (waiters): unreachable
    """
    hit = [r for r in reached if r["depth"] is not None]
    wide = [f"{r['goal']} at {' '.join(f'{k}={v}' for k, v in r['parameters'].items())}, "
            f"depth {r['depth']}" for r in hit if r["parameters"]]
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    line = f"goals: {len(hit)} of {len(reached)} reached{took}, each tried with every step " \
           "the model enables there"
    if wide:
        line += f" ({'; '.join(wide)})"
    missed = [f"{r['property']} {r['goal']}: {r['not_reached']}" for r in reached
              if r["depth"] is None]
    if missed:
        line += f"; not reached: {'; '.join(missed)}"
    return line
