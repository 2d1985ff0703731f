"""Where scratch files go: in memory (``/dev/shm``) where the machine has it writable.

Worker processes exchange arrays there and the reference adapter keeps its database
there, so that neither waits on a disk; elsewhere ``None``, which ``tempfile`` reads
as its default directory.
"""

from __future__ import annotations

import os

__all__ = ["memory_dir", "ScratchFull"]


def memory_dir() -> str | None:
    """``/dev/shm`` if it is a writable directory here, else ``None``."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


class ScratchFull(RuntimeError):
    """The scratch directory has no room left for a run's files: a resource bound (in
    memory, ``/dev/shm`` is part of the machine's memory), never a verdict."""
