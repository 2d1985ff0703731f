"""Issue 12, blind spot 4: no-op and repeated steps are steps.  A control poll that
answers "not cancelled" is a model action (control_poll_clear) the implementation is
checked on; re-sent completions (tick), completions for terminal runs (deliver_post)
and rounds with nothing queued (sync) already were."""

from __future__ import annotations

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


def test_a_poll_that_says_not_cancelled_is_checked(monkeypatch):
    name = "stops-on-any-poll"
    monkeypatch.setitem(mutants.MUTANTS, ("graph-relay", name),
                        mutants.ImplMutant(name, "graph-relay", "test", {"desktop": StopsOnAnyPollAnswer}))
    rep = tour("graph-relay", mutant=name, depth=6)
    assert rep.failure is not None and "control_poll_clear" in rep.failure, rep.failure
