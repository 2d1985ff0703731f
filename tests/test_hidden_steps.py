"""Several model steps in one step of the implementation (fuzz.hidden): a desktop that
starts the Graph it fetched in the same go as its sync is checked without being split,
by the steps its adapter declares or by the checker's bounded search over its own
steps; steps the model does not allow there still diverge, and a search that hits its
bound fails as unknown instead of passing."""

from __future__ import annotations

import pytest

from osf_check.fuzz import hidden
from osf_check.fuzz.driver import hypothesis_run, make_harness, model_for, shrink_path, tour
from osf_check.fuzz.graph_harness import GraphHarness


class SyncStarts:
    """The reference desktop, made to start (or refuse) its first fetched command as soon
    as its sync reply arrives, with ``extra`` more of the model's steps after it."""

    hides: tuple[str, ...] = GraphHarness.OWN
    declare = False
    extra: tuple[str, ...] = ()

    def __init__(self, h):
        self.h = h
        self.labels = {i.label: i for i in h.model.instances}
        self.said = None

    def __getattr__(self, name):
        return getattr(self.h, name)

    def apply(self, inst):
        out = self.h.apply(inst)
        self.said = None
        if inst.name == "sync":
            own = sorted(x for x in self.h.offers() if x.startswith(("start_graph", "refuse")))
            more = own[:1] + list(self.extra)
            for label in more:
                self.h.apply(self.labels[label])
            self.said = [inst.label, *more] if self.declare and more else None
        return out

    def took(self):
        return self.said


def built(cls):
    return lambda *args: cls(make_harness(*args))


def test_a_desktop_that_starts_at_sync_passes_through_the_search():
    rep = tour("graph-relay", depth=5, harness=built(SyncStarts))
    assert rep.failure is None, rep.failure
    assert rep.steps > 0


def test_without_the_steps_capability_one_observation_is_one_step():
    class Strict(SyncStarts):
        hides = ()

    rep = tour("graph-relay", depth=5, harness=built(Strict))
    assert rep.failure == ("the implementation diverged from the model on sync: "
                           "status[0]: the model queued, the implementation running; "
                           "exec[0]: the model fetched, the implementation running") or \
        rep.failure.startswith("the implementation diverged from the model on sync: "), \
        rep.failure
    m = model_for("graph-relay", None)
    assert m.instances[rep.path[-1]].name == "sync"


def test_declared_steps_are_checked_one_by_one():
    class Declares(SyncStarts):
        hides = ()
        declare = True

    rep = tour("graph-relay", depth=5, harness=built(Declares))
    assert rep.failure is None, rep.failure


def test_a_declared_step_the_model_does_not_enable_diverges():
    class Lies(SyncStarts):
        hides = ()
        declare = True

        def took(self):
            return None if self.said is None else [*self.said, "receive_ack(r=0)"]

    rep = tour("graph-relay", depth=5, harness=built(Lies))
    assert rep.failure is not None and "also took receive_ack(r=0), which the model does " \
        "not enable there" in rep.failure, rep.failure


def test_an_unannounced_step_that_is_not_the_implementations_own_diverges():
    class GoesOffline(SyncStarts):
        extra = ("go_offline",)

    rep = tour("graph-relay", depth=5, harness=built(GoesOffline))
    assert rep.failure is not None and rep.failure.endswith(
        "nor do any of the implementation's own steps lead there"), rep.failure


def test_a_search_that_hits_its_bound_fails_as_unknown(monkeypatch):
    monkeypatch.setattr(hidden, "DEPTH", 0)
    rep = tour("graph-relay", depth=5, harness=built(SyncStarts))
    assert rep.failure is not None and "unknown whether the implementation's own steps " \
        "lead there" in rep.failure, rep.failure


def test_search_finds_the_shortest_path_or_says_why_not():
    m = model_for("graph-relay", None)
    from osf_check.explorer.compiled.pycompile import compile_steps
    steps = compile_steps(m)
    idx = {i.label: i.index for i in m.instances}
    s = m.initial_states[0]
    for label in ("run_graph_session(i=0)", "tick", "sync"):
        s = steps[idx[label]](s)
    own = [i.index for i in m.instances if i.name in GraphHarness.OWN]
    started = steps[idx["start_graph(r=0)"]](s)
    assert hidden.search(steps, own, s, started) == [idx["start_graph(r=0)"]]
    assert hidden.search(steps, own, s, s) == []
    offline = steps[idx["go_offline"]](s)
    assert hidden.search(steps, own, s, offline) == \
        "nor do any of the implementation's own steps lead there"


@pytest.mark.slow
def test_walks_and_shrinking_keep_the_hidden_steps_in_the_path():
    class Broken(SyncStarts):
        def apply(self, inst):  # and forgets the round's end: caught later in the walk
            out = super().apply(inst)
            if inst.name == "graph_finish":
                self.h.desktop.online = not self.h.desktop.online
            return out

    rep = hypothesis_run("graph-relay", examples=30, steps=20, profile="ci",
                         harness=built(Broken))
    assert rep.failure is not None
    m = model_for("graph-relay", None)
    from osf_check.explorer.compiled.pycompile import compile_steps
    steps, s = compile_steps(m), m.initial_states[0]
    for ai in rep.path:  # every step of the path a step of the model, the hidden ones too
        s = steps[ai](s)
        assert s is not None, m.instances[ai].label
    assert any(m.instances[ai].name == "start_graph" for ai in rep.path)
    assert shrink_path(m, None, rep.path, harness=built(Broken)) is not None


def test_a_failure_whose_steps_were_taken_together_replays_from_its_trace():
    """The trace records the steps the implementation took by itself after the one asked
    for; a replay asks for the one and counts the others as taken with it, in the
    trace's order, up to the failing step."""
    from osf_check.fuzz.driver import FOLLOWED, VIOLATED, path_trace, replay

    class Declares(SyncStarts):
        hides = ()
        declare = True

    mu = "truncate-by-bytes"
    rep = tour("graph-relay", depth=5, mutant=mu, harness=built(Declares))
    m = model_for("graph-relay", mu)
    labels = [m.instances[a].label for a in rep.path]
    assert labels == ["run_graph_session(i=0)", "tick", "sync", "start_graph(r=0)",
                      "graph_finish(r=0, o=completed)"], (rep.failure, labels)
    tr = path_trace(m, rep.path, message=rep.failure, mutant=mu, seed=0)
    got = replay(tr, mutant=mu, harness=built(Declares))
    assert [(s.label, s.outcome) for s in got] == [(x, FOLLOWED) for x in labels[:-1]] + \
        [(labels[-1], VIOLATED)]
    # the same trace with a step the implementation did not take by itself where the
    # trace records it: not followed, and said so
    moved = dict(tr, steps=[tr["steps"][k] for k in (0, 1, 2, 3)])
    last = replay(moved, mutant=mu, harness=built(Declares))[-1]
    assert last.label == "sync" and not last.ok and "took start_graph(r=0) by itself" in \
        last.note, last


def test_steps_taken_together_count_as_covered_transitions():
    """A desktop that starts at sync never rests where a fetched command waits: the
    start from there is covered only as a step its adapter said it took with the sync,
    and the report says how many transitions were covered that way."""
    class Declares(SyncStarts):
        hides = ()
        declare = True

    rep = tour("graph-relay", depth=5, harness=built(Declares))
    assert rep.failure is None, rep.failure
    assert 0 < rep.edges_taken < rep.edges_covered, (rep.edges_taken, rep.edges_covered)
    strict = tour("graph-relay", depth=5, harness=built(type("Plain", (Declares,), {
        "took": lambda self: None, "hides": GraphHarness.OWN})))
    assert strict.failure is None, strict.failure
    # found by the search instead of declared: the same transitions, taken together too
    assert strict.edges_covered == rep.edges_covered and strict.edges_taken == rep.edges_taken
