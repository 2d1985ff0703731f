"""The vector engine's visited set and parent links: one sorted segment per BFS level.

A state's id is its level's first id plus its rank in the level's sorted keys, so the
keys themselves are the index: looking a key up is a binary search in each level's
segment, and no sorted copy of the keys, no id permutation and no hash table is kept.
Per state: its key (8 bytes per 64-bit word), its parent (4) and the action taken
(2): 14 bytes for a one-word state, against 26 with a sorted copy and its ids.

>>> import numpy as np
>>> s = LevelStore(np.array([[5]], dtype=np.uint64), np.int16)
>>> s.add_level(np.array([[2], [9]], dtype=np.uint64), np.array([0, 0]), np.array([1, 0]))
1
>>> found, ids = s.lookup(np.array([2, 5, 7], dtype=np.uint64))
>>> found.tolist(), ids[found].tolist()
([True, True, False], [1, 0])
>>> s.path_to(2)
([0, 2], [-1, 0])
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

__all__ = ["LevelStore", "sortable"]

#: written into checkpoints: a checkpoint of another layout is refused, not misread
STORE_VERSION = 2


def sortable(keys: np.ndarray) -> np.ndarray:
    """A 1-D array with one comparable element per key row (a view, no copy, when the
    keys are contiguous)."""
    if keys.shape[1] == 1:
        return keys[:, 0]
    return np.ascontiguousarray(keys).view(np.dtype((np.void, 8 * keys.shape[1]))).ravel()


class LevelStore:
    """Levels of sorted, distinct keys with their parents and actions."""

    def __init__(self, init_keys: np.ndarray, act_dtype: Any):
        o = np.argsort(sortable(init_keys), kind="stable")
        self.act_dtype = act_dtype
        self.keys: list[np.ndarray] = [np.ascontiguousarray(init_keys[o])]
        self.parent: list[np.ndarray] = [np.full(len(o), -1, dtype=np.int32)]
        self.via: list[np.ndarray] = [np.full(len(o), -1, dtype=act_dtype)]
        self.starts: list[int] = [0]
        self.total = len(o)

    def __len__(self) -> int:
        return self.total

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for part in (self.keys, self.parent, self.via) for a in part)

    def add_level(self, keys: np.ndarray, parent: np.ndarray, via: np.ndarray) -> int:
        """Append a level (its keys sorted, distinct and new); returns its first id."""
        start = self.total
        self.keys.append(np.ascontiguousarray(keys))
        self.parent.append(parent.astype(np.int32))
        self.via.append(via.astype(self.act_dtype))
        self.starts.append(start)
        self.total += len(keys)
        return start

    def lookup(self, uniq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For sortable keys ``uniq``: which are stored, and their ids (-1 where not)."""
        found = np.zeros(len(uniq), dtype=bool)
        ids = np.full(len(uniq), -1, dtype=np.int64)
        for start, seg in zip(self.starts, self.keys):
            if not len(seg) or not len(uniq):
                continue
            sk = sortable(seg)
            pos = np.searchsorted(sk, uniq)
            pc = np.minimum(pos, len(sk) - 1)
            hit = (pos < len(sk)) & (sk[pc] == uniq)
            found |= hit
            ids[hit] = start + pc[hit]
        return found, ids

    def _at(self, sid: int) -> tuple[int, int]:
        lv = bisect.bisect_right(self.starts, sid) - 1
        return lv, sid - self.starts[lv]

    def path_to(self, sid: int) -> tuple[list[int], list[int]]:
        """The ids from an initial state to ``sid`` and the actions taken into each."""
        ids, acts = [], []
        while sid >= 0:
            lv, r = self._at(sid)
            ids.append(int(sid))
            acts.append(int(self.via[lv][r]))
            sid = int(self.parent[lv][r])
        return ids[::-1], acts[::-1]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """keys, parents and actions of every state in id order (copies)."""
        return (np.concatenate(self.keys), np.concatenate(self.parent),
                np.concatenate(self.via))

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Like :meth:`arrays`, but the levels are released as they are copied, so the
        peak is the result plus one level, not twice the store."""
        out = []
        for part in (self.keys, self.parent, self.via):
            shape = (self.total,) + part[0].shape[1:]
            a = np.empty(shape, dtype=part[0].dtype)
            at = 0
            for i, seg in enumerate(part):
                a[at:at + len(seg)] = seg
                at += len(seg)
                part[i] = seg[:0]
            out.append(a)
        self.keys, self.parent, self.via = [out[0]], [out[1]], [out[2]]
        self.starts = [0]
        return out[0], out[1], out[2]

    @classmethod
    def from_arrays(cls, keys: np.ndarray, parent: np.ndarray, via: np.ndarray,
                    level_start: list[int]) -> "LevelStore":
        """The store a checkpoint saved with :meth:`arrays` and its level starts."""
        s = cls.__new__(cls)
        s.act_dtype = via.dtype
        bounds = list(level_start) + [len(keys)]
        s.keys = [np.ascontiguousarray(keys[a:b]) for a, b in zip(bounds, bounds[1:])]
        s.parent = [parent[a:b] for a, b in zip(bounds, bounds[1:])]
        s.via = [via[a:b] for a, b in zip(bounds, bounds[1:])]
        s.starts = list(level_start)
        s.total = len(keys)
        return s
