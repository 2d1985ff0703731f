"""The desktop's HTTP compatibility pre-check, as a sans-I/O core (004).

Before it connects, the desktop sends ``POST /public/compatibility/check`` with its own
descriptor only (``appVersion``, ``platform``, ``relayProtocolVersion``) and waits at
most 5 s.  The answer holds ``compatible``, ``decision`` (one of :data:`DECISIONS`),
``message``, ``policyVersion``, ``requiredRelayProtocolVersion`` and a result per
descriptor.  The check fails open: no answer within the 5 s, an unreachable server, an
error status, a body it cannot read or an answer without the desktop's result let the
desktop connect, and the registration gate enforces.  A negative answer ends the
connection with a compatibility error.

The shell sends :meth:`Precheck.start`'s request, then reports what happened
(:meth:`Precheck.answered`, :meth:`Precheck.unreachable`) or fires the timeout when the
clock reaches :attr:`Precheck.deadline` (:meth:`Precheck.fire`).

>>> check = Precheck("3.2.0", "macos")
>>> check.start(now=0.0)["path"]
'/public/compatibility/check'
>>> check.fire(now=5.0), check.outcome, check.why
(True, 'connect', 'no answer within 5 s')
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .. import constants

__all__ = ["DECISIONS", "PATH", "TIMEOUT", "CompatibilityError", "Precheck", "read_answer"]

PATH = "/public/compatibility/check"
TIMEOUT = float(constants.PRECHECK_TIMEOUT)
#: 004's eight decisions; every one but ``compatible`` is a negative answer
DECISIONS = ("compatible", "missingClient", "invalidVersion", "unsupportedDesktopVersion",
             "unsupportedMobileVersion", "unsupportedPair", "protocolUpdateRequired",
             "blockedByPolicy")


class CompatibilityError(Exception):
    """The server answered that this desktop may not connect: the connection ends."""

    def __init__(self, decision: str, message: str, required: Any = None):
        super().__init__(f"{decision}: {message}")
        self.decision, self.message, self.required = decision, message, required


def read_answer(status: int, body: Any) -> CompatibilityError | str:
    """What an answer means to the desktop: the compatibility error of a negative answer,
    else why it connects (a compatible answer, or one of the fail-open cases).  An answer
    whose decision is not one of the eight, or contradicts ``compatible``, is one the
    desktop cannot read, so it fails open too."""
    if not 200 <= status < 300:
        return f"error status {status}"
    answer = _parsed(body)
    if not isinstance(answer, dict):
        return "unreadable body"
    if not isinstance(answer.get("desktop"), dict):
        return "no desktop result"
    compatible, decision = answer.get("compatible"), answer.get("decision")
    if not isinstance(compatible, bool) or decision not in DECISIONS or \
            compatible != (decision == "compatible"):
        return "unreadable body"
    if compatible:
        return "compatible"
    message = answer.get("message")
    return CompatibilityError(decision, message if isinstance(message, str) else decision,
                              answer.get("requiredRelayProtocolVersion"))


def _parsed(body: Any) -> Any:
    if isinstance(body, (bytes, str)):
        try:
            return json.loads(body)
        except ValueError:
            return None
    return body


@dataclass
class Precheck:
    """One pre-check; ``outcome`` is ``connect`` or ``refuse`` once decided, and ``why``
    says what decided it."""

    app_version: str
    platform: str
    relay_protocol_version: str = "1.7"
    timeout: float = TIMEOUT
    deadline: float | None = None
    outcome: str | None = None
    why: str | None = None
    error: CompatibilityError | None = None

    def start(self, now: float) -> dict[str, Any]:
        """The request to send: the desktop's own descriptor only."""
        self.deadline = now + self.timeout
        return {"method": "POST", "path": PATH, "body": {"desktop": {
            "appVersion": self.app_version, "platform": self.platform,
            "relayProtocolVersion": self.relay_protocol_version}}}

    def timers(self) -> list[tuple[float, str]]:
        return [] if self.outcome or self.deadline is None else [(self.deadline, "precheck")]

    def fire(self, now: float) -> bool:
        """The 5 s ran out with no answer: connect (fail open)."""
        if self.outcome or self.deadline is None or now < self.deadline:
            return False
        self._decide("connect", f"no answer within {self.timeout:g} s")
        return True

    def unreachable(self, now: float) -> None:
        if not self.outcome and not self.fire(now):
            self._decide("connect", "unreachable")

    def answered(self, status: int, body: Any, now: float) -> None:
        """An answer arrived; one after the timeout changes nothing (the desktop is already
        connecting)."""
        if self.outcome or self.fire(now):
            return
        read = read_answer(status, body)
        if isinstance(read, CompatibilityError):
            self.error = read
            self._decide("refuse", read.decision)
        else:
            self._decide("connect", read)

    def _decide(self, outcome: str, why: str) -> None:
        self.outcome, self.why = outcome, why
