"""The explored graph's edges, kept for the reach and fair checks.

Edges come level by level, ordered by source and then action (the explicit engine's
order), as three arrays: source id (int32), target id (int32), action (int16).  A
target first found in the same level has no id until the level is numbered, so its
key waits (:meth:`EdgeLog.end_level` looks it up once).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .levels import LevelStore, first_inverse, sortable

__all__ = ["EdgeLog", "cat_free"]

_EMPTY = np.zeros(0, dtype=np.int8)


def cat_free(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
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


class EdgeLog:
    """Every edge of the search; one part of a level at a time."""

    def __init__(self, act_dtype: Any, saved: dict[str, np.ndarray] | None = None):
        self.act_dtype = act_dtype
        self.src: list[np.ndarray] = []
        self.dst: list[np.ndarray] = []
        self.act: list[np.ndarray] = []
        if saved is not None:
            self.src, self.dst, self.act = [saved["src_e"]], [saved["dst_e"]], [saved["act_e"]]
        self._level()

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
        self.src.append(cp[o])  # ids fit 32 bits (parent links are int32 too), actions 16
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
        def cat(xs: list[np.ndarray]) -> np.ndarray:
            return np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)
        self.src, self.dst, self.act = [cat(self.src)], [cat(self.dst)], [cat(self.act)]
        return {"src_e": self.src[0], "dst_e": self.dst[0], "act_e": self.act[0]}

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (cat_free(self.src, np.int32), cat_free(self.dst, np.int32),
                cat_free(self.act, self.act_dtype))
