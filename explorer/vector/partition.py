"""A search partitioned by hash: each worker owns a slice of the state space.

A state belongs to the worker :meth:`~.layout.Layout.owner` names.  Each worker (a
:class:`Shard`) stores only its own states, expands chunks of the frontier, and sends
every successor to its owner, which deduplicates it against its store: no step of a
level is serial.  A level is numbered as one process numbers it (sorted by
key): each worker learns the groups of the others' new keys (:meth:`.layout.Layout.groups`,
which decide the owner) with how many keys each holds, and counts how many sort before
each of its own.  With parents chosen by least (action, parent id) (:func:`.store.least`), the
ids, parent links, counts and counterexamples are those of one process, for any
number of workers; :func:`gather` puts the slices back together in that order.

The driver (:func:`partitioned_bfs`) does only bookkeeping.  How shards run and how
their arrays travel is a *transport*: forked processes and files in shared memory
here (:class:`LocalShards`), actors and an object store on a cluster
(:mod:`.cluster`).
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import shutil
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from osf_check.models.dsl import Model
from osf_check.properties.base import CheckList, Property
from osf_check.scratch import ScratchFull, memory_dir

from osf_check.explorer.result import Progress, Violation
from osf_check.explorer.store.layout import Layout
from .shard_edges import Answers, OutEdges, fill, runs, sources
from osf_check.explorer.store import levels as store
from osf_check.explorer.store.levels import (LevelStore, first, first_inverse, key_rows, least_rows,
                                             sortable)
from .successors import Expansion, Successors, action_dtype, edge_action_dtype
from .verdicts import Judge
from ..result import WorkerLost

__all__ = ["Shard", "LocalShards", "Slices", "WorkerLost", "partitioned_bfs", "gather",
           "walk"]


Parts = list[tuple[np.ndarray, np.ndarray, np.ndarray]]


def _no_path(sid: int) -> tuple[list[int], list[int]]:
    """A worker knows only its own parent links: a violation names its state, and the
    driver walks the path once the slices are gathered (:func:`walk`)."""
    return [sid], [-1]


class Shard:
    """One worker's slice: its states (a :class:`~.store.LevelStore`), the global ids of
    each of its levels, and the model's actions and checks compiled once."""

    def __init__(self, model: Model, props: Sequence[Property], index: int, parts: int, *,
                 check_deadlock: bool, chunk: int, reduce: Any = None, graph: bool = False):
        self.index, self.parts, self.chunk = index, parts, chunk
        self.lay = Layout(model)
        checks = CheckList.of(model, props)
        self.succ = Successors(model, self.lay, checks, deadlock=check_deadlock, reduce=reduce)
        self.judge = Judge(model, checks, _no_path)
        self.store: LevelStore | None = None
        self.gids: list[np.ndarray] = []  # per level: the global id of each state here
        self._gflat, self._have = np.zeros(0, dtype=np.int32), 0  # the same, by local id
        self.found: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.span = (0, 0)  # the ids of the newest level, over every worker
        # the found keys' distinct groups (sortable) and how many keys each holds (None:
        # one each), between merge and number
        self.mine: tuple[np.ndarray, np.ndarray | None] | None = None
        self.kept: Parts = []  # this worker's own successors, between expand and merge
        # with the graph: the edges out of this worker's states, and its answers to
        # each sender for the level just merged (final once it is numbered)
        self.out = OutEdges(parts, edge_action_dtype(model)) if graph else None
        self.answers: Answers | None = None
        self.replies: list[np.ndarray] | None = None

    def _mine(self, keys: np.ndarray) -> np.ndarray:
        return self.lay.owner(keys, self.parts) == np.uint64(self.index)

    def _global(self, local: np.ndarray) -> np.ndarray:
        """Global ids of states stored here, from their ids in this worker's store."""
        n = sum(len(g) for g in self.gids)
        if self._have < n:  # levels numbered since: appended (the buffer grown by doubling)
            if len(self._gflat) < n:
                grown = np.empty(max(n, 2 * len(self._gflat)), dtype=np.int32)
                grown[:self._have] = self._gflat[:self._have]
                self._gflat = grown
            at = 0
            for g in self.gids:
                if at >= self._have:
                    self._gflat[at:at + len(g)] = g
                at += len(g)
            self._have = n
        return self._gflat[local]

    def load(self, levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]],
             edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> int:
        """Take this worker's states of whole levels (keys sorted, parents, actions, the
        level's first id), as one process numbered them, and the edges out of them;
        returns how many it owns."""
        ks, ps, vs, gs, starts = [], [], [], [], []
        for keys, parent, via, start in levels:
            mine = np.flatnonzero(self._mine(keys))
            starts.append(sum(len(k) for k in ks))
            ks.append(keys[mine])
            ps.append(parent[mine])
            vs.append(via[mine])
            gs.append((start + mine).astype(np.int32))
        total = sum(len(lv[0]) for lv in levels)
        self.store = LevelStore.from_arrays(np.concatenate(ks), np.concatenate(ps),
                                            np.concatenate(vs), starts,
                                            expect=total // self.parts)
        self.gids, self._have = gs, 0
        self.span = (levels[-1][3], levels[-1][3] + len(levels[-1][0]))
        if self.out is not None and edges is not None:
            src, dst, act = edges
            mine = np.zeros(sum(len(lv[0]) for lv in levels), dtype=bool)
            mine[np.concatenate(gs)] = True
            keep = np.flatnonzero(mine[src])
            self.out.load(src[keep], dst[keep], act[keep])
        return int(sum(len(k) for k in ks))

    def expand(self, failed: set[str], answers: list[np.ndarray] | None = None,
               shared: "Frontiers | None" = None) -> tuple[dict[str, Any], list[Parts]]:
        """Expand this worker's part of the frontier (its newest level); returns the counts
        and failures (ids global) and, for each worker, the successors it owns: per
        chunk, keys (sorted, each once, with its least action and parent), parent ids
        and actions.  Only the owner can tell which are new: this worker's own are
        kept here (without the graph, the new ones only).  ``answers``: the owners'
        answers for the level before (with the graph).

        With ``shared`` (without the graph, a level wider than a chunk), the level is
        cut as one process cuts it, into chunks of consecutive ids, each holding states
        of every worker (:class:`Frontiers`), and each chunk is expanded by whichever
        worker claims it first.  Who expands a state changes nothing: its successors go
        to their owners, which keep each new key's least (action, parent) from whoever
        sent it.  A worker's own states are scattered over the key order (by the
        hash), and so were the chunks it expanded of them alone: siblings in the
        order, whose successors coincide, fell in different chunks.  Chunks of
        consecutive ids drop those duplicates before they are looked up, merged and
        sent (TwoPhase N=9, two workers: 26.0 million distinct successors within
        their chunks against 28.5; one process, 25.2).  They send twice the bytes (a
        state's successors mostly share its owner, and now half the states of a chunk
        are another's): 171 MiB against 87 on TwoPhase N=9."""
        assert self.store is not None
        self.resolve(answers)
        level, gid = self.store.keys[-1], self.gids[-1]
        self.judge.failed = set(failed)
        parts: list[Parts] = [[] for _ in range(self.parts)]
        runs: list[tuple[Expansion, np.ndarray]] = []
        stolen = 0  # chunks taken beyond an even share of the level's
        narrow = self.span[1] - self.span[0] <= self.chunk  # one chunk: each its own
        if shared is None or self.out is not None or narrow:
            runs.append((self._new_expansion(), gid))
            for lo in range(0, len(level), self.chunk):
                self._chunk(level, lo, lo + self.chunk, gid, runs[-1][0], parts)
        else:
            stolen = self._expand_shared(shared, level, gid, runs, parts)
        self.kept = parts[self.index]
        parts[self.index] = []
        stuck = [int(g[e.stuck]) for e, g in runs if e.stuck >= 0]
        stats = {"generated": sum(e.generated for e, _ in runs),
                 "fired": sum((e.fired for e, _ in runs),
                              np.zeros(len(self.succ.insts), dtype=np.int64)),
                 "trans_applied": _summed(e.trans_applied for e, _ in runs),
                 "trans_viol": [(p, int(g[s]), a) for e, g in runs
                                for p, s, a in e.trans_viol],
                 "stuck": min(stuck, default=-1), "stolen": stolen}
        return stats, parts

    def _expand_shared(self, shared: "Frontiers", level: np.ndarray, gid: np.ndarray,
                       runs: list[tuple[Expansion, np.ndarray]], parts: list[Parts]) -> int:
        """Expand the chunks of the level this worker claims (see :meth:`expand`);
        returns how many it took beyond an even share (another worker being slower)."""
        at = len(self.gids)
        shared.publish(at, level, gid)
        pieces = shared.frontiers(at, (level, gid))
        lo, hi = self.span
        size, count = cut(hi - lo, self.parts, self.chunk)
        taken = 0
        while (c := shared.claim(at, count)) is not None:
            first_id = lo + c * size
            last = min(first_id + size, hi)
            keys, ids = _assemble(pieces, first_id, last, self.lay.words)
            runs.append((self._new_expansion(), ids))
            self._chunk(keys, 0, len(keys), ids, runs[-1][0], parts)
            taken += 1
        del pieces  # views of the others' files, which they write again next level
        shared.done()
        return max(0, taken - count // self.parts)

    def _new_expansion(self) -> Expansion:
        return Expansion(np.zeros(len(self.succ.insts), dtype=np.int64))

    def _chunk(self, level: np.ndarray, lo: int, hi: int, gid: np.ndarray, out: Expansion,
               parts: list[Parts]) -> None:
        """Expand rows ``lo:hi`` of ``level`` (global ids ``gid``) into ``parts``."""
        assert self.store is not None
        self.succ.chunk(level[lo:hi], lo, self.judge.failed, out)
        if not out.parts:
            return
        ck, cp, ca = out.parts.pop()
        # each key once, with its least (action, parent); with the graph, every
        # candidate's key too (an edge each)
        if self.out is None:
            uniq, rows = first(sortable(ck))
        else:
            uniq, rows, inv = first_inverse(sortable(ck))
        own = self.lay.owner(key_rows(uniq, self.lay.words), self.parts)
        to = []
        for w, at in enumerate(by_owner(own, self.parts)):
            keys = uniq[at]
            if w == self.index and self.out is None:  # stored here: dropped before moving
                new = ~self.store.lookup(keys)[0]
                at, keys = at[new], keys[new]
            to.append(at)
            r = rows[at]  # parents as global ids:
            parts[w].append((key_rows(keys, self.lay.words), gid[cp[r]], ca[r]))
        if self.out is not None:
            self.out.chunk(gid[cp], ca, inv, to)

    def merge(self, incoming: list[Parts]) -> Summary:
        """The successors each worker sent here (``incoming[s]``: sender ``s``'s chunks of
        sorted, distinct keys; this worker's own are the ones it kept): the new ones, each
        with its least (action, parent).  Returns what the others need to number the
        level (a :data:`Summary`).  With the graph, the answers to each sender start here:
        the ids of the keys stored before."""
        assert self.store is not None
        incoming = list(incoming)
        incoming[self.index], self.kept = self.kept, []
        keys, parent, via = [], [], []
        self.answers = Answers() if self.out is not None else None
        self.replies = None
        for s, chunks in enumerate(incoming):
            ids, new_at, new_keys = [], [], []
            for ck, cp, ca in chunks:
                if s == self.index and self.out is None:
                    new = slice(None)  # this worker's own, already looked up
                else:
                    sk = sortable(ck)
                    seen, local = self.store.lookup(sk)
                    new = np.flatnonzero(~seen)
                    if self.answers is not None:
                        known = np.full(len(ck), -1, dtype=np.int32)
                        known[seen] = self._global(local[seen])
                        ids.append(known)
                        new_at.append(new)
                        new_keys.append(sk[new])
                keys.append(ck[new])
                parent.append(cp[new])
                via.append(ca[new])
            if self.answers is not None:
                self.answers.sender(ids, new_at, new_keys)
        if not keys:
            keys, parent, via = [np.zeros((0, self.lay.words), np.uint64)], \
                [np.zeros(0, np.int32)], [np.zeros(0, self.succ.act_dtype)]
        ck, cp, ca = _cat(list(zip(keys, parent, via)))
        rows = least_rows(sortable(ck), cp, ca)
        self.found = (ck[rows], cp[rows], ca[rows])
        if self.answers is not None and self.answers.final:  # nothing new here
            self.replies, self.answers = self.answers.ids, None
        groups = self.lay.groups(self.found[0])
        if self.lay.words > 1:  # a key a group
            self.mine = (sortable(groups), None)
            return [groups]
        heads, runs = group_runs(groups[:, 0])
        told = [groups[heads], runs.astype(np.int32)]
        self.mine = (sortable(told[0]), runs)
        return told

    def resolve(self, answers: list[np.ndarray] | None) -> None:
        """The owners' answers for the level expanded last (``answers[o]``: owner ``o``'s
        to this worker): its edges get their targets' ids."""
        if self.out is not None and answers is not None:
            self.out.resolve(answers)

    def edges(self, answers: list[np.ndarray] | None = None
              ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The edges out of this worker's states (sources and targets global ids), by
        source then action, in pieces (a source's edges in one); ``answers`` as for
        :meth:`resolve`."""
        assert self.out is not None, "a shard made without the graph keeps no edges"
        self.resolve(answers)
        return self.out.pieces()

    def number(self, start: int, summaries: list[Summary]) -> dict[str, Any]:
        """Number the level found (first id ``start``; ``summaries[w]``: what worker ``w``'s
        :meth:`merge` returned): a state's id is ``start`` plus how many of the level's
        keys, over every worker, sort before it.  Then judge it.

        The keys of a group are all one worker's: the others' keys below one of
        this worker's are those of the groups below its group, so that each distinct
        group is looked up once among the others' groups (TwoPhase N=9: 276,000 groups
        for 10.3 million keys)."""
        assert self.store is not None and self.found is not None and self.mine is not None
        keys, parent, via = self.found
        (mine, runs), self.found, self.mine = self.mine, None, None
        below = np.zeros(len(mine), dtype=np.int64)
        for w, theirs in enumerate(summaries):
            if w != self.index and len(theirs[0]):
                groups = sortable(theirs[0])
                at = np.searchsorted(groups, mine)
                if (groups[np.minimum(at, len(groups) - 1)] == mine).any():
                    raise RuntimeError(f"workers {self.index} and {w} both hold keys of one "
                                       "group: Layout.owner and Layout.groups disagree")
                if len(theirs) > 1:  # keys below each of their groups
                    before = np.zeros(len(theirs[1]) + 1, dtype=np.int64)
                    np.cumsum(theirs[1], out=before[1:])
                    at = before[at]
                below += at
        if runs is not None:
            below = np.repeat(below, runs)
        ids = start + np.arange(len(keys), dtype=np.int64) + below
        # the filter sized by each worker's share of every worker's states, so that
        # all of them grow theirs at the same level
        total = start + sum(summary_count(t) for t in summaries)
        self.span = (start, total)
        self.store.add_level(keys, parent, via, expect=total // self.parts)
        self.gids.append(ids.astype(np.int32))  # ids fit 32 bits, as parent links do
        if self.answers is not None:
            self.replies, self.answers = self.answers.number(keys, self.gids[-1]), None
        self.judge.violations = []
        before = dict(self.judge.witness_seen)
        for lo in range(0, len(keys), self.chunk):
            hi = lo + self.chunk
            self.judge.states(self.lay.unpack(keys[lo:hi]), ids[lo:hi])
        return {"violations": self.judge.violations,
                "witness": [k for k, v in self.judge.witness_seen.items() if v and not before[k]]}

    def dump(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every state here with its global id: keys, parents, actions, ids."""
        assert self.store is not None
        keys, parent, via = self.store.arrays()
        return keys, parent, via, np.concatenate(self.gids)

    @property
    def total(self) -> int:
        """How many states every worker holds together (ids run from 0 to it)."""
        return int(max((int(g[-1]) + 1 for g in self.gids if len(g)), default=0))

    def stored_bytes(self) -> int:
        """This worker's visited set: keys, parents, actions, its filter and global ids."""
        assert self.store is not None
        return self.store.nbytes + sum(g.nbytes for g in self.gids)


#: what a worker tells the others of its new states of a level, to number theirs: the
#: distinct groups of their keys (rows of words, sorted) and, where a group can hold
#: several keys (keys of one word), how many keys each holds (int32)
Summary = list[np.ndarray]


def _assemble(pieces: Sequence[tuple[np.ndarray, np.ndarray]], lo: int, hi: int,
              words: int) -> tuple[np.ndarray, np.ndarray]:
    """The keys of the states with ids ``lo:hi`` of a level, in id order, from every
    worker's part of it (``pieces``: keys and their ids, ascending), and those ids.

    >>> k = lambda *v: np.array(v, dtype=np.uint64).reshape(-1, 1)
    >>> i = lambda *v: np.array(v, dtype=np.int32)
    >>> keys, ids = _assemble([(k(10, 40), i(5, 8)), (k(20, 30, 50), i(6, 7, 9))], 6, 9, 1)
    >>> keys[:, 0].tolist(), ids.tolist()
    ([20, 30, 40], [6, 7, 8])
    """
    keys = np.empty((hi - lo, words), dtype=np.uint64)
    filled = 0
    for k, g in pieces:
        a, b = np.searchsorted(g, (lo, hi))
        keys[g[a:b] - lo] = k[a:b]
        filled += int(b - a)
    if filled != hi - lo:  # the pieces are not the level the span says: no row unset
        raise RuntimeError(f"the workers' frontiers hold {filled} states of ids {lo} to "
                           f"{hi - 1}, not {hi - lo}")
    return keys, np.arange(lo, hi, dtype=np.int32)


def _summed(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, n in c.items():
            out[k] = out.get(k, 0) + n
    return out


def group_runs(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of sorted ``groups``: where each run of equal values starts, and its length.

    >>> [a.tolist() for a in group_runs(np.array([3, 3, 5, 7, 7, 7], dtype=np.uint64))]
    [[0, 2, 3], [2, 1, 3]]
    """
    if not len(groups):
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    heads = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    return heads, np.diff(np.append(heads, len(groups)))


def summary_count(s: Summary) -> int:
    """How many states a :data:`Summary` stands for."""
    return int(s[1].sum()) if len(s) > 1 else len(s[0])


def summary_told(s: Summary) -> tuple[int, int]:
    """What a worker reports of the :data:`Summary` it sends: how many states it stands
    for, and its bytes (which every other worker reads).

    >>> summary_told([np.array([[4], [9]], dtype=np.uint64), np.array([3, 1], dtype=np.int32)])
    (4, 24)
    """
    return summary_count(s), sum(a.nbytes for a in s)


#: up to this many workers a chunk's successors are split by a pass over their owners
#: for each worker; with more, by one stable sort (see :func:`by_owner`)
FEW_OWNERS = 8


def by_owner(own: np.ndarray, parts: int) -> list[np.ndarray]:
    """The positions of ``own`` (each an owner below ``parts``) grouped by owner, each
    group in ascending order.

    A pass over every position for each owner costs ``parts`` passes: 18 ms for 600,000
    positions and 64 owners, where one stable sort takes 6.5; for 2 owners the passes
    take 0.8 ms and the sort 7.4 (equal at 8; 2026-12-02).

    >>> own = np.array([1, 0, 2, 0], dtype=np.uint64)
    >>> [g.tolist() for g in by_owner(own, 3)] == [g.tolist() for g in by_owner(own, 3000)[:3]]
    True
    >>> [g.tolist() for g in by_owner(own, 3)]
    [[1, 3], [0], [2]]
    """
    if parts <= FEW_OWNERS:
        return [np.flatnonzero(own == np.uint64(w)) for w in range(parts)]
    o = np.argsort(own.astype(np.uint16) if parts <= 1 << 16 else own, kind="stable")
    return np.split(o, np.cumsum(np.bincount(own.astype(np.intp), minlength=parts))[:-1])


def sent_bytes(parts: list[Parts], w: int, graph: bool = False) -> int:
    """Bytes worker ``w`` sends the others for one level (the arrays alone): successors,
    and with the graph the owners' answers, an id (4 bytes) for each key sent."""
    keys = sum(len(part[0]) for o, p in enumerate(parts) if o != w for part in p)
    return sum(a.nbytes for o, p in enumerate(parts) if o != w for part in p for a in part) \
        + (4 * keys if graph else 0)


def _cat(parts: Parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def gather(dumps: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The workers' slices as one process's arrays (keys, parents, actions in id order)."""
    n = sum(len(d[3]) for d in dumps)
    k0, _, v0, _ = dumps[0]
    keys = np.empty((n, k0.shape[1]), dtype=np.uint64)
    parent = np.empty(n, dtype=np.int32)
    via = np.empty(n, dtype=v0.dtype)
    for k, p, v, g in dumps:
        keys[g], parent[g], via[g] = k, p, v
    return keys, parent, via


class Slices:
    """The states of a partitioned search, ``count`` of them, put back together in id
    order (:func:`gather`) only when first read: a run that reports counts and
    verdicts and walks no counterexample never needs them in one process (TwoPhase
    N=9: 144 MB that two workers took 0.10-0.32 s to write all over shared arrays,
    with a page fault for each page in each worker; 2026-12-02).

    Holds either the arrays themselves, each worker's slice in a file already
    unlinked (the space is freed when this is, or once read), or the workers
    themselves (``source``, a :class:`LocalShards` whose search is over), which write
    their slices only if they are read and are stopped then, or when this is dropped
    or the program ends: writing them took the two workers of TwoPhase N=9 0.14-0.17 s
    after their search, 3-4 % of the run, for states that a run without a
    counterexample never reads (2026-12-03)."""

    def __init__(self, count: int, *, files: Sequence[Any] = (),
                 arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                 source: "LocalShards | None" = None):
        self.count, self._files, self._arrays = count, list(files), arrays
        self._source, self._released = source, False
        # (the callback holds the workers, not this: else this would never be dropped)
        self._stop = weakref.finalize(self, source.close) if source is not None else None

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Keys, parents and actions in id order."""
        if self._arrays is None:
            if self._released:
                raise RuntimeError("these states were released (Slices.release): "
                                   "read them before, or keep them")
            if self._source is not None:
                self._files = self._source.leave(self.count)._files
                self._source = None
                self._stop()  # type: ignore[misc]
            dumps = []
            for f in self._files:
                # read through a mapping of its own (no file offset shared with a
                # process forked meanwhile that reads them too)
                with f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                    dumps.append(tuple(_read(m)))
            self._files = []
            self._arrays = gather(dumps)  # type: ignore[arg-type]
        return self._arrays

    @property
    def held(self) -> bool:
        """Whether the workers still hold the states (not read yet, not released)."""
        return self._source is not None

    def release(self) -> None:
        """Stop workers that still hold the states: they cannot be read after this."""
        if self._source is not None:
            self._source, self._released = None, True
            self._stop()  # type: ignore[misc]


# the local transport ------------------------------------------------------------------

class LocalShards:
    """Shards in forked processes; arrays travel as files in shared memory (``/dev/shm``
    where there is one), each written once by its sender and read once by its owner.

    The driver sends each process a command and waits for all of them; a process that
    dies or fails makes the whole search fail (an internal error, not a verdict)."""

    def __init__(self, make: Callable[[int, int], Shard], parts: int):
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        # the driver's pid in the name says whose files these are (a run killed by
        # SIGKILL cannot remove them: `ls /dev/shm` shows which process left them)
        self.dir = Path(tempfile.mkdtemp(prefix=f"osf-check-shards-{os.getpid()}-",
                                           dir=memory_dir()))
        self.parts, self.pid = parts, os.getpid()
        self.shuffled = 0
        self.conns, self.procs = [], []
        # the workers' frontiers' claims (see Frontiers), in memory the forks share
        claims = (ctx.Lock(), Frontiers.table(ctx, parts))
        self.table = claims[1]
        for w in range(parts):
            a, b = ctx.Pipe()
            # the child closes the driver's ends it inherited (its own and the earlier
            # workers'): else a killed driver would leave it waiting on itself
            p = ctx.Process(target=_serve, args=(make, w, parts, b, self.dir,
                                                 self.conns + [a], claims), daemon=True)
            p.start()
            b.close()
            self.conns.append(a)
            self.procs.append(p)

    def call(self, cmd: str, *args: Any) -> list[Any]:
        """Run ``cmd`` on every shard; their answers in shard order.  Answers are read
        as they come, so that a worker that dies or fails is seen at once, whichever
        it is, and the others, which may be waiting for its part of a level, are told."""
        from multiprocessing.connection import wait
        for w, c in enumerate(self.conns):
            try:
                c.send((cmd, args))
            except (BrokenPipeError, ConnectionResetError):
                raise self._lost(w) from None
        out: dict[int, Any] = {}
        while len(out) < len(self.conns):
            for c in wait([c for w, c in enumerate(self.conns) if w not in out]):
                w = self.conns.index(c)  # type: ignore[arg-type]
                try:
                    ok, got = c.recv()
                except (EOFError, ConnectionResetError):
                    raise self._lost(w) from None
                if not ok:
                    Frontiers.lost(self.table)
                    raise got
                out[w] = got
        return [out[w] for w in range(len(self.conns))]

    def _lost(self, w: int) -> WorkerLost:
        Frontiers.lost(self.table)
        self.procs[w].join(timeout=1)
        return WorkerLost(f"worker {w} of {self.parts} died (exit status "
                          f"{self.procs[w].exitcode}) during a level")

    def expand(self, failed: set[str]) -> list[dict[str, Any]]:
        got = self.call("expand", sorted(failed))
        self.shuffled += sum(g.pop("shuffled") for g in got)
        return got

    def merge(self) -> list[tuple[int, int]]:
        return self.call("merge")

    def number(self, start: int) -> list[dict[str, Any]]:
        return self.call("number", start)

    def load(self, levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]],
             edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> list[int]:
        f = self.dir / "load.npy"
        _save(f, [a for lv in levels for a in lv[:3]] + list(edges or ()))
        try:
            return self.call("load", [lv[3] for lv in levels], edges is not None)
        finally:
            f.unlink(missing_ok=True)

    def leave(self, count: int) -> Slices:
        """The states, ``count`` of them, left by each worker in a file of its own
        (written in order, in parallel), to be put together if they are read."""
        room = Path(tempfile.mkdtemp(prefix=f"osf-check-states-{os.getpid()}-",
                                     dir=memory_dir()))
        try:
            self.call("dump_to", str(room))
            files = [open(room / f"states-{w}.npy", "rb") for w in range(self.parts)]
        finally:
            shutil.rmtree(room, ignore_errors=True)  # the open files stay readable
        return Slices(count, files=files)

    def hold(self, count: int) -> Slices:
        """The states, ``count`` of them, left with the workers (their search over), which
        write them only if they are read (see :class:`Slices`): the Slices own them."""
        return Slices(count, source=self)

    def gather_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every worker's edges in one process's order (by source, then action), as
        :func:`~.shard_edges.place` gives them: where each source's edges start, then
        targets and actions.  Each worker writes how many edges leave each of its
        states, then its edges at their places, into shared files (in parallel)."""
        from numpy.lib.format import open_memmap
        shapes = self.call("shape")
        n, act = max(s[0] for s in shapes), np.dtype(shapes[0][2])
        deg_path, off_path = self.dir / "deg.npy", self.dir / "off.npy"
        m = sum(self.call("degrees", *self._shared([(deg_path, (n,), np.int64)])))
        off = open_memmap(off_path, mode="w+", dtype=np.int64, shape=(n + 1,))
        off[0] = 0
        np.cumsum(np.load(deg_path, mmap_mode="r"), out=off[1:])
        off.flush()
        del off
        paths = [self.dir / f"edges-{name}.npy" for name in ("dst", "act")]
        self.call("write_edges", str(off_path),
                  self._shared(zip(paths, [(m,), (m,)], [np.int32, act])))
        out = tuple(np.asarray(np.load(p, mmap_mode="r+")) for p in [off_path] + paths)
        for p in paths + [deg_path, off_path]:
            p.unlink()
        return out  # type: ignore[return-value]

    def _shared(self, files: Iterable[tuple[Path, tuple[int, ...], Any]]) -> list[str]:
        """Create the ``.npy`` files (path, shape, dtype) that every worker then writes
        into, each worker reserving its share of their pages; their paths."""
        from numpy.lib.format import open_memmap
        paths = []
        for p, shape, dt in files:
            open_memmap(p, mode="w+", dtype=dt, shape=shape).flush()
            paths.append(str(p))
        self.call("reserve", paths)
        return paths

    def stored_bytes(self) -> int:
        return sum(self.call("stored_bytes"))

    def close(self) -> None:
        """Stop the workers and remove their files (in the process that started them
        only: a process forked since, leaving, must not stop its parent's)."""
        if os.getpid() != self.pid:
            return
        for c in self.conns:
            try:
                c.send(("stop", ()))
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def _save(path: Path, arrays: Sequence[np.ndarray]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        np.save(f, np.array(len(arrays)))
        for a in arrays:
            np.save(f, a, allow_pickle=False)
    os.replace(tmp, path)


def _read(path: Path | Any) -> list[np.ndarray]:
    """The arrays :func:`_save` wrote, from its file's path or the file open."""
    if not isinstance(path, (str, Path)):
        n = int(np.load(path))
        return [np.load(path, allow_pickle=False) for _ in range(n)]
    with open(path, "rb") as f:
        return _read(f)


#: the array types a mailbox carries (keys, ids, actions), by their index in its header
_BOX_TYPES = tuple(np.dtype(t) for t in (np.uint64, np.int32, np.int16, np.int64))


class _Mailbox:
    """A shared file from one worker to another, kept for the whole run and mapped by
    both: the sender copies a level's arrays in, the owner reads them where they lie.

    Measured on TwoPhase N=9 (2 workers, 2026-12-02): a file per level, written with
    ``write`` and read with ``read``, cost each worker 0.23 s of its 10 (two copies
    through the kernel, and every level's pages allocated afresh); here a level costs
    one copy into pages allocated once.  The sender writes only in ``expand``, the
    owner reads only in ``merge``, and the driver's barrier between the two is what
    keeps them apart; the owner keeps no view of the file past its ``merge``.

    Its header is int64: how many arrays, then for each its type (an index in
    ``_BOX_TYPES``), rows, columns (0: one-dimensional) and byte offset."""

    def __init__(self, path: Path):
        self.path, self.map, self.fd = path, None, -1

    def _mapped(self, need: int) -> mmap.mmap:
        """The file mapped, ``need`` bytes at least (the sender grows it, doubling)."""
        if self.map is not None and len(self.map) >= need:
            return self.map
        if self.fd < 0:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        size = os.fstat(self.fd).st_size
        if size < need:
            grown = max(need, 2 * size)
            try:  # room taken now: touching pages past a full /dev/shm kills (SIGBUS)
                os.posix_fallocate(self.fd, 0, grown)
            except OSError as e:
                if e.errno == errno.ENOSPC:
                    raise ScratchFull(
                        f"no room left in {self.path.parent} for {grown:,} bytes of "
                        f"successors between workers (free space there, or run with "
                        f"fewer states)") from None
                raise
            size = grown
        self.map = mmap.mmap(self.fd, size)  # an older map stays valid while viewed
        return self.map

    def put(self, arrays: Sequence[np.ndarray]) -> None:
        head = 8 * (1 + 4 * len(arrays))
        at, slots = -(-head // 64) * 64, []
        for a in arrays:
            slots.append(at)
            at += -(-a.nbytes // 64) * 64
        m = self._mapped(at)
        meta = np.frombuffer(m, dtype=np.int64, count=head // 8)
        meta[0] = len(arrays)
        for i, (a, off) in enumerate(zip(arrays, slots)):
            meta[1 + 4 * i: 5 + 4 * i] = (_BOX_TYPES.index(a.dtype), a.shape[0],
                                          a.shape[1] if a.ndim == 2 else 0, off)
            np.frombuffer(m, dtype=a.dtype, count=a.size, offset=off).reshape(a.shape)[...] = a
        del meta

    def get(self) -> list[np.ndarray]:
        """The arrays last put, as views of the file (valid until the next ``put``)."""
        m = self._mapped(os.path.getsize(self.path))  # mapped again if the sender grew it
        n = int(np.frombuffer(m, dtype=np.int64, count=1)[0])
        meta = np.frombuffer(m, dtype=np.int64, count=1 + 4 * n)[1:].reshape(n, 4).tolist()
        out = []
        for t, rows, cols, off in meta:
            dt = _BOX_TYPES[t]
            shape = (rows, cols) if cols else (rows,)
            out.append(np.frombuffer(m, dtype=dt, count=rows * max(cols, 1),
                                     offset=off).reshape(shape))
        return out

    def close(self) -> None:
        self.map = None  # unmapped once no view holds it
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Frontiers:
    """A level's frontier shared between the workers and cut as one process cuts it:
    into chunks of consecutive ids, each holding states of every worker, claimed one
    at a time by whichever worker asks first.  A worker on a slower CPU then takes
    fewer chunks instead of making the others wait at the end of the expansion.

    Each worker writes its part of the level (keys and global ids) to its file
    (``frontier-W``), which the others map once every part is there.  ``table``
    (int64, shared by the forks) holds for each worker the level it last published,
    then the level whose chunks are being claimed, the next chunk, and a flag the
    driver raises when a worker is lost, so that none waits for its part."""

    _LEVEL, _CLAIMED, _NEXT, _LOST = 0, -3, -2, -1
    #: a lock held, or a part not published, longer than this: its worker is lost
    WAIT = 30.0

    @classmethod
    def table(cls, ctx: Any, parts: int) -> Any:
        """A table for ``parts`` workers in memory that ``ctx``'s forks share: no level
        published, none open to claims, no worker lost."""
        t = ctx.RawArray("q", parts + 3)
        np.frombuffer(t, dtype=np.int64)[:cls._LOST] = -1
        return t

    def __init__(self, lock: Any, table: Any, d: Path, w: int, parts: int):
        self.lock, self.w, self.parts = lock, w, parts
        self.t = np.frombuffer(table, dtype=np.int64)
        self.boxes = [_Mailbox(d / f"frontier-{v}") for v in range(parts)]

    def publish(self, level: int, keys: np.ndarray, gids: np.ndarray) -> None:
        """This worker's part of ``level``: its keys and their global ids (ascending)."""
        self.boxes[self.w].put([keys, gids])  # written before the others may read it
        with self._locked():
            self.t[self._LEVEL + self.w] = level
            if self.t[self._CLAIMED] != level:  # the first to publish opens the claims
                self.t[self._CLAIMED], self.t[self._NEXT] = level, 0

    def frontiers(self, level: int, mine: tuple[np.ndarray, np.ndarray]
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every worker's part of ``level`` (keys, ids), once all are published: this
        worker's ``mine``, the others' as views of their files (dropped by
        :meth:`done`)."""
        end = time.monotonic() + self.WAIT
        while True:
            with self._locked():
                if self.t[self._LOST]:
                    raise WorkerLost("another worker was lost during the level")
                if (self.t[:self.parts] == level).all():
                    break
            if time.monotonic() > end:
                raise WorkerLost(
                    f"a worker did not publish its frontier in {self.WAIT:g} s")
            time.sleep(1e-4)  # the others publish as they start the level: microseconds
        return [mine if v == self.w else tuple(box.get())  # type: ignore[misc]
                for v, box in enumerate(self.boxes)]

    def claim(self, level: int, count: int) -> int | None:
        """The next of ``level``'s ``count`` chunks, now this worker's to expand (None:
        every one is claimed)."""
        with self._locked():
            if self.t[self._CLAIMED] != level or self.t[self._NEXT] >= count \
                    or (self.t[:self.parts] != level).any():  # a part not yet published
                return None
            c = int(self.t[self._NEXT])
            self.t[self._NEXT] = c + 1
            return c

    def done(self) -> None:
        """This worker's expansion of the level is over: its views of the others' files
        go (its own file stays mapped, to be written again at the next level)."""
        for v, box in enumerate(self.boxes):
            if v != self.w:
                box.map = None

    @staticmethod
    def lost(table: Any) -> None:
        """Tell every worker waiting for the others' parts that one is lost (the driver)."""
        np.frombuffer(table, dtype=np.int64)[Frontiers._LOST] = 1

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if not self.lock.acquire(timeout=self.WAIT):
            raise WorkerLost("a worker died holding the lock of the frontiers")
        try:
            yield
        finally:
            self.lock.release()


def cut(n: int, parts: int, chunk: int) -> tuple[int, int]:
    """How a level of ``n`` states is cut for ``parts`` workers: into chunks of one
    size, at most ``chunk`` (the last maybe shorter), about as many for each worker;
    (size, count).

    >>> cut(1000, 2, 100), cut(150, 2, 100), cut(201, 2, 100)
    ((100, 10), (75, 2), (51, 4))
    """
    each = -(-n // (parts * chunk))
    size = -(-n // (each * parts))
    return size, -(-n // size)


def _serve(make: Callable[[int, int], Shard], w: int, parts: int, conn: Any, d: Path,
           theirs: Sequence[Any], claims: tuple[Any, Any]) -> None:
    """A worker process: build its shard, then run the driver's commands."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    for c in theirs:
        c.close()
    try:
        _commands(make(w, parts), w, parts, conn, d, claims)
    except (BrokenPipeError, EOFError, ConnectionResetError):
        pass  # the driver is gone (killed?): leave no files behind in memory
    shutil.rmtree(d, ignore_errors=True)


def _commands(shard: Shard, w: int, parts: int, conn: Any, d: Path,
              claims: tuple[Any, Any]) -> None:
    """Answer the driver's commands until it says stop."""
    io = _Files(shard, w, parts, d, Frontiers(*claims, d, w, parts))
    try:
        while True:
            cmd, args = conn.recv()
            if cmd == "stop":
                return
            try:
                got = getattr(io, cmd)(*args)
            except Exception as e:  # handed to the driver, which raises it
                try:
                    conn.send((False, e))
                except Exception:  # (an exception that does not pickle)
                    conn.send((False, RuntimeError(f"{type(e).__name__}: {e}")))
                continue
            conn.send((True, got))
    finally:
        for box in [*io.out.values(), *io.inbox.values(), *io.news,
                    *(io.frontiers.boxes if io.frontiers else ())]:
            box.close()


class _Files:
    """A shard's commands with their arrays in files of the run's directory: mailboxes
    (:class:`_Mailbox`) carry successors from a worker to their owner (one a pair of
    workers) and a summary of a worker's new keys of a level (their groups, with how
    many keys each holds) to all the others (one a worker),
    ``r`` files (with the graph) an owner's answers to a sender: the ids of its keys."""

    def __init__(self, shard: Shard, w: int, parts: int, d: Path,
                 frontiers: "Frontiers | None" = None):
        self.shard, self.w, self.parts, self.d = shard, w, parts, d
        self.frontiers = frontiers
        # successors to each other worker (out), and from each (in)
        self.out = {o: _Mailbox(d / f"box-{w}-{o}") for o in range(parts) if o != w}
        self.inbox = {s: _Mailbox(d / f"box-{s}-{w}") for s in range(parts) if s != w}
        # the summary of each worker's new keys of the level just merged, read by all
        self.news = [_Mailbox(d / f"news-{s}") for s in range(parts)]
        self.waiting: int | None = None  # the level whose answers this worker awaits
        self.answered: int | None = None  # the last level this worker answered

    def expand(self, failed: list[str]) -> dict[str, Any]:
        level = len(self.shard.gids)
        stats, out = self.shard.expand(set(failed), self._answers(), self.frontiers)
        if self.shard.out is not None:
            self.waiting = level
        for o, box in self.out.items():
            box.put([a for part in out[o] for a in part])
        stats["shuffled"] = sent_bytes(out, self.w, self.shard.out is not None)
        return stats

    def merge(self) -> tuple[int, int]:
        """The level's new states here: how many, and the bytes of their summary, which
        every other worker reads."""
        level = len(self.shard.gids)
        incoming: list[Parts] = []
        for s in range(self.parts):
            got = self.inbox[s].get() if s != self.w else []
            incoming.append([tuple(got[i:i + 3]) for i in range(0, len(got), 3)])
        new = self.shard.merge(incoming)
        del incoming, got  # views of the mailboxes: their senders write the next level
        # every worker has numbered the level before: its views of this box are gone
        self.news[self.w].put(new)
        self._answer(level)
        return summary_told(new)

    def number(self, start: int) -> dict[str, Any]:
        level = len(self.shard.gids)
        new = [box.get() for box in self.news]
        got = self.shard.number(start, new)
        del new  # views of the boxes, which their writers fill again at the next merge
        self._answer(level)
        return got

    def _answer(self, level: int) -> None:
        """Send each worker this owner's answers for ``level``, once they are final."""
        if self.shard.replies is None or self.answered == level:
            return
        for s, ids in enumerate(self.shard.replies):
            if s != self.w:
                _save(self.d / f"r{level}-{self.w}-{s}.npy", [ids])
        self.answered = level

    def _answers(self) -> list[np.ndarray] | None:
        """The owners' answers for the level this worker expanded last (read once)."""
        if self.waiting is None:
            return None
        got = []
        for o in range(self.parts):
            if o == self.w:
                assert self.shard.replies is not None
                got.append(self.shard.replies[o])
                continue
            f = self.d / f"r{self.waiting}-{o}-{self.w}.npy"
            got.append(_read(f)[0])
            f.unlink()
        self.waiting = None
        return got

    def load(self, starts: list[int], edges: bool) -> int:
        arrays = _read(self.d / "load.npy")
        k = 3 * len(starts)
        return self.shard.load([(arrays[3 * i], arrays[3 * i + 1], arrays[3 * i + 2], s)
                                for i, s in enumerate(starts)],
                               tuple(arrays[k:k + 3]) if edges else None)  # type: ignore

    def shape(self) -> tuple[int, int, str]:
        return (self.shard.total, self.shard.lay.words,
                np.dtype(edge_action_dtype(self.shard.succ.model)).str)

    def reserve(self, paths: list[str]) -> bool:
        """Allocate this worker's share of the pages of files that every worker then
        writes all over: allocated on first touch instead, each page costs a fault, and
        the workers' faults on one file queue for the same lock (measured: the scatter
        of graph-relay's edges took twice as long)."""
        for p in paths:
            size = os.path.getsize(p)
            lo, hi = size * self.w // self.parts, size * (self.w + 1) // self.parts
            fd = os.open(p, os.O_RDWR)
            try:
                os.posix_fallocate(fd, lo, hi - lo)
            except OSError as e:
                # where there is no room, touching the pages would kill this worker
                # with SIGBUS; a file system that cannot allocate: they come on touch
                if e.errno == errno.ENOSPC:
                    raise ScratchFull(
                        f"no room left in {os.path.dirname(p)} for {hi - lo:,} more bytes "
                        f"of {os.path.basename(p)} (free space there, or run with fewer "
                        "states)") from None
            finally:
                os.close(fd)
        return True

    def dump_to(self, room: str) -> bool:
        """Write this worker's states with their ids into a file of ``room``."""
        path = Path(room) / f"states-{self.w}.npy"
        try:
            _save(path, list(self.shard.dump()))
        except OSError as e:
            if e.errno == errno.ENOSPC:
                raise ScratchFull(f"no room left in {room} for this worker's "
                                  f"{self.shard.store.nbytes if self.shard.store else 0:,} "
                                  "bytes of states (free space there, or run with fewer "
                                  "states)") from None
            raise
        return True

    def degrees(self, path: str) -> int:
        """How many edges leave each of this worker's states, written at their ids."""
        from numpy.lib.format import open_memmap
        deg = open_memmap(path, mode="r+")
        m = 0
        for src, _, _ in self.shard.edges(self._answers()):
            first, count = runs(src)
            deg[first] = count
            m += len(src)
        deg.flush()
        return m

    def write_edges(self, off_path: str, paths: list[str]) -> bool:
        """This worker's edges' targets and actions at their places among every
        worker's, a piece at a time (the sources are the offsets' to tell)."""
        from numpy.lib.format import open_memmap
        off = np.load(off_path, mmap_mode="r")
        outs = [open_memmap(p, mode="r+") for p in paths]
        mine = np.zeros(len(off) - 1, dtype=bool)
        mine[np.concatenate(self.shard.gids)] = True
        for src, *rest in self.shard.edges():
            fill(outs, off, mine, src, rest)
        for out in outs:
            out.flush()
        return True

    def stored_bytes(self) -> int:
        return self.shard.stored_bytes()


# the driver ---------------------------------------------------------------------------

def partitioned_bfs(model: Model, props: Sequence[Property], shards: Any, *, judge: Judge,
                    starts: np.ndarray, depth: int | None, max_states: int | None,
                    stop_on_violation: bool, progress: Progress | None,
                    saved: dict[str, Any] | None, save: Callable[..., None] | None,
                    checkpoint_every: float, stop_after_levels: int | None, t0: float,
                    graph: bool = False) -> dict[str, Any]:
    """Run the search over ``shards`` (a transport); returns what one process's
    search would have: the arrays in id order, counts and the judge's findings, and
    with ``graph`` (shards made with it) the edges."""
    if saved is None:
        levels = [(starts, np.full(len(starts), -1, np.int32),
                   np.full(len(starts), -1, action_dtype(model)), 0)]
        level_start, generated = [0], len(starts)
        fired = np.zeros(len(model.instances), dtype=np.int64)
        level = 0
    else:
        b = [int(x) for x in saved["level_start"]] + [len(saved["keys"])]
        levels = [(saved["keys"][a:z], saved["parent"][a:z], saved["via"][a:z], a)
                  for a, z in zip(b, b[1:])]
        level_start, generated = b[:-1], int(saved["generated"])
        fired, level = saved["fired"].copy(), int(saved["level"])
    shards.load(levels, (saved["src_e"], saved["dst_e"], saved["act_e"])
                if graph and saved is not None else None)
    del levels
    total = level_start[-1] + (len(starts) if saved is None else
                               len(saved["keys"]) - level_start[-1])
    frontier = total - level_start[-1]
    if saved is not None and int(saved["frontier"][0]) == int(saved["frontier"][1]):
        frontier = 0  # a search that had ended: its last level was expanded already
    stopped, last_cp = None, time.perf_counter()
    # bytes sent between workers for each level: successors to their owners (with the
    # graph, the owners' answers too), then each worker's summary of its new keys to
    # every other, which number theirs against them (those alone in keys_sent)
    per_level: list[int] = []
    keys_sent: list[int] = []
    stolen = 0  # chunks a worker expanded of another's frontier
    while frontier:
        if judge.violations and stop_on_violation:
            stopped = "violation"
            break
        if depth is not None and level >= depth:
            break
        if stop_after_levels is not None and level >= stop_after_levels:
            break
        if max_states is not None and total >= max_states:
            stopped = "max-states"  # (before the level: see vector_bfs)
            break
        before = shards.shuffled
        stats = shards.expand(judge.failed)
        for s in stats:
            stolen += s["stolen"]
            generated += s["generated"]
            fired += s["fired"]
        stuck = [s["stuck"] for s in stats if s["stuck"] >= 0]
        judge.expansion(_summed(s["trans_applied"] for s in stats),
                        [v for s in stats for v in s["trans_viol"]],
                        min(stuck, default=-1))
        merged = shards.merge()
        frontier = sum(n for n, _ in merged)
        keys_sent.append(sum(b for _, b in merged) * (shards.parts - 1))
        per_level.append(shards.shuffled - before + keys_sent[-1])
        if total + frontier > store.MAX_IDS:  # the level is not numbered: no verdict
            if graph:  # its edges are half answered: no graph to check (this raises)
                store.check_ids(total + frontier)
            frontier = total - level_start[-1]
            stopped = "state-ids"
            break
        level += 1
        if frontier:
            level_start.append(total)
            _take(judge, shards.number(total))
            total += frontier
        if progress is not None:
            progress(level, total, generated, time.perf_counter() - t0)
        if save is not None and time.perf_counter() - last_cp >= checkpoint_every:
            keys, parent, via = shards.leave(total).arrays()
            # the frontier of one process's checkpoint: the level not yet expanded,
            # none once the last expansion found nothing new
            save(keys, parent, via, level_start, generated, fired,
                 (level_start[-1] if frontier else total, total), level,
                 _with_sources(shards) if graph else None)
            last_cp = time.perf_counter()
    stored = shards.stored_bytes()
    edges = shards.gather_edges() if graph else None
    # without the graph (whose checks read every state) the workers keep their states
    # until they are read, if they are (see Slices)
    hold = getattr(shards, "hold", None)
    states = hold(total) if hold is not None and not graph else shards.leave(total)
    return {"stored": stored, "states": states, "edges": edges,
            "level_start": level_start, "generated": generated, "fired": fired,
            "frontier": (level_start[-1], total), "open": bool(frontier),
            "stopped": stopped, "level": level, "shuffled": sum(per_level),
            "shuffled_levels": per_level, "new_keys_levels": keys_sent,
            "stolen": stolen}


def _with_sources(shards: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges as a checkpoint keeps them: sources, targets, actions."""
    off, dst, act = shards.gather_edges()
    return sources(off), dst, act


def _take(judge: Judge, reports: list[dict[str, Any]]) -> None:
    """The workers' findings on a new level: of each property's violations, the least
    state id (what one process, judging the level in id order, finds first)."""
    best: dict[str, Violation] = {}
    for r in reports:
        for v in r["violations"]:
            if v.prop not in judge.failed and (v.prop not in best or
                                               v.path[-1] < best[v.prop].path[-1]):
                best[v.prop] = v
        for k in r["witness"]:
            judge.witness_seen[k] = True
    for v in sorted(best.values(), key=lambda v: (v.path[-1], v.prop)):
        judge.failed.add(v.prop)
        judge.violations.append(v)


def walk(violations: list[Violation], parent: np.ndarray, via: np.ndarray) -> None:
    """Replace each violation's placeholder (its state's id) by the path to it.  A path
    already walked is left as it is (walking a placeholder again gives it back)."""
    def path(sid: int) -> tuple[list[int], list[int]]:
        ids, acts = [], []
        while sid >= 0:
            ids.append(sid)
            acts.append(int(via[sid]))
            sid = int(parent[sid])
        return ids[::-1], acts[::-1]

    for v in violations:
        if v.kind == "trans" and len(v.path) == 2:
            ids, acts = path(v.path[0])
            v.path, v.actions = ids + [-1], acts + [v.actions[-1]]
        elif v.kind != "trans" and len(v.path) == 1:
            v.path, v.actions = path(v.path[0])
