"""An injectable clock: the cores ask it for the time, tests and the fuzzer move it."""

from __future__ import annotations


class ManualClock:
    """Seconds since an arbitrary epoch, advanced only by :meth:`advance`."""

    def __init__(self, start: float = 0.0):
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("time does not go backwards")
        self._now += seconds
        return self._now
