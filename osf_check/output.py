"""Writing the user's files: whole or not at all, and never over a device.

Every file osf-check writes for the user (traces, pictures, reports, checkpoints) goes
through :func:`atomic_write` or :func:`write_whole`, which raise :class:`OutputFailed`
when the machine refuses, so that a full disk is said as such (exit 152), not as a bug
(153).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable

__all__ = ["atomic_write", "write_whole", "OutputFailed", "forget", "sweep", "halves_escaped",
           "escape_halves_on_output"]

#: every file this process wrote through :func:`atomic_write` (absolute paths), so that
#: a run can tell its own files in an output directory from an earlier run's
_written: set[Path] = set()


class OutputFailed(OSError):
    """An output file could not be written: no room left (a resource bound, exit 152)
    or a path that would not take it (a read-only disk: the user's path, 150); never a
    bug.  ``strerror`` says which file and why."""


def halves_escaped(text: str) -> str:
    """``text`` with every lone half of a surrogate pair written as its escape ``\\udc00``.

    The implementation under test handles JSON text, which may hold one (a Graph's result,
    a phone's request id), and the text reaches failures, traces and logs; Python's UTF-8
    codec refuses it.  Inside a JSON string the escape is JSON's own, so the file still
    reads back to the same text; elsewhere it reads as what it is.

    >>> halves_escaped("a\\udc00é😀")
    'a\\\\udc00é😀'
    """
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def escape_halves_on_output() -> None:
    """Let stdout and stderr write a lone half as its escape (see :func:`halves_escaped`)
    rather than raise."""
    import sys
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` whole (:func:`write_whole`) and note the file as this run's.

    A ``path`` that is a device, a pipe or a terminal (``-o /dev/stdout``) is written in
    place: a rename would put a regular file where it was.  A symbolic link keeps
    pointing at the file it names, which is the one replaced.
    """
    p = Path(path)
    # a lone half of a pair as its escape (halves_escaped)
    payload = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    if p.exists() and not p.is_file():
        try:
            with open(p, "wb") as f:
                f.write(payload)
        except OSError as e:
            raise OutputFailed(e.errno, f"cannot write {p}: {e.strerror or e}") from None
    else:
        write_whole(Path(os.path.realpath(p)) if p.is_symlink() else p,
                    lambda f: f.write(payload))
    _written.add(Path(os.path.abspath(p)))


def write_whole(path: Path, fill: Callable[[BinaryIO], object], *, what: str = "") -> None:
    """``fill`` a temporary file next to ``path``, fsync it, then rename it to ``path``:
    never a half-written file (an interrupted write leaves the old one whole); the file
    gets mode 0644 like any other the user writes.  Raises :class:`OutputFailed`
    (``cannot write <what><path>: ...``) when the machine refuses."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                fill(f)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:
        raise OutputFailed(e.errno, f"cannot write {what}{path}: "
                                    f"{e.strerror or e}") from None


def forget() -> None:
    """Start a new run: the files written so far are an earlier run's."""
    _written.clear()


def sweep(d: Path, command: str) -> list[str]:
    """Remove the files an earlier run of ``command`` wrote in ``d`` that this run did
    not write again, and list this run's in ``d/.osf-check-<command>.files`` for the
    next: a counterexample of an earlier run does not lie next to a result that no
    longer has it.  Only files a manifest names go, never another command's or the
    user's.  Returns the names removed.
    """
    manifest = d / f".osf-check-{command}.files"
    here = Path(os.path.abspath(d))
    now = sorted(p.name for p in _written if p.parent == here and p.name != manifest.name)
    try:
        before = manifest.read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, UnicodeDecodeError):
        before = []
    except OSError as e:
        raise OutputFailed(e.errno, f"cannot read {manifest}: {e.strerror or e}") from None
    gone = []
    for name in before:
        old = d / name
        if name in now or name != old.name or old.is_symlink() or not old.is_file():
            continue  # written again, or not a plain name of a plain file here
        try:
            old.unlink()
        except OSError as e:
            raise OutputFailed(e.errno, f"cannot remove {old}: {e.strerror or e}") from None
        gone.append(name)
    atomic_write(manifest, "".join(n + "\n" for n in now))
    return gone
