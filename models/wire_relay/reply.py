"""What a final answer does to the phone's view of its operation.

The relay's delivery, its timeouts and its generation checks each end a request with a
final answer; this is the phone's side of receiving one.  It sits apart from
:mod:`.phone` because the relay calls it and the phone calls the relay.
"""

from __future__ import annotations

from ..expr import If, Or
from .vocab import PH, RETRY_OK


def answer(s, o: int, value) -> dict:
    """The phone receives ``value`` as the final answer to its current request."""
    retry = Or(*(value == a for a in RETRY_OK)) if not isinstance(value, int) else value in RETRY_OK
    return {s.ans[o]: value, s.nfinal[o]: If(s.nfinal[o] >= 2, 2, s.nfinal[o] + 1),
            s.ph[o]: If(retry, PH.retry, PH.done)}
