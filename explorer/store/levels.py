"""The vector engine's visited set and parent links: one sorted segment per BFS level.

A state's id is its level's first id plus its rank in the level's sorted keys, so the
keys themselves are the index: looking a key up is a binary search in each level's
segment, and no sorted copy of the keys, no id permutation and no hash table is kept.
A Bloom filter of 10 to 16 bits per state answers "never seen" for almost every
new state without touching the levels, so a search with thirty levels costs about
what one sorted array would.  Per state: its key (8 bytes per 64-bit word), its
parent (4), the action taken (2) and the filter (at most 2): at most 16 bytes for a
one-word state, against 26 with a sorted copy and its ids.

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
from typing import TYPE_CHECKING, Any

import numpy as np

from .allocator import give_back_freed, huge_zeros

if TYPE_CHECKING:
    from .spill import Spill

__all__ = ["LevelStore", "sortable", "least", "first", "first_inverse", "rank", "key_rows",
           "IdsExhausted", "check_ids", "MAX_IDS", "runs", "least_rows"]

#: written into checkpoints: a checkpoint of another layout is refused, not misread
#: (3: parents are the least (action, parent), not the first found in a chunk)
STORE_VERSION = 3


def sortable(keys: np.ndarray) -> np.ndarray:
    """A 1-D array with one comparable element per key row (a view, no copy, when the
    keys are contiguous)."""
    if keys.shape[1] == 1:
        return keys[:, 0]
    return np.ascontiguousarray(keys).view(np.dtype((np.void, 8 * keys.shape[1]))).ravel()


_EMPTY = np.zeros(0, dtype=np.int8)


def cat_free(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    """The pieces end to end, each released once copied: the peak is the result plus one
    piece, not twice the pieces (pieces of a level come from the heap, which keeps
    them once freed: given back as they go, :func:`.allocator.give_back_freed`)."""
    tail = parts[0].shape[1:] if parts else ()
    out = np.empty((sum(len(p) for p in parts),) + tail, dtype=dtype)
    at = 0
    for i, p in enumerate(parts):
        out[at:at + len(p)] = p
        at += len(p)
        parts[i] = _EMPTY  # not p[:0]: a view would keep p's memory
        del p
        give_back_freed()
    parts.clear()
    return out


def rank(parent: np.ndarray, act: np.ndarray) -> np.ndarray:
    """A candidate's (action, parent id) as one int64 that orders like the pair (in
    place: one int64 array, not one for each half and their sum)."""
    r = act.astype(np.int64)
    r <<= 32
    r += parent
    return r


def runs(src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sources of sorted ``src`` and how many times each comes (no copy of ``src``).

    >>> s, k = runs(np.array([3, 3, 5, 8, 8, 8]))
    >>> s.tolist(), k.tolist()
    ([3, 5, 8], [2, 1, 3])
    """
    if not len(src):
        return src[:0], np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(src[1:] != src[:-1]) + 1
    bounds = np.concatenate(([0], starts, [len(src)]))
    return src[bounds[:-1]], np.diff(bounds)


def _runs(sk: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sk`` sorted stably: the order, the sorted keys, and where each run of equal
    keys starts (True)."""
    o = np.argsort(sk, kind="stable")
    so = sk[o]
    head = np.ones(len(o), dtype=bool)
    head[1:] = so[1:] != so[:-1]
    return o, so, head


def first(sk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct sortable keys of ``sk`` (sorted) and the row of each one's first
    occurrence (a stable sort keeps it at the head of its run).

    >>> u, rows = first(np.array([7, 3, 7, 3]))
    >>> u.tolist(), rows.tolist()
    ([3, 7], [1, 0])
    """
    o, so, head = _runs(sk)
    return so[head], o[head]


def first_inverse(sk: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`first`, and for each row of ``sk`` the index of its key among the distinct
    ones (one sort for both).

    >>> u, rows, inv = first_inverse(np.array([7, 3, 7, 3]))
    >>> u.tolist(), rows.tolist(), inv.tolist()
    ([3, 7], [1, 0], [1, 0, 1, 0])
    """
    o, so, head = _runs(sk)
    inv = np.empty(len(o), dtype=np.int64)
    inv[o] = np.cumsum(head) - 1
    return so[head], o[head], inv


def least(sk: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One row per distinct sortable key of ``sk``: the one of least ``order``.

    Returns the distinct keys (sorted) and the chosen rows.  The vector engine keeps,
    of the candidates for a new state, the least (action, parent id) (:func:`rank`): a
    rule that does not depend on how a level was cut into chunks or shared between
    workers, so that parent links and counterexamples do not either.  (Within one
    chunk, whose candidates come action by action, each action's in parent order,
    that is the first occurrence: :func:`first`.)

    >>> u, rows = least(np.array([7, 3, 7, 3]), np.array([5, 9, 2, 4]))
    >>> u.tolist(), rows.tolist()
    ([3, 7], [3, 2])
    """
    keys, rows = _least(sk, lambda o: order[o], True)
    return keys, rows  # type: ignore[return-value]


def least_rows(sk: np.ndarray, parent: np.ndarray, via: np.ndarray) -> np.ndarray:
    """The rows :func:`least` chooses by :func:`rank` of ``parent``, ``via``, without the
    distinct keys and without a rank for every candidate beside them: a level's
    candidates are the search's peak (a third less memory there, measured on a level
    of wire-relay's complete run).

    >>> least_rows(np.array([7, 3, 7, 3]), np.array([5, 9, 2, 4]), np.zeros(4)).tolist()
    [3, 2]
    """
    return _least(sk, lambda o: _rank_of(parent, via, o), False)[1]


def _rank_of(parent: np.ndarray, via: np.ndarray, o: np.ndarray) -> np.ndarray:
    """:func:`rank` of the rows ``o``, a slice at a time (no gathered copy of the
    parents and actions beside it)."""
    r = np.empty(len(o), dtype=np.int64)
    for lo in range(0, len(o), _ROWS):
        rows = o[lo:lo + _ROWS]
        r[lo:lo + _ROWS] = rank(parent[rows], via[rows])
    return r


def _least(sk: np.ndarray, ordered: Any, keys: bool) -> tuple[np.ndarray | None, np.ndarray]:
    """:func:`least`, with ``ordered(o)`` the order of the rows ``o``; the distinct keys
    only if ``keys``.  Each temporary is released as soon as it is read."""
    o = np.argsort(sk, kind="stable")
    head = _heads(sk, o)
    distinct = sk[o[head]] if keys else None
    starts = np.flatnonzero(head)
    del head
    if len(starts) < 2**31 - 1:
        starts = starts.astype(np.int32)  # one for each distinct key
    r = ordered(o)
    if not len(r):
        return distinct, o
    # the winners are the rows at their key's least order: r less that least is 0
    _less_least(r, starts)
    del starts
    win = r == 0
    del r
    return distinct, o[win]


#: rows of a level's candidates read at a time where a whole-level temporary is not
#: needed: 8 to 16 bytes a row each, 16 MB or less
_ROWS = 1 << 20


def _heads(sk: np.ndarray, o: np.ndarray) -> np.ndarray:
    """Where a new key starts among ``sk`` taken in order ``o`` (True), the keys in
    order read a slice at a time (all at once: 16 bytes a candidate of two-word keys).

    >>> _heads(np.array([7, 3, 7, 3]), np.array([1, 3, 0, 2])).tolist()
    [True, False, True, False]
    """
    head = np.ones(len(o), dtype=bool)
    for lo in range(0, len(o), _ROWS):
        so = sk[o[max(lo - 1, 0):lo + _ROWS]]  # (and the row before, if any)
        head[max(lo, 1):lo + _ROWS] = so[1:] != so[:-1]
    return head


def _less_least(r: np.ndarray, starts: np.ndarray) -> None:
    """Take from each run of ``r`` (runs start at ``starts``) the run's least value, in
    place, a slice of runs at a time (each run's least repeated over the whole ``r``
    would be 8 bytes a candidate more).

    >>> r = np.array([5, 3, 9, 4, 4])
    >>> _less_least(r, np.array([0, 2, 3]))
    >>> r.tolist()
    [2, 0, 0, 0, 0]
    """
    g = 0
    while g < len(starts):
        h = max(int(np.searchsorted(starts, starts[g] + _ROWS, side="right")), g + 1)
        a, b = int(starts[g]), int(starts[h]) if h < len(starts) else len(r)
        at = starts[g:h] - a
        r[a:b] -= np.repeat(np.minimum.reduceat(r[a:b], at), np.diff(at, append=b - a))
        g = h


#: state ids and parent links are 32-bit numbers (int32): 4 bytes a state where 8 would
#: cost a quarter more memory on a one-word model
MAX_IDS = 2**31 - 1


class IdsExhausted(RuntimeError):
    """A search would number more states than 32-bit ids hold: it stops with no verdict
    (a resource bound), where the ids would have wrapped and the parent links with them."""


def check_ids(total: int) -> None:
    """Refuse to number states past :data:`MAX_IDS` (``total``: how many there would be).
    The searches stop before a level that would not fit (``stopped: "state-ids"``); this
    is the store's own guard."""
    if total > MAX_IDS:
        raise IdsExhausted(f"the search would reach {total:,} states, more than the vector "
                           f"engine's 32-bit state ids number ({MAX_IDS:,})")


#: a full filter is rebuilt for this many times the keys it holds
GROWTH = 1.6


def or_at(a: np.ndarray, at: np.ndarray, bits: np.ndarray) -> None:
    """``a[at] |= bits`` where ``at`` may name an element more than once.

    An element named twice in one assignment keeps only the last write, so the bits
    that did not stick are set again until none is left (a few rounds;
    np.bitwise_or.at, which handles repeats itself, is three times slower).

    >>> a = np.zeros(2, dtype=np.uint8)
    >>> or_at(a, np.array([0, 0, 1, 0]), np.array([1, 2, 2, 8], dtype=np.uint8))
    >>> a.tolist()
    [11, 2]
    """
    while len(at):
        a[at] = a[at] | bits
        lost = (a[at] & bits) != bits
        at, bits = at[lost], bits[lost]


def set_bits(by: np.ndarray, pos: np.ndarray) -> None:
    """Set bits ``pos`` of the byte array ``by`` (bit p is bit p % 8 of byte p // 8).

    >>> by = np.zeros(2, dtype=np.uint8)
    >>> set_bits(by, np.array([0, 1, 1, 9, 3]))
    >>> by.tolist()
    [11, 2]
    """
    or_at(by, (pos >> 3).astype(np.intp), np.left_shift(np.uint8(1), (pos & 7).astype(np.uint8)))


def get_bits(by: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Bits ``pos`` of the byte array ``by``, as bools."""
    return ((by[(pos >> 3).astype(np.intp)] >> (pos & 7).astype(np.uint8)) & np.uint8(1)) > 0


_MULT = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F),
         np.uint64(0x165667B19E3779F9))

#: keys hashed into the filter at a time
_SLICE = 1 << 20

#: how many bits of its word a key sets
_BITS = 4


class Bloom:
    """A Bloom filter over 64-bit-word keys: ``bits_per_key`` bits each on average, a
    key's four bits in one 64-bit word (a blocked filter); it doubles and refills
    itself as keys are added.  It can say "maybe" for a key never added (rarely), never
    "no" for one that was.

    One word a key, not three bits anywhere: the filter is read and written at random
    and outgrows the caches, so each key cost three misses.  Measured (2026-12-02, 10 M
    random keys added in growing levels, then 20 M look-ups, three rounds in turns):
    adds 0.8-1.0 s against 1.3-1.8, look-ups 0.32-0.38 s against 0.65-0.91.  False
    "maybe" at 10 bits a key: 1.9 % (three bits anywhere: 1.75 %); at 16: 0.53 % (0.50).

    >>> import numpy as np
    >>> b = Bloom(words=1, capacity=1300)
    >>> b.add(np.arange(1000, dtype=np.uint64).reshape(-1, 1))
    >>> bool(b.maybe(np.arange(1000, dtype=np.uint64).reshape(-1, 1)).all())
    True
    >>> int(b.maybe(np.arange(10**6, 2 * 10**6, dtype=np.uint64).reshape(-1, 1)).sum()) < 30000
    True
    """

    def __init__(self, words: int, bits_per_key: int = 10, capacity: int = 64):
        self.words, self.per = words, bits_per_key
        self.n = 0
        self._size(capacity)

    def _size(self, capacity: int) -> None:
        """Room for ``capacity`` keys at ``bits_per_key`` each: a resize at GROWTH times
        the keys held keeps between 10 and 16 bits per key, at most 2 % false "maybe"
        (at 1.3 times and 12 bits, the refills cost more than the false answers)."""
        self.capacity = capacity
        self.bits = huge_zeros(max(1, capacity * self.per // 64), np.uint64)

    def _words_masks(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each key's word in the filter and the bits it sets there."""
        x = rows[:, 0].copy()
        n = np.uint64(len(self.bits))
        with np.errstate(over="ignore"):
            for w in range(1, rows.shape[1]):  # fold the other words in
                x = (x * _MULT[2]) ^ rows[:, w]
            x ^= x >> np.uint64(31)
            y = x * _MULT[0]
            if n < 2**32:  # multiply-high onto 0..n-1: no division
                at = ((y >> np.uint64(32)) * n) >> np.uint64(32)
            else:
                at = (y >> np.uint64(17)) % n
            z = x * _MULT[1]  # four 6-bit fields of its top bits: the bits in the word
            mask = np.left_shift(np.uint64(1), z >> np.uint64(58))
            for i in range(1, _BITS):
                mask |= np.left_shift(np.uint64(1), (z >> np.uint64(58 - 6 * i)) & np.uint64(63))
        return at.astype(np.intp), mask

    def add(self, rows: np.ndarray, refill: Any = None, expect: int | None = None) -> None:
        """Add key rows; ``refill()`` yields every key added so far, for a resize.

        ``expect``: how many keys to size for, if not those added.  Partitioned workers
        each hold a share of the states and pass the same number (the total over their
        count), so that they all refill at the same level: a refill re-adds every key
        (about 3.3 M a worker at TwoPhase N=9's last), and one worker's refill alone
        is time the others wait out at the level's end.  Sized by their
        own counts, two workers' filters grew at different levels of TwoPhase N=4, 6,
        7 and 8 (each worker's share of the levels replayed; at the same ones for
        N=9, whose shares are within 0.5 %).  A worker holding a quarter more than
        that (a skewed partition) sizes for its own, so that its filter keeps 8 bits a
        key or more."""
        self.n += len(rows)
        size = _size_for(self.n, expect)
        if size > self.capacity and refill is not None:
            self._size(int(GROWTH * size))
            for part in refill():
                self._set(part)
            return
        self._set(rows)

    def _set(self, rows: np.ndarray) -> None:
        # a slice at a time: a key's hashing takes some 40 bytes of temporaries, and a
        # level (or a refill, every key) is millions of keys
        for lo in range(0, len(rows), _SLICE):
            or_at(self.bits, *self._words_masks(rows[lo:lo + _SLICE]))

    def maybe(self, rows: np.ndarray) -> np.ndarray:
        at, mask = self._words_masks(rows)
        return (self.bits[at] & mask) == mask

    @property
    def nbytes(self) -> int:
        return int(self.bits.nbytes)


def _size_for(held: int, expect: int | None) -> int:
    """How many keys a filter holding ``held`` sizes for, given ``expect`` (see
    :meth:`Bloom.add`).

    >>> _size_for(100, None), _size_for(100, 90), _size_for(100, 70)
    (100, 90, 80)
    """
    return held if expect is None else max(expect, held * 4 // 5)


def key_rows(uniq: np.ndarray, words: int) -> np.ndarray:
    """Sortable keys back as rows of 64-bit words (a view)."""
    return uniq.reshape(-1, 1) if words == 1 else \
        np.ascontiguousarray(uniq).view(np.uint64).reshape(-1, words)


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
        self.bloom = Bloom(init_keys.shape[1])
        self.bloom.add(self.keys[0])
        self.spill: "Spill | None" = None  # under a memory budget: where levels go

    def __len__(self) -> int:
        return self.total

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for part in (self.keys, self.parent, self.via) for a in part) \
            + self.bloom.nbytes

    def held(self) -> int:
        """Bytes in memory (:attr:`nbytes` less what is spilled to disk)."""
        sp = self.spill
        return self.bloom.nbytes + sum(a.nbytes for part in (self.keys, self.parent, self.via)
                                       for a in part if sp is None or not sp.spilled(a))

    def frontier(self, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo``..``hi`` of the newest level (the frontier); read into memory, and
        its pages given back, when the level is spilled."""
        level = self.keys[-1]
        if self.spill is None or not self.spill.spilled(level):
            return level[lo:hi]
        got = np.array(level[lo:hi])
        self.spill.read(level)
        self.spill.forget(level)
        return got

    def _all_keys(self) -> Any:
        """Every level's keys, for a refill of the filter (a spilled level read once and
        given back)."""
        return iter(self.keys) if self.spill is None else self.spill.each(self.keys)

    def add_level(self, keys: np.ndarray, parent: np.ndarray, via: np.ndarray,
                  expect: int | None = None) -> int:
        """Append a level (its keys sorted, distinct and new); returns its first id.
        ``expect``: as for :meth:`Bloom.add`."""
        start = self.total
        check_ids(start + len(keys))
        self.keys.append(np.ascontiguousarray(keys))
        self.parent.append(parent.astype(np.int32))
        self.via.append(via.astype(self.act_dtype))
        self.starts.append(start)
        self.total += len(keys)
        self.bloom.add(self.keys[-1], refill=self._all_keys, expect=expect)
        return start

    def add_found(self, keys: list[np.ndarray], parent: list[np.ndarray],
                  via: list[np.ndarray]) -> int:
        """Number a level from its candidates (new keys, possibly repeated, in any
        order): sorted by key, each with its least (action, parent) (see :func:`least`).
        Returns its first id."""
        if not keys or not sum(len(k) for k in keys):
            return self.total
        # the caller's pieces are released as they are joined
        allk, par, act = (cat_free(p, np.result_type(*p)) for p in (keys, parent, via))
        sel = least_rows(sortable(allk), par, act)
        if self.spill is not None:  # near the level's largest: measured for the budget
            self.spill.sample()
        new = allk[sel], par[sel], act[sel]
        del allk, par, act, sel  # before the filter hashes the new keys
        return self.add_level(*new)

    def lookup(self, uniq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For sortable keys ``uniq``: which are stored, and their ids (-1 where not)."""
        found = np.zeros(len(uniq), dtype=bool)
        ids = np.full(len(uniq), -1, dtype=np.int64)
        if not len(uniq):
            return found, ids
        # only what the filter cannot rule out is looked for in the levels
        todo = np.flatnonzero(self.bloom.maybe(key_rows(uniq, self.keys[0].shape[1])))
        # newest level first: a successor is most often a state of the last few levels,
        # and a key found is not looked for again
        for start, seg in zip(reversed(self.starts), reversed(self.keys)):
            if not len(seg) or not len(todo):
                continue
            if self.spill is not None:
                self.spill.read(seg)
            sk = sortable(seg)
            q = uniq[todo]
            pos = np.searchsorted(sk, q)
            pc = np.minimum(pos, len(sk) - 1)
            hit = (pos < len(sk)) & (sk[pc] == q)
            got = todo[hit]
            found[got] = True
            ids[got] = start + pc[hit]
            todo = todo[~hit]
            if self.spill is not None:  # its pages out of the resident set again
                self.spill.forget(seg)
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
        peak is the result plus one level, not twice the store.  Under a memory budget,
        the result is a file in the spill directory, mapped back."""
        out = []
        for part in (self.keys, self.parent, self.via):
            if self.spill is not None:
                tail, dtype = part[0].shape[1:], part[0].dtype
                out.append(self.spill.concat(part, dtype).reshape((-1,) + tail))
                continue
            shape = (self.total,) + part[0].shape[1:]
            a = np.empty(shape, dtype=part[0].dtype)
            at = 0
            for i, seg in enumerate(part):
                a[at:at + len(seg)] = seg
                at += len(seg)
                part[i] = seg[:0].copy()  # not a view: that would keep seg's memory
                del seg
                give_back_freed()  # else a level from the heap stays taken (see there)
            out.append(a)
        self.keys, self.parent, self.via = [out[0]], [out[1]], [out[2]]
        self.starts = [0]
        return out[0], out[1], out[2]

    @classmethod
    def from_arrays(cls, keys: np.ndarray, parent: np.ndarray, via: np.ndarray,
                    level_start: list[int], expect: int | None = None) -> "LevelStore":
        """The store a checkpoint saved with :meth:`arrays` and its level starts;
        ``expect`` as for :meth:`Bloom.add`."""
        s = cls.__new__(cls)
        s.act_dtype = via.dtype
        bounds = list(level_start) + [len(keys)]
        s.keys = [np.ascontiguousarray(keys[a:b]) for a, b in zip(bounds, bounds[1:])]
        s.parent = [parent[a:b] for a, b in zip(bounds, bounds[1:])]
        s.via = [via[a:b] for a, b in zip(bounds, bounds[1:])]
        s.starts = list(level_start)
        s.total = len(keys)
        s.spill = None
        size = _size_for(len(keys), expect)
        s.bloom = Bloom(keys.shape[1], capacity=max(64, int(GROWTH * size)))
        s.bloom.add(keys)
        return s
