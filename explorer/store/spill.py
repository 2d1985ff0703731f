"""A memory budget for the vector engine: what the search keeps between levels goes to
disk, oldest first, when it would not leave room for the rest.

The search keeps, from one level to the next, each level's keys, parent links and
actions, the Bloom filter over the keys, and (for the reach and fair checks) the
graph's edges.  Under a budget, :meth:`Spill.relieve` measures after each level the
process's resident size and the last level's working set (its largest resident size,
sampled, less where it started); while the store's arrays in memory would not leave
room in the budget for the rest of the process and the next level's working set, it
moves arrays to one file in the spill directory, mapped back read-only (``mmap``):
first those the search never reads again before it ends (parent links, actions,
edges), then the keys, the oldest level first and the frontier last.  A spilled array
is still an array: a look-up in a spilled level reads the pages it needs, and those
pages are given back (``madvise(MADV_DONTNEED)``) once the look-up is done, so that
they do not stay in the resident set.  The filter stays in memory: most keys looked
up are new, and it answers "never seen" for them without touching the disk.

What cannot spill: Python and the model, the level being expanded (its candidates,
sorted at its end), the filter, and the checks run after the search.

>>> import numpy as np
>>> with Spill(budget=100) as sp:
...     views = sp.save([np.arange(4), np.arange(3)])
...     [v.tolist() for v in views], sp.spilled(views[0]), sp.bytes
([[0, 1, 2, 3], [0, 1, 2]], True, 56)
"""

from __future__ import annotations

import mmap
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol

import numpy as np

from osf_check.models.errors import BadValue

from .allocator import give_back_freed

__all__ = ["Spill", "BudgetTooSmall", "parse_size", "human_bytes"]

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)


class _Levels(Protocol):
    """What :meth:`Spill.relieve` reads of a level store (``levels.LevelStore``),
    named here so that this module does not import the stores that use it."""
    bloom: Any
    keys: list[np.ndarray]
    parent: list[np.ndarray]
    via: list[np.ndarray]

    def held(self) -> int: ...


class _Edges(Protocol):
    """What :meth:`Spill.relieve` reads of an edge log (``edges.EdgeLog``)."""
    dst: list[np.ndarray]
    act: list[np.ndarray]
    src: list[np.ndarray]
    deg: list[np.ndarray]

    def held(self) -> int: ...


def parse_size(text: str) -> int:
    """Bytes from a size such as ``512M``, ``8G``, ``1.5G`` or ``65536`` (powers of 1024;
    a trailing ``B`` or ``iB`` is allowed).

    >>> parse_size("512M"), parse_size("8g"), parse_size("1.5KiB"), parse_size("100")
    (536870912, 8589934592, 1536, 100)
    >>> parse_size("lots")
    Traceback (most recent call last):
    osf_check.models.errors.BadValue: a memory size is a number with K, M, G or T (powers of 1024), such as 512M or 8G; got 'lots'
    """
    m = _SIZE.fullmatch(str(text))
    size = int(float(m.group(1)) * _UNITS[m.group(2).upper()]) if m else 0
    if size < 1:
        raise BadValue("a memory size is a number with K, M, G or T (powers of 1024), such as "
                       f"512M or 8G; got {text!r}")
    return size


def human_bytes(n: int) -> str:
    """``n`` bytes for a person: ``1.5 GB`` (powers of 1024, as :func:`parse_size`).

    >>> human_bytes(0), human_bytes(1536), human_bytes(3 * 2**30)
    ('0 B', '1.5 KB', '3.0 GB')
    """
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit]:
            return f"{n / _UNITS[unit]:.1f} {unit}B"
    return f"{n} B"


def resident() -> int:
    """This process's resident size in bytes (0 where ``/proc`` does not say)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return 0


def peak_resident() -> int:
    """This process's largest resident size so far, in bytes (0 where unknown)."""
    try:
        import resource
    except ImportError:  # not POSIX
        return 0
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb * 1024 if sys.platform.startswith("linux") else kb  # (macOS: bytes)


class BudgetTooSmall(BadValue):
    """The budget cannot hold what must stay in memory (the filter): bad input, said in
    one line, since no spilling can help."""


def _mapping(a: np.ndarray) -> mmap.mmap | None:
    """The file mapping ``a`` is a view of, if any."""
    base: Any = a
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return base if isinstance(base, mmap.mmap) else None


class Spill:
    """A spill directory (made under ``where``, else the system's temporary one; removed
    by :meth:`close`) and the counts of what went there and was read back.

    Parameters
    ----------
    budget : int
        Bytes the process should stay within.
    where : path, optional
        Where the spill directory is made.
    """

    def __init__(self, budget: int, where: str | os.PathLike[str] | None = None):
        self.budget = int(budget)
        self.dir = Path(tempfile.mkdtemp(prefix="osf-check-spill-", dir=where))
        self.bytes = 0  # written to spill files
        self.levels: set[int] = set()  # levels with an array on disk
        self.reads = 0  # times a spilled array was read back (a look-up, a chunk)
        self._files = 0
        self._start = self._peak = self._lifetime = 0  # a level's resident sizes

    def __enter__(self) -> "Spill":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the directory.  Arrays still mapped stay readable: the files go when
        the last mapping does (POSIX)."""
        shutil.rmtree(self.dir, ignore_errors=True)

    def counts(self) -> dict[str, int]:
        """The budget and what spilling cost, as results report them."""
        return {"budget": self.budget, "spilled_bytes": self.bytes,
                "spilled_levels": len(self.levels), "spill_reads": self.reads}

    @staticmethod
    def spilled(a: np.ndarray) -> bool:
        return _mapping(a) is not None

    def save(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """Write ``arrays`` to one file (one descriptor for them all: a mapping holds
        one) and return them mapped back read-only, in order."""
        path = self.dir / f"{self._files}.bin"
        self._files += 1
        offsets = []
        with open(path, "wb") as f:
            for a in arrays:
                offsets.append(f.tell())
                np.ascontiguousarray(a).tofile(f)
            size = f.tell()
        self.bytes += size
        with open(path, "rb") as f:
            m = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
        flat = np.frombuffer(m, dtype=np.uint8)
        return [flat[o:o + a.nbytes].view(a.dtype).reshape(a.shape)
                for o, a in zip(offsets, arrays)]

    def concat(self, parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        """The pieces end to end in a file, mapped back read-only, each released once
        written (a search's result under a budget: on disk, not in memory)."""
        path = self.dir / f"{self._files}.bin"
        self._files += 1
        with open(path, "wb") as f:
            for i, p in enumerate(parts):
                np.ascontiguousarray(p, dtype=dtype).tofile(f)
                self.forget(p)
                parts[i] = p[:0].copy()  # not a view: that would keep p's memory
                del p
                give_back_freed()  # (see there)
            size = f.tell()
        parts.clear()
        if not size:
            return np.zeros(0, dtype=dtype)
        with open(path, "rb") as f:
            m = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
        return np.frombuffer(m, dtype=dtype)

    def read(self, a: np.ndarray) -> None:
        """Count a read of ``a`` if it is spilled."""
        if _mapping(a) is not None:
            self.reads += 1

    @staticmethod
    def forget(a: np.ndarray) -> None:
        """Give back the pages of ``a``'s mapping that reads brought in (they stay in the
        page cache, out of the resident set); nothing for an array in memory."""
        m = _mapping(a)
        if m is not None and hasattr(m, "madvise"):
            m.madvise(mmap.MADV_DONTNEED)

    def each(self, arrays: Iterable[np.ndarray]) -> Iterator[np.ndarray]:
        """``arrays`` one by one, each read counted and forgotten after use."""
        for a in arrays:
            self.read(a)
            yield a
            self.forget(a)

    def level_starts(self) -> None:
        """A level's expansion starts: its working set is measured from here."""
        self._start = self._peak = resident()
        self._lifetime = peak_resident()

    def sample(self) -> None:
        """The resident size now, where a level's working set is near its largest."""
        self._peak = max(self._peak, resident())

    def _working(self) -> int:
        """What the level just done took on top of the store: its largest resident size
        sampled, or the process's peak if that level raised it, less where it started."""
        top = self._peak
        if peak_resident() > self._lifetime:
            top = max(top, peak_resident())
        return max(0, top - self._start)

    def relieve(self, store: _Levels, edges: _Edges | None, depth: int,
                grow: float = 1.0) -> None:
        """Spill, oldest first, until what ``store`` and ``edges`` hold in memory leaves
        room in the budget for the rest of the process (measured: its resident size
        less the store) and for the next level's working set (the last level's,
        measured, times ``grow``: how much larger the next frontier is).  First what
        the search does not read again (parent links, actions, edges), then keys, the
        frontier last.  ``depth``: the level just stored (for the message when the
        filter alone is over budget)."""
        if store.bloom.nbytes > self.budget:
            raise BudgetTooSmall(
                f"--memory {human_bytes(self.budget)} cannot hold the visited set's filter "
                f"({human_bytes(store.bloom.nbytes)} at depth {depth}), which stays in "
                "memory: give a larger budget")
        held = store.held() + (edges.held() if edges is not None else 0)
        now = resident()
        rest = max(0, now - held) if now else 0  # Python, the model, memory kept for reuse
        room = self.budget - rest - int(self._working() * max(grow, 0.0))
        over = held - room
        if over <= 0:
            return
        chosen: list[tuple[list[np.ndarray], int, int | None]] = []
        for where, i, level in _oldest_first(store, edges):
            a = where[i]
            if over <= 0:
                break
            if a.nbytes and not self.spilled(a):
                chosen.append((where, i, level))
                over -= a.nbytes
        if not chosen:
            return
        views = self.save([where[i] for where, i, _ in chosen])
        for (where, i, level), v in zip(chosen, views):
            where[i] = v
            if level is not None:
                self.levels.add(level)


def _oldest_first(store: _Levels, edges: _Edges | None
                  ) -> Iterator[tuple[list[np.ndarray], int, int | None]]:
    """Where each array that may spill is held (its list and index) and its level, in
    the order they spill: cold before read, old before new."""
    for lv in range(len(store.keys)):
        yield store.parent, lv, lv
        yield store.via, lv, lv
    if edges is not None:
        for part in (edges.dst, edges.act, edges.src, edges.deg):
            for i in range(len(part)):
                yield part, i, None
    for lv in range(len(store.keys)):
        yield store.keys, lv, lv
