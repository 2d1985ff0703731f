"""The explored graph's edges, kept for the reach and fair checks.

Edges come level by level, ordered by source and then action (the explicit engine's
order): target id (int32) and action (int16) per edge.  Their sources are kept as runs
(each source once, with its number of edges) and given back as where each state's
edges start (CSR): a source per edge would be 4 bytes an edge, the largest array of
a complete run with reach or fair properties after the targets.  A target first found
in the same level has no id until the level is numbered, so its key waits
(:meth:`EdgeLog.end_level` looks it up once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .levels import LevelStore, cat_free, first_inverse, runs, sortable

if TYPE_CHECKING:
    from .spill import Spill

__all__ = ["EdgeLog", "cat_free"]

class EdgeLog:
    """Every edge of the search; one part of a level at a time."""

    def __init__(self, act_dtype: Any, saved: dict[str, np.ndarray] | None = None):
        self.act_dtype = act_dtype
        self.src: list[np.ndarray] = []  # each part's sources, once each (int32)
        self.deg: list[np.ndarray] = []  # and how many edges leave each (int32)
        self.dst: list[np.ndarray] = []
        self.act: list[np.ndarray] = []
        self.spill: "Spill | None" = None  # under a memory budget: where parts go
        if saved is not None:
            self._runs(saved["src_e"])
            self.dst, self.act = [saved["dst_e"]], [saved["act_e"]]
        self._level()

    def held(self) -> int:
        """Bytes of the finished levels' edges in memory (not spilled)."""
        sp = self.spill
        return sum(a.nbytes for part in (self.src, self.deg, self.dst, self.act)
                   for a in part if sp is None or not sp.spilled(a))

    def _runs(self, src: np.ndarray) -> None:
        s, k = runs(src)
        self.src.append(s.astype(np.int32))
        self.deg.append(k.astype(np.int32))

    def _level(self) -> None:
        self.lvl_dst: list[np.ndarray] = []
        self.pend_pos: list[np.ndarray] = []
        self.pend_keys: list[np.ndarray] = []
        self.base = 0

    def part(self, store: LevelStore, ck: np.ndarray, cp: np.ndarray, ca: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Record the edges of candidates ``ck`` (from ``cp`` by ``ca``, as a chunk gives
        them: action by action, each action's by source); returns, for each target not
        stored before (the level's new states), its least (action, source): its first
        occurrence (see :func:`.store.least`)."""
        uniq, rows, inv = first_inverse(sortable(ck))  # one sort of the keys for both
        seen, ids = store.lookup(uniq)
        o = np.argsort(cp, kind="stable")  # edges by source, then action
        key = inv[o]
        del inv
        dst = ids.astype(np.int32)[key]  # -1: new in this level
        miss = np.flatnonzero(dst < 0)
        self.pend_pos.append(miss + self.base)
        self.pend_keys.append(uniq[key[miss]])
        self.lvl_dst.append(dst)
        self._runs(cp[o])  # ids fit 32 bits (parent links are int32 too), actions 16
        self.act.append(ca[o].astype(self.act_dtype))
        self.base += len(ck)
        fresh = rows[~seen]
        return ck[fresh], cp[fresh], ca[fresh]

    def end_level(self, store: LevelStore, start: int) -> None:
        """The level is numbered from ``start``: give its new targets their ids."""
        if self.lvl_dst:
            d = np.concatenate(self.lvl_dst)
            pp = np.concatenate(self.pend_pos)
            if len(pp):
                d[pp] = start + np.searchsorted(sortable(store.keys[-1]),
                                                np.concatenate(self.pend_keys))
            self.dst.append(d)
        self._level()

    def saved(self) -> dict[str, np.ndarray]:
        """The edges so far, for a checkpoint (one array each, so that the next save
        does not copy pieces)."""
        def cat(xs: list[np.ndarray], dtype: Any = np.int64) -> np.ndarray:
            return np.concatenate(xs) if xs else np.zeros(0, dtype=dtype)
        self.src, self.deg = [cat(self.src, np.int32)], [cat(self.deg, np.int32)]
        self.dst, self.act = [cat(self.dst)], [cat(self.act)]
        src = np.repeat(self.src[0], self.deg[0])  # the file keeps a source per edge
        return {"src_e": src, "dst_e": self.dst[0], "act_e": self.act[0]}

    def finish(self, states: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where the edges of each of the ``states`` states start (``states + 1``
        offsets), then every edge's target and action."""
        off = np.zeros(states + 1, dtype=np.int64)
        for s, k in zip(self.src, self.deg):
            np.add.at(off, s.astype(np.int64) + 1, k)  # a source may span two parts
            if self.spill is not None:
                self.spill.forget(s)
                self.spill.forget(k)
        np.cumsum(off, out=off)
        self.src, self.deg = [], []
        if self.spill is not None:  # under a memory budget: the result on disk
            return off, self.spill.concat(self.dst, np.int32), \
                self.spill.concat(self.act, self.act_dtype)
        return off, cat_free(self.dst, np.int32), cat_free(self.act, self.act_dtype)
