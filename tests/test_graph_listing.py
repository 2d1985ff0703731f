"""graph-relay's ``listing`` parameter: at 1 the model keeps the server's session list (what
each project's last sync uploaded), a start for an unlisted session is refused and a new
run is filed under the uploaded slug; the harness then calls the server as it is, never
writing its list.  At 0 the model is the one every other pin describes."""

from __future__ import annotations

import pytest

from osf_check.explorer.check import check
from osf_check.explorer.explicit.bfs import bfs
from osf_check.fuzz.driver import Checker, _fails, model_for, tour
from osf_check.models.graph_relay import SPEC
from osf_check.models.graph_relay.vocab import CALL
from osf_check.properties import catalogue
from osf_check.relay.graph.server import GraphServer

LISTED = {"listing": 1}


def _walk(labels: list[str], params: dict):
    """The model at ``params``, its checker, the path's instance indices and the state
    the correct model's path ``labels`` ends in (each label must be a step there)."""
    model = model_for("graph-relay", None, params)
    chk = Checker(model)
    idx = {i.label: i.index for i in model.instances}
    s = model.initial_states[0]
    for label in labels:
        s = chk.steps[idx[label]](s)
        assert s is not None, f"{label} is not a step of the model there"
    return model, chk, [idx[x] for x in labels], s


def fails(labels: list[str], params: dict) -> str | None:
    """The failure the correct model's path ``labels`` shows on the (patched)
    implementation, or None; the path must be one of the model's."""
    model, chk, path, _ = _walk(labels, params)
    return _fails(model, chk, None, path, 0)


def end_state(labels: list[str], params: dict) -> dict:
    model, _, _, s = _walk(labels, params)
    return model.show_state(s)


# the parameter ---------------------------------------------------------------------------
def test_listing_is_a_declared_setting_off_by_default():
    p = next(p for p in SPEC.params if p.name == "listing")
    assert (p.default, p.lo, p.hi, p.bound) == (0, 0, 1, "")
    names = {v.name for v in SPEC.build({}).variables}
    assert not names & {"listed", "up_slug"}
    owners = {v.name: v.actor for v in SPEC.build(LISTED).variables}
    assert owners["listed"] == owners["up_slug"] == "server"


# Source: regression pins (osf-check's explicit engine), measured when listing was added.
# listing=0 is the model of tests/test_graph_relay.py, whose pins it must keep.
# Regression pin, re-pinned: late_post and late_ack, new transitions to no new state
# (generated was 325,169; 529,417; 39,957; 179,465).
@pytest.mark.parametrize("params, depth, distinct, generated", [
    ({"listing": 1}, 10, 45_726, 325_367),
    ({"intents": 1, "listing": 1}, None, 47_376, 543_241),
    ({"intents": 1, "slugs": 1, "retries": 0, "listing": 1}, None, 4_056, 41_109),
    ({"intents": 1, "listing": 0}, None, 16_080, 184_073),
])
def test_pinned_state_counts(params, depth, distinct, generated):
    ex = bfs(SPEC.build(params), [], depth=depth)
    assert (ex.distinct, ex.generated) == (distinct, generated)
    assert ex.complete == (depth is None)


# the model's list ------------------------------------------------------------------------
def test_a_start_before_any_sync_is_refused_and_a_listed_one_filed_under_the_uploaded_slug():
    st = end_state(["run_graph_session(i=0)"], LISTED)
    assert st["call"][0] == "refused" and st["status"][0] == "none"
    # shared and uploaded under slug 0, then renamed: the new run is filed under 0, as listed
    st = end_state(["tick", "sync", "round_end", "change_slug", "run_graph_session(i=0)"],
                   LISTED)
    assert (st["listed"], st["up_slug"], st["cur_slug"]) == ([True], [0], 1)
    assert st["status"][0] == "queued" and st["slug"][0] == 0
    # at listing=0 the same start is filed under the current slug, never refused
    st = end_state(["change_slug", "run_graph_session(i=0)"], {})
    assert st["slug"][0] == 1 and st["call"][0] == "waiting"


def test_an_unshared_session_leaves_the_list_at_the_next_sync_and_a_retry_still_finds_its_run():
    path = ["tick", "sync", "round_end", "run_graph_session(i=0)", "lose_response(i=0)",
            "toggle_share", "tick", "lose_sync_reply"]
    st = end_state(path, LISTED)
    assert st["listed"] == [False] and st["call"][0] == "lost"
    # the retry's key finds the run the first call queued: a ticket, not a refusal
    st = end_state(path + ["run_graph_session(i=0)"], LISTED)
    assert st["call"][0] == "waiting" and st["ticket"][0] == 0


def test_a_refused_intent_may_ask_again_while_retries_are_left():
    st = end_state(["run_graph_session(i=0)", "tick", "sync", "round_end",
                    "run_graph_session(i=0)"], LISTED)
    assert st["call"][0] == "waiting" and st["status"][0] == "queued"
    model = model_for("graph-relay", None, {"retries": 0, "listing": 1})
    chk = Checker(model)
    idx = {i.label: i.index for i in model.instances}
    s = chk.steps[idx["run_graph_session(i=0)"]](model.initial_states[0])
    assert model.show_state(s)["call"][0] == "refused"
    assert chk.steps[idx["run_graph_session(i=0)"]](s) is None  # no retry left


def test_refused_is_a_call_value_only_listing_reaches():
    assert CALL.names[-1] == "refused"
    ex = bfs(SPEC.build({"intents": 1, "slugs": 1, "retries": 0}), [], depth=None)
    # the count is listing=0's pin: the new value adds no state there
    assert ex.distinct == 2_040


# verdicts ----------------------------------------------------------------------------------
def _verdicts(params: dict, mutant: str | None) -> dict[str, str]:
    r = check("graph-relay", params=params, mutant=mutant, depth=None,
              stop_on_violation=False)
    return dict(r.status)


#: A5's bug needs two commands fetched at once: two intents (one slug, no retry: small)
_WIDER = {"parallel-relay": {"intents": 2, "slugs": 1, "retries": 0}}


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [None, *SPEC.mutants])
def test_every_verdict_at_listing_1_is_listing_0s(mutant):
    base = {"intents": 1, **(catalogue.mutant("graph-relay", mutant).params if mutant else {}),
            **_WIDER.get(mutant, {})}
    got = _verdicts({**base, "listing": 1}, mutant)
    assert got == _verdicts(base, mutant)
    if mutant is not None:  # the comparison can fail: each bug still breaks its property
        assert all(got[p] == "violated" for p in catalogue.mutant("graph-relay", mutant).breaks)


# the harness: the server's list is observed, never written ---------------------------------
class _RemembersUnshared(GraphServer):
    """A planted bug: a start for a session the list no longer holds is filed from every
    session any sync ever uploaded (a cache), so an unshared session still takes runs."""

    def sync(self, project_id, sessions):
        seen = dict(getattr(self, "seen", {}))
        seen.update({s["graph_session_id"]: {"slug": s["slug"], "project_id": project_id}
                     for s in sessions})
        self.seen = seen
        return super().sync(project_id, sessions)

    def run_graph_session(self, agent, args):
        live = self.sessions
        self.sessions = {**getattr(self, "seen", {}), **live}
        try:
            return super().run_graph_session(agent, args)
        finally:
            self.sessions = live


UNSHARED_START = ["tick", "sync", "round_end", "toggle_share", "tick", "sync", "round_end",
                  "run_graph_session(i=0)"]


def test_the_harness_compares_a_refusal_with_the_models(monkeypatch):
    assert fails(UNSHARED_START, LISTED) is None
    monkeypatch.setattr("osf_check.fuzz.graph_harness.GraphServer", _RemembersUnshared)
    why = fails(UNSHARED_START, LISTED)
    assert why and "call[0]: the model refused, the implementation waiting" in why, why
    # at listing=0 the harness lists the session for the call: the same bug goes unseen
    assert fails(UNSHARED_START, {}) is None


@pytest.mark.slow
def test_a_server_that_takes_runs_for_an_unshared_session_is_caught_only_at_listing_1(
        monkeypatch):
    monkeypatch.setattr("osf_check.fuzz.graph_harness.GraphServer", _RemembersUnshared)
    missed = tour("graph-relay", depth=8, params={"listing": 0})
    assert missed.failure is None and missed.states_covered == missed.states_total
    caught = tour("graph-relay", depth=8, params=LISTED)
    assert caught.failure is not None, "the fuzzer missed the planted bug at listing=1"
    last = model_for("graph-relay", None, LISTED).instances[caught.path[-1]].label
    assert last.startswith("run_graph_session"), last


def test_the_correct_server_passes_a_tour_at_listing_1():
    rep = tour("graph-relay", depth=5, params=LISTED)
    assert rep.failure is None and rep.states_covered == rep.states_total
