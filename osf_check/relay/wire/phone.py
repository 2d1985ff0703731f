"""The phone's side of the wire protocol: requests, how long it waits, when it retries.

A retry carries the same operation and the same idempotency key: a phone never mints
a new key (or ``operationId``) because a request timed out.  ``retry-mints-new-key``
is that bug.

>>> p = Phone("phone-1", "ios")
>>> f1 = p.request("r-1", "system.activateCodexAuthProfile", {"sessionId": "s", "name": "n"}, "op-1")
>>> f2 = p.request("r-1", "system.activateCodexAuthProfile", {"sessionId": "s", "name": "n"}, "op-1")
>>> f1["payload"]["idempotencyKey"] == f2["payload"]["idempotencyKey"]
True
>>> p.waits("run.chatOutboxSubmit"), Phone("p", "android").waits("run.chatOutboxSubmit")
(20.0, 60.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import constants as c
from .envelope import request
from .errors import BUSY_MESSAGE, CODE, INTERNAL, TIMEOUT_MESSAGE, answer_class
from .manifest import LOADS, MANIFEST

#: answers after which the phone sends the same request again (same key, same operation),
#: besides those its code classes retryable: the relay's duplicate (the first copy is still
#: pending) and the desktop's two -32603 answers, known by their text
RETRY_CODES = frozenset({CODE["duplicate"]})
RETRY_INTERNAL = frozenset({BUSY_MESSAGE, TIMEOUT_MESSAGE})


@dataclass
class Phone:
    device: str
    platform: str = "ios"  # ios or android
    attempts: dict[str, int] = field(default_factory=dict)  # per operation key

    def waits(self, method: str) -> float:
        """How long the phone waits for an answer (wire-relay.md, deadlines)."""
        if method in MANIFEST and MANIFEST[method].deadline == "outbox":
            return float(c.PHONE_OUTBOX_IOS if self.platform == "ios" else c.PHONE_OUTBOX_ANDROID)
        return float(c.PHONE_FIRST_LOAD if method in LOADS else c.PHONE_OTHER)

    def key(self, operation_key: str, attempt: int | None = None) -> str:
        """The idempotency key of an attempt of this operation (default: the next one)."""
        return operation_key  # never a new key for a retry: the same operation, the same key

    def request(self, rid: str, method: str, params: dict[str, Any],
                operation_key: str | None) -> dict[str, Any]:
        """The ``rpc.request`` frame of the next attempt.  004: the phone never sends a
        method outside its list, nor a mutation without its key (``ValueError``)."""
        if method not in MANIFEST:
            raise ValueError(f"{method!r} is not in the phone's method list")
        if MANIFEST[method].mutation and not operation_key:
            raise ValueError(f"{method} is a mutation: it needs its idempotency key")
        key = self.key(operation_key) if operation_key is not None else None
        if operation_key is not None:
            self.attempts[operation_key] = self.attempts.get(operation_key, 0) + 1
        return request(rid, method, params, key=key)

    @staticmethod
    def retries_after(answer: dict[str, Any]) -> bool:
        """Whether this answer lets the phone send the same request again.  The two -32603
        answers do, but never as proof that nothing ran: the retry keeps the key."""
        err = answer.get("error")
        if not isinstance(err, dict):
            return False
        code = err.get("code")
        if code == INTERNAL and err.get("message") in RETRY_INTERNAL:
            return True
        # a parse error is retryable in the replay store, but sending the same unreadable
        # frame again cannot help
        return code in RETRY_CODES or (answer_class(answer) == "retryable"
                                       and code != CODE["parse_error"])
