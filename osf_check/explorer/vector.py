"""The vectorized engine: breadth-first search over numpy arrays.

The frontier is an array of packed states; every action instance evaluates its
guard and its updates over the whole frontier at once (the numpy interpretation
of the *same* DSL expressions: ``If`` → ``where``, ``And`` → ``&``); successors
are packed, deduplicated against the visited set (:mod:`.store`: one sorted segment
per level, a state's id its rank there) and against each other, and numbered at the
end of their level.  Parent links are arrays of indices, so shortest
counterexamples still come out, and the result is an ordinary
:class:`~osf_check.explorer.explicit.Exploration`: the same reports, traces and graph
checks apply.  Storage per state: its key (8 bytes per 64-bit word), its parent
(4) and the action taken (2), nothing more.

States wider than 64 bits are packed into several words (no slot straddles a
word) and compared as fixed-size byte strings.

>>> from osf_check.models.two_phase import SPEC
>>> ex = vector_bfs(SPEC.build({"rms": 3}), [], depth=None)
>>> ex.distinct, ex.generated
(288, 1146)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from osf_check.models.dsl import Model, ModelError
from osf_check.models.errors import BadValue
from osf_check.models.expr import Slot
from osf_check.properties.base import CheckList, Property

from .explicit import Exploration, Progress, Violation
from .npeval import np_eval
from .store import STORE_VERSION, LevelStore, sortable

if TYPE_CHECKING:
    from .symmetry import Reduction

__all__ = ["vector_bfs", "Layout"]


class Layout:
    """Where each slot lives: (word, bit offset, bits, lo)."""

    def __init__(self, model: Model):
        self.model = model
        self.fields: list[tuple[int, int, int, int]] = []
        word, off = 0, 0
        for d in model.slot_domains:
            b = d.bits
            if off + b > 64:
                word, off = word + 1, 0
            self.fields.append((word, off, b, d.lo))
            off += b
        self.words = word + 1

    def pack(self, cols: Sequence[np.ndarray], n: int) -> np.ndarray:
        out = np.zeros((n, self.words), dtype=np.uint64)
        for c, (w, off, b, lo) in zip(cols, self.fields):
            if b:
                v = np.asarray(c, dtype=np.int64)
                out[:, w] |= (v - lo if lo else v).astype(np.uint64) << np.uint64(off)
        return out

    def patch(self, keys: np.ndarray, changed: dict[int, np.ndarray]) -> np.ndarray:
        """``keys`` with the fields of the changed slots replaced."""
        out = keys.copy()
        for i, v in changed.items():
            w, off, b, lo = self.fields[i]
            if b == 0:
                continue
            mask = np.uint64(((1 << b) - 1) << off)
            out[:, w] = (out[:, w] & ~mask) | ((v - lo if lo else v).astype(np.uint64)
                                                << np.uint64(off))
        return out

    def unpack(self, keys: np.ndarray) -> list[np.ndarray]:
        return [self.unpack_slot(keys, i) for i in range(len(self.fields))]

    def unpack_slot(self, keys: np.ndarray, i: int) -> np.ndarray:
        """Slot ``i`` of every key, as int64."""
        w, off, b, lo = self.fields[i]
        if b == 0:
            return np.full(len(keys), lo, dtype=np.int64)
        c = ((keys[:, w] >> np.uint64(off)) & np.uint64((1 << b) - 1)).astype(np.int64)
        return c + lo if lo else c

    def unpack_one(self, key: np.ndarray) -> tuple:
        return tuple(int(c[0]) for c in self.unpack(np.asarray(key).reshape(1, self.words)))

    def sortable(self, keys: np.ndarray) -> np.ndarray:
        """A 1-D array with one comparable element per key row."""
        return sortable(keys)


class _Gather:
    """Columns of selected rows, gathered only when an expression reads them."""

    def __init__(self, cols: list[np.ndarray], rows: np.ndarray):
        self.cols, self.rows, self.got = cols, rows, {}

    def __getitem__(self, i: int) -> np.ndarray:
        c = self.got.get(i)
        if c is None:
            c = self.got[i] = self.cols[i][self.rows]
        return c

    def __len__(self) -> int:
        return len(self.cols)


class _Next:
    """The successor's columns: the changed ones, else the current ones."""

    def __init__(self, cur: _Gather):
        self.cur, self.changed = cur, {}

    def __getitem__(self, i: int) -> np.ndarray:
        c = self.changed.get(i)
        return c if c is not None else self.cur[i]

    def __setitem__(self, i: int, v: np.ndarray) -> None:
        self.changed[i] = v


class _VectorExploration(Exploration):
    """An Exploration whose states live in numpy arrays."""

    def state(self, sid: int) -> tuple:  # type: ignore[override]
        return self.layout.unpack_one(self.keys[sid])

    def __post_init__(self) -> None:  # no compiled unpack: the layout decodes
        pass

    @property
    def distinct(self) -> int:  # type: ignore[override]
        return len(self.keys)

    def columns(self) -> list[np.ndarray]:
        """Every state's slots, one column per slot in the narrowest integer type that
        holds its domain (what the graph checks read; np_eval widens for arithmetic)."""
        # one slot at a time: unpacking every slot to 64 bits first would hold 8 bytes per
        # slot per state at once (gigabytes on a complete relay space)
        doms = self.model.slot_domains
        return [self.layout.unpack_slot(self.keys, i).astype(_narrow(d.lo, d.hi))
                for i, d in enumerate(doms)]

    @property  # type: ignore[override]
    def packed(self) -> list[int]:
        """The explicit engine's packed ints, built on first use only (the extension of a
        bounded run's reach check needs them; a complete run never does)."""
        got = self.__dict__.get("_packed")
        if got is None:
            from .pycompile import compile_pack
            pk = compile_pack(self.model)
            got = self.__dict__["_packed"] = [pk(tuple(r)) for r in
                                              np.stack(self.columns(), axis=1).tolist()]
        return got

    @packed.setter
    def packed(self, value: list[int]) -> None:
        self.__dict__["_packed"] = value or None

    @property  # type: ignore[override]
    def ids(self) -> dict[int, int]:
        got = self.__dict__.get("_ids")
        if got is None:
            got = self.__dict__["_ids"] = {p: i for i, p in enumerate(self.packed)}
        return got

    @ids.setter
    def ids(self, value: dict[int, int]) -> None:
        self.__dict__["_ids"] = value or None

    def stored_bytes(self) -> int:  # type: ignore[override]
        """The visited set and parent links: keys, parents, actions and the filter."""
        return int(self.keys.nbytes + self.parent.nbytes + self.via.nbytes
                   + getattr(self, "filter_bytes", 0))

    def path_to(self, sid: int) -> tuple[list[int], list[int]]:
        ids, acts = [], []
        while sid >= 0:
            ids.append(int(sid))
            acts.append(int(self.via[sid]))
            sid = int(self.parent[sid])
        return ids[::-1], acts[::-1]


def _narrow(lo: int, hi: int) -> type:
    for t in (np.int8, np.int16, np.int32):
        if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
            return t
    return np.int64


def vector_bfs(model: Model, props: Sequence[Property], *, depth: int | None = 12,
               max_states: int | None = None, keep_graph: bool = False,
               check_deadlock: bool = True, stop_on_violation: bool = True,
               progress: Progress | None = None, checkpoint: str | os.PathLike | None = None,
               checkpoint_every: float = 300.0, resume: str | os.PathLike | None = None,
               stop_after_levels: int | None = None, chunk: int = 1 << 17,
               workers: int = 1, tick: Callable[[int, int], None] | None = None,
               reduce: "Reduction | None" = None) -> Exploration:
    """Breadth-first search with numpy; same results as :func:`osf_check.explorer.explicit.bfs`.

    ``tick(done, total)`` reports progress within a level: frontier states expanded so
    far of the level's (by this process; forked workers report nothing)."""
    t0 = time.perf_counter()
    home = os.getpid()
    lay = Layout(model)
    n = model.nslots
    insts = model.instances
    ex = _VectorExploration(model, depth)
    ex.layout = lay  # type: ignore[attr-defined]
    ex.fired = [0] * len(insts)
    upd_exprs = [[inst.updates.get(i, Slot(i)) for i in range(n)] for inst in insts]
    changed = [sorted(inst.updates) for inst in insts]
    doms = model.slot_domains

    checks = CheckList.of(model, props)
    invs, witnesses, trans = checks.invs, checks.witnesses, checks.trans
    ex.witness_seen.update((k, False) for k, _ in witnesses)
    ex.trans_applied.update((k, 0) for k in checks.trans_props)
    failed: set[str] = set()

    # storage --------------------------------------------------------------
    starts = model.initial_states
    if reduce is not None:
        starts = [reduce.canon(s) for s in starts]
    init = np.array(starts, dtype=np.int64).reshape(len(starts), n)
    init_keys = lay.pack([init[:, i] for i in range(n)], len(init))
    _, first = np.unique(lay.sortable(init_keys), return_index=True)
    init_keys = init_keys[np.sort(first)]
    act_dtype = np.int16 if len(insts) < 32_000 else np.int32
    store = LevelStore(init_keys, act_dtype)
    generated = len(store)
    fired = np.zeros(len(insts), dtype=np.int64)
    src_e: list[np.ndarray] = []
    dst_e: list[np.ndarray] = []
    act_e: list[np.ndarray] = []
    violations: list[Violation] = []
    frontier_lo, frontier_hi = 0, len(store)
    level = 0
    ident = run_identity(model, props, keep_graph=keep_graph, check_deadlock=check_deadlock,
                         symmetry=reduce.names() if reduce is not None else [])
    if resume is not None:
        st = _load(Path(resume), ident)
        meta = st["meta"]
        store = LevelStore.from_arrays(st["keys"], st["parent"], st["via"],
                                       st["level_start"].tolist())
        generated = int(st["generated"])
        fired = st["fired"]
        frontier_lo, frontier_hi = int(st["frontier"][0]), int(st["frontier"][1])
        level = int(st["level"])
        t0 -= float(st["seconds"])
        # everything the run had learnt, not only the states: the verdicts so far, the
        # coverage of the checks, and the edges the graph checks need
        failed.update(meta["failed"])
        violations.extend(Violation(**v) for v in meta["violations"])
        ex.witness_seen.update(meta["witness_seen"])
        ex.trans_applied.update(meta["trans_applied"])
        if keep_graph:
            src_e, dst_e, act_e = [st["src_e"]], [st["dst_e"]], [st["act_e"]]
    last_cp = time.perf_counter()

    def check_states(cols: list[np.ndarray], ids: np.ndarray) -> None:
        m = len(ids)
        for pid, e in invs:
            if pid in failed:
                continue
            ok = np.broadcast_to(np.asarray(np_eval(e, cols, n=m), dtype=bool), (m,))
            if not ok.all():
                failed.add(pid)
                sid = int(ids[np.argmin(ok)])
                violations.append(Violation(pid, "inv", "invariant violated", *_path(sid)))
        for pid, e in witnesses:
            if not ex.witness_seen[pid]:
                if np.any(np_eval(e, cols, n=m)):
                    ex.witness_seen[pid] = True

    _path = store.path_to  # (after a resume: the resumed store)

    if resume is None:
        check_states(lay.unpack(store.keys[0]), np.arange(len(store)))

    def expand(lo: int, hi: int, for_graph: bool) -> dict:
        """Successors of frontier states lo..hi (ids), in chunks; without ``for_graph`` only
        the first occurrence of each successor not yet visited is kept."""
        res = {"generated": 0, "fired": np.zeros(len(insts), dtype=np.int64),
               "trans_applied": {}, "trans_viol": [], "stuck": -1, "parts": []}
        for clo in range(lo, hi, chunk):
            chi = min(clo + chunk, hi)
            if tick is not None and os.getpid() == home:
                tick(clo - frontier_lo, frontier_hi - frontier_lo)
            fkeys = store.keys[-1][clo - frontier_lo:chi - frontier_lo]  # the frontier
            fcols = lay.unpack(fkeys)
            fn = chi - clo
            any_enabled = np.zeros(fn, dtype=bool)
            cand_keys, cand_par, cand_act = [], [], []
            for ai, inst in enumerate(insts):
                g = np.broadcast_to(np.asarray(np_eval(inst.guard, fcols, n=fn), dtype=bool), (fn,))
                rows = np.flatnonzero(g)
                if rows.size == 0:
                    continue
                any_enabled[rows] = True
                res["fired"][ai] += rows.size
                sel = _Gather(fcols, rows)  # columns of the enabled rows, on demand
                m = rows.size
                out = _Next(sel)
                for i in changed[ai]:
                    v = np.broadcast_to(np.asarray(np_eval(upd_exprs[ai][i], sel, n=m)),
                                        (m,)).astype(np.int64)
                    d = doms[i]
                    if v.size and (v.min() < d.lo or v.max() > d.hi):
                        bad = int(v[(v < d.lo) | (v > d.hi)][0])
                        raise ModelError(f"action {inst.label} sets {model.slot_names[i]} to "
                                         f"{bad}, outside its domain {d}: widen the domain or "
                                         f"strengthen the guard")
                    out[i] = v
                for pid, e in trans[ai]:
                    res["trans_applied"][pid] = res["trans_applied"].get(pid, 0) + m
                    if pid in failed:
                        continue
                    ok = np.broadcast_to(np.asarray(np_eval(e, sel, out, n=m), dtype=bool), (m,))
                    if not ok.all():
                        res["trans_viol"].append((pid, clo + int(rows[np.argmin(ok)]), ai))
                if reduce is not None:  # the representative of the successor's class
                    out.changed.update(reduce.canon_cols(
                        {i: np.asarray(out[i], dtype=np.int64) for i in reduce.slots}))
                cand_keys.append(lay.patch(fkeys[rows], out.changed))
                cand_par.append((rows + clo).astype(np.int32))  # ids fit 32 bits
                cand_act.append(np.full(m, ai, dtype=act_dtype))
            if check_deadlock and res["stuck"] < 0 and not any_enabled.all():
                stuck = np.flatnonzero(~any_enabled)
                if model.quiescent is not None:
                    q = np.broadcast_to(np.asarray(np_eval(
                        model.quiescent, [c[stuck] for c in fcols], n=stuck.size), dtype=bool),
                        (stuck.size,))
                    stuck = stuck[~q]
                if stuck.size:
                    res["stuck"] = clo + int(stuck[0])
            del fcols
            if not cand_keys:
                continue
            ck = np.concatenate(cand_keys)
            cp = np.concatenate(cand_par)
            ca = np.concatenate(cand_act)
            res["generated"] += len(ck)
            if not for_graph:
                uniq, first = np.unique(lay.sortable(ck), return_index=True)
                seen, _ = store.lookup(uniq)
                keep = np.sort(first[~seen])
                ck, cp, ca = ck[keep], cp[keep], ca[keep]
            res["parts"].append((ck, cp, ca))
        return res

    while frontier_hi > frontier_lo:
        if violations and stop_on_violation:
            ex.stopped = "violation"
            break
        if depth is not None and level >= depth:
            break
        if stop_after_levels is not None and level >= stop_after_levels:
            break  # (tests: simulate an interrupted run)
        # the level in chunks, so that temporaries stay bounded; with workers, the
        # frontier is split between processes that expand and pre-filter their part
        ranges = _split(frontier_lo, frontier_hi, workers if not keep_graph else 1, chunk)
        results = _run_parallel(expand, ranges, keep_graph)
        # first discoveries of states not stored before, in discovery order; with the
        # graph, the level's edges, whose targets new in this level are found by key once
        # the level is numbered
        new_k, new_p, new_a = [], [], []
        lvl_dst, pend_pos, pend_keys = [], [], []
        edge_base = 0
        for res in results:
            generated += res["generated"]
            fired += res["fired"]
            for pid, k in res["trans_applied"].items():
                ex.trans_applied[pid] += k
            for pid, sidx, ai in res["trans_viol"]:
                if pid not in failed:
                    failed.add(pid)
                    ids, acts = _path(sidx)
                    violations.append(Violation(pid, "trans", f"transition check failed on "
                                                f"{insts[ai].label}", ids + [-1], acts + [ai]))
            if res["stuck"] >= 0 and check_deadlock and "deadlock" not in failed:
                failed.add("deadlock")
                violations.append(Violation(
                    "deadlock", "deadlock", "no action is enabled and the state is not a "
                    "legitimate end state", *_path(res["stuck"])))
            parts = res.pop("parts")
            while parts:  # each part released once merged
                ck, cp, ca = parts.pop(0)
                if keep_graph:  # edges by source, then action (each action's run is sorted)
                    o = np.argsort(cp, kind="stable")
                    ck, cp, ca = ck[o], cp[o], ca[o]
                    del o
                if not keep_graph:  # the worker kept each unstored state's first occurrence
                    new_k.append(ck)
                    new_p.append(cp)
                    new_a.append(ca)
                    continue
                sk = lay.sortable(ck)
                uniq, first, inv = np.unique(sk, return_index=True, return_inverse=True)
                seen, ids = store.lookup(uniq)
                fresh_first = np.sort(first[~seen])
                new_k.append(ck[fresh_first])
                new_p.append(cp[fresh_first])
                new_a.append(ca[fresh_first])
                if keep_graph:
                    dst = ids.astype(np.int32)[np.asarray(inv).ravel()]  # -1: new this level
                    miss = np.flatnonzero(dst < 0)
                    pend_pos.append(miss + edge_base)
                    pend_keys.append(sk[miss])
                    lvl_dst.append(dst)
                    # ids fit 32 bits (parent links are int32 too), actions 16
                    src_e.append(cp)
                    act_e.append(ca.astype(act_dtype))
                    edge_base += len(ck)
        del results
        level += 1
        start = _add_level(store, lay, new_k, new_p, new_a)
        del new_k, new_p, new_a
        if keep_graph and lvl_dst:
            d = np.concatenate(lvl_dst)
            pp = np.concatenate(pend_pos)
            if len(pp):
                d[pp] = start + np.searchsorted(lay.sortable(store.keys[-1]),
                                                np.concatenate(pend_keys))
            dst_e.append(d)
            del d, pp, lvl_dst, pend_pos, pend_keys
        frontier_lo, frontier_hi = frontier_hi, len(store)
        if frontier_hi > frontier_lo:
            new = store.keys[-1]
            for lo in range(0, len(new), chunk):  # unpacked a chunk at a time: a whole
                hi = min(lo + chunk, len(new))     # level at 64 bits a slot is gigabytes
                check_states(lay.unpack(new[lo:hi]), np.arange(frontier_lo + lo, frontier_lo + hi))
        if progress is not None:
            progress(level, len(store), generated, time.perf_counter() - t0)
        if max_states is not None and len(store) >= max_states and frontier_hi > frontier_lo:
            ex.stopped = "max-states"
            break
        if checkpoint is not None and time.perf_counter() - last_cp >= checkpoint_every:
            meta = {"identity": ident, "failed": sorted(failed),
                    "violations": [dataclasses.asdict(v) for v in violations],
                    "witness_seen": ex.witness_seen, "trans_applied": ex.trans_applied}
            cat = (lambda xs: np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64))
            if keep_graph:  # one array each, so that the next save does not copy pieces
                src_e, dst_e, act_e = [cat(src_e)], [cat(dst_e)], [cat(act_e)]
            keys, parent, via = store.arrays()
            _save(Path(checkpoint), keys=keys, parent=parent, via=via,
                  store_version=STORE_VERSION,
                  level_start=np.array(store.starts), generated=generated, fired=fired,
                  frontier=np.array([frontier_lo, frontier_hi]), level=level,
                  seconds=time.perf_counter() - t0, meta=np.array(json.dumps(meta)),
                  **({"src_e": src_e[0], "dst_e": dst_e[0], "act_e": act_e[0]}
                     if keep_graph else {}))
            del keys, parent, via
            last_cp = time.perf_counter()
    ex.level_start = list(store.starts)
    ex.filter_bytes = store.bloom.nbytes  # type: ignore[attr-defined]
    ex.keys, ex.parent, ex.via = store.finish()  # type: ignore[attr-defined]
    ex.generated = generated
    ex.fired = fired.tolist()
    ex.violations = violations
    frontier_open = frontier_hi > frontier_lo
    ex.complete = not frontier_open and ex.stopped is None and stop_after_levels is None
    ex.expanded = frontier_lo if frontier_open else len(ex.keys)
    if ex.stopped == "violation":
        ex.expanded = frontier_lo
    if keep_graph:
        # already by source, then action (the explicit engine's edge order): levels and
        # their chunks come in id order; numpy arrays the graph checks read as they are
        ex.edges = (_cat_free(src_e, np.int32), _cat_free(dst_e, np.int32),  # type: ignore
                    _cat_free(act_e, act_dtype))
    ex.seconds = time.perf_counter() - t0
    return ex


_EMPTY = np.zeros(0, dtype=np.int8)


def _cat_free(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    """The pieces end to end, each released once copied: the peak is the result plus one
    piece, not twice the edges."""
    out = np.empty(sum(len(p) for p in parts), dtype=dtype)
    at = 0
    for i, p in enumerate(parts):
        out[at:at + len(p)] = p
        at += len(p)
        parts[i] = _EMPTY  # not p[:0]: a view would keep p's memory
    parts.clear()
    return out


def _add_level(store: LevelStore, lay: Layout, new_k: list[np.ndarray],
               new_p: list[np.ndarray], new_a: list[np.ndarray]) -> int:
    """Number a level: its new states sorted by key, each with the parent and action of
    its first discovery (a stable sort keeps discovery order among equal keys)."""
    if not new_k or not sum(len(k) for k in new_k):
        return len(store)
    keys = np.concatenate(new_k)
    sk = lay.sortable(keys)
    o = np.argsort(sk, kind="stable")
    so = sk[o]
    first = np.ones(len(o), dtype=bool)
    first[1:] = so[1:] != so[:-1]
    sel = o[first]
    del o, so, first
    return store.add_level(keys[sel], np.concatenate(new_p)[sel], np.concatenate(new_a)[sel])


def _split(lo: int, hi: int, workers: int, chunk: int) -> list[tuple[int, int]]:
    """Contiguous ranges of the frontier, one per worker (one if it is small)."""
    n = hi - lo
    if workers <= 1 or n < 2 * chunk:
        return [(lo, hi)]
    step = -(-n // workers)
    return [(a, min(a + step, hi)) for a in range(lo, hi, step)]


def _run_parallel(expand, ranges: list[tuple[int, int]], for_graph: bool) -> list[dict]:
    """Expand the first range here and the others in forked children (their memory is a
    copy-on-write view of this process: nothing is pickled on the way in)."""
    if len(ranges) == 1:
        return [expand(*ranges[0], for_graph)]
    import pickle
    children = []
    for lo, hi in ranges[1:]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            os.close(r)
            code = 0
            try:
                try:
                    result: object = expand(lo, hi, for_graph)
                except Exception as e:  # handed to the parent, which raises it
                    result = {"error": e}
                data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(w, "wb") as f:
                    f.write(data)
            except BaseException:
                code = 1
            os._exit(code)
        os.close(w)
        children.append((pid, r))
    first = expand(*ranges[0], for_graph)
    out = [first]
    for pid, r in children:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            raise RuntimeError("a worker process failed while expanding the frontier")
        got = pickle.loads(data)
        if "error" in got:
            raise got["error"]
        out.append(got)
    return out


def _save(d: Path, **arrays: object) -> None:
    """Write the search state atomically: a new file, then a rename."""
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / ".state.npz.tmp"
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **{k: np.asarray(v) for k, v in arrays.items()})
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, d / "state.npz")
    except BaseException:  # interrupted mid-write: the last whole checkpoint stays
        tmp.unlink(missing_ok=True)
        raise


def run_identity(model: Model, props: Sequence[Property], *, keep_graph: bool,
                 check_deadlock: bool, symmetry: Sequence[str] = ()) -> dict[str, Any]:
    """What a checkpoint belongs to: resuming it under anything else would mix two runs.
    ``structure`` is a digest of every guard and update, so a mutant, a dropped
    assumption or an edited model changes it even where the names stay the same."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        tool = version("osf-check")
    except PackageNotFoundError:
        tool = "unknown"
    h = hashlib.sha256()
    for v in model.variables:
        h.update(repr((v.name, [str(model.slot_domains[i]) for i in v.slots])).encode())
    for inst in model.instances:
        h.update(repr((inst.label, inst.guard, sorted(inst.updates.items()))).encode())
    return {"tool": f"osf-check {tool}", "engine": "vector", "model": model.name,
            "params": dict(model.params), "mutant": model.mutant,
            "properties": [p.id for p in props], "graph": keep_graph,
            "deadlock": check_deadlock, "symmetry": list(symmetry),
            "structure": h.hexdigest()[:16]}


def _load(d: Path, ident: dict[str, Any]) -> dict[str, Any]:
    p = d / "state.npz"
    if not p.exists():
        raise BadValue(f"--resume {d}: no checkpoint there (state.npz)")
    try:
        with np.load(p) as z:
            st = {k: z[k] for k in z.files}
        meta = json.loads(str(st["meta"]))
    except (OSError, ValueError, KeyError, EOFError) as e:
        raise BadValue(f"--resume {d}: not a checkpoint of this osf-check "
                       f"({type(e).__name__})") from None
    if int(st.get("store_version", 0)) != STORE_VERSION:
        raise BadValue(f"--resume {d}: the checkpoint was written by an older osf-check "
                       "(another layout of the visited set): start the run again")
    theirs = meta.get("identity", {})
    for k, mine in ident.items():
        if theirs.get(k) != mine:
            raise BadValue(f"--resume {d}: the checkpoint belongs to another run: {k} is "
                           f"{theirs.get(k)!r} there and {mine!r} here")
    st["meta"] = meta
    return st

