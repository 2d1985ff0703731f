"""The Graph-run implementation's answers and state, compared whole: each tool refusal's
text, a sync's reply and what it does to the runs, cancel and the control poll, the
desktop's work queue and timers.  Mutation testing (issue 12) found these run by the
fuzzer but not looked at by the implementation's own tests."""

from __future__ import annotations

import uuid

import pytest

from osf_check.relay.graph.desktop import CONTROL_POLL, POLL_INTERVAL, Command, DesktopRelay
from osf_check.relay.graph.payload import stringify_length
from osf_check.relay.graph.server import NOT_FOUND, GraphServer, ToolError

SID = "gs_" + "ab" * 16
KEY = "key-12345678"


def refusal(server: GraphServer, args) -> str:
    with pytest.raises(ToolError) as e:
        server.run_graph_session(1, args)
    return str(e.value)


@pytest.mark.parametrize("args, text", [
    ([], "arguments must be an object"),
    ({"graph_session_id": SID, "idempotency_key": KEY, "zeta": 1, "alpha": 2},
     "unknown field(s): alpha, zeta"),
    ({"graph_session_id": "gs_x", "idempotency_key": KEY},
     "graph_session_id must be gs_ followed by 32 hex characters"),
    ({"graph_session_id": SID, "idempotency_key": "short"},
     "idempotency_key is required: 8 to 128 characters"),
    ({"graph_session_id": SID, "idempotency_key": KEY, "arguments": [1]},
     "arguments must be an object"),
])
def test_each_refusal_of_run_graph_session_exactly(args, text):
    assert refusal(GraphServer(), args) == text


def test_command_ids_are_reproducible_uuids():
    ids = [GraphServer(seed=0)._new_id()] + [GraphServer(seed=0)._new_id()]
    assert ids == ["e3e70682-c209-4cac-a29f-6fbed82c07cd"] * 2
    many = GraphServer(seed=0)
    run = [many._new_id() for _ in range(40)]
    assert len(set(run)) == 40 and all(uuid.UUID(i).version == 4 for i in run)


def test_a_run_of_an_unsynced_session_is_refused_and_a_synced_one_filed_with_its_slug():
    s = GraphServer()
    with pytest.raises(ToolError, match="not shared with a connected project"):
        s.run_graph_session(1, {"graph_session_id": SID, "idempotency_key": KEY})
    assert s.runs == []
    s.sync("p1", [{"graph_session_id": SID, "slug": "s1"}])
    s.run_graph_session(1, {"graph_session_id": SID, "idempotency_key": KEY})
    run = s.runs[0]
    assert (run.slug, run.project_id, run.arguments, run.status) == ("s1", "p1", {}, "queued")


def test_a_sync_replaces_its_projects_sessions_and_starts_its_queued_runs():
    s = GraphServer()
    s.sync("p1", [{"graph_session_id": SID, "slug": "s1", "name": "n"}])
    assert s.sessions == {SID: {"slug": "s1", "name": "n", "project_id": "p1"}}
    t = s.run_graph_session(1, {"graph_session_id": SID, "idempotency_key": KEY,
                                "arguments": {"x": 1}})
    assert s.sync("p2", []) == []  # another project carries nothing of p1's
    assert s.runs[0].status == "queued"
    assert s.sync("p1", [{"graph_session_id": SID, "slug": "s1", "name": "n"}]) == [
        {"command_id": t["command_id"], "graph_session_id": SID, "slug": "s1",
         "arguments": {"x": 1}}]
    assert s.runs[0].status == "running"
    # a running command is sent again with every sync of its project until its completion
    # arrives, so a lost sync reply cannot leave it running forever (the desktop ignores
    # a command it already runs)
    assert s.sync("p1", []) == [
        {"command_id": t["command_id"], "graph_session_id": SID, "slug": "s1",
         "arguments": {"x": 1}}] and s.sessions == {}
    with pytest.raises(ToolError, match="^at most 100 sessions per sync$"):
        s.sync("p1", [{"graph_session_id": f"gs_{i:032x}"} for i in range(101)])


def test_cancel_and_the_control_poll():
    s = GraphServer()
    s.sync("p1", [{"graph_session_id": SID, "slug": "s"}])
    queued = s.run_graph_session(1, {"graph_session_id": SID, "idempotency_key": KEY})
    assert s.cancel_graph_run(1, queued["command_id"]) == {
        "command_id": queued["command_id"], "status": "cancelled"}
    assert s.control(queued["command_id"]) is False  # never ran: no flag
    running = s.run_graph_session(1, {"graph_session_id": SID, "idempotency_key": KEY + "2"})
    s.sync("p1", [{"graph_session_id": SID, "slug": "s"}])
    assert s.control(running["command_id"]) is False
    assert s.cancel_graph_run(1, running["command_id"]) == {
        "command_id": running["command_id"], "status": "running"}
    assert s.runs[1].cancel_flag is True and s.control(running["command_id"]) is True
    assert s.control("no-such-id") is False
    s.complete({"execution_id": running["command_id"], "status": "cancelled", "result": "r"})
    assert s.runs[1].completion == {"result": "r"}  # its routing fields are not kept
    assert s.cancel_graph_run(1, running["command_id"])["status"] == "cancelled"
    assert s.runs[1].cancel_flag is True
    for bad in (None, 7, ""):
        with pytest.raises(ToolError, match=f"^{NOT_FOUND}$"):
            s.cancel_graph_run(1, bad)


def _desk(tmp_path) -> DesktopRelay:
    d = DesktopRelay(str(tmp_path / "outbox.sqlite"))
    d.phase = "work"
    return d


def test_the_work_queue_one_graph_at_a_time(tmp_path):
    d = _desk(tmp_path)
    assert d.next_command() is None and d.round_end() is True  # nothing fetched: idle
    d.phase = "work"
    d.commands["a"] = Command("a", d.session_id, d.slug)
    assert d.round_end() is False  # a fetched command keeps the round going
    assert d.next_command() is d.commands["a"]
    d.commands["a"].state = "stopping"
    assert d.executing() == [d.commands["a"]] and d.next_command() is None


def test_a_finished_graph_posts_an_empty_result_by_default(tmp_path):
    d = _desk(tmp_path)
    c = d.commands["a"] = Command("a", d.session_id, d.slug, state="running")
    assert d.finish(c, "failed")["result"] == ""


def test_the_desktops_timers_in_time_order_then_kind(tmp_path):
    d = _desk(tmp_path)
    c = d.commands["a"] = Command("a", d.session_id, d.slug, state="running", polled_at=30.0)
    d.ticked_at = 0.0
    assert d.timers() == [(POLL_INTERVAL, "round", None),
                          (30.0 + CONTROL_POLL, "control_poll", "a")]
    d.ticked_at = 30.0 + CONTROL_POLL - POLL_INTERVAL  # both due at once: control first
    assert [t[1] for t in d.timers()] == ["control_poll", "round"]
    c.state = "stopping"  # a stop was sent: no more control polls
    assert [t[1] for t in d.timers()] == ["round"]


def test_stringify_length_counts_whole_code_units():
    n = stringify_length({"t": "😀"})
    assert n == len('{"t":""}') + 2 and isinstance(n, int)


def test_the_outbox_stores_each_entry_with_its_sequence_number(tmp_path):
    from osf_check.relay.graph.outbox import Outbox
    box = Outbox(tmp_path / "o.sqlite")
    box.put("a", {"n": 1})
    box.put("b", {"n": 2})
    box.put("a", {"n": 3})  # replaced: it goes to the end
    rows = box.db.execute("SELECT execution_id, seq FROM outbox ORDER BY rowid").fetchall()
    assert sorted(rows, key=lambda r: r[1]) == [("b", 2), ("a", 3)]
    assert box.entries() == [("b", {"n": 2}), ("a", {"n": 3})]
