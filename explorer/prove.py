"""``prove``: refute with the shortest trace, or prove for every depth, soundly.

For each invariant or transition property:

1. every reachable state to ``sample_depth`` (12) is checked by the explicit BFS:
   a violation there is *refuted*, with the shortest trace; a BFS that ran out of
   new states checked every reachable state and every step out of them, so a
   property it found no violation of is *proved* (as TLC proves it), z3 unasked;
2. bounded model checking to depth K (z3): a violation is *refuted*;
3. k-induction for k = 1..K of the property **together with** every property it
   assumes (``--assume``, the property's ``strengthen``): the assumptions are
   hypotheses before the checked state and obligations on it, so they are proved
   along; assuming the property itself is bad input;
4. otherwise, with ``mine``, candidate invariants are mined from the sampled
   reachable states and filtered Houdini-style to the largest set that is inductive
   together from the initial states (so: proved invariants); induction is tried again
   with them (and the property's hand-written lemmas, which must survive Houdini too);
5. otherwise BMC deepens past what the BFS checked whole, up to ``sample_depth``, and
   only then is the verdict ``unknown``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn, Sequence

import numpy as np

from osf_check.models.describe import render
from osf_check.models.dsl import Model, slot_ranges
from osf_check.models.expr import And, Expr, Implies, Or, Slot, bounds, evaluate
from osf_check.properties import catalogue
from osf_check.properties.base import PROVED, Property

from .check import prepare
from .explicit.bfs import bfs
from .compiled.npeval import packed_array, unpack_columns
from .compiled.pycompile import compile_pack
from .symbolic.engine import PropertyChecks, SolverGaveUp, bmc, houdini, k_induction, set_seed
from osf_check.models.errors import BadValue, UnknownName

__all__ = ["ProofResult", "prove", "mine_candidates"]


@dataclass
class ProofResult:
    prop: Property
    #: proved, proved in part (see :data:`~osf_check.properties.base.PROVED`), refuted,
    #: unknown, timeout, skipped, not checked
    status: str
    k: int = 0
    trace: tuple[list[tuple], list[int]] | None = None  # states, actions (refuted)
    cti: tuple[list[tuple], list[int]] | None = None
    cti_reachable: bool | None = None
    assumed: list[str] = field(default_factory=list)
    #: the invariants mined from the sample that the proof assumed (none of the user's)
    mined: list[Expr] = field(default_factory=list)
    #: the property's hand-written lemmas that Houdini kept and the proof assumed
    held: list[Expr] = field(default_factory=list)
    queries: list[tuple[str, float]] = field(default_factory=list)
    note: str = ""
    lemmas: tuple[int, int] = (0, 0)  # hand-written lemmas proved / given
    #: how a proved property was proved: "k-induction" or "every reachable state"
    method: str | None = None
    #: the kinds of the property's checks that prove does not decide (reach, fair)
    unchecked: list[str] = field(default_factory=list)


def describe(e: Expr, model: Model) -> str:
    """An invariant (mined or a hand-written lemma) as a person reads it: over the
    model's variables, in the notation ``describe --model`` uses."""
    return render(model, e)


def mine_candidates(model: Model, packed: Sequence[int], limit: int = 20_000) -> list[Expr]:
    """Candidate invariants true on every sampled state: each slot's observed values,
    and for each pair of slots, value a of one ⇒ the values the other took with it."""
    cols = unpack_columns(packed_array(packed, model), model)
    doms = model.slot_domains
    n = len(cols)
    seen = [np.unique(c) for c in cols]
    out: list[Expr] = []
    for i in range(n):
        if len(seen[i]) < doms[i].size:
            out.append(Or(*(Slot(i) == int(v) for v in seen[i])))
    for i in range(n):
        if len(seen[i]) < 2:
            continue
        for a in seen[i].tolist():
            mask = cols[i] == a
            for j in range(n):
                if j == i or len(seen[j]) < 2:
                    continue
                vals = np.unique(cols[j][mask])
                if len(vals) < len(seen[j]):
                    out.append(Implies(Slot(i) == a, Or(*(Slot(j) == int(v) for v in vals))))
                    if len(out) >= limit:
                        return out
    return out


def _sample_trace(ex, v) -> tuple[list[tuple], list[int]]:
    """A BFS violation as (states, actions): the violating edge's target recomputed."""
    return ex.trace_states(v), [ai for ai in v.actions if ai >= 0]


@dataclass
class _Sample:
    """The reachable states of a bounded BFS, each checked against every chosen property."""

    ex: Any
    covered: int  # every state at depth <= covered, and every edge out of them, was checked
    first: dict[str, Any]  # property id -> its shortest violation in the sample

    @classmethod
    def take(cls, model: Model, props: Sequence[Property], depth: int, max_states: int,
             say: Callable[[str], None]) -> "_Sample":
        say(f"checking every reachable state to depth {depth} (BFS, at most "
            f"{max_states:,} states)")
        ex = bfs(model, props, depth=depth, max_states=max_states, check_deadlock=False,
                 stop_on_violation=False)
        if ex.stopped == "max-states":
            # the level being built was cut: its parents' edges were not all checked, so
            # only paths that end two levels above it are known to be checked whole
            covered = max(ex.depth_reached - 2, 0)
        elif ex.complete:
            covered = 1 << 30  # the whole reachable space
        else:
            covered = depth
        first: dict[str, Any] = {}
        for v in ex.violations:
            first.setdefault(v.prop, v)
        say(f"{ex.distinct:,} states checked ({'every depth' if ex.complete else f'to depth {min(covered, depth)}'})")
        return cls(ex, covered, first)


def domain_obligation(model: Model) -> Expr | None:
    """That every enabled action sets each variable to a value of its domain, as a state
    predicate (None: the domains alone see to it).

    z3's steps end in the domains (each state's variables are constrained to theirs),
    so an action that would leave one is, to z3, an action not taken, where explore
    stops with a model error.  Proved along with each property, this makes the two
    the same on every reachable state: the first step out of a domain would start
    from a state where it holds.  An update that the domains alone keep in bounds
    (its value's range, :func:`~osf_check.models.expr.bounds`) adds nothing.

    >>> from osf_check.models.two_phase import SPEC
    >>> domain_obligation(SPEC.build({"rms": 3})) is None
    True
    """
    doms = model.slot_domains
    slot_range = slot_ranges(doms)
    parts = []
    for inst in model.instances:
        conds = []
        for i, u in sorted(inst.updates.items()):
            lo, hi = bounds(u, slot_range)
            if lo < doms[i].lo:
                conds.append(u >= doms[i].lo)
            if hi > doms[i].hi:
                conds.append(u <= doms[i].hi)
        if conds:
            parts.append(Implies(inst.guard, And(*conds)))
    return And(*parts) if parts else None


def unchecked_index(model: Model, exprs: Sequence[Expr]) -> str | None:
    """Why z3 cannot judge ``exprs``, if one reads an array (a Select) at an index that
    its variables' domains let leave the array: the explicit and vector engines stop
    with a model error in a state that reaches such a read, but z3 reads the last
    element there, so its proofs and counterexamples could be of another model."""
    slot_range = slot_ranges(model.slot_domains)
    seen: set[int] = set()
    todo = [e for e in exprs if e.selects]
    while todo:
        x = todo.pop()
        if id(x) in seen or not x.selects:
            continue
        seen.add(id(x))
        if x.op == "select":
            lo, hi = bounds(x.args[0], slot_range)
            if lo < 0 or hi > len(x.args) - 2:
                at = x.args[0]
                at_s = model.slot_names[at.value[0]] if at.op == "slot" else "computed"
                return (f"z3 cannot judge it: an array read or Select at index {at_s}, "
                        f"which may range over {lo}..{hi}, outside 0..{len(x.args) - 2}, "
                        "where the model errs and z3 would read the last element "
                        "(explore checks every state it reaches)")
        todo.extend(x.args)
    return None


def z3_ms(timeout: float | None) -> int | None:
    """z3's timeout (whole milliseconds, an unsigned 32-bit number) for ``timeout``
    seconds; None for no timeout.  A timeout under a millisecond is one, not none (0 ms
    is what z3 takes for "no timeout": ``--timeout 0.0004`` ran without one), and one
    above z3's largest its largest (it wraps: 2**32 ms would be 0).

    >>> z3_ms(0.0004), z3_ms(1.5), z3_ms(None), z3_ms(1e10)
    (1, 1500, None, 4294967295)
    """
    if not timeout:
        return None
    return min(max(1, math.ceil(timeout * 1000)), 2**32 - 1)


def prove(model_name: str, *, params: dict | None = None, mutant: str | None = None,
          props: Sequence[str] = (), k: int = 4, timeout: float | None = 120.0, seed: int = 0,
          mine: bool = True, assume: Sequence[str] = (), sample_depth: int = 12,
          sample_states: int = 2_000_000, stop_on_refutation: bool = True,
          log: Callable[[str], None] | None = None) -> tuple[Model, list[ProofResult]]:
    """Prove or refute each chosen invariant and transition property, soundly.

    Every verdict is backed by a whole argument or it is ``unknown``:

    - *refuted*: a concrete path from an initial state (found by the explicit BFS over
      every state to ``sample_depth``, or by BMC), the shortest one the BFS knows;
    - *proved*: k-induction of the property **together with every property it
      assumes** (``assume`` and the property's own ``strengthen``): an assumption is a
      hypothesis on the states before the checked one *and* an obligation on the
      checked one, so an assumption that does not hold cannot prove anything.  Mined
      invariants are used only after Houdini proved them inductive from the initial
      states;
    - otherwise BMC deepens past the BFS sample's whole levels, up to ``sample_depth``,
      and only then is the status ``unknown`` (or ``timeout``: z3 gave up somewhere).

    With ``stop_on_refutation`` (the default, like explore's), once the BFS sample
    refutes a property the others are ``not checked``: the run's verdict is already
    a violation, and proving the rest of a broken model costs minutes.

    Raises ``LookupError`` for unknown names and ``ValueError`` for a property that
    assumes itself.
    """
    set_seed(seed)
    model, chosen, _ = prepare(model_name, params=params, mutant=mutant, props=props)
    all_props = {p.id: p for p in catalogue.properties_of(model_name)}
    assumed_ids = _assumed(model_name, all_props, chosen, assume)
    helpers_of = {p.id: [h for h in dict.fromkeys(list(p.strengthen) + assumed_ids) if h != p.id]
                  for p in chosen}
    say = log or (lambda s: None)
    checked = list(chosen) + [all_props[h] for h in dict.fromkeys(
        h for hs in helpers_of.values() for h in hs) if all_props[h] not in chosen]
    sample = _Sample.take(model, checked, sample_depth, sample_states, say)
    stop = stop_on_refutation and any(q.id in sample.first for q in chosen)
    run = _Run(model, all_props, helpers_of, k, z3_ms(timeout), mine, sample_depth, stop,
               sample, say)
    results = [run.one(p) for p in chosen]
    for res in results:
        res.unchecked = list(dict.fromkeys(c.kind for c in res.prop.checks
                                           if c.kind not in PROVED))
        if res.status == "proved" and res.unchecked:
            res.status = "proved in part"
    return model, results


def _assumed(model_name: str, all_props: dict[str, Property], chosen: Sequence[Property],
             assume: Sequence[str]) -> list[str]:
    """The ids of the ``--assume`` properties, each checked to be one with invariants and
    none of those being proved."""
    assumed_ids = []
    for hid in assume:
        hp = all_props.get(hid.upper()) or next((p for p in all_props.values() if p.name == hid),
                                                 None)
        if hp is None:
            raise UnknownName(f"--assume {hid}: model {model_name} has no property {hid!r} "
                              f"(it has: {', '.join(all_props)})")
        if not any(c.kind == "inv" for c in hp.checks):
            raise BadValue(f"--assume {hid}: {hp.id} has no invariant to assume ({hp.kinds}); "
                           f"prove assumes a property's inv checks only: name one that has "
                           f"them")
        assumed_ids.append(hp.id)
    circular = [h for h in assumed_ids if any(h == p.id for p in chosen)]
    if circular:
        raise BadValue(f"--assume {circular[0]}: {circular[0]} is one of the properties being "
                         f"proved, and a property cannot be assumed to prove itself (name the "
                         f"others with --property)")
    return assumed_ids


class _Decided(Exception):
    """A stage of one property's proof settled its result (status and note set)."""


@dataclass
class _Run:
    """What every property's proof shares: the model, the BFS sample, the options, and
    the invariants mined once (by the first proof that needs them)."""

    model: Model
    all_props: dict[str, Property]
    helpers_of: dict[str, list[str]]
    k: int
    tms: int | None
    mine: bool
    sample_depth: int
    stop: bool  # stop on refutation, and the sample refuted one of the chosen
    sample: _Sample
    say: Callable[[str], None]
    mined: list[Expr] | None = None

    def __post_init__(self) -> None:
        self.outside = unchecked_index(self.model, [e for i in self.model.instances
                                                    for e in (i.guard, *i.updates.values())])
        self.kept_in = [e for e in [domain_obligation(self.model)] if e is not None]

    def one(self, p: Property) -> ProofResult:
        """One property's proof: its stages in order, until one decides (the one place
        where a proof stops)."""
        checks = PropertyChecks.of(self.model, [p])
        res = ProofResult(p, "unknown")
        try:
            self._sampled(res, checks)
            joint = self._bmc(res, checks)
            self._induction(res, joint)
            self._strengthened(res, joint)
            self._deepen(res, checks)
        except _Decided:
            pass
        except SolverGaveUp:  # a timeout is no verdict: said as one, never an error
            res.status, res.note = "timeout", "z3 gave up mining strengthening invariants"
        return res

    # the stages: each returns, or raises _Decided with ``res`` settled -------------------
    def _sampled(self, res: ProofResult, checks: PropertyChecks) -> None:
        """Decided without z3: nothing to prove, stopped, refuted or proved by the BFS."""
        p, sample = res.prop, self.sample
        if checks.empty:
            _decide(res, "skipped", note=f"{p.kinds}: checked by explore")
        v = sample.first.get(p.id)
        if v is None and self.stop:
            _decide(res, "not checked",
                    note="stopped at the first refutation; --continue proves it")
        if v is not None:
            res.trace = _sample_trace(sample.ex, v)
            _decide(res, "refuted", k=len(res.trace[1]),
                    note="found by the BFS over every state to depth "
                         f"{min(sample.covered, self.sample_depth)}")
        if sample.ex.complete:  # (explore stops at a model error: there was none)
            _decide(res, "proved", method="every reachable state",
                    note=f"every reachable state, {sample.ex.distinct:,} to depth "
                         f"{sample.ex.depth_reached}, and every step out of them checked "
                         "by the BFS")
        blind = self.outside or unchecked_index(self.model,
                                                checks.invs + [e for _, e in checks.trans])
        if blind:  # no BMC or induction: z3 would read the last option there
            _decide(res, "unknown", note=blind)

    def _bmc(self, res: ProofResult, checks: PropertyChecks) -> PropertyChecks:
        """BMC to k of the property and of what it assumes; the checks induction proves
        together (the property, its assumptions, the domains kept)."""
        m, k = self.model, self.k
        b = self._timed(res, f"bmc to depth {k}", lambda: bmc(m, checks, k, timeout_ms=self.tms))
        if b.timed_out:
            _decide(res, "timeout", note="z3 gave up during BMC")
        if b.depth is not None:
            _decide(res, "refuted", k=b.depth, trace=(b.states, b.acts))
        helper_ids = res.assumed = self.helpers_of[res.prop.id]
        # the assumptions are proved along with the property: hypotheses before the
        # checked state, obligations on it, and checked on the base case too
        helper_invs = [e for h in helper_ids
                       for e in PropertyChecks.of(m, [self.all_props[h]]).invs]
        broken = [h for h in helper_ids if h in self.sample.first]
        if broken:
            _decide(res, "unknown", note=f"the assumed {broken[0]} is violated (explore finds "
                                         f"it): nothing can be proved from it")
        if (helper_invs or self.kept_in) and self.sample.covered < k:
            hb = bmc(m, PropertyChecks(helper_invs + self.kept_in, []), k, timeout_ms=self.tms)
            if hb.timed_out:
                _decide(res, "timeout", note="z3 gave up checking the assumptions")
            if hb.depth is not None:
                _decide(res, "unknown", note=(
                    f"within depth {hb.depth} an assumed property is violated or an action "
                    "leaves a variable's domain (explore says which): nothing can be proved "
                    "from it"))
        # and every enabled action keeps its variables in their domains (see
        # domain_obligation): z3's steps stay in them, explore's would err
        return PropertyChecks(checks.invs + helper_invs + self.kept_in, checks.trans)

    def _induction(self, res: ProofResult, joint: PropertyChecks) -> None:
        """k-induction alone; where it fails, whether its counterexample is reachable."""
        ind = self._timed(res, None, lambda: k_induction(self.model, joint, self.k,
                                                         timeout_ms=self.tms))
        res.queries[-1] = (f"k-induction k=1..{ind.k}", res.queries[-1][1])
        if ind.status == "proved":
            _decide(res, "proved", k=ind.k, method="k-induction")
        if ind.status == "timeout":
            _decide(res, "timeout", note="z3 gave up during induction")
        res.cti = ind.cti
        assert ind.cti is not None
        cti_states = ind.cti[0]
        pre = cti_states[-2] if len(cti_states) > 1 else cti_states[-1]
        in_sample = compile_pack(self.model)(pre) in self.sample.ex.ids
        res.cti_reachable = True if in_sample else \
            (False if self.sample.ex.complete else None)

    def _strengthened(self, res: ProofResult, joint: PropertyChecks) -> None:
        """k-induction again, with the mined invariants and the property's own lemmas
        that Houdini proved inductive."""
        p = res.prop
        lemmas = list(p.lemmas(self.model.view(0), self.model)) if p.lemmas else []
        if not (self.mine or lemmas):
            return
        strength = mined = self._mined()
        held: list[Expr] = []
        if lemmas:
            # the property's own lemmas must survive Houdini with the mined set
            kept = self._timed(res, None, lambda: houdini(self.model, strength + lemmas,
                                                          timeout_ms=self.tms, log=self.say))
            held = [x for x in lemmas if any(x is y for y in kept)]
            mined = [x for x in kept if not any(x is y for y in lemmas)]
            res.queries[-1] = (f"{len(held)} of {len(lemmas)} lemmas proved inductive",
                               res.queries[-1][1])
            res.lemmas = len(held), len(lemmas)
            strength = kept
        also = f" and {len(held)} hand-written lemmas" if held else ""
        ind2 = self._timed(res, f"k-induction with {len(mined)} strengthening invariants{also}",
                           lambda: k_induction(self.model, joint, self.k, proven=strength,
                                               timeout_ms=self.tms))
        if ind2.status == "proved":
            res.cti = None
            _decide(res, "proved", k=ind2.k, mined=mined, held=held, method="k-induction")
        if ind2.status == "timeout":
            _decide(res, "timeout",
                    note="z3 gave up during induction with the strengthening invariants")
        res.cti = ind2.cti or res.cti

    def _deepen(self, res: ProofResult, checks: PropertyChecks) -> None:
        _deepen(self.model, checks, res, self.k, self.sample, self.sample_depth, self.tms)
        if res.status == "unknown" and self.kept_in and res.cti is not None:
            res.note += _leaves_domain(self.model, res.cti[0][-1])

    # helpers --------------------------------------------------------------------------
    def _mined(self) -> list[Expr]:
        """The candidate invariants mined from the sample that Houdini proved inductive
        together (mined once per run)."""
        if self.mined is None:
            ex = self.sample.ex
            cands = mine_candidates(self.model, ex.packed) if self.mine else []
            self.say(f"mined {len(cands)} candidate invariants from {ex.distinct:,} states")
            t0 = time.perf_counter()
            self.mined = houdini(self.model, cands, timeout_ms=self.tms, log=self.say)
            self.say(f"{len(self.mined)} are inductive together "
                     f"({time.perf_counter() - t0:.1f} s)")
        return self.mined

    @staticmethod
    def _timed(res: ProofResult, label: str | None, query: Callable[[], Any]) -> Any:
        """``query()``, its time recorded under ``label`` (None: named by the caller)."""
        t0 = time.perf_counter()
        out = query()
        res.queries.append((label or "", time.perf_counter() - t0))
        return out


def _decide(res: ProofResult, status: str, **fields: Any) -> NoReturn:
    """Settle ``res`` (its status and the fields given) and end its proof."""
    res.status = status
    for name, value in fields.items():
        setattr(res, name, value)
    raise _Decided


def _leaves_domain(model: Model, state: tuple) -> str:
    """What the counterexample to induction's last state shows of the domains, if an
    action enabled there would leave one (the obligation of domain_obligation)."""
    for inst in model.instances:
        try:
            if not evaluate(inst.guard, state):
                continue
            vals = [(i, evaluate(u, state)) for i, u in sorted(inst.updates.items())]
        except IndexError:  # (an array read outside it: not a domain's matter)
            continue
        for i, v in vals:
            if v not in model.slot_domains[i]:
                return (f"; the induction's last state lets {inst.label} set "
                        f"{model.slot_names[i]} to {v}, outside its domain, which explore "
                        "would stop at if a reachable state did (a stronger guard, or a "
                        "lemma, would settle it)")
    return ""


def _deepen(model: Model, checks: PropertyChecks, res: ProofResult, k: int, sample: _Sample,
            sample_depth: int, tms: int | None) -> None:
    """Induction failed: BMC past what the BFS sample checked whole, to ``sample_depth``,
    before the verdict may be ``unknown``."""
    if sample.covered >= sample_depth:
        bmc_too = f", BMC to depth {k}" if k > sample_depth else ""
        res.note = (f"induction failed; no violation within depth {max(k, sample_depth)} "
                    f"(every state to depth {sample_depth} checked{bmc_too})")
        return
    start = max(k, sample.covered)
    t0 = time.perf_counter()
    b = bmc(model, checks, sample_depth, timeout_ms=tms, start=start + 1)
    res.queries.append((f"bmc from depth {start + 1} to {sample_depth}",
                        time.perf_counter() - t0))
    if b.depth is not None:
        res.status, res.k, res.trace = "refuted", b.depth, (b.states, b.acts)
    elif b.timed_out:
        res.status, res.note = "timeout", f"z3 gave up during BMC at depth {len(b.seconds) + start}"
    else:
        res.note = f"induction failed; no violation within depth {max(k, sample_depth)} (BMC)"
