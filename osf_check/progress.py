"""Progress on stderr while a long phase runs.

On a terminal (and not under ``--json``) a live display drawn by rich: one task per
phase with its count, a bar where the total is known, and the elapsed time.  Elsewhere
(CI logs, a pipe, ``--json``) no live display: one line when a phase starts, and the
lines the phases write themselves (a BFS level, a reach goal, the tour's summary).
Results never go here: they go to stdout.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

__all__ = ["Display", "counts", "duration", "time_left", "time_note"]


def counts(completed: float, total: float | None) -> str:
    """A task's count as the live line shows it: thousands separated, never cut.

    >>> counts(0, 2754), counts(12131, None), counts(3, 5)
    ('0/2,754', '12,131', '3/5')
    """
    done = f"{int(completed):,}"
    return done if total is None else f"{done}/{int(total):,}"


def duration(secs: float) -> str:
    """Seconds as the progress line says them: whole seconds, minutes, hours.

    >>> duration(4.4), duration(75), duration(3725)
    ('4 s', '1 min 15 s', '1 h 02 min')
    """
    s = round(secs)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def time_left(elapsed: float, done: int, total: int | None) -> float | None:
    """The seconds the ``total - done`` jobs still to run will take at the mean of the
    ``done`` that took ``elapsed``; None where nothing honest can be said: no total (a
    BFS does not know its last level), or none finished yet.

    >>> time_left(30.0, 3, 8), time_left(30.0, 0, 8), time_left(30.0, 3, None)
    (50.0, None, None)
    """
    if total is None or done <= 0:
        return None
    return elapsed / done * max(total - done, 0)


def time_note(elapsed: float, done: int, total: int | None) -> str:
    """What the progress line says of time: the time left where it can be estimated,
    else the time elapsed alone (never a guess).

    >>> time_note(30.0, 3, 8), time_note(30.0, 0, 8), time_note(12.0, 5, None)
    ('about 50 s left', '30 s elapsed', '12 s elapsed')
    """
    left = time_left(elapsed, done, total)
    return f"{duration(elapsed)} elapsed" if left is None else f"about {duration(left)} left"


def _counts_column() -> Any:
    from rich.progress import ProgressColumn
    from rich.table import Column
    from rich.text import Text

    class _Counts(ProgressColumn):
        def __init__(self) -> None:
            super().__init__(table_column=Column(no_wrap=True, justify="right"))

        def render(self, task: Any) -> Text:
            return Text(counts(task.completed, task.total), style="progress.download")
    return _Counts()


def Counts() -> Any:
    """rich's column of :func:`counts` (rich is imported only for a live display)."""
    return _counts_column()


class Display:
    """``with Display(live) as d:`` then ``d.phase(...)``, ``d.update(...)``, ``d.line(...)``.

    ``live=None`` means: live when stderr is a terminal.

    >>> d = Display(live=False, write=print)
    >>> with d:
    ...     t = d.phase("graph-relay: tour", total=10)
    ...     d.update(t, completed=5)
    ...     d.line("tour: done")
    osf-check: graph-relay: tour
    osf-check: tour: done
    """

    def __init__(self, live: bool | None = None,
                 write: Callable[[str], Any] | None = None) -> None:
        self.live = sys.stderr.isatty() if live is None else live
        self._write = write or (lambda s: print(s, file=sys.stderr, flush=True))
        self._bar: Any = None

    def __enter__(self) -> "Display":
        if self.live:
            from rich.console import Console
            from rich.progress import (BarColumn, Progress, SpinnerColumn, TextColumn,
                                       TimeElapsedColumn)
            from rich.table import Column
            # a line too long for the terminal folds its description: the counts, the
            # bar and the time are never cut
            self._bar = Progress(SpinnerColumn(),
                                 TextColumn("{task.description}",
                                            table_column=Column(overflow="fold", ratio=1)),
                                 BarColumn(bar_width=20), Counts(), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def line(self, text: str) -> None:
        """A line that stays (above the live display on a terminal)."""
        msg = f"osf-check: {text}"
        if self._bar is not None:
            self._bar.console.print(msg, markup=False, highlight=False)
        else:
            self._write(msg)

    def phase(self, name: str, total: int | None = None) -> Any:
        """Start a phase; returns its handle for :meth:`update`."""
        if self._bar is None:
            self._write(f"osf-check: {name}")
            return None
        return self._bar.add_task(name, total=total)

    def update(self, task: Any, *, completed: int | None = None, total: int | None = None,
               description: str | None = None) -> None:
        if self._bar is None or task is None:
            return
        kw: dict[str, Any] = {}
        if completed is not None:
            kw["completed"] = completed
        if total is not None:
            kw["total"] = total
        if description is not None:
            kw["description"] = description
        self._bar.update(task, **kw)

    def finish(self, task: Any) -> None:
        if self._bar is not None and task is not None:
            self._bar.remove_task(task)
