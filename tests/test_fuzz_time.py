"""Issue 12, blind spot 3: time as a value.  The harness knows the documents' deadlines
(fuzz/deadlines.py) and checks every timer the implementation sets; a deadline that
moves is caught although the harness fires timers when the implementation says.

Each bug below is written here, outside relay/, the way a person would write it."""

from __future__ import annotations

import pytest

from osf_check.fuzz import mutants
from osf_check.fuzz.deadlines import keep_pending
from osf_check.fuzz.driver import tour
from osf_check.fuzz.wire_harness import WireHarness
from osf_check.relay.graph.desktop import DesktopRelay
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.idempotency import DurableClaims, _columns
from osf_check.relay.wire.relay_router import RelayRouter


class LeaseExtendedByBusyRetry(DurableClaims):
    """A retry that finds the row running 'refreshes' the lease."""

    def claim(self, s, params, now, owner_alive=False):
        d = super().claim(s, params, now, owner_alive)
        row = self.row(s)
        if row is not None and row.state == "running" and d.kind != "run":
            # the scope as the claims store it
            self.db.execute("UPDATE claims SET claimed_at=? " + self._WHERE,
                            (now, *_columns(s)))
        return d


class ExtendsLease(DesktopRouter):
    durable_claims = LeaseExtendedByBusyRetry


class DispatchOneSecondLate(DesktopRouter):
    def start(self, call, now):
        kind = super().start(call, now)
        if call.stage == "dispatch":
            call.deadline += 1.0  # 46 s
        return kind


class KeepsEveryEntry120s(RelayRouter):
    def on_request(self, c, frame, now):
        out = super().on_request(c, frame, now)
        for e in self.pending.values():
            if e.deadline == now + keep_pending(e.method):
                e.deadline = now + 120.0
        return out


class PollsEveryFiveSeconds(DesktopRelay):
    def timers(self):
        return [(t + 2.0 if kind == "control_poll" else t, kind, ref)
                for t, kind, ref in super().timers()]


class RoundTimerRestartsAfterTheRound(DesktopRelay):
    """The 20 s count starts when a round ends, not when the timer last fired."""

    def round_end(self):
        ended = super().round_end()
        if ended:
            self.ticked_at = self.clock.now()
        return ended


GRAPH_BUGS = {
    "polls-every-5s": ({"desktop": PollsEveryFiveSeconds}, "control poll", 5),
    "round-timer-from-round-end": ({"desktop": RoundTimerRestartsAfterTheRound},
                                   "relay round", 11),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GRAPH_BUGS))
def test_a_moved_graph_timer_is_caught(name, monkeypatch):
    classes, needle, depth = GRAPH_BUGS[name]
    monkeypatch.setitem(mutants.MUTANTS, ("graph-relay", name),
                        mutants.ImplMutant(name, "graph-relay", "a moved timer (test)", classes))
    rep = tour("graph-relay", mutant=name, depth=depth, params={"intents": 1})
    assert rep.failure is not None and needle in rep.failure, rep.failure


BUGS = {
    "lease-extended-by-busy-retry": ({"desktop": ExtendsLease}, "lease of", {"ops": 1}, 11),
    # the dispatch probe of each method class meets it first: "dispatch is cut after 95 s"
    "dispatch-one-second-late": ({"desktop": DispatchOneSecondLate}, "dispatch",
                                 {"ops": 1}, 4),
    "keeps-every-entry-120s": ({"relay": KeepsEveryEntry120s}, "pending until", {"ops": 1}, 2),
}


@pytest.fixture
def bug(request, monkeypatch):
    name = request.param
    classes, needle, params, depth = BUGS[name]
    m = mutants.ImplMutant(name, "wire-relay", "a moved deadline (test)", classes)
    monkeypatch.setitem(mutants.MUTANTS, ("wire-relay", name), m)
    # the data probes judge some durations at their edges too and would report first:
    # this is the book of deadlines' own test
    monkeypatch.setattr(WireHarness, "probes", False)
    return name, needle, params, depth


@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted(BUGS), indirect=True)
def test_a_moved_deadline_is_caught(bug):
    name, needle, params, depth = bug
    rep = tour("wire-relay", mutant=name, params=params, depth=depth)
    assert rep.failure is not None and needle in rep.failure, rep.failure
    assert "document's" in rep.failure or "(004:" in rep.failure  # it cites its source


@pytest.mark.slow
def test_the_correct_implementation_sets_every_deadline_where_the_document_does():
    rep = tour("wire-relay", params={"ops": 1}, depth=11)
    assert rep.failure is None, rep.failure
    assert rep.edges_covered == rep.edges_total > 1_000
