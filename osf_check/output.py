"""Writing the user's files: whole or not at all, and never over a device.

Every file osf-check writes for the user (traces, pictures, reports, checkpoints) goes
through :func:`atomic_write` or raises :class:`OutputFailed` as it does, so that a
full disk is said as such (exit 152), not as a bug (153).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "OutputFailed"]


class OutputFailed(OSError):
    """An output file could not be written: no room left (a resource bound, exit 152)
    or a path that would not take it (a read-only disk: the user's path, 150); never a
    bug.  ``strerror`` says which file and why."""


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write to a temporary file next to ``path``, fsync it, then rename: never a
    half-written file; the file gets mode 0644 like any other the user writes.

    A ``path`` that is a device, a pipe or a terminal (``-o /dev/stdout``) is written in
    place: a rename would put a regular file where it was.  A symbolic link keeps
    pointing at the file it names, which is the one replaced.  Raises
    :class:`OutputFailed` when the machine refuses the write.
    """
    p = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if p.exists() and not p.is_file():
            with open(p, "wb") as f:
                f.write(payload)
            return
        _replace(Path(os.path.realpath(p)) if p.is_symlink() else p, payload)
    except OSError as e:
        raise OutputFailed(e.errno, f"cannot write {p}: {e.strerror or e}") from None


def _replace(p: Path, payload: bytes) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
