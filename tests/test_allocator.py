"""The allocator setting a search runs with: arrays up to 32 MB come from the heap and
go back to it when freed, instead of being mapped afresh each time, every page faulted
in and zeroed again (explorer/allocator.py has the figures on a search)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

# arrays of growing sizes, each written whole and freed; glibc's mallinfo2 says how many
# bytes were mapped on their own while each was alive, and how big the heap is
CHURN = """
import ctypes, sys
import numpy as np
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
info = ctypes.CDLL(None).mallinfo2
info.restype = Info
if sys.argv[1] == "keep":
    from osf_check.explorer.store.allocator import keep_freed_memory
    assert keep_freed_memory()
mapped = []
for mb in range(4, 31, 2):
    a = np.empty(mb * 2**20 // 8)
    a.fill(1.0)
    mapped.append(info().hblkhd)
    del a
print(max(mapped), info().arena)
"""


def _churn(mode: str) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", CHURN, mode], capture_output=True,
                         text=True, check=True)
    mapped, heap = out.stdout.split()
    return int(mapped), int(heap)


def _glibc() -> tuple[int, ...]:
    name, version = platform.libc_ver()
    return tuple(int(x) for x in version.split(".")) if name == "glibc" else ()


@pytest.mark.skipif(_glibc() < (2, 33), reason="mallopt is glibc's, mallinfo2 2.33's")
def test_freed_arrays_go_back_to_the_heap_instead_of_the_kernel():
    mapped, heap = _churn("default")
    assert mapped >= 4 * 2**20  # glibc's default: the arrays are mapped on their own
    mapped, heap = _churn("keep")
    assert mapped < 2**20 and heap >= 30 * 2**20  # from the heap, which keeps them


def _vm_flags(addr: int) -> list[str]:
    """The kernel's flags for the mapping that holds ``addr`` (``hg``: huge pages
    asked for by madvise)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= addr < hi
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    raise AssertionError(f"no mapping holds {addr:#x}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")
def test_a_bloom_filters_bits_ask_for_huge_pages_and_small_arrays_do_not():
    import mmap

    import numpy as np

    from osf_check.explorer.store.allocator import HUGE_PAGE, huge_zeros
    from osf_check.explorer.store.levels import Bloom
    if not hasattr(mmap, "MADV_HUGEPAGE"):
        pytest.skip("this Python cannot ask for huge pages")
    big = Bloom(1, capacity=4_000_000).bits  # 5 MB of bits
    assert big.nbytes >= 2 * HUGE_PAGE and not big.any()
    big[::4096] = 1  # written all over, as the filter is
    assert "hg" in _vm_flags(big.ctypes.data)
    small = huge_zeros(1000, np.uint64)  # below one huge page: a plain array
    assert small.base is None and small.nbytes == 8000
