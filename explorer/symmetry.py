"""Symmetry reduction: one stored state per class of states equal up to a permutation.

A model declares sets of interchangeable elements (:meth:`ModelBuilder.symmetric
<osf_check.models.dsl.ModelBuilder.symmetric>`).  A declaration is a claim, and a wrong
claim would make the reduced search miss states, so :func:`prove_symmetric` proves it
first, with z3, for the run's properties too: for each generator of the permutation
group (swapping elements 0 and 1, and rotating all of them), every action instance
``a`` has an instance ``b`` with ``guard_a(s) = guard_b(g s)`` and ``g(a(s)) = b(g s)``
for *every* state ``s`` of the domains, the initial states are permuted among
themselves, and every invariant, transition check, witness condition and end-state
condition gives the same answer on ``s`` and ``g s``.  Only then does :class:`Reduction`
map each successor to a representative of its class before it is stored (sorting the
elements by their slots; any member of the class would be sound, a sorted one makes
most members meet).  Shortest counterexamples keep their length (every edge of the
reduced graph lifts to every member of its source's class), and :func:`expand`
turns a reduced one back into a trace of the model, step by step.

The reach and fair checks run on the reduced graph (edges: representative to the
representative of each successor) where that is exact, which :func:`prove` decides per
property: every goal's premise and goal give the same answer on ``s`` and ``g s``, and
for a fair check the fair-state conditions do too and every fairness set is mapped
onto itself by the instance correspondence the proof found (so "some member taken" and
"some member enabled" read the same on a state and its image).  A fair cycle of the
reduced graph then lifts to a fair lasso of the model, lap after lap until the real
state comes back (:func:`expand_lasso`).  The properties it cannot vouch for stay
"inconclusive", with the reason.

>>> from osf_check.models.two_phase import SPEC
>>> m = SPEC.build({"rms": 3})
>>> prove_symmetric(m, [], m.symmetries) is None
True
>>> Reduction(m, m.symmetries).canon((3, 2, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0))
(0, 2, 3, 0, 0, 0, 0, 1, 1, 0, 0, 0)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import z3

from osf_check.models.dsl import Model, SymmetricSet
from osf_check.models.expr import Slot
from osf_check.properties.base import CheckList, Goal, Property

from .result import Violation
from .compiled.pycompile import compile_steps, compile_trans
from .symbolic.engine import SolverGaveUp, as_bool, as_int, to_z3

__all__ = ["Reduction", "Proof", "prove", "prove_symmetric", "expand", "expand_lasso",
           "generators"]


class _Set:
    """One declared set, resolved to slots: ``records[j]`` are element j's slots (one
    per array), ``refs`` the slots whose values name an element."""

    def __init__(self, model: Model, s: SymmetricSet):
        by = model.var_by_name
        self.decl, self.k = s, s.size
        self.arrays = [list(by[a].slots) for a in s.arrays]
        self.records = [[slots[j] for slots in self.arrays] for j in range(s.size)]
        self.refs = [i for r in s.refs for i in by[r].slots]
        self.doms = [model.slot_domains[slots[0]] for slots in self.arrays]
        #: every permutation, where references make sorting the records no class
        #: function (alike elements told apart only by what names them)
        self.perms = list(itertools.permutations(range(self.k))) if self.refs else []

    def moved(self, perm: Sequence[int]) -> dict[int, int]:
        """Where each slot of an element goes when element j becomes element perm[j]."""
        return {slots[j]: slots[perm[j]] for slots in self.arrays for j in range(self.k)}


def generators(k: int) -> list[tuple[int, ...]]:
    """A swap and a rotation generate every permutation of k elements."""
    swap = (1, 0) + tuple(range(2, k))
    return [swap] if k == 2 else [swap, tuple((j + 1) % k for j in range(k))]


class Reduction:
    """The representative of a state's class, for tuples (explicit engine) and for
    numpy columns (vector engine)."""

    def __init__(self, model: Model, sets: Sequence[SymmetricSet]):
        self.model = model
        self.sets = [_Set(model, s) for s in sets]
        self.slots = sorted({i for st in self.sets for r in st.records for i in r}
                            | {i for st in self.sets for i in st.refs})

    def names(self) -> list[str]:
        return [st.decl.name for st in self.sets]

    # tuples -----------------------------------------------------------------
    def canon(self, s: tuple) -> tuple:
        for st in self.sets:
            if st.refs:  # elements alike but for a reference: the least image decides
                s = min(apply(st, p, s) for p in st.perms)
                continue
            order = sorted(range(st.k), key=lambda j: [s[i] for i in st.records[j]])
            perm = [0] * st.k
            for p, j in enumerate(order):
                perm[j] = p
            s = apply(st, perm, s)
        return s

    # numpy ------------------------------------------------------------------
    def canon_cols(self, cols: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
        """The representative's columns for the slots in ``self.slots``, from the
        current values of those slots (int64 arrays of one length)."""
        cols = dict(cols)
        for st in self.sets:
            if st.refs:
                cols.update(_least_image(st, cols))
                continue
            key = np.zeros_like(cols[st.records[0][0]])
            width = 0
            recs = []
            for a, slots in enumerate(st.arrays):
                d = st.doms[a]
                stacked = np.stack([cols[i] for i in slots], axis=1)
                recs.append(stacked)
                key = key * d.size + (stacked - d.lo) if width else stacked - d.lo
                width += d.bits
            if width > 62:
                raise ValueError(f"symmetric set {st.decl.name}: an element's slots take "
                                 f"{width} bits, more than a sort key holds")
            order = np.argsort(key, axis=1, kind="stable")  # position p holds element order[p]
            for slots, stacked in zip(st.arrays, recs):
                new = np.take_along_axis(stacked, order, axis=1)
                for j, i in enumerate(slots):
                    cols[i] = new[:, j]
            if st.refs:
                pos = np.empty_like(order)
                np.put_along_axis(pos, order, np.arange(st.k)[None, :].repeat(len(order), 0),
                                  axis=1)
                rows = np.arange(len(order))
                for i in st.refs:
                    v = cols[i]
                    names = (v >= 0) & (v < st.k)
                    cols[i] = np.where(names, pos[rows, np.clip(v, 0, st.k - 1)], v)
        return cols


def _least_image(st: _Set, cols: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """Per row, the least (by slot order, as :meth:`Reduction.canon` compares tuples)
    image of the set's slots under every permutation, references renamed."""
    slots = sorted({i for r in st.records for i in r} | set(st.refs))
    best: dict[int, np.ndarray] | None = None
    for perm in st.perms:
        img = dict(cols)
        for src, dst in st.moved(perm).items():
            img[dst] = cols[src]
        table = np.array(perm, dtype=np.int64)
        for i in st.refs:
            v = img[i]
            names = (v >= 0) & (v < st.k)
            img[i] = np.where(names, table[np.clip(v, 0, st.k - 1)], v)
        if best is None:
            best = {i: img[i] for i in slots}
            continue
        less = np.zeros(len(img[slots[0]]), dtype=bool)
        equal = ~less
        for i in slots:
            less |= equal & (img[i] < best[i])
            equal &= img[i] == best[i]
        best = {i: np.where(less, img[i], best[i]) for i in slots}
    assert best is not None
    return best


def apply(st: _Set, perm: Sequence[int], s: tuple) -> tuple:
    """``s`` with element j renamed perm[j]: its slots moved, references renamed."""
    return tuple(_permute(st, perm, s, lambda v: perm[v] if 0 <= v < st.k else v))


def _permute(st: _Set, perm: Sequence[int], values: Sequence, rename) -> list:
    """``values`` (one per slot: ints or z3 terms) with the slots of element j moved to
    element perm[j]'s and each reference passed through ``rename``."""
    out = list(values)
    for src, dst in st.moved(perm).items():
        out[dst] = values[src]
    for i in st.refs:
        out[i] = rename(out[i])
    return out


# the claim ------------------------------------------------------------------

@dataclass
class Proof:
    """What :func:`prove` proved: ``why`` the reduction may not be used (None: it may),
    and for each property with reach or fair checks, why the reduced graph does not
    judge it (None: it does, exactly)."""

    why: str | None
    graph: dict[str, str | None] = field(default_factory=dict)

    def judged(self) -> list[str]:
        """The properties whose reach and fair checks the reduced graph judges."""
        return [pid for pid, why in self.graph.items() if why is None]


def prove_symmetric(model: Model, props: Sequence[Property], sets: Sequence[SymmetricSet],
               timeout_ms: int = 20_000) -> str | None:
    """``None`` if every declared permutation maps the model and the properties onto
    themselves (proved for all states of the domains), else why not, in one sentence.
    A solver that gives up is a refusal too: the reduction is used only when proved."""
    return prove(model, props, sets, timeout_ms, graph=False).why


def prove(model: Model, props: Sequence[Property], sets: Sequence[SymmetricSet],
          timeout_ms: int = 20_000, *, graph: bool = True) -> Proof:
    """:func:`prove_symmetric`, and with ``graph`` also which reach and fair properties
    the reduced graph judges exactly (:class:`Proof`)."""
    from osf_check.properties import kinds
    checks = CheckList.of(model, props)
    on_graph = [p for p in props if any(kinds.on_graph(c.kind) for c in p.checks)] \
        if graph else []
    proof = Proof(None, {p.id: None for p in on_graph})
    for decl in sets:
        st = _Set(model, decl)
        for g in generators(st.k):
            z = _Claims(model, st, g, timeout_ms)  # one solver for the model and the goals
            try:
                why, corr = _test_one(model, checks, st, g, z)
            except SolverGaveUp as e:
                proof.why = f"{decl.name} could not be proved symmetric: {e} (no verdict on it)"
                return proof
            if why is not None:
                proof.why = f"{decl.name} is not symmetric: {why}"
                return proof
            for p in on_graph:
                if proof.graph[p.id] is None:
                    proof.graph[p.id] = _graph_why(model, p, z, corr)
    return proof


def _graph_why(model: Model, p: Property, z: "_Claims", corr: list[int]) -> str | None:
    """Why the reduced graph cannot judge ``p``'s reach and fair checks under the
    generator of ``z`` (None: it can): a goal's predicate, a fair-state condition read
    unequally, or a fairness set the instance correspondence ``corr`` moves out of itself."""
    what = z.what
    fair = any(c.kind == "fair" for c in p.checks)
    if fair:
        for fs in model.fair_sets():
            if {corr[a] for a in fs.instances} != set(fs.instances):
                return f"fairness set {fs.name} is not mapped onto itself under {what}"
    preds: list[tuple[str, object]] = [(f"fair-state condition {n}", e)
                                       for n, e in (model.fair_states if fair else [])]
    for c in p.checks:
        if c.kind in ("reach", "fair"):
            preds += [(f"goal {gl.label}", e) for gl in c.goals(model) for e in _reads(c.kind, gl)]
    for name, e in preds:
        try:
            if not z.always(z.same(e)):
                return f"its {name} reads the elements unequally"
        except SolverGaveUp:
            return f"z3 gave up on its {name} under {z.what}"
    return None


def _reads(kind: str, gl: Goal) -> list:
    """The predicates a reach or fair goal is read through (a fair goal of a form other
    than ``~>`` leaves its premise unused)."""
    return [gl.premise, gl.goal] if kind == "reach" or gl.form == "~>" else [gl.goal]


def _what(st: "_Set", g: tuple[int, ...]) -> str:
    return ("swapping elements 0 and 1" if g[:2] == (1, 0)
            else f"rotating its {st.k} elements")


class _Claims:
    """z3 over a state ``x`` of the model's domains and its image ``y`` under generator
    ``g`` of ``st``: a claim is proved for every such state or refuted, and a solver
    that gives up raises :class:`SolverGaveUp` (never a refutation)."""

    def __init__(self, model: Model, st: _Set, g: tuple[int, ...], timeout_ms: int):
        self.what = _what(st, g)
        self.x = [z3.Int(f"x{i}") for i in range(model.nslots)]
        self.y = _permuted(st, g, self.x)
        self.solver = z3.Solver()
        self.solver.set("timeout", timeout_ms)
        self.solver.add(*[z3.And(d.lo <= v, v <= d.hi)
                          for v, d in zip(self.x, model.slot_domains)])

    def always(self, claim: z3.BoolRef) -> bool:
        self.solver.push()
        self.solver.add(z3.Not(claim))
        r = self.solver.check()
        self.solver.pop()
        if r == z3.unknown:  # no proof either way: never called "not symmetric"
            raise SolverGaveUp(f"z3 gave up on {self.what}")
        return r == z3.unsat

    def same(self, e) -> z3.BoolRef:
        """``e`` reads the same on a state and on its image."""
        return as_bool(to_z3(e, self.x)) == as_bool(to_z3(e, self.y))


def _test_one(model: Model, checks: CheckList, st: _Set, g: tuple[int, ...],
              z: _Claims) -> tuple[str | None, list[int]]:
    """Why generator ``g`` does not map the model and ``checks`` onto themselves (None:
    it does), and the instance each instance was matched to (``corr[a] = b``)."""
    what = z.what
    inits = set(model.initial_states)
    if {apply(st, g, s) for s in inits} != inits:
        return f"the initial states change under {what}", []
    n = model.nslots
    x, y, always, same = z.x, z.y, z.always, z.same

    for pid, e in checks.invs:
        if not always(same(e)):
            return f"{pid}'s invariant reads the elements unequally", []
    for pid, e in checks.witnesses:
        if not always(same(e)):
            return f"{pid}'s witness condition reads the elements unequally", []
    if model.quiescent is not None and not always(same(model.quiescent)):
        return "the legitimate end states read the elements unequally", []
    moved = st.moved(g)
    corr: list[int] = []
    insts = model.instances
    upd = [[inst.updates.get(i, Slot(i)) for i in range(n)] for inst in insts]
    writes = [frozenset(i for i, e in inst.updates.items()
                        if not (e.op == "slot" and e.value == (i, 0))) for inst in insts]
    by_name: dict[tuple[str, frozenset], list[int]] = {}
    for inst in insts:
        by_name.setdefault((inst.name, writes[inst.index]), []).append(inst.index)
    for a in insts:
        ga, ua = as_bool(to_z3(a.guard, x)), [as_int(to_z3(u, x)) for u in upd[a.index]]
        g_after = _permuted(st, g, ua)
        target = frozenset(moved.get(i, i) for i in writes[a.index])
        cands = sorted(by_name.get((a.name, target), []),
                       key=lambda b: (insts[b].args != a.args, b))
        for b in cands:
            gb = as_bool(to_z3(insts[b].guard, y))
            after_b = [as_int(to_z3(u, y)) for u in upd[b]]
            ok = z3.And(ga == gb, z3.Implies(ga, z3.And(*[p == q for p, q in
                                                          zip(g_after, after_b)])))
            if always(ok) and _trans_same(checks, a.index, b, x, ua, y, after_b, ga, always):
                corr.append(b)
                break
        else:
            return f"no action matches {a.label} under {what}", []
    return None, corr


def _trans_same(checks: CheckList, a: int, b: int, x, xa, y, yb, ga, always) -> bool:
    ta = {pid: e for pid, e in checks.trans[a]}
    tb = {pid: e for pid, e in checks.trans[b]}
    for pid in sorted(set(ta) | set(tb)):  # (string hashes vary per process)
        ea = as_bool(to_z3(ta[pid], x, xa)) if pid in ta else z3.BoolVal(True)
        eb = as_bool(to_z3(tb[pid], y, yb)) if pid in tb else z3.BoolVal(True)
        if not always(z3.Implies(ga, ea == eb)):
            return False
    return True


def _permuted(st: _Set, perm: Sequence[int], terms: list) -> list:
    """z3 terms of the permuted state: slots moved, references renamed."""
    def rename(v):
        r = v
        for j in range(st.k - 1, -1, -1):
            r = z3.If(v == j, z3.IntVal(perm[j]), r)
        return r
    return _permute(st, perm, terms, rename)


# counterexamples ---------------------------------------------------------------

def expand(model: Model, red: Reduction, props: Sequence[Property], v: Violation,
           reduced: list[tuple]) -> tuple[list[tuple], list[int]]:
    """A trace of the model (states and action instances) that ends in the same way as
    the reduced counterexample ``v`` whose stored states are ``reduced`` (one per
    non-negative id of ``v.path``): at each step, an enabled action with the reduced
    step's name whose successor has the reduced successor's representative.  The
    symmetry guarantees one exists; not finding one is an internal error."""
    steps = compile_steps(model)
    trans = CheckList.of(model, props).compiled(lambda e: e, compile_trans).trans
    first = next((s for s in model.initial_states if red.canon(s) == reduced[0]), None)
    if first is None:
        raise RuntimeError("symmetry: no initial state has the counterexample's first state")
    states, acts = [first], [-1]
    insts = model.instances
    for i in range(1, len(v.path)):
        want = reduced[i] if v.path[i] >= 0 else None
        name = insts[v.actions[i]].name
        cur = states[-1]
        for b in sorted(range(len(insts)), key=lambda b: (insts[b].name != name, b)):
            t = steps[b](cur)
            if t is None:
                continue
            if want is not None and red.canon(t) == want:
                break
            if want is None and any(pid == v.prop and not f(cur, t) for pid, f in trans[b]):
                break
        else:
            raise RuntimeError(f"symmetry: step {i} of a {v.prop} counterexample has no "
                               "match in the model (the symmetry test let a wrong claim pass)")
        states.append(t)
        acts.append(b)
    return states, acts


def expand_lasso(model: Model, red: Reduction, v: Violation, reduced: list[tuple]
                 ) -> tuple[list[tuple], list[int], int]:
    """A lasso of the model (states, action instances, where its loop starts) for the
    reduced fair-cycle counterexample ``v`` (``reduced``: its stored states, the last
    one the state at ``v.loop_start`` again).  The prefix is expanded as by
    :func:`expand`; the cycle is lifted through a permutation ``pi`` with ``pi(r) =``
    the real state for the reduced state ``r``: each reduced step ``r -a-> r'`` (the
    representative's own successor ``t = a(r) = rho(r')``) becomes the model's step to
    ``pi(t)``, and ``pi`` becomes ``pi . rho``.  A lap thus applies one fixed
    permutation, and after its order in laps (at most the size of the group) the real
    state at the loop's start comes back.  Not finding a step is an internal error."""
    steps = compile_steps(model)
    insts = model.instances
    sets = model.fair_sets()
    sig = [frozenset(j for j, fs in enumerate(sets) if i.index in fs.instances) for i in insts]
    start = v.loop_start
    assert start is not None and reduced[start] == reduced[-1], "a lasso closes its loop"
    prefix = Violation(v.prop, v.kind, v.message, v.path[:start + 1], v.actions[:start + 1])
    states, acts = expand(model, red, [], prefix, reduced[:start + 1])
    group = list(itertools.product(*(list(itertools.permutations(range(st.k)))
                                     for st in red.sets)))

    def image(perm: tuple, s: tuple) -> tuple:
        for st, p in zip(red.sets, perm):
            s = apply(st, p, s)
        return s

    def mapping(src: tuple, dst: tuple) -> tuple:
        return next(p for p in group if image(p, src) == dst)

    pi = mapping(reduced[start], states[-1])
    rho = {}  # per step of the cycle: how the representative's successor is reached
    for i in range(start + 1, len(v.path)):
        t = steps[v.actions[i]](reduced[i - 1])
        assert t is not None, "the reduced graph's step is the representative's own"
        rho[i] = (t, mapping(reduced[i], t))
    loop_at = len(states) - 1
    for _ in range(len(group)):
        for i in range(start + 1, len(v.path)):
            t, r = rho[i]
            want, a, cur = image(pi, t), v.actions[i], states[-1]
            b = next((b for b in sorted(range(len(insts)), key=lambda b: (
                insts[b].name != insts[a].name, sig[b] != sig[a], b))
                if steps[b](cur) == want), None)
            if b is None:
                raise RuntimeError(f"symmetry: step {i} of a {v.prop} lasso has no match in "
                                   "the model (the symmetry test let a wrong claim pass)")
            states.append(want)
            acts.append(b)
            pi = tuple(tuple(p[q[j]] for j in range(len(q))) for p, q in zip(pi, r))
        if states[-1] == states[loop_at]:
            return states, acts, loop_at
    raise RuntimeError(f"symmetry: the {v.prop} lasso's real state did not come back "
                       f"within {len(group)} laps")


def lasso_fairness(model: Model, states: list[tuple], acts: list[int], loop_at: int,
                   ) -> tuple[bool, str]:
    """:func:`~osf_check.explorer.graph.checks.fairness_of_cycle` on a lasso of the
    model's own states (its cycle: ``states[loop_at:]``, the last one the first again),
    with each state's enabled instances computed from the model (a step that moves it)."""
    from .compiled.pycompile import compile_pred
    from .graph.checks import fairness_of_cycle
    steps = compile_steps(model)

    class _Real:  # what fairness_of_cycle reads of a graph: the enabled instances
        @staticmethod
        def enabled(u: int) -> frozenset[int]:
            s = states[u]
            return frozenset(b for b, f in enumerate(steps) if (t := f(s)) is not None
                             and t != s)

    cycle = [(u, acts[u + 1]) for u in range(loop_at, len(states) - 1)]
    conds = [compile_pred(e) for _, e in model.fair_states]
    return fairness_of_cycle(cycle, _Real(), conds, model.fair_sets(), states)
