"""The relay's per-connection token bucket: burst 300, refilled at 150 per second.

Over the limit, only an ``rpc.request`` with a usable id and a valid traceparent gets
an answer (-32028); every other frame is dropped silently.  Nothing is forwarded, so
a retry can never run a mutation twice.

>>> b = TokenBucket(burst=2, rate=1.0)
>>> [b.take(0.0) for _ in range(3)]
[True, True, False]
>>> b.take(1.0)
True
"""

from __future__ import annotations

from dataclasses import dataclass

BURST = 300
RATE = 150.0


@dataclass
class TokenBucket:
    burst: int = BURST
    rate: float = RATE
    tokens: float = -1.0
    last: float | None = None

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = float(self.burst)

    def take(self, now: float) -> bool:
        """Spend one token if there is one (refilled for the time since the last call)."""
        if self.last is not None and now > self.last:
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now if self.last is None else max(self.last, now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
