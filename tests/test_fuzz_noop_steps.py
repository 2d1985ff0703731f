"""Issue 12, blind spot 4: no-op and repeated steps are steps.  A control poll that
answers "not cancelled" is a model action (control_poll_clear) the implementation is
checked on; re-sent completions (tick), completions for terminal runs (deliver_post)
and rounds with nothing queued (sync) already were.  The events the model leaves out
because they change nothing (the 20 s timer while a round is busy, the loop asking
whether its round is over) are given to the implementation too (the harness's probe)."""

from __future__ import annotations

import pytest

from osf_check.fuzz import mutants
from osf_check.fuzz.driver import tour
from osf_check.models.graph_relay import SPEC
from osf_check.relay.graph.desktop import DesktopRelay


class StopsOnAnyPollAnswer(DesktopRelay):
    """Reads the poll's answer the wrong way round for a while: any answer stops."""

    def control_poll(self, c, cancelled):
        return super().control_poll(c, True)


def test_the_no_op_poll_is_an_action_of_the_model():
    m = SPEC.build({})
    assert "control_poll_clear" in {a.name for a in m.instances}


@pytest.mark.slow
def test_a_poll_that_says_not_cancelled_is_checked(monkeypatch):
    name = "stops-on-any-poll"
    monkeypatch.setitem(mutants.MUTANTS, ("graph-relay", name),
                        mutants.ImplMutant(name, "graph-relay", "test", {"desktop": StopsOnAnyPollAnswer}))
    rep = tour("graph-relay", mutant=name, depth=6)
    assert rep.failure is not None and "control_poll_clear" in rep.failure, rep.failure


class _RoundEndsWhileAGraphRuns:
    def round_end(self):
        if self.phase == "work" and not any(c.state == "fetched" for c in self.commands.values()):
            self.phase = "idle"
            return True
        return False


class _TimerIgnoresBusy:
    def tick(self):
        self.ticked_at = self.clock.now()
        if not self.online:
            return []
        self.phase = "sync"
        return [p for _, p in self.outbox.entries()]


@pytest.mark.parametrize("bug, words", [
    (_RoundEndsWhileAGraphRuns, "after start_graph(r=0), the desktop ended its round (work -> "
                                "idle) where the model does not: a Graph still runs"),
    (_TimerIgnoresBusy, "after sync, the 20 s timer fired while the round was busy (work) and "
                        "the desktop started a round (work -> sync) where the model skips it"),
])
@pytest.mark.slow
def test_the_tour_gives_the_desktop_the_timer_and_the_round_end_the_model_leaves_out(
        monkeypatch, bug, words):
    """Both bugs passed every fuzz run: the harness fired the 20 s timer and asked for
    the round's end only where the model takes those steps, so a desktop that starts a
    round while busy, or ends one while a Graph runs, was never given the chance."""
    cls = type("Buggy", (bug, DesktopRelay), {})
    monkeypatch.setitem(mutants.MUTANTS, ("graph-relay", "buggy"), mutants.ImplMutant(
        "buggy", "graph-relay", "test", {"desktop": cls}))
    rep = tour("graph-relay", mutant="buggy", depth=5)
    assert rep.failure is not None and rep.failure.startswith(words), rep.failure


class _SharingChangeStartsNothing:
    def sharing_changed(self):
        return []


class _SharingChangeIgnoresBusy:
    def sharing_changed(self):
        self.ticked_at = self.clock.now()
        self.phase = "sync"
        return [p for _, p in self.outbox.entries()]


@pytest.mark.parametrize("bug, words", [
    (_SharingChangeStartsNothing, "the implementation diverged from the model on tick: phase: the model sync, the implementation idle"),
    (_SharingChangeIgnoresBusy, "after toggle_share, the owner changed sharing while the "
                                "desktop was offline and the desktop started a round (idle -> "
                                "sync) where the model skips it"),
])
def test_a_round_right_after_a_sharing_change_is_the_changes(monkeypatch, bug, words):
    """000: a round every 20 s "e subito dopo una modifica alla condivisione", skipped
    while busy.  The model's tick may fire at any moment, which covers the change's round;
    the harness realised every tick with the timer, so the desktop's own way in
    (sharing_changed) was driven by its unit test alone, and both bugs passed."""
    cls = type("Buggy", (bug, DesktopRelay), {})
    monkeypatch.setitem(mutants.MUTANTS, ("graph-relay", "buggy"), mutants.ImplMutant(
        "buggy", "graph-relay", "test", {"desktop": cls}))
    rep = tour("graph-relay", mutant="buggy", depth=5)
    assert rep.failure is not None and rep.failure.startswith(words), rep.failure
