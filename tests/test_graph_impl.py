"""The Graph-run relay implementation alone: its tools, payload rules, projects,
sharing, and crashes between steps (000).  Fuzzing it against the model is
test_fuzz_graph.py."""

from __future__ import annotations

import json
import uuid

import pytest

from fuzzcheck import run_then_kill
from osf_check.fuzz.oracles import bounded, utf16_length
from osf_check.relay.graph.desktop import DesktopRelay
from osf_check.relay.graph.payload import (ERROR_LIMIT, RESULT_LIMIT, completion_payload,
                                 stringify_length, whole)
from osf_check.relay.graph.server import NOT_FOUND, GraphServer, ToolError

SID = "gs_" + "ab" * 16


def shared() -> dict:
    """The server's sessions after a sync uploaded SID (a start needs one)."""
    return {SID: {"slug": "s", "project_id": "p-1"}}
CID = "6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"  # a command id as the server mints them


def _sized(units: int, unit: str) -> str:
    """A result whose completion's JSON.stringify length is ``units`` (UTF-16 code units),
    or as close below as ``unit`` allows."""
    base = whole("e", "completed", "", 1, 0.5)
    overhead = utf16_length(json.dumps(base, ensure_ascii=False, separators=(",", ":")))
    return unit * ((units - overhead) // utf16_length(unit))


@pytest.mark.parametrize("unit", ["a", "日", "😀", "𝄞"])
def test_a_result_at_the_limit_is_posted_whole_and_one_more_unit_is_not(unit):
    text = _sized(RESULT_LIMIT, unit)
    full = whole("e", "completed", text, 1, 0.5)
    assert RESULT_LIMIT - utf16_length(unit) < stringify_length(full) <= RESULT_LIMIT
    p = completion_payload("e", "completed", text, 1, 0.5)
    assert p == full and bounded(p, full) is None
    over = text + unit
    q = completion_payload("e", "completed", over, 1, 0.5)
    assert q == {"execution_id": "e", "status": "completed", "result_truncated": True}
    assert bounded(q, whole("e", "completed", over, 1, 0.5)) is None


def test_errors_are_cut_to_2000_characters():
    p = completion_payload("e", "failed", None, 0, 0, error="é" * 5000)
    assert len(p["error"]) == ERROR_LIMIT


@pytest.mark.parametrize("args, needle", [
    ({"graph_session_id": SID, "idempotency_key": "short"}, "8 to 128"),
    ({"graph_session_id": SID, "idempotency_key": "k" * 129}, "8 to 128"),
    ({"graph_session_id": SID}, "required"),
    ({"graph_session_id": "gs_123", "idempotency_key": "k" * 8}, "32 hex"),
    ({"graph_session_id": SID, "idempotency_key": "k" * 8, "user_id": 1}, "unknown field"),
    ({"graph_session_id": SID, "idempotency_key": "k" * 8, "arguments": [1]}, "object"),
])
def test_run_graph_session_validates_its_input(args, needle):
    with pytest.raises(ToolError, match=needle):
        GraphServer().run_graph_session(0, args)


def test_retry_with_the_same_key_gets_the_first_ticket_and_ids_are_uuids():
    import uuid
    s = GraphServer(sessions=shared())
    a = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "k" * 8})
    b = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "k" * 8})
    assert a == b and uuid.UUID(a["command_id"]).version == 4 and len(s.runs) == 1
    assert set(a) == {"command_id", "status"}  # the tool's description names the reader
    c = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "other-key"})
    assert c["command_id"] != a["command_id"]  # a fresh key is a second run, by design


def test_unknown_empty_and_foreign_ids_answer_the_same():
    s = GraphServer(sessions=shared())
    cid = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "k" * 8})[
        "command_id"]
    answers = set()
    for agent, x in ((1, cid), (0, ""), (0, "00000000-0000-4000-8000-000000000000"), (0, None)):
        for call in (s.get_graph_run, s.cancel_graph_run):
            with pytest.raises(ToolError) as e:
                call(agent, x)
            answers.add(str(e.value))
    assert answers == {NOT_FOUND}
    assert s.runs[0].status == "queued"  # the foreign cancel changed nothing


def test_tools_carry_000s_contract_scopes_and_annotations():
    from osf_check.relay.graph.server import TOOLS
    tools = {t["name"]: t for t in GraphServer.tools_list()}
    assert set(tools) == {"run_graph_session", "get_graph_run", "cancel_graph_run",
                          "list_graph_sessions"}
    assert "Retrieve progress and result with get_graph_run" in \
        tools["run_graph_session"]["description"]
    assert tools["run_graph_session"]["annotations"] == {"readOnlyHint": False,
                                                         "destructiveHint": True}
    assert tools["get_graph_run"]["annotations"]["readOnlyHint"] is True
    scopes = {n: t["securitySchemes"][0]["scopes"] for n, t in tools.items()}
    assert scopes == {"run_graph_session": ["osfoundry:run"], "cancel_graph_run": ["osfoundry:run"],
                      "get_graph_run": ["osfoundry:read"], "list_graph_sessions": ["osfoundry:read"]}
    assert TOOLS["run_graph_session"]["inputSchema"]["additionalProperties"] is False


def test_a_call_without_the_tools_scope_is_refused_and_changes_nothing():
    s = GraphServer(sessions=shared())
    args = {"graph_session_id": SID, "idempotency_key": "k" * 8}
    with pytest.raises(ToolError, match="osfoundry:run"):
        s.call_tool(0, "run_graph_session", args, {"osfoundry:read"})
    assert not s.runs
    cid = s.call_tool(0, "run_graph_session", args, {"osfoundry:run"})["command_id"]
    with pytest.raises(ToolError, match="osfoundry:read"):
        s.call_tool(0, "get_graph_run", {"command_id": cid}, {"osfoundry:run"})
    assert s.call_tool(0, "get_graph_run", {"command_id": cid}, {"osfoundry:read"})["status"] == \
        "queued"
    with pytest.raises(ToolError, match="osfoundry:run"):
        s.call_tool(0, "cancel_graph_run", {"command_id": cid}, {"osfoundry:read"})
    assert s.runs[0].status == "queued"


def test_projects_are_kept_apart_by_sync_and_list():
    s = GraphServer()
    other = "gs_" + "cd" * 16
    assert s.list_graph_sessions("p1") == {"project_id": "p1", "sessions": []}  # the default
    s.sync("p1", [{"graph_session_id": SID, "name": "a", "description": "d", "slug": "x",
                   "version": 1, "status": "ready"}])
    s.sync("p2", [{"graph_session_id": other, "name": "b", "description": "e", "slug": "y",
                   "version": 1, "status": "ready"}])
    assert [x["graph_session_id"] for x in s.list_graph_sessions("p1")["sessions"]] == [SID]
    assert [x["graph_session_id"] for x in s.list_graph_sessions("p2")["sessions"]] == [other]
    a = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "k" * 8})
    b = s.run_graph_session(0, {"graph_session_id": other, "idempotency_key": "j" * 8})
    assert [r.project_id for r in s.runs] == ["p1", "p2"]  # filed under their projects
    assert [c["command_id"] for c in s.sync("p2", [])] == [b["command_id"]]
    assert s.list_graph_sessions("p2")["sessions"] == []  # p2's last sync uploaded nothing
    assert [x["graph_session_id"] for x in s.list_graph_sessions("p1")["sessions"]] == [SID]
    assert [c["command_id"] for c in s.sync("p1", [])] == [a["command_id"]]


def test_the_desktop_syncs_each_enabled_project_with_its_own_sessions(tmp_path):
    other = "gs_" + "cd" * 16
    d = DesktopRelay(str(tmp_path / "o.sqlite"), projects={"p1": SID, "p2": other})
    assert [(r["project_id"], [x["graph_session_id"] for x in r["sessions"]])
            for r in d.sync_requests()] == [("p1", [SID]), ("p2", [other])]
    d.enabled["p1"] = False
    assert [r["project_id"] for r in d.sync_requests()] == ["p2"]


@pytest.mark.parametrize("bad", ["cmd-1", "", "0" * 32, "{%s}" % CID, CID + "0",
                                 "urn:uuid:" + CID, CID.replace("-", "_")])
def test_the_desktops_project_binding_refuses_a_command_id_that_is_not_a_uuid(tmp_path, bad):
    # 000: ConnectedGraphProjectBinding refuses any other id before it writes the
    # channel-project row: nothing runs, nothing is filed, nothing is posted
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.tick()
    d.sync_reply([{"command_id": bad, "graph_session_id": SID, "slug": d.slug},
                  {"command_id": CID.upper(), "graph_session_id": SID, "slug": d.slug}])
    c = d.next_command()
    assert d.start_or_refuse(c) is None
    assert (c.state, c.outcome) == ("done", "refused") and d.executing() == []
    assert d.bindings == {} and d.outbox.entries() == [] and bad not in d.history
    d.sync_reply([{"command_id": bad, "graph_session_id": SID, "slug": d.slug}])
    assert d.commands[bad] is c  # sent again by the server: still refused, never run
    up = d.next_command()  # a UUID in capitals is a UUID
    assert d.start_or_refuse(up) is None and up.state == "running"
    assert d.bindings == {"graph:external:" + CID.upper(): "proj_1"}


def test_the_server_mints_uuids_and_files_the_run_under_its_sessions_project():
    s = GraphServer(seed=3)
    s.sync("p2", [{"graph_session_id": SID, "slug": "s0"}])
    t = s.run_graph_session(1, {"graph_session_id": SID, "idempotency_key": "key-12345"})
    assert str(uuid.UUID(t["command_id"])) == t["command_id"] and s.runs[0].project_id == "p2"


def test_a_sharing_change_starts_a_round_at_once_unless_busy(tmp_path):
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.sharing_changed()
    assert d.phase == "sync"
    assert d.sharing_changed() == [] and d.phase == "sync"  # busy: skipped


def test_a_command_keeps_the_arguments_its_sync_reply_carried(tmp_path):
    # the Graph runs with what the agent passed (000's run_graph_session arguments); a
    # reply without the field is a command without arguments
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.tick()  # a reply answers a round's sync
    d.sync_reply([{"command_id": "c1", "graph_session_id": SID, "slug": d.slug,
                   "arguments": {"a": ["日本語", 1]}},
                  {"command_id": "c2", "graph_session_id": SID, "slug": d.slug}])
    assert [(c.command_id, c.arguments) for c in d.commands.values()] == [
        ("c1", {"a": ["日本語", 1]}), ("c2", {})]


def test_reopening_the_database_loses_no_completion(tmp_path):
    path = str(tmp_path / "outbox.sqlite")
    d = DesktopRelay(path, session_id=SID)
    d.tick()
    d.sync_reply([{"command_id": CID, "graph_session_id": SID, "slug": d.slug}])
    c = d.next_command()
    assert d.start_or_refuse(c) is None
    d.finish(c, "completed", "日本語の結果")
    d.outbox.close()  # the process dies before the POST is acknowledged
    d2 = DesktopRelay(path, session_id=SID)
    resent = d2.tick()
    assert [p["execution_id"] for p in resent] == [CID]
    assert resent[0]["result"] == "日本語の結果"


CHILD = r"""
import sys, os
from osf_check.relay.graph.desktop import DesktopRelay
d = DesktopRelay(sys.argv[1], session_id="gs_" + "ab" * 16)
d.tick()
d.sync_reply([{"command_id": "%s", "graph_session_id": d.session_id, "slug": d.slug}])
c = d.next_command(); d.start_or_refuse(c); d.finish(c, "failed", "x", error="boom")
print("written", flush=True)
import time; time.sleep(60)
""" % CID


def test_a_killed_process_loses_no_completion(tmp_path):
    path = str(tmp_path / "outbox.sqlite")
    run_then_kill(CHILD, path)
    d = DesktopRelay(path, session_id=SID)
    assert [(e, x["status"]) for e, x in d.outbox.entries()] == [(CID, "failed")]


def test_the_full_record_stays_in_the_desktops_history(tmp_path):
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.commands["c1"] = c = __import__("osf_check.relay.graph.desktop", fromlist=["Command"]).Command(
        "c1", SID, d.slug, state="running")
    big = "x" * (RESULT_LIMIT + 1)
    posted = d.finish(c, "completed", big, 7, 0.5)
    assert posted.get("result_truncated") is True and "result" not in posted
    assert d.history["c1"]["result"] == big and d.history["c1"]["total_tokens"] == 7


# the desktop's round, step by step, with its exact outputs (000) ----------------------------
def test_the_desktops_sync_uploads_each_enabled_projects_sessions_exactly(tmp_path):
    d = DesktopRelay(str(tmp_path / "o.sqlite"), projects={"p1": SID, "p2": "gs_" + "cd" * 16},
                     enabled={"p2": False})
    assert d.sync_requests() == [{"project_id": "p1", "sessions": [{
        "graph_session_id": SID, "name": "graph", "description": "a shared Graph",
        "slug": "s0", "version": 1, "status": "ready"}], "round": 0}]
    d.shared = False
    assert d.sync_requests() == [{"project_id": "p1", "sessions": [], "round": 0}]


def test_the_desktops_round_from_tick_to_round_end(tmp_path):
    from osf_check.relay.graph.desktop import NOT_SHARED, Command
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    assert d.tick() == [] and d.phase == "sync" and d.busy
    assert d.round_end() is False  # not in the work phase
    d.sync_failed()
    assert d.phase == "idle" and not d.busy
    d.online = False
    assert d.tick() == [] and d.phase == "idle"  # offline: no round
    d.online = True
    d.tick()
    d.sync_reply([{"command_id": CID, "graph_session_id": SID, "slug": "s0"},
                  {"command_id": "c2", "graph_session_id": SID, "slug": "old"}])
    assert d.phase == "work" and d.commands[CID] == Command(CID, SID, "s0")
    c1 = d.next_command()
    assert c1.command_id == CID and d.start_or_refuse(c1) is None
    assert (c1.state, c1.outcome) == ("running", None) and d.executing() == [c1]
    assert d.next_command() is None and d.round_end() is False  # one Graph at a time
    assert d.control_poll(c1, False) is False and c1.state == "running"
    assert d.control_poll(c1, True) is True
    assert (c1.state, c1.outcome, c1.stop_sent) == ("stopping", "cancelled", 1)
    assert d.control_poll(c1, True) is False and c1.stop_sent == 1  # the stop is sent once
    p = d.finish(c1, "completed", "late")  # the Graph ended after the stop
    assert p == {"execution_id": CID, "status": "cancelled", "result": "late",
                 "total_tokens": 0, "reported_cost": 0.0}
    assert (c1.state, c1.outcome) == ("done", "cancelled") and d.history[CID] == p
    c2 = d.next_command()
    assert c2.command_id == "c2"
    refused = d.start_or_refuse(c2)  # the slug changed: closed as cancelled, never run
    assert refused == {"execution_id": "c2", "status": "cancelled", "result": None,
                       "total_tokens": 0, "reported_cost": 0.0, "error": NOT_SHARED}
    assert (c2.state, c2.outcome) == ("done", "cancelled") and d.history["c2"] == refused
    assert [e for e, _ in d.outbox.entries()] == [CID, "c2"]
    assert d.round_end() is True and d.phase == "idle"
    assert [p["execution_id"] for p in d.tick()] == [CID, "c2"]  # re-sent first
    d.acked(CID)
    assert [e for e, _ in d.outbox.entries()] == ["c2"]


def test_consent_needs_the_project_enabled_the_session_shared_and_the_same_slug(tmp_path):
    from osf_check.relay.graph.desktop import Command
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    c = Command("c", SID, "s0")
    assert d.consent(c)
    assert not d.consent(Command("c", "gs_" + "ee" * 16, "s0"))  # no project shares it
    d.enabled["proj_1"] = False
    assert not d.consent(c)
    d.enabled["proj_1"], d.shared = True, False
    assert not d.consent(c)
    d.shared, d.slug = True, "s1"
    assert not d.consent(c)


def test_a_payloads_error_is_cut_and_an_oversized_result_is_left_out():
    assert completion_payload("e", "failed", "r", 1, 0.5, "x" * 2_001)["error"] == "x" * ERROR_LIMIT
    assert "error" not in completion_payload("e", "completed", "r", 1, 0.5)
    assert stringify_length({"a": "😀"}) == 10 and stringify_length([1, 2]) == 5
    big = completion_payload("e", "completed", "x" * RESULT_LIMIT, 1, 0.5)
    assert big == {"execution_id": "e", "status": "completed", "result_truncated": True}


def test_a_start_for_a_session_no_sync_uploaded_is_refused_not_queued_forever():
    """000: the desktop finds a run in its project's sync reply; a session no sync uploaded
    is in no connected project, so the start is refused and nothing is queued."""
    from osf_check.relay.graph.server import NOT_SHARED
    s = GraphServer()
    args = {"graph_session_id": SID, "idempotency_key": "k" * 8}
    with pytest.raises(ToolError) as e:
        s.run_graph_session(0, args)
    assert str(e.value) == NOT_SHARED and not s.runs
    s.sync("p-1", [{"graph_session_id": SID, "slug": "s"}])
    cid = s.run_graph_session(0, args)["command_id"]
    assert [c["command_id"] for c in s.sync("p-1", [{"graph_session_id": SID, "slug": "s"}])] \
        == [cid]


def test_a_retry_keeps_its_ticket_after_the_session_was_unshared():
    s = GraphServer()
    s.sync("p-1", [{"graph_session_id": SID, "slug": "s"}])
    args = {"graph_session_id": SID, "idempotency_key": "k" * 8}
    first = s.run_graph_session(0, args)
    s.sync("p-1", [])  # unshared: the sync leaves it out
    assert s.run_graph_session(0, args)["command_id"] == first["command_id"]
    with pytest.raises(ToolError):
        s.run_graph_session(0, {**args, "idempotency_key": "other-key"})


def test_a_sync_reply_to_a_call_the_desktop_gave_up_on_is_ignored(tmp_path):
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    cmd = {"command_id": str(uuid.uuid4()), "graph_session_id": SID, "slug": d.slug}
    d.tick()
    first = d.sync_requests()[0]["round"]
    d.sync_failed()  # the reply was lost: the call failed, the round is over
    d.sync_reply([cmd], round=first)
    assert (d.phase, d.commands) == ("idle", {})
    d.tick()
    d.sync_reply([cmd], round=first)  # the next round's sync is in flight
    assert (d.phase, d.commands) == ("sync", {})
    d.sync_reply([cmd], round=d.sync_requests()[0]["round"])
    assert d.phase == "work" and list(d.commands) == [cmd["command_id"]]


def test_the_agent_keeps_the_newest_it_learnt_of_each_run():
    from osf_check.relay.graph.agent import AgentRuns
    view = AgentRuns()
    done = {"command_id": "a", "status": "completed", "result": "r", "total_tokens": 1}
    view.read({"command_id": "a", "status": "running"})
    view.cancelled({"command_id": "a", "status": "completed"})  # a terminal run: no completion
    view.read(done)  # the completion still comes
    view.read({"command_id": "a", "status": "running"})  # late
    view.cancelled({"command_id": "a", "status": "completed"})  # late, without the completion
    view.read({"command_id": "b", "status": "queued"})
    assert view.known == {"a": done, "b": {"command_id": "b", "status": "queued"}}
