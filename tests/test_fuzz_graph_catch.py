"""The graph-relay fuzzer finds bugs nobody planted in it: every configuration the model
declares is fuzzed, the actor of a request varies, the harness observes the server's
session list instead of writing it, a timer the document requires must be armed, every
answer the network loses is delivered late, and idempotency keys come from 000's domain.  Each bug is planted here by a patch of the
reference implementation from the test (tests/bugs/set1 has them as patches)."""

from __future__ import annotations

import builtins
import hashlib
import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.fuzz import graph_inputs
from osf_check.fuzz import sweep as configs
from osf_check.fuzz.driver import Checker, _fails, hypothesis_run, model_for, tour
from osf_check.fuzz.goals import Goal, Reached
from osf_check.fuzz.graph_harness import GraphHarness
from osf_check.fuzz.harness import Divergence
from osf_check.models.dsl import Param
from osf_check.properties import catalogue
from osf_check.relay.graph.agent import AgentRuns
from osf_check.relay.graph.desktop import DesktopRelay
from osf_check.relay.graph.outbox import Outbox
from osf_check.relay.graph import server as server_module
from osf_check.relay.graph.server import GraphServer, ToolError

ROOT = Path(__file__).resolve().parents[1]


def fails(labels: list[str], params: dict | None = None) -> str | None:
    """The failure the correct model's path ``labels`` shows on the (patched)
    implementation, or None; the path must be one of the model's (else the test is void)."""
    model = model_for("graph-relay", None, params)
    chk = Checker(model)
    idx = {i.label: i.index for i in model.instances}
    path = [idx[x] for x in labels]
    s = model.initial_states[0]
    for ai in path:
        s = chk.steps[ai](s)
        assert s is not None, f"{model.instances[ai].label} is not a step of the model there"
    return _fails(model, chk, None, path, 0)


START = ["run_graph_session(i=0)", "answer_ticket(i=0)", "tick", "sync", "start_graph(r=0)"]


# 1. every configuration the model declares ------------------------------------------
def covered(cfgs: list[dict], spec) -> dict[str, set]:
    return {p.name: {c.get(p.name, p.default) for c in cfgs} for p in spec.params}


def test_the_ci_profile_fuzzes_every_value_of_each_graph_parameter():
    spec = catalogue.spec("graph-relay")
    got = covered(configs.configurations(spec, {}, "ci"), spec)
    assert got == {"agents": {2, 3}, "intents": {1, 2, 3}, "retries": {0, 1, 2},
                   "slugs": {1, 2, 3}, "projects": {1, 2}, "listing": {0, 1}}
    # one parameter moved at a time: ten runs, the defaults first
    cfgs = configs.configurations(spec, {}, "ci")
    assert cfgs[0] == {} and all(len(c) == 1 for c in cfgs[1:]) and len(cfgs) == 10
    assert {"listing": 1} in cfgs  # the model of the server's session list is fuzzed too


def test_the_ci_profile_fuzzes_every_wire_workload_and_keeps_what_the_user_set():
    spec = catalogue.spec("wire-relay")
    cfgs = configs.configurations(spec, {"restarts": 2}, "ci")
    assert covered(cfgs, spec)["workload"] == {0, 1, 2, 3}
    assert all(c["restarts"] == 2 for c in cfgs)  # --param stays as the user set it


def test_the_nightly_profile_sweeps_combinations():
    spec = catalogue.spec("graph-relay")
    cfgs = configs.configurations(spec, {}, "nightly")
    assert len(cfgs) == 2 * 3 * 3 * 3 * 2 * 2  # every combination (few enough)
    wide = catalogue.spec("wire-relay")
    rows = configs.configurations(wide, {}, "nightly")
    # too many to run all: every pair of values of two parameters is run at least once
    vals = {p.name: configs.values(p) for p in wide.params}
    full = [{p.name: c.get(p.name, p.default) for p in wide.params} for c in rows]
    for a, b in itertools.combinations(vals, 2):
        for x, y in itertools.product(vals[a], vals[b]):
            assert any(r[a] == x and r[b] == y for r in full), (a, x, b, y)
    assert len(rows) < 100


def test_examples_go_where_goals_are_unmet():
    cfgs = [{}, {"projects": 2}, {"slugs": 3}]
    met = Reached(Goal("A4", "met", None), {}, [0])
    unmet = Reached(Goal("A12", "two projects", None), {"projects": 2}, [0, 1])
    even = configs.shares(300, configs.weights(cfgs, {}, [met]))
    more = configs.shares(300, configs.weights(cfgs, {}, [met, unmet]))
    assert even[1] == even[2] and more[1] > more[2]  # (can come out otherwise: tested)
    assert sum(even) == sum(more) == 300 and even[0] == more[0] == 150


def test_a_wide_setting_is_visited_at_its_ends_only():
    assert configs.values(Param("lim", 1, 1, 4096, "a limit")) == [1, 4096]
    assert configs.values(Param("w", 0, 0, 3, "a workload")) == [0, 1, 2, 3]


@pytest.mark.slow
def test_the_ci_sweep_catches_a_bug_only_two_projects_show(monkeypatch, tmp_path):
    # set1/05: the consent re-check reads the desktop's default project's flag
    def consent(self, c):
        return self.enabled[self.project_id] and self.shared and c.slug == self.slug
    monkeypatch.setattr(DesktopRelay, "consent", consent)
    res = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--tour-depth", "4",
                                    "--examples", "4", "--json"])
    assert res.exit_code == 12, res.output
    run = json.loads(res.stdout)["runs"][0]
    assert run["trace"]["params"]["projects"] == 2, run["trace"]["params"]
    listed = [c["params"] for c in run["configurations"]]
    assert listed[0] == {} and {"projects": 2} in listed and {"agents": 3} in listed


# 2. the actor varies ------------------------------------------------------------------
def test_a_second_agent_sending_the_same_key_gets_its_own_run(monkeypatch):
    # set1/01: the run is looked up by idempotency key alone
    def existing(self, agent, key):
        return next((r for r in self.runs if r.key == key), None)
    assert fails(["run_graph_session(i=0)"]) is None
    monkeypatch.setattr(GraphServer, "_existing", existing)
    why = fails(["run_graph_session(i=0)"])
    assert why and "property A1" in why and "another agent started" in why, why


def test_the_agent_that_starts_runs_is_not_agent_0(monkeypatch):
    # a server that lets connection 0 read every run (an "admin" id): only a probe by
    # agent 0 of another agent's run shows it
    own = GraphServer._own

    def leaky(self, agent, command_id):
        run = self._find(command_id)
        return run if run is not None and agent == 0 else own(self, agent, command_id)
    monkeypatch.setattr(GraphServer, "_own", leaky)
    why = fails(["run_graph_session(i=0)", "get_graph_run(a=0, r=0)"])
    assert why and "get_graph_run(a=0, r=0) answered 'answered'" in why, why


# 3. observe, never write: the session list after a sync ---------------------------------
def test_a_sync_that_keeps_an_unshared_session_is_caught(monkeypatch):
    # set1/03: sync merges the upload and no longer drops what was not uploaded again
    sync = GraphServer.sync

    def stale(self, project_id, sessions):
        kept = dict(self.sessions)
        out = sync(self, project_id, sessions)
        self.sessions = {**kept, **self.sessions}
        return out
    # the server lists only what a sync uploaded: a first sync shares the session
    path = ["tick", "sync", "round_end", "toggle_share", "tick", "sync"]
    assert fails(path) is None
    monkeypatch.setattr(GraphServer, "sync", stale)
    why = fails(path)
    assert why and "property A12" in why and "uploaded no session" in why, why


def test_a_sync_that_keeps_a_known_sessions_old_slug_is_caught(monkeypatch):
    # the server takes a known session's first upload as final: a rename never reaches
    # its list (the harness once rewrote the list after a rename, hiding this)
    sync = GraphServer.sync

    def stale(self, project_id, sessions):
        kept = {k: m for k, m in self.sessions.items() if m.get("project_id") == project_id}
        out = sync(self, project_id, sessions)
        self.sessions.update({k: m for k, m in kept.items() if k in self.sessions})
        return out
    path = ["tick", "sync", "round_end", "change_slug", "tick", "sync"]
    assert fails(path) is None
    monkeypatch.setattr(GraphServer, "sync", stale)
    why = fails(path)
    assert why and "property A12" in why and "slug-0" in why, why


@pytest.mark.parametrize("method, path", [
    ("set_online", ["go_offline"]),
    ("set_enabled", ["toggle_project(p=0)"]),
    ("set_shared", ["toggle_share"]),
    ("rename", ["change_slug"]),
])
def test_the_owner_and_the_network_reach_the_desktop_through_its_methods(
        monkeypatch, method, path):
    # a desktop that ignores what it is told: only a harness that wrote its fields for it
    # would keep it in step with the model
    assert fails(path) is None
    told = getattr(DesktopRelay, method)
    # it keeps its starting settings (online, enabled, shared, the first slug) and drops
    # every change
    monkeypatch.setattr(DesktopRelay, method, lambda self, *a: told(self, *a)
                        if a[-1] in (True, "slug-0") else None)
    why = fails(path)
    assert why and path[0] in why, why


# 4. the implementation's timers ----------------------------------------------------------
def test_a_control_poll_the_desktop_did_not_arm_is_a_failure(monkeypatch):
    timers = DesktopRelay.timers
    monkeypatch.setattr(DesktopRelay, "timers",
                        lambda self: [t for t in timers(self) if t[1] != "control_poll"])
    why = fails(START)
    assert why and "armed no control poll" in why, why


def test_a_relay_round_the_desktop_did_not_arm_is_a_failure(monkeypatch):
    monkeypatch.setattr(DesktopRelay, "timers", lambda self: [])
    why = fails(["tick"])
    assert why and "armed no relay round" in why, why


def test_a_control_poll_timer_that_never_fires_is_a_failure(monkeypatch):
    # the desktop lists its poll but its timers fire only the relay round: the harness
    # no longer polls for it
    due_now = DesktopRelay.due_now
    monkeypatch.setattr(DesktopRelay, "due_now",
                        lambda self: [t for t in due_now(self) if t[0] != "control_poll"])
    why = fails(START + ["control_poll_clear(r=0)"])
    assert why and "control poll" in why and "does not fire" in why, why


def test_a_desktop_that_never_arms_its_control_poll_is_caught(monkeypatch):
    start = DesktopRelay.start_or_refuse

    def unarmed(self, c):
        out = start(self, c)
        c.polled_at = None  # the planted bug: the Graph runs with no poll timer
        return out
    monkeypatch.setattr(DesktopRelay, "start_or_refuse", unarmed)
    why = fails(START)
    assert why and "control poll" in why, why


def test_a_relay_round_timer_that_never_fires_is_a_failure(monkeypatch):
    monkeypatch.setattr(DesktopRelay, "due_now", lambda self: [])
    why = fails(["tick"])
    assert why and "relay round" in why and "does not fire" in why, why


# 5. late answers ----------------------------------------------------------------------------
def test_a_poll_answer_after_the_graph_ended_changes_nothing(monkeypatch):
    poll = DesktopRelay.control_poll

    def late(self, c, cancelled):
        if c.state == "done" and cancelled:
            c.outcome = "cancelled"  # the planted bug: a late answer rewrites the outcome
            return False
        return poll(self, c, cancelled)
    path = START + ["graph_finish(r=0, o=completed)"]
    assert fails(path) is None
    monkeypatch.setattr(DesktopRelay, "control_poll", late)
    why = fails(path)
    assert why and "property A3" in why and "after the Graph" in why, why


def test_a_poll_answer_after_the_stop_sends_no_second_stop(monkeypatch):
    poll = DesktopRelay.control_poll

    def again(self, c, cancelled):
        if c.state == "stopping" and cancelled:
            c.stop_sent += 1
            return True
        return poll(self, c, cancelled)
    path = START + ["cancel_graph_run(i=0, r=0)", "control_poll(r=0)"]
    assert fails(path) is None
    monkeypatch.setattr(DesktopRelay, "control_poll", again)
    why = fails(path)
    assert why and "sent the stop again" in why, why


LOST_SYNC = ["run_graph_session(i=0)", "answer_ticket(i=0)", "tick", "lose_sync_reply"]


def _takes_replies(monkeypatch, *, idle: bool) -> None:
    """Plant a desktop that takes a sync reply whatever round it answers (and, if
    ``idle``, even between rounds, re-opening the round it closed)."""
    reply = DesktopRelay.sync_reply

    def take(self, commands, round=None):
        if idle or self.phase == "sync":
            self.phase = "sync"
            reply(self, commands)
    monkeypatch.setattr(DesktopRelay, "sync_reply", take)


def test_no_reply_comes_late_when_no_project_was_synced():
    # every project disabled: the round makes no sync call, so nothing can arrive late
    assert fails(["go_offline", "toggle_project(p=0)", "go_online", "tick",
                  "lose_sync_reply", "tick"]) is None


@pytest.mark.parametrize("idle, path, after", [
    (True, LOST_SYNC, "lose_sync_reply"),  # right after its call failed
    (False, LOST_SYNC + ["tick"], "tick"),  # in the next round, before that round's reply
])
def test_a_lost_sync_reply_arriving_late_changes_nothing(monkeypatch, idle, path, after):
    assert fails(path) is None
    _takes_replies(monkeypatch, idle=idle)
    why = fails(path)
    assert why and "sync reply lost earlier, delivered late after " + after in why, why


def _in_arrival_order(self, answer):
    """The planted bug: the agent takes every answer as it comes, however old."""
    self.known[answer["command_id"]] = dict(answer)


FINISHED = START + ["graph_finish(r=0, o=completed)", "deliver_post(r=0)"]


@pytest.mark.parametrize("method, path, answer, what", [
    # the answer was "running"; the agent has since learnt the run's outcome
    ("read", START[:-1] + ["lose_get_reply(i=0, r=0)", "start_graph(r=0)"] + FINISHED[5:]
     + ["get_graph_run(i=0, r=0)"], "get_graph_run's answer", "back to"),
    ("cancelled", START + ["lose_cancel_reply(i=0, r=0)", "control_poll(r=0)"] + FINISHED[5:]
     + ["cancel_graph_run(i=0, r=0)"], "cancel_graph_run's answer", "back to"),
    # a cancel of the completed run: its answer has the status only, the agent has since
    # read the completion
    ("cancelled", FINISHED + ["lose_cancel_reply(i=0, r=0)", "get_graph_run(i=0, r=0)"],
     "cancel_graph_run's answer", "replaced the completion the agent read"),
])
def test_a_lost_agent_answer_arriving_late_never_takes_the_run_back(monkeypatch, method, path,
                                                                     answer, what):
    assert fails(path) is None
    monkeypatch.setattr(AgentRuns, method, _in_arrival_order)
    why = fails(path)
    assert why and f"{answer} for " in why and what in why, why


def test_a_late_answer_is_filed_under_the_run_it_names(monkeypatch):
    def first_run(self, answer):  # the planted bug: every answer is the first run's
        self.known[next(iter(self.known), answer["command_id"])] = dict(answer)
    path = ["run_graph_session(i=0)", "answer_ticket(i=0)", "run_graph_session(i=1)",
            "answer_ticket(i=1)", "get_graph_run(i=1, r=1)", "lose_get_reply(i=0, r=0)"]
    assert fails(path) is None
    monkeypatch.setattr(AgentRuns, "read", first_run)
    why = fails(path)
    assert why and "changed what the agent knows of another run" in why, why


ACKED_TWICE = FINISHED + ["lose_ack(r=0)", "round_end", "tick", "deliver_post(r=0)",
                          "receive_ack(r=0)"]


def _strict_remove(self, execution_id):
    """The planted bug: a 2xx for a completion the outbox no longer holds is an error."""
    if not self.db.execute("DELETE FROM outbox WHERE execution_id = ?",
                           (execution_id,)).rowcount:
        raise KeyError(execution_id)


def test_a_lost_2xx_arriving_after_the_resent_completions_changes_nothing(monkeypatch):
    assert fails(ACKED_TWICE) is None
    monkeypatch.setattr(Outbox, "remove", _strict_remove)
    why = fails(ACKED_TWICE)
    assert why and "a completion's 2xx for " in why and "raise KeyError" in why, why


def _harness_after(labels: list[str], tmp_path) -> GraphHarness:
    model = model_for("graph-relay", None, None)
    h = GraphHarness(model, str(tmp_path / "outbox.sqlite"))
    by = {i.label: i for i in model.instances}
    for x in labels:
        h.apply(by[x])
    return h


def test_a_lost_2xx_arrives_after_a_restart_too(monkeypatch, tmp_path):
    h = _harness_after(ACKED_TWICE, tmp_path)
    h.reopen()
    assert "a completion's 2xx after a restart" in h.late and not h.violations
    monkeypatch.setattr(Outbox, "remove", _strict_remove)
    h.reopen()
    assert "late after a restart, made the implementation raise KeyError" in h.violations[0]


POSTED_TWICE = START + ["graph_finish(r=0, o=completed)", "lose_post(r=0)", "round_end", "tick",
                        "deliver_post(r=0)"]


def test_a_lost_completion_arrives_once_the_server_holds_the_outcome(monkeypatch, tmp_path):
    h = _harness_after(POSTED_TWICE[:-1], tmp_path)
    assert not any(x.startswith("a completion POST") for x in h.late)  # the run still runs
    h.apply(next(i for i in h.model.instances if i.label == "deliver_post(r=0)"))
    h.reopen()
    assert {"a completion POST after deliver_post", "a completion POST after a restart"} <= h.late
    assert not h.violations
    complete = GraphServer.complete

    def again(self, payload):  # the planted bug: a repeated completion is an error
        if payload["execution_id"] in {r.command_id for r in self.runs if r.completion}:
            raise ToolError("already completed")
        complete(self, payload)
    monkeypatch.setattr(GraphServer, "complete", again)
    why = fails(POSTED_TWICE)
    assert why and "a completion POST for " in why and "ToolError" in why, why


@pytest.mark.parametrize("where, method, bug", [
    (AgentRuns, "read", _in_arrival_order), (AgentRuns, "cancelled", _in_arrival_order),
    (Outbox, "remove", _strict_remove)])
def test_the_walks_deliver_lost_answers_late(monkeypatch, where, method, bug):
    monkeypatch.setattr(where, method, bug)
    rep = hypothesis_run("graph-relay", examples=300, steps=80, profile="ci", start_depth=6)
    assert rep.failure and "lost earlier and delivered late after" in rep.failure, rep.failure


def test_the_walks_list_the_late_answers_they_tried():
    rep = hypothesis_run("graph-relay", examples=30, steps=40, profile="ci", start_depth=4)
    assert rep.failure is None
    assert {x.split(" after ")[0] for x in rep.late_answers} >= {
        "get_graph_run's answer", "cancel_graph_run's answer", "a sync reply"}, rep.late_answers


def test_the_run_lists_the_late_answers_it_tried():
    import jsonschema

    from osf_check.fuzz import command as fz
    from osf_check.report import result_schema
    got = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--tour-depth", "4",
                                    "--examples", "0", "--json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    jsonschema.validate(doc, result_schema())
    late = doc["runs"][0]["late_answers"]
    assert {"get_graph_run's answer after lose_get_reply",
            "cancel_graph_run's answer after lose_cancel_reply",
            "a sync reply after lose_sync_reply"} <= set(late), late
    s = fz.Settings(mutant=None, seed=0, steps=40, examples=0, profile="dev", db=None,
                    params={})
    shown = fz.text(doc["runs"], s)
    assert f"  late answers tried: {len(late)}" in shown
    # grouped by answer: each answer named once, the steps it came after beside it
    assert shown.count("    get_graph_run's answer (") == 1, shown


# 6. set1's graph bugs, each applied as written, fuzzed by the CLI (CI profile, smaller) ------
@pytest.mark.slow
@pytest.mark.parametrize("bug", ["01", "03", "05", "09"])
def test_set1_graph_bugs_are_caught_with_exit_12(bug):
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks" /
                                                  "bench_catch_rate.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    patch = next((ROOT / "tests" / "bugs" / "set1").glob(f"{bug}-*.patch"))
    # 03's stale list shows only after a sync that follows an unshare, past a depth-4 tour:
    # it gets the CI profile whole (the harness observes the list and no longer writes it)
    small = [] if bug == "03" else ["--tour-depth", "4", "--examples", "8"]
    row = bench.run_one(patch, small)
    assert row["exit"] == 12, row


@pytest.mark.slow
def test_a_tour_of_the_correct_implementation_still_finds_nothing():
    rep = tour("graph-relay", depth=4, params={"projects": 2, "agents": 3})
    assert rep.failure is None and rep.states_covered == rep.states_total


# 7. idempotency keys from 000's domain ----------------------------------------------------
def _bytes_len(x):
    """set2/01's measure of a string: its UTF-8 bytes (which fail on half a pair)."""
    return builtins.len(x.encode("utf-8")) if isinstance(x, str) else builtins.len(x)


def test_a_key_measured_in_bytes_is_caught_by_the_probes_and_by_the_agents_keys(monkeypatch):
    # set2/01: the 8–128 check of run_graph_session measures bytes, not characters
    assert fails(["run_graph_session(i=0)"]) is None
    monkeypatch.setattr(server_module, "len", _bytes_len, raising=False)
    why = fails(["run_graph_session(i=0)"])
    assert why and "accepted a key of class 'Japanese, 7 characters'" in why, why
    # the agent's own first key alone shows it too: 48 characters in 136 bytes
    monkeypatch.setattr(GraphHarness, "probes", False)
    why = fails(["run_graph_session(i=0)"])
    assert why and "refused the idempotency key" in why and "136 UTF-8 bytes" in why, why


def test_a_key_holding_half_a_pair_may_be_refused_but_never_crash_the_server():
    class Digests(GraphServer):  # files runs under the key's UTF-8 digest
        def _existing(self, agent, key):
            hashlib.sha256(key.encode("utf-8"))
            return super()._existing(agent, key)

    class RefusesHalves(GraphServer):
        def run_graph_session(self, agent, args):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in args.get("idempotency_key", "")):
                raise ToolError("idempotency_key is not Unicode text")
            return super().run_graph_session(agent, args)

    assert "key half a surrogate pair" in graph_inputs.start_keys(GraphServer)
    assert "key half a surrogate pair" in graph_inputs.start_keys(RefusesHalves)
    with pytest.raises(Divergence, match="raised UnicodeEncodeError .*half a surrogate pair"):
        graph_inputs.start_keys(Digests)


def test_keys_that_differ_only_in_case_are_two_runs(monkeypatch):
    def caseless(self, agent, key):
        return next((self._find(cid) for (a, k), cid in self.by_key.items()
                     if a == agent and k.casefold() == key.casefold()), None)
    path = ["run_graph_session(i=0)", "run_graph_session(i=1)"]
    assert fails(path) is None
    monkeypatch.setattr(GraphServer, "_existing", caseless)
    why = fails(path)
    assert why and "differ only in case" in why, why
    monkeypatch.setattr(GraphHarness, "probes", False)  # the agent's two keys alone
    why = fails(path)
    assert why and "diverged from the model on run_graph_session(i=1)" in why, why


# 6. a lost copy that arrives where it changes something (late_post, late_ack) -----------
LOST_POST = START + ["graph_finish(r=0, o=completed)", "lose_post(r=0)"]
#: the agent cancels (the flag is set) and reads "running" after the POST was lost; the lost
#: copy then reaches the server before the desktop's re-send did
LATE_POST = LOST_POST + ["cancel_graph_run(i=0, r=0)", "get_graph_run(i=0, r=0)",
                         "late_post(r=0)", "get_graph_run(i=0, r=0)"]
#: the 2xx lost; it arrives late at the desktop once the round is over, the completion
#: still in the outbox (before the next round re-sends it)
LATE_ACK = FINISHED + ["lose_ack(r=0)", "round_end", "late_ack(r=0)", "tick"]


def test_a_lost_post_taken_before_the_resend_is_the_servers_completion(tmp_path):
    h = _harness_after(LATE_POST[:-2], tmp_path)
    cid = h.cid(0)
    assert ("post", cid) in h.held and h.server.runs[0].status == "running"
    h.apply(next(i for i in h.model.instances if i.label == "late_post(r=0)"))
    # the copy is the server's now: never held again, so never delivered a second time
    assert ("post", cid) not in h.held and ("ack", cid) in h.held
    assert h.server.runs[0].status == "completed" and cid in h.desktop.outbox
    assert fails(LATE_POST) is None


def _flag_waits_for_cancelled(monkeypatch):
    """The planted bug: a server that keeps a run whose cancel flag is set running until a
    "cancelled" completion comes (it takes the flag as the last word, where the model, as
    000, lets a Graph that finished before the control poll saw the flag complete)."""
    complete = GraphServer.complete

    def waits(self, payload):
        run = self._find(payload.get("execution_id"))
        if run is not None and run.cancel_flag and payload["status"] != "cancelled":
            return
        complete(self, payload)
    monkeypatch.setattr(GraphServer, "complete", waits)


def test_a_server_that_drops_a_late_post_is_caught_on_it(monkeypatch):
    # (an on-time POST after the cancel shows it too: the server cannot tell a late copy
    # from an on-time one, so no bug of the sans-I/O server shows only on a late one)
    _flag_waits_for_cancelled(monkeypatch)
    why = fails(LATE_POST)
    # A11: the server accepted the completion (the model's late_post) and keeps no result
    assert why and why.startswith("property A11 violated") and "late_post(r=0)" in why, why


def _acked_within_a_round(monkeypatch):
    """The planted bug: the 2xx handler belongs to the round that sent the POST; a 2xx
    that resolves after the round ended (a timed-out request answered late) is dropped,
    and the completion stays in the outbox to be re-sent."""
    acked = DesktopRelay.acked

    def within(self, execution_id):
        if self.phase != "idle":
            acked(self, execution_id)
    monkeypatch.setattr(DesktopRelay, "acked", within)


def test_a_lost_2xx_arriving_before_the_resend_lets_the_completion_go(monkeypatch, tmp_path):
    h = _harness_after(LATE_ACK[:-1], tmp_path)
    cid = h.cid(0)
    # the entry left on the late 2xx, which is no longer held (never delivered again)
    assert cid not in h.desktop.outbox and ("ack", cid) not in h.held and cid in h.acked
    assert fails(LATE_ACK) is None
    # (a 2xx on time after the round's end shows it too: the desktop cannot tell a late
    # 2xx from an on-time one)
    _acked_within_a_round(monkeypatch)
    why = fails(LATE_ACK)
    assert why and "late_ack(r=0)" in why and "outbox[0]" in why, why
