"""Expanding one level in several processes: the frontier split into contiguous ranges.

Children are forked for each level, so their memory is a copy-on-write view of the
parent's (the store, the compiled model): nothing is pickled on the way in, and each
child's :class:`~osf_check.explorer.successors.Expansion` comes back through a pipe.
"""

from __future__ import annotations

import os
import pickle
from typing import Any, Callable

__all__ = ["split", "run_parallel"]


def split(lo: int, hi: int, workers: int, chunk: int) -> list[tuple[int, int]]:
    """Contiguous ranges of the frontier, one per worker (one if it is small)."""
    n = hi - lo
    if workers <= 1 or n < 2 * chunk:
        return [(lo, hi)]
    step = -(-n // workers)
    return [(a, min(a + step, hi)) for a in range(lo, hi, step)]


def run_parallel(expand: Callable[[int, int], Any], ranges: list[tuple[int, int]]) -> list[Any]:
    """``expand`` over each range: the first here, the others in forked children; the
    results in range order.  An exception in a child is raised here."""
    if len(ranges) == 1:
        return [expand(*ranges[0])]
    children = [_fork(expand, lo, hi) for lo, hi in ranges[1:]]
    out = [expand(*ranges[0])]
    for pid, r in children:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            raise RuntimeError("a worker process failed while expanding the frontier")
        got = pickle.loads(data)
        if isinstance(got, dict) and "error" in got:
            raise got["error"]
        out.append(got)
    return out


def _fork(expand: Callable[[int, int], Any], lo: int, hi: int) -> tuple[int, int]:
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        return pid, r
    os.close(r)  # the child: expand, send, leave without running the parent's cleanup
    code = 0
    try:
        try:
            result: object = expand(lo, hi)
        except Exception as e:  # handed to the parent, which raises it
            result = {"error": e}
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(w, "wb") as f:
            f.write(data)
    except BaseException:
        code = 1
    os._exit(code)
