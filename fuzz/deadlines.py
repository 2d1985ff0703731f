"""Time as a value: the harness knows the documents' deadlines itself and checks that
every timer the implementation sets is due exactly then.

The harness fires the implementation's timers when the model's clock actions say so;
without this book, a deadline that moved (a lease extended by a retry, a 46 s dispatch,
a pending entry kept 120 s) would go unseen, since the harness would simply fire it
at whatever time the implementation reported.  The book records, from its own
observations, when each timer's clock started (a call entered a stage, an entry was
admitted, a row was claimed or its answer stored), and compares the implementation's
reported deadline with that time plus the document's figure.  The figures come from
:mod:`osf_check.relay.constants`, where each figure of the documents is written once
(the wire protocol's through :data:`osf_check.explorer.symbolic.timing.DEADLINES`).
"""

from __future__ import annotations

from typing import Any

from osf_check.explorer.symbolic.timing import DEADLINES
from osf_check.relay import constants

#: graph-relay.md (000): the desktop's relay round and its control poll while a Graph runs
RELAY_ROUND = float(constants.RELAY_ROUND)
CONTROL_POLL = float(constants.CONTROL_POLL)
#: wire-relay.md: the two first timeline loads have the longer dispatch and relay limits
LOADS = constants.LOADS


def dispatch_limit(method: str) -> float:
    return DEADLINES["dispatch_load" if method in LOADS else "dispatch"]


def keep_pending(method: str) -> float:
    if method == "run.chatOutboxSubmit":
        return DEADLINES["relay_outbox"]
    if method in LOADS:
        return DEADLINES["relay_first_load"]
    if method == "run.chatLoadPageBefore":
        return DEADLINES["relay_older_page"]
    return DEADLINES["relay_other"]


class Late(Exception):
    """A timer set at another time than the document's (the harness turns it into a
    divergence)."""


class WireBook:
    """What the harness saw start each timer of the wire relay, and when."""

    def __init__(self) -> None:
        self.stage_since: dict[int, tuple[str, float]] = {}  # call id -> (stage, since)
        self.admitted: dict[tuple, tuple[str, float]] = {}  # entry key -> (method, since)
        self.claimed: dict[Any, float] = {}  # scope -> when its row became running
        self.stored: dict[Any, float] = {}  # scope -> when its answer was stored
        self.row_state: dict[Any, str | None] = {}

    def _expected_call(self, method: str, stage: str, since: float) -> float | None:
        if stage == "slot_wait":
            return since + DEADLINES["slot"]
        if stage in ("dispatch", "joined"):
            return since + dispatch_limit(method)
        if stage == "enqueue":
            return since + DEADLINES["enqueue"]
        return None

    def observe(self, now: float, relay: Any, desktop: Any, scopes: list[Any]) -> None:
        """After a step at time ``now``: note what started, then check every timer."""
        for cid, call in desktop.calls.items():
            if self.stage_since.get(cid, ("",))[0] != call.stage:
                self.stage_since[cid] = (call.stage, now)
        for cid in [c for c in self.stage_since if c not in desktop.calls]:
            del self.stage_since[cid]
        for key, e in relay.pending.items():
            if key not in self.admitted:
                self.admitted[key] = (e.method, now)
        for key in [k for k in self.admitted if k not in relay.pending]:
            del self.admitted[key]
        for s in scopes:
            row = desktop.claims.row(s)
            state = row.state if row is not None else None
            before = self.row_state.get(s)
            if state == "running" and before != "running":
                self.claimed[s] = now
            if state not in (None, "running") and before in (None, "running"):
                self.stored[s] = now
            self.row_state[s] = state
        self.check(relay, desktop)

    def check(self, relay: Any, desktop: Any) -> None:
        for cid, call in desktop.calls.items():
            stage, since = self.stage_since[cid]
            want = self._expected_call(call.method, stage, since)
            if want is not None and call.deadline != want:
                raise Late(f"the desktop set call {call.rid}'s {stage} deadline at "
                           f"{call.deadline} s; the document's is {want} s")
        for key, e in relay.pending.items():
            method, since = self.admitted[key]
            want = since + keep_pending(method)
            if e.deadline != want:
                raise Late(f"the relay keeps {key[2]} pending until {e.deadline} s; the "
                           f"document's limit is {want} s")
        for t, kind, s in desktop.claims.timers():
            if kind == "lease" and s in self.claimed:
                want = self.claimed[s] + DEADLINES["lease"]
                if t != want:
                    raise Late(f"the lease of {s.key} ends at {t} s; the document's is "
                               f"first claim + 5 min = {want} s, never extended")
            elif kind == "retention" and s in self.stored:
                want = self.stored[s] + DEADLINES["retention"]
                if t != want:
                    raise Late(f"the row of {s.key} is deleted at {t} s; the document's "
                               f"is stored + 48 h = {want} s")


class GraphBook:
    """What the harness saw start the desktop's timers: the relay timer's last firing
    and each running Graph's start or last control poll."""

    def __init__(self) -> None:
        self.ticked = 0.0
        self.polled: dict[str, float] = {}

    def ticked_now(self, now: float) -> None:
        self.ticked = now

    def polled_now(self, command_id: str, now: float) -> None:
        self.polled[command_id] = now

    def check(self, desktop: Any) -> None:
        timers = desktop.timers()
        armed = {(kind, ref) for _, kind, ref in timers}
        # a timer 000 requires and the desktop did not arm would never fire: the harness
        # would fire it all the same (it keeps its own time), so its absence is the failure
        if ("round", None) not in armed:
            raise Late("the desktop armed no relay round timer; the document's fires every "
                       "20 s")
        for c in desktop.executing():
            if c.state == "running" and ("control_poll", c.command_id) not in armed:
                raise Late(f"the desktop armed no control poll for {c.command_id}, which runs; "
                           f"the document's polls every 3 s while a Graph runs")
        for t, kind, ref in timers:
            if kind == "round" and t != self.ticked + RELAY_ROUND:
                raise Late(f"the desktop's next relay round is due at {t} s; the document's "
                           f"is the last one + {RELAY_ROUND:g} s = {self.ticked + RELAY_ROUND} s")
            if kind == "control_poll" and ref in self.polled and \
                    t != self.polled[ref] + CONTROL_POLL:
                raise Late(f"the control poll of {ref} is due at {t} s; the document's is "
                           f"every {CONTROL_POLL:g} s: {self.polled[ref] + CONTROL_POLL} s")
