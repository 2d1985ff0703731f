"""``prove``: BMC, k-induction, and the counterexample-to-induction loop.

For each invariant or transition property:

1. bounded model checking to depth K: a violation is *refuted*, with a trace;
2. k-induction for k = 1..K, assuming the strengthening invariants the property
   names (and any given with ``--assume``): *proved* for every depth;
3. otherwise the counterexample to induction (CTI) is checked against the explicit
   engine: if its state is reachable the bug is real (shortest trace); if not,
   with ``mine``, candidate invariants are mined from the reachable states
   (implications between pairs of variable values) and filtered Houdini-style to
   the largest set that is inductive together; induction is tried again with them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from models.dsl import Model
from models.expr import Expr, Implies, Or, Slot
from properties import catalogue
from properties.base import Property

from .check import prepare
from .explicit import bfs
from .npeval import packed_array, unpack_columns
from .pycompile import compile_pack
from .symbolic import PropertyChecks, bmc, houdini, k_induction, set_seed

__all__ = ["ProofResult", "prove", "mine_candidates"]


@dataclass
class ProofResult:
    prop: Property
    status: str  # proved, refuted, unknown, timeout, skipped
    k: int = 0
    trace: tuple[list[tuple], list[int]] | None = None  # states, actions (refuted)
    cti: tuple[list[tuple], list[int]] | None = None
    cti_reachable: bool | None = None
    assumed: list[str] = field(default_factory=list)
    mined: list[Expr] = field(default_factory=list)
    queries: list[tuple[str, float]] = field(default_factory=list)
    note: str = ""
    lemmas: tuple[int, int] = (0, 0)  # hand-written lemmas proved / given


def describe(e: Expr, model: Model) -> str:
    """A mined invariant as a person reads it."""
    names, doms = model.slot_names, model.slot_domains

    def atom(x: Expr) -> str:
        if x.op == "eq" and x.args[0].op == "slot" and x.args[1].op == "const":
            i = x.args[0].value[0]
            return f"{names[i]} = {doms[i].show(x.args[1].value)}".replace("True", "true").replace(
                "False", "false")
        if x.op == "or":
            return "(" + " or ".join(atom(y) for y in x.args) + ")"
        return repr(x)

    if e.op == "implies":
        return f"{atom(e.args[0])} ⇒ {atom(e.args[1])}"
    return atom(e)


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


def prove(model_name: str, *, params: dict | None = None, mutant: str | None = None,
          props: Sequence[str] = (), k: int = 4, timeout: float | None = 120.0, seed: int = 0,
          mine: bool = False, assume: Sequence[str] = (), sample_depth: int = 12,
          log: Callable[[str], None] | None = None) -> tuple[Model, list[ProofResult]]:
    set_seed(seed)
    model, chosen, _ = prepare(model_name, params=params, mutant=mutant, props=props)
    all_props = {p.id: p for p in catalogue.properties_of(model_name)}
    tms = int(timeout * 1000) if timeout else None
    say = log or (lambda s: None)
    sample: list[int] | None = None
    mined_cache: list[Expr] | None = None
    results = []
    for p in chosen:
        checks = PropertyChecks.of(model, [p])
        if checks.empty:
            results.append(ProofResult(p, "skipped", note=f"{p.kinds}: checked by explore"))
            continue
        res = ProofResult(p, "unknown")
        t0 = time.perf_counter()
        b = bmc(model, checks, k, timeout_ms=tms)
        res.queries.append((f"bmc to depth {k}", time.perf_counter() - t0))
        if b.timed_out:
            res.status, res.note = "timeout", "z3 gave up during BMC"
            results.append(res)
            continue
        if b.depth is not None:
            res.status, res.k, res.trace = "refuted", b.depth, (b.states, b.acts)
            results.append(res)
            continue
        helper_ids = list(dict.fromkeys(list(p.strengthen) + list(assume)))
        helpers: list[Expr] = []
        for hid in helper_ids:
            hp = all_props.get(hid.upper())
            if hp is None:
                raise LookupError(f"--assume {hid}: model {model_name} has no property {hid!r}")
            helpers += PropertyChecks.of(model, [hp]).invs
        res.assumed = helper_ids
        t0 = time.perf_counter()
        ind = k_induction(model, checks, k, assume=helpers, timeout_ms=tms)
        res.queries.append((f"k-induction k=1..{ind.k}", time.perf_counter() - t0))
        if ind.status == "proved":
            res.status, res.k = "proved", ind.k
            results.append(res)
            continue
        if ind.status == "timeout":
            res.status, res.note = "timeout", "z3 gave up during induction"
            results.append(res)
            continue
        res.cti = ind.cti
        # is the CTI real?  Its last pre-state reachable means a real counterexample.
        if sample is None:
            say(f"sampling reachable states (BFS to depth {sample_depth}) for CTIs and mining")
            ex = bfs(model, [], depth=sample_depth, check_deadlock=False)
            sample = ex.packed
            sample_set = set(sample)
            pack = compile_pack(model)
            sample_complete = ex.complete
        assert ind.cti is not None
        cti_states = ind.cti[0]
        pre = cti_states[-2] if len(cti_states) > 1 else cti_states[-1]
        reach = pack(pre) in sample_set
        res.cti_reachable = True if reach else (False if sample_complete else None)
        if reach:
            res.note = "the CTI's state is reachable: BMC beyond K will refute it"
        lemmas = list(p.lemmas(model.view(0), model)) if p.lemmas else []
        if mine or lemmas:
            if mined_cache is None:
                cands = mine_candidates(model, sample) if mine else []
                say(f"mined {len(cands)} candidate invariants from {len(sample):,} states")
                t0 = time.perf_counter()
                mined_cache = houdini(model, cands, timeout_ms=tms, log=say)
                say(f"{len(mined_cache)} are inductive together "
                    f"({time.perf_counter() - t0:.1f} s)")
            strength = mined_cache
            if lemmas:
                # the property's own lemmas must survive Houdini with the mined set
                t0 = time.perf_counter()
                kept = houdini(model, mined_cache + lemmas, timeout_ms=tms, log=say)
                held = [x for x in lemmas if any(x is y for y in kept)]
                res.queries.append((f"{len(held)} of {len(lemmas)} lemmas proved inductive",
                                    time.perf_counter() - t0))
                res.lemmas = len(held), len(lemmas)
                strength = kept
            t0 = time.perf_counter()
            ind2 = k_induction(model, checks, k, assume=helpers + strength, timeout_ms=tms)
            res.queries.append((f"k-induction with {len(strength)} strengthening invariants",
                                time.perf_counter() - t0))
            if ind2.status == "proved":
                res.status, res.k, res.mined = "proved", ind2.k, strength
                res.cti = None
            else:
                res.cti = ind2.cti or res.cti
        results.append(res)
    return model, results


