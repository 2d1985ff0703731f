"""How a run ends: the exit code of each verdict, of bad input (150) and of a bug in
osf-check (153), and what an OSError on the way out means.

The command line and the library's other entry points (``python -m
osf_check.tracelog.record``) share these, so that the library never imports the
command line.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from typing import NoReturn

import click

from osf_check.output import OutputFailed

__all__ = ["EXIT", "BAD_INPUT", "INTERNAL", "READER_GONE", "internal", "os_error", "stdout_gone",
           "reader_gone", "drop_stdout", "version"]

#: exit codes (TLC's scheme) by verdict, and of the runs that reach none
EXIT = {"ok": 0, "deadlock": 11, "safety": 12, "liveness": 13, "vacuous": 14,
        "bad-input": 150, "incomplete": 152, "adapter": 154}
BAD_INPUT = EXIT["bad-input"]
INTERNAL = 153  # TLC's system-error code


def version() -> str:
    """The installed osf-check's version (what a crash file and a report name)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("osf-check")
    except PackageNotFoundError:
        return "(not installed)"


def internal(exc: BaseException) -> NoReturn:
    """A bug in osf-check: one line, and the traceback in a file whose path is printed."""
    import traceback
    fd, path = tempfile.mkstemp(prefix="osf-check-crash-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(f"osf-check {version()} {' '.join(sys.argv[1:])}\n\n")
        f.write("".join(traceback.format_exception(exc)))
    first = str(exc).splitlines()[0] if str(exc) else ""
    click.echo(f"osf-check: internal error, a bug in osf-check (not in your input): "
               f"{type(exc).__name__}{': ' + first if first else ''}; traceback in {path} "
               f"(please report it with that file)", err=True)
    sys.exit(INTERNAL)


#: the exit status when whoever reads stdout has gone (``| head``) before a command that
#: checks said all it had to: as a shell reports a process ended by SIGPIPE
READER_GONE = 141


def stdout_gone() -> bool:
    """Whether the pipe our stdout writes to has lost its reader (poll says POLLERR)."""
    import select
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # not a file (a test's buffer)
        return False


def drop_stdout() -> None:
    """What is left in stdout's buffer goes nowhere (else Python's flush at exit would
    fail once more and print a traceback of its own)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's buffer)
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)


#: what an OSError says when the machine has no room for what we write
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def reader_gone(e: BaseException) -> bool:
    """Whether ``e`` says that whoever read stdout went away (a broken pipe elsewhere, an
    adapter's or a worker's, is not that)."""
    return isinstance(e, BrokenPipeError) and stdout_gone()


def os_error(e: OSError, describing: bool = False) -> NoReturn:
    """An OSError that reached the command line: whoever read stdout went away (quiet:
    0 after a command that only ``describing`` lists or describes, whose reader took
    what it wanted; else 141, as a shell reports SIGPIPE, since a check cut short has no
    verdict to report as a success), no room for an output (one line, 152), an output
    path that turned out unusable (150), or a bug in osf-check (153)."""
    if reader_gone(e):
        drop_stdout()
        sys.exit(0 if describing else READER_GONE)
    if isinstance(e, OutputFailed) or e.errno in _NO_ROOM:
        what = e.strerror if isinstance(e, OutputFailed) else \
            f"cannot write {e.filename or 'the output'}: {e.strerror}"
        try:  # the verdict printed before the files: it stays (the disk is full, not stdout)
            sys.stdout.flush()
        except OSError:
            drop_stdout()
        click.echo(f"osf-check: {what}; the run's results were not all saved", err=True)
        # no room is a resource bound; a path that could not take its file, the user's
        sys.exit(EXIT["incomplete"] if e.errno in _NO_ROOM else BAD_INPUT)
    internal(e)
