"""Partial-order reduction for the explicit engine: strong stubborn sets, computed from
the slots each action instance reads and writes.

At each state the search fires a *stubborn set* of the enabled instances instead of all
of them, chosen so that every state a check can tell apart from another stays reachable:

- C0: the set holds an enabled instance whenever one is enabled;
- C1: it is closed under a static relation: an enabled member brings every instance
  dependent on it (one writes a slot the other reads or writes), a disabled member the
  instances that write a slot read by a conjunct of its guard false in this state (one
  of them must fire before it can);
- C2: a set that is not every enabled instance holds no *visible* instance: one that
  writes a slot a checked invariant, witness or transition check reads, or that a
  transition check is about;
- C3: if a successor through the set was visited already, the state is expanded in full
  (each cycle of the reduced graph then has a fully expanded state: no check is put off
  for ever).

C0 and C1 keep every deadlock; with C2 and C3, every invariant, transition check and
witness answers as on the whole graph.  Reach and fair checks read the whole graph and
are not offered.  A counterexample of the reduced search is a path of the model, though
not always a shortest one; :func:`replay` checks each against the model before it is
reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from osf_check.models.dsl import Model
from osf_check.models.expr import (BOOL_OPS, And, Const, Expr, If, Implies, Not, Or, Slot,
                                   evaluate)
from osf_check.properties.base import CheckList

from .compiled.pycompile import _exec, compile_pack, compile_steps, py_source

__all__ = ["Footprint", "PartialOrder", "PorStats", "slots_of", "replay"]


def slots_of(e: Expr, which: int | None = 0) -> set[int]:
    """The slots ``e`` reads (``which``: 0 the current state, 1 the next, None both)."""
    out: set[int] = set()
    seen: set[int] = set()
    todo = [e]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if x.op == "slot" and (which is None or x.value[1] == which):
            out.add(x.value[0])
        todo.extend(x.args)
    return out


@dataclass(frozen=True)
class Footprint:
    """What one action instance reads (guard and updates) and writes (its updates that
    are not ``x := x``); an array written at a computed index writes every element."""

    reads: frozenset[int]
    writes: frozenset[int]

    def independent(self, other: "Footprint") -> bool:
        """Neither writes what the other reads or writes: fired in either order from a
        state where both are enabled, they reach one state and neither disables the
        other."""
        return not (self.writes & (other.reads | other.writes) or other.writes & self.reads)


def _conjuncts(guard: Expr) -> list[Expr]:
    return list(guard.args) if guard.op == "and" else [guard]


def _truth(e: Expr) -> str:
    src = py_source(e)
    return src if e.op in BOOL_OPS else f"({src} != 0)"


@dataclass
class PorStats:
    """How each expanded state was expanded."""

    reduced: int = 0  # a stubborn set smaller than the enabled instances
    full: int = 0  # every enabled instance: no smaller set qualified
    proviso: int = 0  # of ``full``: each smaller set had a successor visited already (C3)

    def as_dict(self) -> dict[str, int]:
        return {"reduced": self.reduced, "full": self.full, "proviso": self.proviso}


@dataclass
class PartialOrder:
    """The static part of the reduction for one model and one run's checks: footprints,
    the dependency relation, the writers of each guard conjunct, the visible instances.
    Sets of instances are bit masks (bit ``i``: instance ``i``)."""

    model: Model
    checks: CheckList
    footprints: list[Footprint] = field(init=False)
    dependent: list[int] = field(init=False)
    #: per instance, per conjunct of its guard: the instances writing a slot it reads
    enablers: list[list[int]] = field(init=False)
    visible: int = field(init=False)
    #: instances that write nothing: each step is a loop on its state, which the search
    #: checks but never takes
    stutter: int = field(init=False)

    def __post_init__(self) -> None:
        insts = self.model.instances
        self.footprints = [_footprint(i.guard, i.updates) for i in insts]
        writers: dict[int, int] = {}
        for k, fp in enumerate(self.footprints):
            for slot in fp.writes:
                writers[slot] = writers.get(slot, 0) | 1 << k

        def written(slots: set[int] | frozenset[int]) -> int:
            mask = 0
            for slot in slots:
                mask |= writers.get(slot, 0)
            return mask

        self.dependent = [sum(1 << j for j, b in enumerate(self.footprints)
                              if j != k and not a.independent(b))
                          for k, a in enumerate(self.footprints)]
        self.enablers = [[written(slots_of(c)) for c in _conjuncts(i.guard)] for i in insts]
        self.stutter = sum(1 << k for k, fp in enumerate(self.footprints) if not fp.writes)
        self.dependent = [d & ~self.stutter for d in self.dependent]
        self.visible = written(self._observed())
        for k, row in enumerate(self.checks.trans):
            fp = self.footprints[k]
            for _, e in row:
                read = slots_of(on_step(e, fp.writes), None)
                if not fp.writes and read:
                    # checked where it is enabled, never fired: a state predicate
                    self.visible |= written(read | fp.reads)
                elif read - fp.reads - fp.writes:
                    # the check reads what steps of others change: keep their order
                    self.visible |= 1 << k | written(read - fp.reads - fp.writes)

    def _observed(self) -> set[int]:
        """The slots the invariants and witnesses read."""
        out: set[int] = set()
        for _, e in self.checks.invs + self.checks.witnesses:
            out |= slots_of(e)
        return out

    def gates_source(self) -> str:
        """``gates(s)``: per instance, -1 if enabled, else its first false conjunct."""
        parts = []
        for inst in self.model.instances:
            conds = _conjuncts(inst.guard)
            chain = "-1"
            for k in range(len(conds) - 1, -1, -1):
                chain = f"({chain} if {_truth(conds[k])} else {k})"
            parts.append(chain)
        return "def gates(s):\n    return (" + ", ".join(parts) + ",)\n"

    def stubborn(self, gates: Sequence[int]) -> list[int]:
        """The enabled parts of the stubborn sets that qualify (C0-C2), one grown from
        each enabled instance, smallest first; empty when none is smaller than every
        enabled instance."""
        en = 0
        for k, g in enumerate(gates):
            if g < 0:
                en |= 1 << k
        en &= ~self.stutter
        found = {self._closure(seed, gates, en, en) for seed in _bits(en & ~self.visible)}
        found -= {None, en}
        return sorted(found, key=lambda m: (m.bit_count(), m))  # type: ignore[arg-type]

    def _closure(self, seed: int, gates: Sequence[int], en: int, bound: int) -> int | None:
        """The enabled members of the stubborn set grown from ``seed``; None as soon as
        it takes a visible enabled instance or as many as ``bound`` holds."""
        members = 1 << seed
        todo = [seed]
        limit = bound.bit_count()
        while todo:
            t = todo.pop()
            g = gates[t]
            more = (self.dependent[t] if g < 0 else self.enablers[t][g]) & ~members
            if not more:
                continue
            members |= more
            taken = members & en
            if taken & self.visible or taken.bit_count() >= limit:
                return None
            todo.extend(_bits(more))
        return members & en


def on_step(e: Expr, writes: frozenset[int]) -> Expr:
    """``e`` (a transition check) on the steps of an instance that writes ``writes``
    only: a next-state slot it does not write reads as the current one, and a
    comparison of a value with itself is decided.  Equal to ``e`` on every such step;
    what it still reads is what the check depends on.

    >>> from osf_check.models.expr import Implies, Slot
    >>> on_step(Implies(Slot(0) == 2, Slot(0, 1) == Slot(0)), frozenset({1})).op
    'true'
    >>> on_step(Slot(1, 1) == Slot(1), frozenset({1}))
    eq(s′[1], s[1])
    """
    memo: dict[int, Expr] = {}
    keys: dict[int, tuple] = {}

    def key(x: Expr) -> tuple:
        k = keys.get(id(x))
        if k is None:
            k = keys[id(x)] = (x.op, x.value, tuple(key(a) for a in x.args))
        return k

    def go(x: Expr) -> Expr:
        got = memo.get(id(x))
        if got is None:
            got = memo[id(x)] = _rebuild(x, [go(a) for a in x.args], writes, key)
        return got
    return go(e)


_SAME = {"eq": True, "le": True, "ge": True, "ne": False, "lt": False, "gt": False}


def _rebuild(x: Expr, args: list[Expr], writes: frozenset[int],
             key: Callable[[Expr], tuple]) -> Expr:
    """One node of :func:`on_step` over its rewritten children."""
    if x.op == "slot":
        return Slot(x.value[0]) if x.value[1] and x.value[0] not in writes else x
    if x.op in _SAME and key(args[0]) == key(args[1]):
        return Const(_SAME[x.op])
    if x.op in _FOLD:
        return _FOLD[x.op](*args)
    return Expr(x.op, tuple(args), x.value) if args else x


_FOLD: dict[str, Callable[..., Expr]] = {"and": And, "or": Or, "not": Not,
                                         "implies": Implies, "ite": If}


def _footprint(guard: Expr, updates: dict[int, Expr]) -> Footprint:
    writes = {i for i, e in updates.items() if not (e.op == "slot" and e.value == (i, 0))}
    reads = slots_of(guard)
    for i in writes:
        reads |= slots_of(updates[i])
    return Footprint(frozenset(reads), frozenset(writes))


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def expander(po: PartialOrder, stats: PorStats, cache_limit: int = 1 << 20
             ) -> Callable[..., Any]:
    """A reduced ``expand_level`` for :func:`~osf_check.explorer.explicit.bfs.bfs` (its
    arguments and answer; no graph is recorded)."""
    model = po.model
    gates = _exec(po.gates_source(), "gates")
    steps = compile_steps(model)
    pack = compile_pack(model)
    trans_insts = {k for k, row in enumerate(po.checks.trans) if row}
    chosen: dict[tuple, list[int]] = {}
    stutter = po.stutter

    def expand_level(current: list, ids: dict, add_new: Callable, fired: list,
                     on_trans: Callable, esrc: Any, edst: Any, eact: Any, limit: int,
                     packed: list, tick: Callable, on_stuck: Callable) -> tuple[int, int]:
        gen = 0
        # a successor with an id from here on was found at the next depth
        deeper = current[-1][0] + 1 if current else 0
        for sid, s, _ in current:
            gs = gates(s)
            sets = chosen.get(gs)
            if sets is None:
                if len(chosen) >= cache_limit:
                    chosen.clear()
                sets = chosen[gs] = po.stubborn(gs)
            en = [k for k, g in enumerate(gs) if g < 0]
            for k in en:
                fired[k] += 1
            if not en:
                on_stuck(sid, s)
            moving = [k for k in en if not stutter >> k & 1]
            for k in en:
                if stutter >> k & 1 and k in trans_insts:
                    on_trans(k, sid, s, s)
            if moving:
                gen += _fire(s, sid, moving, sets, steps, pack, ids, add_new, on_trans,
                             trans_insts, stats, deeper)
            if len(packed) >= limit:
                return gen, sid
            if not sid & 1023:
                tick(sid)
        return gen, -1

    return expand_level


def _fire(s: tuple, sid: int, en: list[int], sets: list[int], steps: list, pack: Callable,
          ids: dict, add_new: Callable, on_trans: Callable, trans_insts: set[int],
          stats: PorStats, deeper: int) -> int:
    """Fire the first of the stubborn sets ``sets`` whose successors are all new; the
    number of successors generated.

    A set with a successor found at this depth or before (an id below ``deeper``) is
    passed over, and every instance fires when each set has one: a cycle of the reduced
    graph cannot only go one depth deeper at each step, so each has a state expanded in
    full (C3)."""
    succ: dict[int, tuple] = {}
    some = en
    for mask in sets:
        members = _bits(mask)
        for k in members:
            if k not in succ:
                succ[k] = steps[k](s)
        if all(ids.get(pack(succ[k]), deeper) >= deeper for k in members):
            some = members
            break
    if len(some) < len(en):
        stats.reduced += 1
    else:
        stats.full += 1
        stats.proviso += bool(sets)
    for k in some:
        t = succ[k] if k in succ else steps[k](s)
        key = pack(t)
        if key not in ids:
            add_new(t, key, sid, k)
        if k in trans_insts:
            on_trans(k, sid, s, t)
    return len(some)


def replay(model: Model, checks: CheckList, states: Sequence[tuple],
           actions: Sequence[int], prop: str, kind: str) -> str | None:
    """Check a counterexample against the unreduced model with the reference evaluator:
    ``states[0]`` initial, each ``states[i]`` the successor of ``states[i - 1]`` by
    instance ``actions[i]``, and the last state (or step) violating ``prop``'s check of
    ``kind``.  None if it does; else what fails."""
    if not states or tuple(states[0]) not in set(map(tuple, model.initial_states)):
        return "it does not start in an initial state"
    for i in range(1, len(states)):
        inst = model.instances[actions[i]]
        s, t = states[i - 1], tuple(states[i])
        if not evaluate(inst.guard, s):
            return f"step {i}, {inst.label}, is not enabled there"
        nxt = tuple(evaluate(inst.updates[j], s) if j in inst.updates else v
                    for j, v in enumerate(s))
        if nxt != t:
            return f"step {i}, {inst.label}, does not lead to the next state"
    return _violated(model, checks, states, actions, prop, kind)


def _violated(model: Model, checks: CheckList, states: Sequence[tuple],
              actions: Sequence[int], prop: str, kind: str) -> str | None:
    last = states[-1]
    if kind == "inv":
        bad = any(pid == prop and not evaluate(e, last) for pid, e in checks.invs)
    elif kind == "trans" and len(states) > 1:
        bad = any(pid == prop and not evaluate(e, states[-2], last)
                  for pid, e in checks.trans[actions[-1]])
    elif kind == "deadlock":
        bad = not any(evaluate(i.guard, last) for i in model.instances) and not (
            model.quiescent is not None and evaluate(model.quiescent, last))
    else:
        bad = False
    return None if bad else f"its last state does not violate {prop} ({kind})"
