"""The graph's edges in a partitioned search: each worker keeps the edges out of its states.

An edge's target belongs to the worker its hash names (its *owner*), which alone can
tell the target's id, and only once the level is numbered.  So a worker keeps, for
each edge of the level it expands, where the target's key went (owner, position in
what that owner received: :class:`OutEdges`); each owner answers every worker with
the id of each key it received, in the order received (:class:`Answers`); the edges
are then resolved.  In the end the workers' edges, each worker's by source then
action, are placed at their positions in one process's arrays (:func:`fill`):
the edges a one-process search records, in the same order, kept by source (CSR: where
each source's edges start, then their targets and actions; :func:`sources` gives
back the sources where they are needed).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from osf_check.explorer.store.levels import runs, sortable

__all__ = ["OutEdges", "Answers", "fill", "place", "runs", "sources"]


class OutEdges:
    """The edges out of one worker's states: resolved ones, and the current level's,
    waiting for their targets' ids."""

    def __init__(self, parts: int, act_dtype: Any):
        self.parts, self.act_dtype = parts, act_dtype
        self.src: list[np.ndarray] = []
        self.dst: list[np.ndarray] = []
        self.act: list[np.ndarray] = []
        self.waiting: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.sent = np.zeros(parts, dtype=np.int64)  # keys sent to each owner this level

    def chunk(self, src: np.ndarray, act: np.ndarray, key: np.ndarray,
              to: list[np.ndarray]) -> None:
        """A chunk's edges: ``src`` (global ids) and ``act`` of each candidate, ``key``
        the index of its target among the chunk's distinct keys, ``to[w]`` the distinct
        keys sent to owner ``w`` (in the order sent)."""
        code = np.empty(sum(len(t) for t in to), dtype=np.int64)
        for w, at in enumerate(to):  # where each key lands: (position at its owner, owner)
            code[at] = (self.sent[w] + np.arange(len(at), dtype=np.int64)) * self.parts + w
            self.sent[w] += len(at)
        o = np.argsort(src, kind="stable")  # by source, then action (runs come by action)
        self.waiting.append((src[o], act[o].astype(self.act_dtype), code[key[o]]))

    def resolve(self, answers: list[np.ndarray]) -> None:
        """The owners' answers (``answers[w]``: the ids of what owner ``w`` received from
        here, in order): the waiting edges get their targets."""
        if not self.waiting:
            return
        for w, a in enumerate(answers):
            if len(a) != self.sent[w]:
                raise RuntimeError(f"internal error: owner {w} answered {len(a)} ids for "
                                   f"{self.sent[w]} keys")
        # a key's code is (position at its owner) * parts + owner: the answers
        # interleaved so, each edge's target is one look-up (no division per edge)
        ids = np.zeros(self.parts * int(self.sent.max()), dtype=np.int32)
        for w, a in enumerate(answers):
            ids[w::self.parts][:len(a)] = a
        for src, act, code in self.waiting:
            self.src.append(src)
            self.dst.append(ids[code])
            self.act.append(act)
        self.waiting = []
        self.sent[:] = 0

    def pieces(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The resolved edges, a piece per chunk expanded, by source then action (levels
        and chunks come in id order; a source's edges are all in one piece)."""
        if self.waiting:
            raise RuntimeError("internal error: edges read before their targets' ids came")
        return list(zip(self.src, self.dst, self.act))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`pieces` end to end."""
        got = self.pieces()
        return tuple(np.concatenate([p[i] for p in got]) if got else  # type: ignore
                     np.zeros(0, dt) for i, dt in enumerate((np.int32, np.int32,
                                                             self.act_dtype)))

    def load(self, src: np.ndarray, dst: np.ndarray, act: np.ndarray) -> None:
        """Edges of an earlier run (a checkpoint's, this worker's sources only)."""
        self.src, self.dst, self.act = [src], [dst], [act.astype(self.act_dtype)]


class Answers:
    """An owner's answers for one level: for each sender, the id of each key it sent.
    Keys stored before are answered as they are looked up; the level's new keys once
    it is numbered (:meth:`number`)."""

    def __init__(self) -> None:
        self.ids: list[np.ndarray] = []  # per sender, -1 where the key is new
        self.new_at: list[np.ndarray] = []  # per sender, which of its keys are new
        self.new_keys: list[np.ndarray] = []  # ... and those keys (sortable)

    def sender(self, ids: list[np.ndarray], new_at: list[np.ndarray],
               new_keys: list[np.ndarray]) -> None:
        """One sender's keys, chunk by chunk: known ids (-1: new), the new ones' positions
        within the chunk, and their sortable keys."""
        base, at = 0, []
        for i, n in zip(ids, new_at):
            at.append(n + base)
            base += len(i)
        self.ids.append(np.concatenate(ids) if ids else np.zeros(0, np.int32))
        self.new_at.append(np.concatenate(at) if at else np.zeros(0, np.int64))
        self.new_keys.append(np.concatenate(new_keys) if new_keys else None)

    def number(self, level_keys: np.ndarray, level_ids: np.ndarray) -> list[np.ndarray]:
        """The answers, once the new keys (``level_keys``, sorted) have their ids."""
        sk = sortable(level_keys)
        for ids, at, keys in zip(self.ids, self.new_at, self.new_keys):
            if len(at):
                ids[at] = level_ids[np.searchsorted(sk, keys)]
        return self.ids

    @property
    def final(self) -> bool:
        """No key waits for the level's numbering."""
        return not any(len(a) for a in self.new_at)


def fill(outs: Sequence[np.ndarray], off: np.ndarray, mine: np.ndarray, src: np.ndarray,
         values: Sequence[np.ndarray]) -> None:
    """Write one worker's piece of edges into every worker's, by source: ``src`` the
    piece's sources (sorted, a source's edges by action), ``values`` their targets and
    actions, ``off[s]`` where source ``s``'s edges start in ``outs``, ``mine[s]``
    whether ``s`` is this worker's state.

    A piece's sources span a range that no other piece of its worker's touches (chunks
    and levels come in id order), so within that range the worker's edges are those of
    its own states, in order: one pass of a mask places them, with no position to
    compute for each edge (graph-relay's scatter: 0.85 s for the slower of two workers,
    against 1.25 s with a position for each edge).

    >>> d = np.zeros(7, dtype=np.int32)
    >>> off, mine = np.array([0, 2, 5, 5, 5, 7]), np.array([1, 0, 0, 0, 1], dtype=bool)
    >>> fill([d], off, mine, np.array([0, 0, 4, 4]), [np.array([3, 4, 5, 6])])
    >>> d.tolist()
    [3, 4, 0, 0, 0, 5, 6]
    """
    if not len(src):
        return
    s0, s1 = int(src[0]), int(src[-1]) + 1
    lo, hi = int(off[s0]), int(off[s1])
    mask = np.repeat(mine[s0:s1], np.diff(off[s0:s1 + 1]))
    if np.count_nonzero(mask) != len(src):
        raise RuntimeError("internal error: a piece of edges does not hold every edge "
                           "of its worker's states in its range of sources")
    for out, v in zip(outs, values):
        out[lo:hi][mask] = v


def place(edges: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every worker's edges (``edges[w]``: sources, targets, actions, by source then
    action) as one process's, over states ``0..n-1``, by source: where each source's
    edges start (``n + 1`` offsets), then the targets and actions.

    >>> off, d, a = place([(np.array([0, 2]), np.array([1, 0]), np.array([0, 0])),
    ...                    (np.array([1, 1]), np.array([2, 0]), np.array([0, 1]))], 3)
    >>> off.tolist(), d.tolist(), a.tolist(), sources(off).tolist()
    ([0, 1, 3, 4], [1, 2, 0, 0], [0, 0, 1, 0], [0, 1, 1, 2])
    """
    off = np.zeros(n + 1, dtype=np.int64)
    for src, _, _ in edges:
        off[1:] += np.bincount(src, minlength=n)
    np.cumsum(off, out=off)
    m = int(off[-1])
    act = edges[0][2].dtype if edges else np.int16
    out = (np.empty(m, np.int32), np.empty(m, act))
    for src, *rest in edges:
        mine = np.zeros(n, dtype=bool)
        mine[runs(src)[0]] = True
        fill(out, off, mine, src, rest)
    return (off, *out)  # type: ignore[return-value]


def sources(off: np.ndarray) -> np.ndarray:
    """The source of each edge, from where each source's edges start (32-bit ids).

    >>> sources(np.array([0, 2, 2, 3])).tolist()
    [0, 0, 2]
    """
    n = len(off) - 1
    return np.repeat(np.arange(n, dtype=np.int32), np.diff(off))
