"""The symbolic engine: the DSL over z3 terms, bounded model checking and k-induction.

The same :class:`~osf_check.models.expr.Expr` trees the explicit engine compiles are
translated into z3 terms; a state is a vector of z3 integers (one per slot) with
its domain constraints, a step chooses one action instance (an integer ``act``
variable) whose guard holds and whose updates define the next state.

- :func:`bmc` unrolls the transition relation and finds the smallest depth with a
  violation (and its trace), or none up to ``k``.
- :func:`k_induction` tries k = 1, 2, … : *proved* for every depth, or *unknown*
  with a counterexample to induction (CTI).
- :func:`houdini` keeps the largest inductive subset of candidate invariants.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import z3

from osf_check.models.dsl import Model
from osf_check.models.expr import Expr, fold
from osf_check.properties.base import CheckList, Property

__all__ = ["Symbolic", "PropertyChecks", "to_z3", "bmc", "k_induction", "houdini", "BmcResult",
           "InductionResult", "set_seed", "as_bool", "as_int"]


def set_seed(seed: int) -> None:
    """Feed the seed to both of z3's random sources (reproducible runs)."""
    z3.set_param("smt.random_seed", seed)
    z3.set_param("sat.random_seed", seed)


def as_int(t: z3.ExprRef) -> z3.ArithRef:
    """A z3 term as an integer: a Boolean is 1 or 0 (the DSL's values are integers)."""
    return z3.If(t, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(t) else t


def as_bool(t: z3.ExprRef) -> z3.BoolRef:
    """A z3 term as a Boolean: an integer holds when it is not 0 (the DSL's truth)."""
    return t if z3.is_bool(t) else t != 0


def to_z3(e: Expr, cur: Sequence[z3.ArithRef], nxt: Sequence[z3.ArithRef] | None = None
          ) -> z3.ExprRef:
    """``e`` as a z3 term over the slot variables ``cur`` (and ``nxt`` for primed slots).

    >>> import z3
    >>> from osf_check.models.expr import Slot, If
    >>> x = [z3.Int("x0"), z3.Int("x1")]
    >>> str(z3.simplify(to_z3(If(Slot(0) > 1, Slot(1), 0), x)))
    'If(x0 <= 1, 0, x1)'
    """
    def leaf(x: Expr) -> z3.ExprRef:
        if x.op == "const":
            return z3.IntVal(x.value)
        if x.op in ("true", "false"):
            return z3.BoolVal(x.op == "true")
        i, which = x.value
        return (nxt if which else cur)[i]  # type: ignore[index]

    def node(op: str, a: list[z3.ExprRef]) -> z3.ExprRef:
        if op == "and":
            return z3.And(*[as_bool(y) for y in a])
        if op == "or":
            return z3.Or(*[as_bool(y) for y in a])
        if op == "not":
            return z3.Not(as_bool(a[0]))
        if op == "implies":
            return z3.Implies(as_bool(a[0]), as_bool(a[1]))
        if op == "ite":
            t, f = a[1], a[2]
            if z3.is_bool(t) != z3.is_bool(f):
                t, f = as_int(t), as_int(f)
            return z3.If(as_bool(a[0]), t, f)
        if op == "select":
            idx, opts = as_int(a[0]), [as_int(y) for y in a[1:]]
            r = opts[-1]
            for j in range(len(opts) - 2, -1, -1):
                r = z3.If(idx == j, opts[j], r)
            return r
        p, q = as_int(a[0]), as_int(a[1])
        return _Z3_BIN[op](p, q)

    return fold(e, leaf, node)


_Z3_BIN = {"add": lambda p, q: p + q, "sub": lambda p, q: p - q, "mul": lambda p, q: p * q,
           "div": lambda p, q: p / q, "mod": lambda p, q: p % q, "eq": lambda p, q: p == q,
           "ne": lambda p, q: p != q, "lt": lambda p, q: p < q, "le": lambda p, q: p <= q,
           "gt": lambda p, q: p > q, "ge": lambda p, q: p >= q}


class Symbolic:
    """A model unrolled over z3 variables: states ``s[j]`` and choices ``act[j]``."""

    def __init__(self, model: Model):
        self.model = model
        self.doms = model.slot_domains
        self.names = model.slot_names
        self.states: list[list[z3.ArithRef]] = []
        self.acts: list[z3.ArithRef] = []
        self._upd: list[list[Expr]] = []
        n = model.nslots
        from osf_check.models.expr import Slot
        for inst in model.instances:
            self._upd.append([inst.updates.get(i, Slot(i)) for i in range(n)])

    def state(self, j: int, tag: str = "s") -> list[z3.ArithRef]:
        while len(self.states) <= j:
            k = len(self.states)
            self.states.append([z3.Int(f"{tag}{k}_{nm}") for nm in self.names])
        return self.states[j]

    def act(self, j: int) -> z3.ArithRef:
        while len(self.acts) <= j:
            self.acts.append(z3.Int(f"act{len(self.acts)}"))
        return self.acts[j]

    def domain(self, j: int) -> z3.BoolRef:
        s = self.state(j)
        return z3.And(*[z3.And(d.lo <= v, v <= d.hi) for v, d in zip(s, self.doms)])

    def init(self) -> z3.BoolRef:
        s = self.state(0)
        pred = self.model.init_predicate()
        if pred is not None:  # stated once, however many states it names
            return as_bool(to_z3(pred, s))
        return z3.Or(*[z3.And(*[v == x for v, x in zip(s, st)]) for st in self.model.initial_states])

    def step(self, j: int) -> z3.BoolRef:
        """The transition from state j to state j+1, by the instance ``act[j]``."""
        s, t, a = self.state(j), self.state(j + 1), self.act(j)
        parts = [z3.And(0 <= a, a < len(self.model.instances))]
        for inst, upd in zip(self.model.instances, self._upd):
            body = z3.And(as_bool(to_z3(inst.guard, s)),
                          *[t[i] == as_int(to_z3(u, s)) for i, u in enumerate(upd)])
            parts.append(z3.Implies(a == inst.index, body))
        return z3.And(*parts)

    def pred(self, e: Expr, j: int) -> z3.BoolRef:
        return as_bool(to_z3(e, self.state(j)))

    def trans_ok(self, checks: Sequence[tuple[int, Expr]], j: int) -> z3.BoolRef:
        """Every transition check of the instance taken at step j holds."""
        s, t, a = self.state(j), self.state(j + 1), self.act(j)
        return z3.And(*[z3.Implies(a == ai, as_bool(to_z3(e, s, t))) for ai, e in checks])

    def read(self, m: z3.ModelRef, upto: int) -> tuple[list[tuple], list[int]]:
        states = [tuple(m.eval(v, model_completion=True).as_long() for v in self.state(j))
                  for j in range(upto + 1)]
        acts = [m.eval(self.act(j), model_completion=True).as_long() for j in range(upto)]
        return states, acts


@dataclass
class PropertyChecks:
    """A property's invariants and transition checks, as expressions."""

    invs: list[Expr]
    trans: list[tuple[int, Expr]]  # (instance index, check)

    @classmethod
    def of(cls, model: Model, props: Sequence[Property]) -> "PropertyChecks":
        cl = CheckList.of(model, props)
        return cls([e for _, e in cl.invs],
                   [(i, e) for i, row in enumerate(cl.trans) for _, e in row])

    @property
    def empty(self) -> bool:
        return not self.invs and not self.trans


@dataclass
class BmcResult:
    depth: int | None  # the smallest violating depth, None if none up to k
    states: list[tuple] = field(default_factory=list)
    acts: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)  # per depth
    timed_out: bool = False


def bmc(model: Model, checks: PropertyChecks, k: int, *, timeout_ms: int | None = None,
        sym: Symbolic | None = None, start: int = 0) -> BmcResult:
    """The smallest depth ≤ k at which an invariant or transition check can fail.

    With ``start`` > 0 the depths below it are not queried: the caller knows the
    checks hold there (an exhaustive BFS checked them), so they are asserted on the
    prefix instead, which keeps the deeper queries small."""
    sym = sym or Symbolic(model)
    solver = z3.Solver()
    if timeout_ms:
        solver.set("timeout", timeout_ms)
    solver.add(sym.init(), sym.domain(0))
    res = BmcResult(None)
    for d in range(0, k + 1):
        t0 = time.perf_counter()
        bad = []
        if checks.invs:
            bad.append(z3.Not(z3.And(*[sym.pred(e, d) for e in checks.invs])))
        if d > 0 and checks.trans:
            bad.append(z3.Not(sym.trans_ok(checks.trans, d - 1)))
        if bad and d >= start:
            solver.push()
            solver.add(z3.Or(*bad))
            r = solver.check()
            res.seconds.append(time.perf_counter() - t0)
            if r == z3.sat:
                res.depth = d
                res.states, res.acts = sym.read(solver.model(), d)
                return res
            if r == z3.unknown:
                res.timed_out = True
                return res
            solver.pop()
        if d < k:
            solver.add(sym.step(d), sym.domain(d + 1))
            # what has been checked holds on the prefix (keeps later queries small)
            if checks.invs:
                solver.add(*[sym.pred(e, d) for e in checks.invs])
            if d > 0 and checks.trans:
                solver.add(sym.trans_ok(checks.trans, d - 1))
    return res


class SolverGaveUp(Exception):
    """z3 answered unknown (its timeout, or a query beyond it): no verdict either way.
    (Not a ``TimeoutError``: that one is an ``OSError``, which the command line reads as
    a failing disk or a bug.)"""


@dataclass
class InductionResult:
    status: str  # proved, unknown, timeout
    k: int
    cti: tuple[list[tuple], list[int]] | None = None  # states and actions of the CTI
    seconds: list[float] = field(default_factory=list)


def k_induction(model: Model, checks: PropertyChecks, k: int, *, proven: Sequence[Expr] = (),
                timeout_ms: int | None = None) -> InductionResult:
    """Try induction with k = 1..k steps (states distinct along the path, so that a
    finite model is eventually proved).

    The step case assumes ``checks`` on the states (and transitions) before the last
    one and asks for them on the last; the caller must establish the base case (BMC
    to depth k).  ``proven`` are invariants **already proved** to hold on every
    reachable state (Houdini's output): they are asserted on every state of the
    path, the checked one included, which would be unsound for anything unproved.
    To assume an unproved property, add it to ``checks``: then it is proved along."""
    seconds = []
    last_cti = None
    for kk in range(1, k + 1):
        t0 = time.perf_counter()
        sym = Symbolic(model)
        s = z3.Solver()
        if timeout_ms:
            s.set("timeout", timeout_ms)
        for j in range(kk + 1):
            s.add(sym.domain(j))
            for e in proven:
                s.add(sym.pred(e, j))
        for j in range(kk):
            s.add(sym.step(j))
        # the property holds on the first kk states / transitions …
        for j in range(kk):
            for e in checks.invs:
                s.add(sym.pred(e, j))
            if checks.trans and j < kk - 1:
                s.add(sym.trans_ok(checks.trans, j))
        # … and fails on the next one
        bad = []
        if checks.invs:
            bad.append(z3.Not(z3.And(*[sym.pred(e, kk) for e in checks.invs])))
        if checks.trans:
            bad.append(z3.Not(sym.trans_ok(checks.trans, kk - 1)))
        s.add(z3.Or(*bad))
        for a in range(kk + 1):  # simple paths only
            for b in range(a + 1, kk + 1):
                s.add(z3.Or(*[x != y for x, y in zip(sym.state(a), sym.state(b))]))
        r = s.check()
        seconds.append(time.perf_counter() - t0)
        if r == z3.unsat:
            return InductionResult("proved", kk, None, seconds)
        if r == z3.unknown:
            return InductionResult("timeout", kk, last_cti, seconds)
        last_cti = sym.read(s.model(), kk)
    return InductionResult("unknown", k, last_cti, seconds)


def houdini(model: Model, candidates: list[Expr], *, assume: Sequence[Expr] = (),
            timeout_ms: int | None = None, log: Callable[[str], None] | None = None,
            explore_limit: int = 2_000) -> list[Expr]:
    """The largest subset of ``candidates`` that is inductive together (relative to
    ``assume``) and holds on every initial state.

    Each z3 round yields a state s0 satisfying every remaining candidate from which one
    step falsifies some; the explicit engine then explores s0's neighbourhood (states
    that still satisfy every remaining candidate) and drops every candidate a
    successor falsifies, which is sound for the same reason and saves most rounds.
    """
    import numpy as np

    from osf_check.explorer.compiled.npeval import np_eval
    from osf_check.explorer.compiled.pycompile import compile_pack, compile_steps

    steps = compile_steps(model)
    pack = compile_pack(model)
    sym = Symbolic(model)
    init_s = z3.Solver()
    init_s.add(sym.init(), sym.domain(0))
    init_s.push()
    init_s.add(z3.Not(z3.And(*[sym.pred(c, 0) for c in candidates])) if candidates else False)
    keep = list(candidates)
    if candidates and init_s.check() != z3.unsat:  # (unknown too: each is asked alone)
        keep = [c for c in candidates if _holds_initially(init_s, sym, c)]
    s = z3.Solver()
    if timeout_ms:
        s.set("timeout", timeout_ms)
    s.add(sym.domain(0), sym.domain(1), sym.step(0))
    for e in assume:
        s.add(sym.pred(e, 0))

    def falsified(states: list[tuple], cands: list[Expr]) -> np.ndarray:
        cols = [np.array(col, dtype=np.int64) for col in zip(*states)]
        ok = np.ones(len(cands), dtype=bool)
        for i, c in enumerate(cands):
            ok[i] = bool(np.all(np_eval(c, cols, n=len(states))))
        return ~ok

    rounds = 0
    while keep:
        rounds += 1
        s.push()
        s.add(*[sym.pred(c, 0) for c in keep])
        s.add(z3.Not(z3.And(*[sym.pred(c, 1) for c in keep])))
        r = s.check()
        if r == z3.unsat:
            s.pop()
            break
        if r == z3.unknown:
            s.pop()
            raise SolverGaveUp("z3 gave up while filtering candidate invariants")
        m = s.model()
        s0 = tuple(m.eval(v, model_completion=True).as_long() for v in sym.state(0))
        s.pop()
        before = len(keep)
        # explore from s0 through states that satisfy every remaining candidate
        frontier, seen = [s0], {pack(s0)}
        while frontier and len(seen) < explore_limit and keep:
            succ = []
            for st in frontier:
                for f in steps:
                    try:
                        t = f(st)
                    except Exception:  # a successor outside the domains: not a state
                        continue
                    if t is not None and pack(t) not in seen:
                        seen.add(pack(t))
                        succ.append(t)
            if not succ:
                break
            bad = falsified(succ, keep)
            keep = [c for c, b in zip(keep, bad) if not b]
            good = ~np.zeros(len(succ), dtype=bool)
            if keep:
                cols = [np.array(col, dtype=np.int64) for col in zip(*succ)]
                for c in keep:
                    good &= np.asarray(np_eval(c, cols, n=len(succ)), dtype=bool)
            frontier = [t for t, g in zip(succ, good) if g]
        if log:
            log(f"houdini round {rounds}: {before} -> {len(keep)} candidates")
        if len(keep) == before:
            raise RuntimeError("houdini made no progress")
    return keep


def _holds_initially(solver: z3.Solver, sym: Symbolic, c: Expr) -> bool:
    solver.push()
    solver.add(z3.Not(sym.pred(c, 0)))
    r = solver.check()
    solver.pop()
    return r == z3.unsat
