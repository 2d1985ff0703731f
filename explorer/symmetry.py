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

Safety only: fairness names action instances, which permutations move, so the reach
and fair checks are not run on a reduced graph (their properties stay unknown).

>>> from osf_check.models.two_phase import SPEC
>>> m = SPEC.build({"rms": 3})
>>> prove_symmetric(m, [], m.symmetries) is None
True
>>> Reduction(m, m.symmetries).canon((3, 2, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0))
(0, 2, 3, 0, 0, 0, 0, 1, 1, 0, 0, 0)
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import z3

from osf_check.models.dsl import Model, SymmetricSet
from osf_check.models.expr import Slot
from osf_check.properties.base import CheckList, Property

from .result import Violation
from .compiled.pycompile import compile_steps, compile_trans
from .symbolic.engine import SolverGaveUp, as_bool, as_int, to_z3

__all__ = ["Reduction", "prove_symmetric", "expand", "generators"]


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

def prove_symmetric(model: Model, props: Sequence[Property], sets: Sequence[SymmetricSet],
               timeout_ms: int = 20_000) -> str | None:
    """``None`` if every declared permutation maps the model and the properties onto
    themselves (proved for all states of the domains), else why not, in one sentence.
    A solver that gives up is a refusal too: the reduction is used only when proved."""
    checks = CheckList.of(model, props)
    for decl in sets:
        st = _Set(model, decl)
        for g in generators(st.k):
            try:
                why = _test_one(model, checks, st, g, timeout_ms)
            except SolverGaveUp as e:
                return f"{decl.name} could not be proved symmetric: {e} (no verdict on it)"
            if why is not None:
                return f"{decl.name} is not symmetric: {why}"
    return None


def _test_one(model: Model, checks: CheckList, st: _Set, g: tuple[int, ...],
              timeout_ms: int) -> str | None:
    what = ("swapping elements 0 and 1" if g[:2] == (1, 0)
            else f"rotating its {st.k} elements")
    inits = set(model.initial_states)
    if {apply(st, g, s) for s in inits} != inits:
        return f"the initial states change under {what}"
    n = model.nslots
    x = [z3.Int(f"x{i}") for i in range(n)]
    y = _permuted(st, g, x)
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*[z3.And(d.lo <= v, v <= d.hi) for v, d in zip(x, model.slot_domains)])

    def always(claim: z3.BoolRef) -> bool:
        solver.push()
        solver.add(z3.Not(claim))
        r = solver.check()
        solver.pop()
        if r == z3.unknown:  # no proof either way: never called "not symmetric"
            raise SolverGaveUp(f"z3 gave up on {what}")
        return r == z3.unsat

    def same(e) -> z3.BoolRef:
        return as_bool(to_z3(e, x)) == as_bool(to_z3(e, y))

    for pid, e in checks.invs:
        if not always(same(e)):
            return f"{pid}'s invariant reads the elements unequally"
    for pid, e in checks.witnesses:
        if not always(same(e)):
            return f"{pid}'s witness condition reads the elements unequally"
    if model.quiescent is not None and not always(same(model.quiescent)):
        return "the legitimate end states read the elements unequally"
    moved = st.moved(g)
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
                break
        else:
            return f"no action matches {a.label} under {what}"
    return None


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
