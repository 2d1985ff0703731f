"""How the vector engine stores a state: its slots packed into 64-bit words.

No slot straddles a word; a key of several words compares as a byte string.  A
partitioned search (:mod:`.partition`) gives each key an owner by a hash of its words.

>>> from osf_check.models.two_phase import SPEC
>>> lay = Layout(SPEC.build({"rms": 3}))
>>> keys = lay.pack([np.array([0, 1, 2])] * len(lay.fields), 3)
>>> [c.tolist() for c in lay.unpack(keys)][:2]
[[0, 1, 2], [0, 1, 2]]
>>> lay.owner(keys, 1).tolist()
[0, 0, 0]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from osf_check.models.dsl import Model

from .levels import sortable

__all__ = ["Layout", "Columns", "narrow"]

_MUL = np.uint64(0x9E3779B97F4A7C15)
_32 = np.uint64(32)


def narrow(lo: int, hi: int) -> type:
    """The narrowest signed integer type that holds ``lo`` to ``hi``.

    >>> narrow(0, 1).__name__, narrow(-1, 200).__name__, narrow(0, 2**40).__name__
    ('int8', 'int16', 'int64')
    """
    for t in (np.int8, np.int16, np.int32):
        if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
            return t
    return np.int64


class Layout:
    """Where each slot lives: (word, bit offset, bits, lo); and which worker owns a key."""

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
        #: each slot decoded in the narrowest type that holds its domain (see unpack)
        self.dtypes = [narrow(d.lo, d.hi) for d in model.slot_domains]
        self.used = sum(b for w, _, b, _ in self.fields if w == 0)  # bits of the first word

    def owner(self, keys: np.ndarray, parts: int) -> np.ndarray:
        """Which of ``parts`` workers owns each key (uint64): a hash of the key, so that
        each owns about as many states whatever the model's layout.

        A one-word key is hashed without its lower half of bits: keys that differ only
        there (neighbours in the sorted order) stay with one worker, so that a level's
        new keys are told to the others as few groups with counts (:meth:`groups`), at
        the price of a less even share (within 3 % per level on TwoPhase and
        graph-relay, against 1 %).  (When each worker expanded chunks of its own states
        alone, it also kept their successors' sort nearly as fast as one process's: a
        hash of every bit made it 1.8 times slower on TwoPhase N=9, the lower third
        1.2 times, the lower half 1.05.)  A key of
        several words compares as bytes, its order led by the first word's low bytes:
        it is hashed whole."""
        with np.errstate(over="ignore"):
            if self.words == 1:
                x = self.groups(keys)[:, 0] * _MUL
            else:
                x = keys[:, 0].copy()
                for w in range(1, self.words):
                    x = (x ^ (x >> _32)) * _MUL ^ keys[:, w]
                x = (x ^ (x >> _32)) * _MUL
        return ((x >> _32) * np.uint64(parts)) >> _32

    def groups(self, keys: np.ndarray) -> np.ndarray:
        """Each key's group, as rows of 64-bit words: what :meth:`owner` hashes, so that
        a group's keys have one owner, and ordered as the keys are (a key below another
        has a group at most the other's).  A one-word key's group is its upper half of
        bits; a wider key is its own group.  Numbering a level over workers needs only
        the others' groups and how many keys each holds (:mod:`.partition`).

        >>> from osf_check.models.two_phase import SPEC
        >>> lay = Layout(SPEC.build({"rms": 3}))  # keys of 16 bits: groups of the upper 8
        >>> keys = np.array([[0x1234], [0x12FF], [0x5600]], dtype=np.uint64)
        >>> lay.groups(keys)[:, 0].tolist()
        [18, 18, 86]
        >>> owner = lay.owner(keys, 7).tolist()
        >>> owner[0] == owner[1]
        True
        """
        if self.words == 1:
            return keys[:, :1] >> np.uint64(self.used // 2)
        return keys

    # packing -------------------------------------------------------------------------
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

    def unpack(self, keys: np.ndarray) -> "Columns":
        """The slots of ``keys`` as columns, each decoded when first read (a guard or an
        invariant reads a few slots of many), in the narrowest integer type that holds
        its domain (:attr:`dtypes`; :func:`~.npeval.np_eval` does arithmetic in 64
        bits).  Every action's guard reads its columns over the whole chunk: at 64 bits
        they outgrow the core's cache.  One chunk of graph-relay's successors (131,072
        states of level 19, the chunk then; its safety properties checked): 94 ms
        against 121 at 64 bits; in its whole search, one process, the successors took
        7.7 and 7.6 s of CPU against 8.3 and 9.3 (2026-12-02, in turns; the run as a
        whole moves by more than that on this machine).  TwoPhase's guards read a slot
        or two: as fast either way."""
        return Columns(self, keys)

    def _slot(self, keys: np.ndarray, i: int, dtype: type) -> np.ndarray:
        w, off, b, lo = self.fields[i]
        if b == 0:
            return np.full(len(keys), lo, dtype=dtype)
        c = (keys[:, w] >> np.uint64(off)) & np.uint64((1 << b) - 1)
        if lo:  # wraps modulo 2**64: the value, which ``dtype`` holds, comes out exact
            c += np.uint64(lo % 2**64)
        return c.astype(dtype)

    def column(self, keys: np.ndarray, i: int, dtype: type, chunk: int = 1 << 20
               ) -> np.ndarray:
        """Slot ``i`` of every key in ``dtype``, decoded a chunk at a time (the whole
        array at 64 bits would be eight times the memory)."""
        if len(keys) <= chunk:
            return self._slot(keys, i, dtype)
        out = np.empty(len(keys), dtype=dtype)
        for lo in range(0, len(keys), chunk):
            out[lo:lo + chunk] = self._slot(keys[lo:lo + chunk], i, dtype)
        return out

    def unpack_one(self, key: np.ndarray) -> tuple:
        return tuple(int(c[0]) for c in self.unpack(np.asarray(key).reshape(1, self.words)))

    def sortable(self, keys: np.ndarray) -> np.ndarray:
        """A 1-D array with one comparable element per key row."""
        return sortable(keys)


class Columns(Sequence[np.ndarray]):
    """The slots of ``keys`` as columns, each in its layout's type (:attr:`Layout.dtypes`),
    decoded on first use and kept.

    >>> from osf_check.models.two_phase import SPEC
    >>> lay = Layout(SPEC.build({"rms": 3}))
    >>> cols = lay.unpack(lay.pack([np.array([1, 2])] * len(lay.fields), 2))
    >>> len(cols), cols[0].tolist(), len(cols.got)
    (12, [1, 2], 1)
    """

    def __init__(self, lay: Layout, keys: np.ndarray):
        self.lay, self.keys, self.got = lay, keys, {}

    def __len__(self) -> int:
        return len(self.lay.fields)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        c = self.got.get(i)
        if c is None:
            c = self.got[i] = self.lay.column(self.keys, i, self.lay.dtypes[i])
        return c

    def forget(self) -> None:
        """Drop the columns decoded so far (they are decoded again when read)."""
        self.got.clear()
