"""The vectorized engine: breadth-first search over numpy arrays.

The frontier is an array of packed states; every action instance evaluates its
guard and its updates over the whole frontier at once (the numpy interpretation
of the *same* DSL expressions: ``If`` → ``where``, ``And`` → ``&``); successors
are packed, deduplicated against the visited set (:mod:`.store`: one sorted segment
per level, a state's id its rank there) and against each other, and numbered at the
end of their level.  Parent links are arrays of indices, so shortest
counterexamples still come out, and the result is an ordinary
:class:`~osf_check.explorer.explicit.bfs.Exploration`: the same reports, traces and graph
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

import os
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from osf_check.models.dsl import Model
from osf_check.models.errors import BadValue
from osf_check.properties.base import CheckList, Property

from osf_check.explorer.store.checkpoint import load as load_checkpoint
from osf_check.explorer.store.checkpoint import run_identity
from osf_check.explorer.store.checkpoint import save as save_checkpoint
from osf_check.explorer.store.edges import EdgeLog
from osf_check.explorer.result import Exploration, Progress
from osf_check.explorer.store.layout import Layout
from .shard_edges import sources
from osf_check.explorer.store.levels import IdsExhausted, LevelStore
from osf_check.explorer.store.spill import Spill
from .successors import Expansion, Successors, edge_action_dtype, expand_range
from .verdicts import Judge

if TYPE_CHECKING:
    from osf_check.explorer.symmetry import Reduction

__all__ = ["vector_bfs", "Layout"]


class _VectorExploration(Exploration):
    """An Exploration whose states live in numpy arrays."""

    def state(self, sid: int) -> tuple:  # type: ignore[override]
        return self.layout.unpack_one(self.keys[sid])

    def __post_init__(self) -> None:  # no compiled unpack: the layout decodes
        pass

    @property
    def distinct(self) -> int:  # type: ignore[override]
        lazy = self.__dict__.get("_slices")
        return lazy.count if lazy is not None else len(self.keys)

    # a partitioned search's states are put together in id order when first read
    # (:class:`~.partition.Slices`); one process's are its store's
    def _states(self, i: int) -> np.ndarray:
        lazy = self.__dict__.pop("_slices", None)
        if lazy is not None:
            self.__dict__["_kpv"] = list(lazy.arrays())
        return self.__dict__["_kpv"][i]

    def _set_state(self, i: int, value: np.ndarray) -> None:
        self.__dict__.pop("_slices", None)
        self.__dict__.setdefault("_kpv", [None, None, None])[i] = value

    keys = property(lambda self: self._states(0),
                    lambda self, v: self._set_state(0, v))
    parent = property(lambda self: self._states(1),  # type: ignore[assignment]
                      lambda self, v: self._set_state(1, v))
    via = property(lambda self: self._states(2),  # type: ignore[assignment]
                   lambda self, v: self._set_state(2, v))

    def columns(self) -> Sequence[np.ndarray]:
        """Every state's slots, one column per slot in the narrowest integer type that
        holds its domain, decoded when first read (what the graph checks read; np_eval
        widens for arithmetic)."""
        return self.layout.unpack(self.keys)

    @property  # type: ignore[override]
    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Sources, targets and actions of the edges.  A partitioned search gathers them
        by source (:attr:`edge_off`, where each state's edges start): their sources are
        spelt out on first read only, which the graph checks never do."""
        got = self.__dict__.get("_edges")
        if got is not None and got[0] is None:
            got = self.__dict__["_edges"] = (sources(self.edge_off), *got[1:])
        return got

    @edges.setter
    def edges(self, value: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> None:
        self.__dict__["_edges"] = value

    def edges_by_source(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        off = self.__dict__.get("edge_off")
        if off is None:
            return super().edges_by_source()
        return off, *self.__dict__["_edges"][1:]  # type: ignore[return-value]

    @property  # type: ignore[override]
    def packed(self) -> list[int]:
        """The explicit engine's packed ints, built on first use only (the extension of a
        bounded run's reach check needs them; a complete run never does)."""
        got = self.__dict__.get("_packed")
        if got is None:
            from osf_check.explorer.compiled.pycompile import compile_pack
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
        """The visited set and parent links: keys, parents, actions and the filter (of a
        partitioned search: every worker's, with the global ids each keeps)."""
        if getattr(self, "worker_bytes", None) is not None:
            return int(self.worker_bytes)
        return int(self.keys.nbytes + self.parent.nbytes + self.via.nbytes
                   + getattr(self, "filter_bytes", 0))

    def path_to(self, sid: int) -> tuple[list[int], list[int]]:
        ids, acts = [], []
        while sid >= 0:
            ids.append(int(sid))
            acts.append(int(self.via[sid]))
            sid = int(self.parent[sid])
        return ids[::-1], acts[::-1]


#: frontier states expanded at a time.  A larger chunk drops more repeated successors
#: before they are looked up and merged, in fewer and longer sorts: one process took 3 to
#: 10 % less time with 262,144 than with 131,072 (2026-12-04, in turns: TwoPhase N=9
#: 5.54-5.66 s against 5.92-6.16, graph-relay's safety search 9.59-9.64 against
#: 10.05-10.31, its search with the graph 16.6 against 18.5), for up to 4 % more peak
#: memory (TwoPhase 3 % less); 524,288 gained a little more on graph-relay for a third
#: more memory.  Two workers gain less (as long with either in runs taken in turns, 5 %
#: between two benchmark sets): they wait out part of it at each level's end, where
#: a worker's last chunk is longer.
CHUNK = 1 << 18


def vector_bfs(model: Model, props: Sequence[Property], *, depth: int | None = 12,
               max_states: int | None = None, keep_graph: bool = False,
               check_deadlock: bool = True, stop_on_violation: bool = True,
               progress: Progress | None = None, checkpoint: str | os.PathLike | None = None,
               checkpoint_every: float = 300.0, resume: str | os.PathLike | None = None,
               stop_after_levels: int | None = None, chunk: int = CHUNK,
               workers: int = 1, tick: Callable[[int, int], None] | None = None,
               reduce: "Reduction | None" = None, cluster: str | None = None,
               memory: int | None = None, spill_dir: str | os.PathLike | None = None
               ) -> Exploration:
    """Breadth-first search with numpy; same results as :func:`osf_check.explorer.explicit.bfs`.

    A search of parts with one job each: :class:`~.successors.Successors` (the model's
    actions over columns), :class:`~.store.LevelStore` (visited set and parent links),
    :class:`~.verdicts.Judge` (properties), :class:`~.edges.EdgeLog` (the graph),
    and :mod:`.checkpoint`; with ``workers`` > 1 or a Ray ``cluster`` address, the
    search is partitioned over workers (:mod:`.partition`), with the same results.

    ``tick(done, total)`` reports progress within a level: frontier states expanded so
    far of the level's (one process only).

    ``memory``: a budget in bytes for the process; to stay within it, the store's older
    arrays go to files in a directory made under ``spill_dir`` (the system's temporary
    one by default) and removed as the search ends (:mod:`.store.spill`; one process
    only).  The counts and verdicts are the same; ``ex.spill`` says what was spilled."""
    t0 = time.perf_counter()
    lay = Layout(model)
    checks = CheckList.of(model, props)
    succ = Successors(model, lay, checks, deadlock=check_deadlock, reduce=reduce)
    ex = _VectorExploration(model, depth)
    ex.layout = lay  # type: ignore[attr-defined]
    # what a checkpoint belongs to (digests of the model and its checks: 0.08 s for
    # graph-relay, so only where a checkpoint is written or read)
    ident = run_identity(model, props, keep_graph=keep_graph, check_deadlock=check_deadlock,
                         symmetry=reduce.names() if reduce is not None else [],
                         checks=checks) if checkpoint is not None or resume is not None else {}
    starts = model.initial_states
    if reduce is not None:
        starts = [reduce.canon(s) for s in starts]
    if memory is not None and (workers > 1 or cluster is not None):
        raise BadValue("--memory works in one process: leave out --workers and --cluster")
    if workers > 1 or cluster is not None:
        return _partitioned(model, props, ex, _distinct(lay, starts, model.nslots), ident,
                            workers=workers, keep_graph=keep_graph, depth=depth,
                            max_states=max_states,
                            check_deadlock=check_deadlock, stop_on_violation=stop_on_violation,
                            progress=progress, checkpoint=checkpoint,
                            checkpoint_every=checkpoint_every, resume=resume,
                            stop_after_levels=stop_after_levels, chunk=chunk, reduce=reduce,
                            t0=t0, cluster=cluster)
    with (Spill(memory, spill_dir) if memory is not None else nullcontext()) as spill:
        # (the spill directory is removed at the end, also on an error or Ctrl-C)
        got = _one_process(model, ex, succ, checks, ident, starts, depth=depth,
                           max_states=max_states, keep_graph=keep_graph,
                           stop_on_violation=stop_on_violation, progress=progress,
                           checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                           resume=resume, stop_after_levels=stop_after_levels, chunk=chunk,
                           tick=tick, t0=t0, spill=spill)
    if spill is not None:
        got.spill = spill.counts()  # type: ignore[attr-defined]
    return got


def _one_process(model: Model, ex: "_VectorExploration", succ: Successors, checks: CheckList,
                 ident: dict[str, Any], starts: Sequence[tuple], *, depth: int | None,
                 max_states: int | None, keep_graph: bool, stop_on_violation: bool,
                 progress: Progress | None, checkpoint: str | os.PathLike | None,
                 checkpoint_every: float, resume: str | os.PathLike | None,
                 stop_after_levels: int | None, chunk: int,
                 tick: Callable[[int, int], None] | None, t0: float,
                 spill: Spill | None) -> Exploration:
    """The search in this process, under ``spill``'s budget if one."""
    lay = ex.layout  # type: ignore[attr-defined]
    store = LevelStore(_distinct(lay, starts, model.nslots), succ.act_dtype)
    run = _Run(generated=len(store), fired=np.zeros(len(model.instances), dtype=np.int64),
               frontier=(0, len(store)), level=0)
    saved: dict[str, Any] | None = None
    if resume is not None:
        saved = load_checkpoint(Path(resume), ident, depth)
        store = LevelStore.from_arrays(saved["keys"], saved["parent"], saved["via"],
                                       saved["level_start"].tolist())
        run = _Run.resumed(saved)
        t0 -= float(saved["seconds"])
        ex.seconds_before = float(saved["seconds"])
    judge = Judge(model, checks, store.path_to)
    edges = EdgeLog(edge_action_dtype(model), saved if keep_graph and saved is not None else None) \
        if keep_graph else None
    store.spill = spill
    if edges is not None:
        edges.spill = spill
    if saved is not None:
        judge.restore(saved["meta"])
    else:
        judge.states(lay.unpack(store.keys[0]), np.arange(len(store)))
    last_cp = time.perf_counter()

    while run.frontier[1] > run.frontier[0]:
        if judge.violations and stop_on_violation:
            ex.stopped = "violation"
            break
        if depth is not None and run.level >= depth:
            break
        if stop_after_levels is not None and run.level >= stop_after_levels:
            break  # (tests: simulate an interrupted run)
        if max_states is not None and len(store) >= max_states:
            ex.stopped = "max-states"  # (checked here, not as a level ends: a checkpoint
            break  # resumed may hold more already; and at the depth bound nothing was cut)
        # the level in chunks, so that temporaries stay bounded
        lo, hi = run.frontier
        if spill is not None:
            spill.level_starts()
        found = expand_range(succ, store, lo, hi, lo, hi, chunk=chunk, failed=judge.failed,
                             for_graph=keep_graph, tick=tick)
        if spill is not None:  # the level's candidates are held: measured for the budget
            spill.sample()
        try:
            start = _merge_level([found], store, run, judge, edges)
        except IdsExhausted:
            if edges is not None:  # half a level's edges logged: no graph to check
                raise
            ex.stopped = "state-ids"  # the level is not stored: no verdict
            break
        if edges is not None:
            edges.end_level(store, start)
        run.level += 1
        run.frontier = (run.frontier[1], len(store))
        _judge_level(judge, lay, store, run.frontier[0], chunk)
        if progress is not None:  # the depth of the deepest state, as the result says it
            deepest = run.level if run.frontier[1] > run.frontier[0] else run.level - 1
            progress(deepest, len(store), run.generated, time.perf_counter() - t0)
        if spill is not None:  # the level is judged: what is past goes to disk
            spill.relieve(store, edges, run.level, (run.frontier[1] - run.frontier[0])
                          / max(1, hi - lo))
        if checkpoint is not None and time.perf_counter() - last_cp >= checkpoint_every:
            _save_run(Path(checkpoint), ident, store, run, judge, edges,
                      time.perf_counter() - t0)
            last_cp = time.perf_counter()
    return _finish(ex, store, run, judge, edges, stop_after_levels, t0)


@dataclass
class _Run:
    """Where a search stands: counts, the frontier's ids (lo, hi) and the level."""

    generated: int
    fired: np.ndarray
    frontier: tuple[int, int]
    level: int

    @property
    def open(self) -> bool:
        return self.frontier[1] > self.frontier[0]

    @classmethod
    def resumed(cls, st: dict[str, Any]) -> "_Run":
        return cls(int(st["generated"]), st["fired"],
                   (int(st["frontier"][0]), int(st["frontier"][1])), int(st["level"]))


def _distinct(lay: Layout, states: Sequence[tuple], n: int) -> np.ndarray:
    """The packed keys of ``states``, each once, in their first order."""
    init = np.array(states, dtype=np.int64).reshape(len(states), n)
    keys = lay.pack([init[:, i] for i in range(n)], len(init))
    _, first = np.unique(lay.sortable(keys), return_index=True)
    return keys[np.sort(first)]


def _merge_level(results: list[Expansion], store: LevelStore, run: _Run, judge: Judge,
                 edges: EdgeLog | None) -> int:
    """Counts and failures of each part of a level, then its new states numbered (first
    discoveries, in discovery order); returns the level's first id."""
    new_k, new_p, new_a = [], [], []
    viol: list[tuple[str, int, int]] = []
    applied: dict[str, int] = {}
    stuck = [r.stuck for r in results if r.stuck >= 0]
    for res in results:
        run.generated += res.generated
        run.fired += res.fired
        viol += res.trans_viol
        for pid, k in res.trans_applied.items():
            applied[pid] = applied.get(pid, 0) + k
        parts, res.parts = res.parts, []
        while parts:  # each part released once merged
            ck, cp, ca = parts.pop(0)
            if edges is not None:
                ck, cp, ca = edges.part(store, ck, cp, ca)
            new_k.append(ck)
            new_p.append(cp)
            new_a.append(ca)
    judge.expansion(applied, viol, min(stuck, default=-1))
    del results
    return store.add_found(new_k, new_p, new_a)


def _judge_level(judge: Judge, lay: Layout, store: LevelStore, first: int, chunk: int) -> None:
    """The invariants on the newest level, unpacked a chunk at a time: a whole level at
    64 bits a slot is gigabytes."""
    if first == len(store):
        return
    new = store.keys[-1]
    for lo in range(0, len(new), chunk):
        hi = min(lo + chunk, len(new))
        judge.states(lay.unpack(new[lo:hi]), np.arange(first + lo, first + hi))


def _save_run(d: Path, ident: dict[str, Any], store: LevelStore, run: _Run, judge: Judge,
              edges: EdgeLog | None, seconds: float) -> None:
    keys, parent, via = store.arrays()
    save_checkpoint(d, {"identity": ident, **judge.saved()}, keys=keys, parent=parent,
                    via=via, level_start=np.array(store.starts), generated=run.generated,
                    fired=run.fired, frontier=np.array(run.frontier), level=run.level,
                    seconds=seconds, **(edges.saved() if edges is not None else {}))


def _finish(ex: "_VectorExploration", store: LevelStore, run: _Run, judge: Judge,
            edges: EdgeLog | None, stop_after_levels: int | None, t0: float) -> Exploration:
    ex.level_start = list(store.starts)
    ex.filter_bytes = store.bloom.nbytes  # type: ignore[attr-defined]
    ex.keys, ex.parent, ex.via = store.finish()  # type: ignore[attr-defined]
    ex.generated = run.generated
    ex.fired = run.fired.tolist()
    ex.violations = judge.violations
    ex.witness_seen, ex.trans_applied = judge.witness_seen, judge.trans_applied
    ex.complete = not run.open and ex.stopped is None and stop_after_levels is None
    ex.expanded = run.frontier[0] if run.open else len(ex.keys)
    if ex.stopped == "violation":
        ex.expanded = run.frontier[0]
    if edges is not None:
        # already by source, then action (the explicit engine's edge order): levels and
        # their chunks come in id order; numpy arrays the graph checks read as they are,
        # kept by source (sources: on first read, which the graph checks never do)
        ex.edge_off, dst, act = edges.finish(len(ex.keys))  # type: ignore[attr-defined]
        ex.edges = (None, dst, act)  # type: ignore[assignment]
    ex.seconds = time.perf_counter() - t0
    return ex


def _partitioned(model: Model, props: Sequence[Property], ex: "_VectorExploration",
                 init: np.ndarray, ident: dict[str, Any], *, workers: int, keep_graph: bool,
                 depth: int | None,
                 max_states: int | None, check_deadlock: bool, stop_on_violation: bool,
                 progress: Progress | None, checkpoint: str | os.PathLike | None,
                 checkpoint_every: float, resume: str | os.PathLike | None,
                 stop_after_levels: int | None, chunk: int, reduce: "Reduction | None",
                 t0: float, cluster: str | None) -> Exploration:
    """The search over ``workers`` processes (or Ray actors on ``cluster``: as many as
    asked, else one per CPU of the cluster), each owning a slice of the states
    (:mod:`.partition`): the same ids, parents, counts and verdicts as one process."""
    from .partition import Shard, partitioned_bfs, walk
    lay = ex.layout  # type: ignore[attr-defined]
    judge = Judge(model, CheckList.of(model, props), lambda sid: ([sid], [-1]))
    saved = None
    if resume is not None:
        saved = load_checkpoint(Path(resume), ident, depth)
        judge.restore(saved["meta"])
        t0 -= float(saved["seconds"])
        ex.seconds_before = float(saved["seconds"])
        init = saved["keys"][:0]
    else:
        init = init[np.argsort(lay.sortable(init), kind="stable")]
        judge.states(lay.unpack(init), np.arange(len(init)))

    def make(w: int, parts: int) -> Shard:
        return Shard(model, props, w, parts, check_deadlock=check_deadlock, chunk=chunk,
                     reduce=reduce, graph=keep_graph)

    def save(keys: np.ndarray, parent: np.ndarray, via: np.ndarray, starts: list[int],
             generated: int, fired: np.ndarray, frontier: tuple[int, int], level: int,
             edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> None:
        walk(judge.violations, parent, via)  # saved as one process saves them
        more = {} if edges is None else dict(zip(("src_e", "dst_e", "act_e"), edges))
        save_checkpoint(Path(checkpoint),  # type: ignore[arg-type]
                        {"identity": ident, **judge.saved()}, keys=keys, parent=parent,
                        via=via, level_start=np.array(starts), generated=generated,
                        fired=fired, frontier=np.array(frontier), level=level,
                        seconds=time.perf_counter() - t0, **more)

    shards = _transport(make, workers, cluster, keep_graph)
    got: dict[str, Any] = {}
    try:
        got = partitioned_bfs(model, props, shards, judge=judge, starts=init, depth=depth,
                              max_states=max_states, stop_on_violation=stop_on_violation,
                              progress=progress, saved=saved,
                              save=save if checkpoint is not None else None,
                              checkpoint_every=checkpoint_every,
                              stop_after_levels=stop_after_levels, t0=t0,
                              graph=keep_graph)
    finally:
        if not (got and got["states"].held):  # else the states own the workers
            shards.close()
    if judge.violations:  # their paths: the states are read (only then)
        walk(judge.violations, *got["states"].arrays()[1:])
    return _partitioned_result(ex, got, judge, shards.parts, stop_after_levels, t0)


def _transport(make: Callable[[int, int], Any], workers: int, cluster: str | None,
               graph: bool) -> Any:
    """Worker processes here, or Ray actors (as many as asked, else one per CPU)."""
    if cluster is not None:
        from .cluster import RayShards
        return RayShards(make, workers if workers > 1 else 0, cluster, graph)
    from .partition import LocalShards
    return LocalShards(make, workers)


def _partitioned_result(ex: "_VectorExploration", got: dict[str, Any], judge: Judge,
                        parts: int, stop_after_levels: int | None, t0: float) -> Exploration:
    """The exploration a partitioned search gives: that of one process, and what moved."""
    ex.stopped = got["stopped"]
    ex.level_start = got["level_start"]
    ex.filter_bytes = 0  # type: ignore[attr-defined]
    ex.worker_bytes = got["stored"]  # type: ignore[attr-defined]
    ex.__dict__["_slices"] = got["states"]  # read on first use
    ex.generated, ex.fired = got["generated"], got["fired"].tolist()
    ex.violations = judge.violations
    ex.witness_seen, ex.trans_applied = judge.witness_seen, judge.trans_applied
    ex.complete = not got["open"] and ex.stopped is None and stop_after_levels is None
    lo = got["frontier"][0]
    ex.expanded = lo if got["open"] or ex.stopped == "violation" else got["states"].count
    if got["edges"] is not None:
        ex.edge_off, dst, act = got["edges"]
        ex.edges = (None, dst, act)  # type: ignore[assignment]  (sources: on first read)
    ex.shuffled = got["shuffled"]  # type: ignore[attr-defined]
    ex.shuffled_levels = got["shuffled_levels"]  # type: ignore[attr-defined]
    ex.new_keys_levels = got["new_keys_levels"]  # type: ignore[attr-defined]
    ex.stolen_chunks = got["stolen"]  # type: ignore[attr-defined]
    ex.partitions = parts  # type: ignore[attr-defined]
    ex.seconds = time.perf_counter() - t0
    return ex
