"""How the C allocator keeps the memory a search frees: for its next level, not the OS.

A search allocates and frees arrays of tens of megabytes for every chunk of every
level.  glibc's defaults give an array that large pages mapped for it alone, returned
to the kernel when it is freed; the next chunk's arrays then fault their pages in
again, each zeroed by the kernel.  Measured on TwoPhase N=9 (10.3 M states;
2026-12-02, 2 vCPUs), with glibc's defaults: one process took 153,000 to 209,000 page
faults and 1.2 to 1.8 s of system time; two partitioned workers, 141,000 to 255,000
faults each, in bursts that made one worker's level up to 17 % slower than the
other's for the same work (their shares of the states within 1 %), which the other
then waited out at the level's end.  With :func:`keep_freed_memory`: 48,000 faults
and 0.3 s for one process, 33,000 and 0.5 s a worker, and the workers' waits at the
barriers halved (0.75 s in all to 0.35).  The price is memory kept for reuse, at most
:data:`TRIM_THRESHOLD` a process: the complete graph-relay run with two workers
peaked at 2,365 MB instead of 2,245.

It changes a process-wide setting, so the program decides, not the library: the CLI
calls it once at start (its forked workers inherit it), the cluster's actors in their
own processes.  Elsewhere than glibc it does nothing.

:func:`huge_zeros` is for the arrays a search reads and writes at random, a Bloom
filter's bits: pages of 2 MB (transparent huge pages, where the kernel offers them on
request) instead of 4 KB, so that a look-up misses the TLB far less often.
"""

from __future__ import annotations

import ctypes
import mmap
from typing import Any

import numpy as np

__all__ = ["keep_freed_memory", "give_back_freed", "huge_zeros"]

# mallopt's parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
#: arrays up to this size come from the heap (glibc's largest allowed threshold on
#: 64 bits); larger ones are still mapped, and returned, on their own
MMAP_THRESHOLD = 32 * 2**20
#: free memory at the heap's top is kept up to this much (it is given back beyond)
TRIM_THRESHOLD = 256 * 2**20
#: the heap grows by this much more than asked (address space: untouched pages cost
#: nothing)
TOP_PAD = 64 * 2**20


def keep_freed_memory() -> bool:
    """Have glibc keep freed memory for reuse instead of unmapping it; whether it took
    (``False`` where the C library has no ``mallopt``)."""
    try:  # the symbols this process has loaded: libc's among them, no library search
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc (musl, macOS): no mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(p, v) == 1 for p, v in ((_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                                               (_M_TRIM_THRESHOLD, TRIM_THRESHOLD),
                                               (_M_TOP_PAD, TOP_PAD)))


def give_back_freed() -> None:
    """Return to the kernel the free pages anywhere in the heap (glibc's ``malloc_trim``),
    not only those at its top.

    Where a search's pieces (a level's parent links, a chunk's edges: each below
    :data:`MMAP_THRESHOLD`) are copied into one large array and freed one by one, the
    large array is mapped on its own while the freed pieces stay in the heap, kept for
    reuse: the copy then costs the whole size twice (0.45 GB of wire-relay's complete
    run, the edges' size on graph-relay's).  Called as the pieces are released, the
    copy costs one piece more.  Elsewhere than glibc it does nothing."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _malloc_trim() -> Any:
    global _TRIM
    if _TRIM is False:
        try:
            _TRIM = ctypes.CDLL(None).malloc_trim
            _TRIM.argtypes, _TRIM.restype = [ctypes.c_size_t], ctypes.c_int
        except (OSError, AttributeError, TypeError):  # not glibc
            _TRIM = None
    return _TRIM


_TRIM: Any = False  # not looked up yet


#: the size of a transparent huge page on x86-64 and most arm64 kernels
HUGE_PAGE = 2 * 2**20


def huge_zeros(count: int, dtype: type) -> np.ndarray:
    """``np.zeros(count, dtype)``, in memory the kernel may back with huge pages.

    A Bloom filter of 10 million keys (19 MB) is read and written at random: with
    4 KB pages nearly every access misses the TLB.  Measured (2026-12-02, 2 vCPUs,
    10 M adds then 20 M look-ups): 2.56/2.98 s with small pages, 2.26/2.29 s with
    huge ones; two such processes at once, 2.7/3.0 against 2.1/1.9 s.  Below one huge
    page, or where the kernel cannot be asked (no ``madvise``), a plain array.

    >>> a = huge_zeros(3 * HUGE_PAGE // 8, np.uint64)
    >>> a.shape, int(a.sum()), a.flags.writeable
    ((786432,), 0, True)
    """
    nbytes = count * np.dtype(dtype).itemsize
    advise = getattr(mmap, "MADV_HUGEPAGE", None)
    if nbytes < HUGE_PAGE or advise is None:
        return np.zeros(count, dtype=dtype)
    # anonymous memory is zero; a mapping this large starts on a huge page's boundary
    m = mmap.mmap(-1, -(-nbytes // HUGE_PAGE) * HUGE_PAGE,
                  flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m.madvise(advise)
    except OSError:  # a kernel without transparent huge pages: small pages, as asked
        pass
    return np.frombuffer(m, dtype=dtype, count=count)  # (the array keeps the mapping)
