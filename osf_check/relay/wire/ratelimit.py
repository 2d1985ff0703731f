"""Token buckets: the connection's own rate limit, and the bucket of its -32028 answers.

Over the connection's limit a frame is discarded before validation and nothing is
forwarded, so a retry can never run a mutation twice.  Only an ``rpc.request`` with an
id of at most 128 bytes and a valid traceparent is answered (-32028), and those answers
come from their own bucket: burst 300, refilled at 150 per second (004).  Every other
frame over the limit gets no answer.

004 does not give the connection's own limit: :data:`CONN_BURST` and :data:`CONN_RATE`
are our default (a setting of :class:`~osf_check.relay.wire.relay_router.RelayRouter`), chosen
well above what one phone sends (a timeline load is one request; a burst of 120 covers
a reconnect that replays every pending operation of a busy session).

>>> b = TokenBucket(burst=2, rate=1.0)
>>> [b.take(0.0) for _ in range(3)]
[True, True, False]
>>> b.take(1.0)
True
"""

from __future__ import annotations

from dataclasses import dataclass

#: the -32028 answers' own bucket (004)
BURST = 300
RATE = 150.0
#: the connection's own limit: not in 004, our documented default
CONN_BURST = 120
CONN_RATE = 60.0


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
