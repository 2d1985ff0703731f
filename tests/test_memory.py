"""Peak memory of the steps that put a search's pieces together: measured in a process of
its own (its resident size, not its speed), with the CLI's allocator settings."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent("""
    import numpy as np
    from osf_check.explorer.store.allocator import keep_freed_memory
    from osf_check.explorer.store.levels import LevelStore
    from osf_check.explorer.store.edges import cat_free
    keep_freed_memory()  # as the CLI: freed memory kept for reuse

    def rss(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024

    what = {what!r}
    n, levels = 500_000, 24  # each piece below glibc's mapping threshold: from the heap
    if what == "levels":
        s = LevelStore(np.array([[0]], dtype=np.uint64), np.int16)
        for lv in range(levels):
            keys = (np.arange(n, dtype=np.uint64) + 1 + lv * n).reshape(-1, 1)
            s.add_level(keys, np.arange(n) % 7, np.full(n, lv))
        size = s.nbytes - s.bloom.nbytes
    else:
        parts = [np.arange(n * 2, dtype=np.int32) + lv for lv in range(levels)]
        size = sum(p.nbytes for p in parts)
    before = rss("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak resident size starts again from here
    got = s.finish() if what == "levels" else cat_free(parts, np.int32)
    print((rss("VmHWM") - before) / size)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("what", ["levels", "edges"])
def test_one_array_from_many_pieces_costs_about_its_size_once(what):
    """The store's levels (keys, parent links, actions) and the edges' chunks are put
    into one array each as a search ends, each piece freed once copied.  The pieces
    come from the heap, which keeps freed memory for reuse: the large result, mapped
    on its own, then cost its whole size again (wire-relay's complete run rose by a
    quarter there).  The freed pieces now go back as they are copied."""
    out = subprocess.run([sys.executable, "-c", _CHILD.format(what=what)],
                         capture_output=True, text=True, check=True)
    grew = float(out.stdout)  # how much the peak rose, in the store's sizes
    assert grew < 0.3, f"putting the pieces together raised the peak by {grew:.2f} of their size"
