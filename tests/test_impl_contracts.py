"""The implementation's answers, exactly: every refusal path with its reason and text, every
success with its fields.  Written against the documents where they fix a field, and as a
regression pin of our own wording where they leave it open (a changed text is then a
deliberate change, made here in the same commit).  Mutation testing (issue 12) showed
these paths were run by the fuzzer but their exact answers were not looked at."""

from __future__ import annotations

import pytest

from osf_check.relay.clock import ManualClock
from osf_check.relay.graph.desktop import POLL_INTERVAL, CONTROL_POLL, Command, DesktopRelay
from osf_check.relay.graph.outbox import Outbox
from osf_check.relay.graph.server import NOT_FOUND, GraphServer, ToolError
from osf_check.relay.wire import envelope as env
from osf_check.relay.wire.app import DesktopApp
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.errors import (BUSY_MESSAGE, TIMEOUT_MESSAGE, answer_class, busy, desktop_error,
                               kind_of, relay_error, timed_out)
from osf_check.relay.wire.registration import (Device, RegistrationError, VersionGate, parse_version,
                                     register, show)

DESK = "6f1c2a7e-0000-4000-8000-000000000001"
PHONE = "6f1c2a7e-0000-4000-8000-000000000002"
CMD = "6f1c2a7e-0000-4000-8000-0000000000c1"  # a Graph command id: a UUID, as the server mints
DEVICES = {DESK: Device(DESK, "desktop"), PHONE: Device(PHONE, "mobile"),
           "6f1c2a7e-0000-4000-8000-000000000003": Device("6f1c2a7e-0000-4000-8000-000000000003",
                                                          "mobile", forgotten=True),
           "6f1c2a7e-0000-4000-8000-000000000004": Device("6f1c2a7e-0000-4000-8000-000000000004",
                                                          "mobile", relay_permission=False)}


# registration (004) ------------------------------------------------------------------------
def _refusal(payload, role="desktop", rules=()):
    with pytest.raises(RegistrationError) as e:
        register(payload, role, DEVICES, VersionGate(lambda: list(rules)), 0.0)
    return e.value.reason, str(e.value)


@pytest.mark.parametrize("payload, role, reason, text", [
    ([], "desktop", "invalidRegistration", "the payload is not an object"),
    ({"deviceId": DESK, "relayProtocolVersion": "1.7", "x": 1}, "desktop",
     "invalidRegistration", "unknown field x"),
    ({"deviceId": DESK}, "desktop", "protocolUpdateRequired",
     "Update the app: it does not say which relay protocol it speaks."),
    ({"deviceId": DESK, "relayProtocolVersion": "1.x"}, "desktop",
     "invalidRelayProtocolVersion", "cannot parse '1.x'"),
    ({"deviceId": DESK, "relayProtocolVersion": "1.6"}, "desktop", "protocolUpdateRequired",
     "Update the app: it speaks relay protocol 1.6, and 1.7 is required."),
    ({"deviceId": "nope", "relayProtocolVersion": "1.7"}, "desktop", "invalidRegistration",
     "deviceId is not a UUID"),
    ({"deviceId": "6f1c2a7e-0000-4000-8000-00000000000f", "relayProtocolVersion": "1.7"},
     "desktop", "unknownDevice", "no such device for this account"),
    ({"deviceId": "6f1c2a7e-0000-4000-8000-000000000003", "relayProtocolVersion": "1.7"},
     "mobile", "unknownDevice", "no such device for this account"),
    ({"deviceId": PHONE, "relayProtocolVersion": "1.7"}, "desktop", "forbidden",
     "the device may not open this connection"),
    ({"deviceId": "6f1c2a7e-0000-4000-8000-000000000004", "relayProtocolVersion": "1.7"},
     "mobile", "forbidden", "the device may not open this connection"),
    ({"deviceId": PHONE, "relayProtocolVersion": "1.7", "targetDesktopDeviceId": "desk"},
     "mobile", "invalidRegistration", "targetDesktopDeviceId is not a UUID"),
])
def test_each_registration_refusal_exactly(payload, role, reason, text):
    assert _refusal(payload, role) == (reason, f"{reason}: {text}")


def test_a_registration_keeps_role_target_and_session():
    r = register({"deviceId": PHONE.upper(), "relayProtocolVersion": "1.12",
                  "targetDesktopDeviceId": DESK.upper(), "sessionId": "sess-9"}, "mobile",
                 DEVICES, VersionGate(lambda: ["1.8"]), 0.0)
    assert (r.device, r.role, r.target, r.session_id) == (PHONE, "mobile", DESK, "sess-9")
    # a desktop's target is not checked (only a phone is routed by it)
    r = register({"deviceId": DESK, "relayProtocolVersion": "1.7",
                  "targetDesktopDeviceId": "anything"}, "desktop", DEVICES,
                 VersionGate(lambda: []), 0.0)
    assert (r.role, r.target, r.session_id) == ("desktop", "anything", None)


def test_the_version_gate_reads_the_rules_at_most_every_60_s():
    reads = []
    gate = VersionGate(lambda: reads.append(1) or ["1.9"])
    assert gate.required(0.0) == (1, 9) and gate.required(59.9) == (1, 9) and len(reads) == 1
    assert gate.required(60.0) == (1, 9) and len(reads) == 2
    assert _refusal({"deviceId": DESK, "relayProtocolVersion": "1.8"}, rules=["1.9"]) == (
        "protocolUpdateRequired",
        "protocolUpdateRequired: Update the app: it speaks relay protocol 1.8, and 1.9 is "
        "required.")
    with pytest.raises(RegistrationError, match="relayProtocolPolicyUnavailable: a "
                       "compatibility rule holds the version 'v2'"):
        VersionGate(lambda: ["v2"]).required(0.0)
    assert (parse_version("10.02"), parse_version(" 1.7"), show((3, 14))) == ((10, 2), None,
                                                                               "3.14")


# error answers (004's codes, our texts) ------------------------------------------------------
def test_relay_and_desktop_errors_exactly():
    assert relay_error(-32020, scope="client", limit=64, current=64) == {"error": {
        "code": -32020, "message": "Too many pending requests.",
        "data": {"kind": "limit", "scope": "client", "limit": 64, "current": 64,
                 "retryable": True}}}
    assert relay_error(-32021) == {"error": {"code": -32021, "message":
                                             "A request with this id is already pending.",
                                             "data": {"kind": "duplicate"}}}
    assert desktop_error("conflict") == {"error": {"code": -32009, "message": "conflict",
                                                   "data": {"kind": "conflict",
                                                            "retryable": False}}}
    assert desktop_error("busy", "wait") == {"error": {"code": -32031, "message": "wait",
                                                       "data": {"kind": "busy",
                                                                "retryable": True}}}
    assert desktop_error("not_implemented")["error"]["message"] == "not implemented"
    assert desktop_error("internal", retryable=True, x=1)["error"]["data"] == {
        "kind": "internal", "retryable": True, "x": 1}
    assert busy() == {"error": {"code": -32603, "message": BUSY_MESSAGE}}
    assert timed_out() == {"error": {"code": -32603, "message": TIMEOUT_MESSAGE}}
    assert [kind_of(a) for a in (busy(), timed_out(), {"error": {"code": 1}},
                                 {"error": {"code": -32603, "message": "x"}})] == \
        ["busy", "timed_out", "internal", "internal"]
    assert [answer_class(a) for a in (
        {"result": 1}, desktop_error("validation"), desktop_error("parse_error"),
        desktop_error("database"), {"error": {"code": 7, "retryable": True}},
        {"error": {"code": 7}})] == ["final", "final", "retryable", "ambiguous", "retryable",
                                     "ambiguous"]


def test_errors_are_classified_by_code_as_004_says():
    """004: "Fehler werden nach Code klassifiziert": the final classes by their codes, a
    parse error or a retryable flag retryable, every other code ambiguous, whatever the
    answer's ``data.kind`` says."""
    from osf_check.relay.wire.errors import DESKTOP, FINAL
    for kind in sorted(FINAL):
        assert answer_class({"error": {"code": DESKTOP[kind], "message": "m"}}) == "final", kind
    for kind in ("internal", "database", "foreign_service"):
        assert answer_class({"error": {"code": DESKTOP[kind], "message": "m",
                                       "data": {"kind": "not_found"}}}) == "ambiguous", kind
    assert answer_class({"error": {"code": -32700, "message": "m"}}) == "retryable"
    assert answer_class({"error": {"code": 12345, "message": "m",
                                   "data": {"kind": "conflict"}}}) == "ambiguous"


# the Graph-run relay's tools through tools/call (000) -----------------------------------------
SID = "gs_" + "ab" * 16
RUN, READ = frozenset({"osfoundry:run"}), frozenset({"osfoundry:read"})


def _server() -> GraphServer:
    s = GraphServer()
    s.sync("proj_1", [{"graph_session_id": SID, "name": "g", "slug": "s0", "version": 1}])
    return s


def test_every_tool_through_call_tool():
    s = _server()
    t = s.call_tool(1, "run_graph_session", {"graph_session_id": SID,
                                              "idempotency_key": "key-12345678"}, RUN)
    assert t["status"] == "queued" and set(t) == {"command_id", "status"}
    assert s.call_tool(1, "get_graph_run", {"command_id": t["command_id"]}, READ) == t
    assert s.call_tool(1, "list_graph_sessions", {"project_id": "proj_1"}, READ) == {
        "project_id": "proj_1", "sessions": [{"name": "g", "slug": "s0", "version": 1,
                                              "graph_session_id": SID}]}
    assert s.call_tool(1, "list_graph_sessions", {}, READ) == {"project_id": "",
                                                               "sessions": []}
    with pytest.raises(ToolError, match="^limit must be 1 to 50$"):
        s.call_tool(1, "list_graph_sessions", {"project_id": "proj_1", "limit": 51}, READ)
    assert s.call_tool(1, "cancel_graph_run", {"command_id": t["command_id"]}, RUN) == {
        "command_id": t["command_id"], "status": "cancelled"}
    assert s.runs[0].status == "cancelled"  # cancel, not a read
    for name, args, scopes, text in (
            ("no_such_tool", {}, RUN | READ, "unknown tool 'no_such_tool'"),
            ("get_graph_run", {"command_id": "x"}, RUN,
             "get_graph_run needs the OAuth scope osfoundry:read"),
            ("cancel_graph_run", [], RUN, "arguments must be an object")):
        with pytest.raises(ToolError) as e:
            s.call_tool(1, name, args, scopes)
        assert str(e.value) == text
    with pytest.raises(ToolError) as e:
        s.call_tool(2, "get_graph_run", {"command_id": t["command_id"]}, READ)
    assert str(e.value) == NOT_FOUND


def test_the_tool_list_carries_scopes_and_no_scope_field():
    tools = {t["name"]: t for t in GraphServer.tools_list()}
    assert set(tools) == {"run_graph_session", "get_graph_run", "cancel_graph_run",
                          "list_graph_sessions"}
    for name, t in tools.items():
        assert "scope" not in t
        want = "osfoundry:run" if name in ("run_graph_session", "cancel_graph_run") \
            else "osfoundry:read"
        assert t["securitySchemes"] == [{"type": "oauth2", "scopes": [want]}]


def test_a_completion_is_kept_without_its_routing_fields_and_a_late_one_is_ignored():
    s = _server()
    t = s.run_graph_session(1, {"graph_session_id": SID, "idempotency_key": "key-12345678"})
    [cmd] = s.sync("proj_1", [{"graph_session_id": SID}])
    assert cmd == {"command_id": t["command_id"], "graph_session_id": SID, "slug": "s0",
                   "arguments": {}}
    s.complete({"execution_id": t["command_id"], "status": "completed", "result": "r",
                "total_tokens": 3})
    assert s.get_graph_run(1, t["command_id"]) == {"command_id": t["command_id"],
                                                   "status": "completed", "result": "r",
                                                   "total_tokens": 3}
    s.complete({"execution_id": t["command_id"], "status": "failed", "error": "late"})
    assert s.get_graph_run(1, t["command_id"])["status"] == "completed"


# the graph desktop's outbox and timers ---------------------------------------------------------
def test_the_outbox_keeps_order_replaces_and_removes(tmp_path):
    box = Outbox(tmp_path / "o.sqlite")
    box.put("a", {"n": 1})
    box.put("b", {"n": "日本"})
    box.put("a", {"n": 3})  # a re-written completion goes to the end
    assert box.entries() == [("b", {"n": "日本"}), ("a", {"n": 3})]
    box.remove("b")
    box.remove("zzz")
    assert box.entries() == [("a", {"n": 3})] and "a" in box and "b" not in box
    box.reopen()
    assert box.entries() == [("a", {"n": 3})]
    box.close()
    with pytest.raises(RuntimeError, match="the outbox is closed"):
        box.entries()


def test_the_graph_desktop_reports_its_timers():
    d = DesktopRelay(":memory:", clock=ManualClock())
    assert d.timers() == [(POLL_INTERVAL, "round", None)]
    d.clock.advance(7.0)
    d.tick()
    c = Command(CMD, d.session_id, d.slug)
    d.commands[CMD] = c
    d.phase = "work"
    d.start_or_refuse(c)
    assert d.timers() == [(7.0 + CONTROL_POLL, "control_poll", CMD),
                          (7.0 + POLL_INTERVAL, "round", None)]
    d.clock.advance(3.0)
    assert d.control_poll(c, False) is False
    assert d.timers()[0] == (13.0, "control_poll", CMD)
    p = d.finish(c, "completed", "out", tokens=5, cost=0.5)
    assert p["status"] == "completed" and d.history[CMD]["result"] == "out"
    assert d.timers() == [(27.0, "round", None)]


# the wire desktop's handlers (004) ---------------------------------------------------------------
def test_the_upload_ledger_step_by_step():
    app = DesktopApp(sessions={"s": None})
    up = "files.{}ChatAttachmentUpload{}"
    begin, append = up.format("begin", ""), "files.appendChatAttachmentUploadChunk"
    finish, cancel = up.format("finish", ""), up.format("cancel", "")
    assert app.handle(begin, {"sessionId": "nope", "uploadId": "u"})["error"]["data"]["kind"] \
        == "not_found"
    assert app.handle(begin, {"sessionId": "s", "uploadId": 7})["error"]["message"] == \
        "session not found"
    assert app.handle(begin, {"sessionId": "s", "uploadId": "u"}) == {"result": {"uploadId": "u"}}
    assert app.handle(append, {"uploadId": "nope"}) == desktop_error("not_found", "no such upload")
    assert app.handle(append, {"uploadId": "u", "index": 0, "data": "a"}) == {
        "result": {"uploadId": "u", "chunks": 1}}
    assert app.handle(append, {"uploadId": "u", "index": 0, "data": "a"}) == {
        "result": {"uploadId": "u", "chunks": 1}}  # a second run appends nothing
    assert app.handle(append, {"uploadId": "u", "index": 1, "data": "b"})["result"]["chunks"] == 2
    assert app.uploads["u"]["chunks"] == {0: "a", 1: "b"}
    assert app.handle(finish, {"uploadId": "u"}) == {
        "result": {"uploadId": "u", "state": "finished", "chunks": 2}}
    assert app.handle(finish, {"uploadId": "u"})["result"]["state"] == "finished"  # again
    assert app.handle(cancel, {"uploadId": "u"}) == desktop_error("conflict",
                                                                  "the upload is finished")
    assert app.handle(append, {"uploadId": "u", "index": 2}) == desktop_error(
        "conflict", "the upload is finished")
    app.handle(begin, {"sessionId": "s", "uploadId": "v"})
    assert app.handle(cancel, {"uploadId": "v"}) == {
        "result": {"uploadId": "v", "state": "cancelled", "chunks": 0}}
    assert app.handle(finish, {"uploadId": "v"}) == desktop_error("conflict",
                                                                  "the upload is cancelled")
    assert app.handle("files.readBinary", {}) == desktop_error("not_implemented")


def test_stop_and_send_now_exactly():
    app = DesktopApp(sessions={"s": ("run-1", "th-1", "turn-1"), "idle": None})
    app.handle("run.chatOutboxSubmit", env.outbox_params("s", "op-1"))
    stop = {"sessionId": "s", "queueId": "q-1", "operationId": "op-1",
            "expectedRunId": "run-1", "expectedThreadId": "th-1", "expectedTurnId": "turn-1"}
    assert app.handle("run.chatOutboxStopAndSendNow", stop) == {"result": {
        "stopped": True, "sent": True, "receipt": {"queueId": "q-1", "operationId": "op-1"}}}
    assert app.sessions["s"] is None and app.outbox["s"][0]["sent"] is True
    assert app.handle("run.chatOutboxStopAndSendNow", stop) == {"result": {
        "stopped": False, "sent": False, "receipt": {"queueId": "q-1", "operationId": "op-1"}}}
    assert app.handle("run.chatOutboxStopAndSendNow", {**stop, "sessionId": "idle",
                                                       "queueId": "none"})["result"] == {
        "stopped": False, "sent": False, "receipt": {"queueId": "none", "operationId": "op-1"}}
    assert app.handle("run.chatOutboxStopAndSendNow", {**stop, "sessionId": "gone"}) == \
        desktop_error("not_found", "session not found")
    assert app.messages("s", "op-1") == 1 and app.messages("s", "op-2") == 0


def test_the_codex_profile_switch_answers_and_emits_its_event():
    app = DesktopApp()
    assert app.handle("system.activateCodexAuthProfile", {"profileId": "p-2"}) == {
        "result": {"profiles": [{"profileId": "p-2", "active": True}]}}
    assert app.events == [{"agent": "codex", "profileId": "p-2"}] and app.active_profile == "p-2"


def test_outbox_params_are_004s_example_shape():
    assert env.outbox_params("s", "op")["userText"] == "hello"
    assert env.outbox_params("s", "op", text="hi") == {
        "queueId": "q-1", "operationId": "op", "sessionId": "s", "userText": "hi",
        "promptText": "hi", "attachments": [], "speedMode": "normal", "createdAt": 0,
        "updatedAt": 0, "intent": "enqueue", "sendMode": "queue", "source": "phone"}


def test_the_wire_desktop_lists_its_timers_in_order():
    d = DesktopRouter(":memory:", "user-1")
    f = env.request("r-1", "system.activateCodexAuthProfile", {"sessionId": "s"}, key="key-1234")
    f["payload"].update(clientId="c", userId="user-1")
    call = d.receive(f, 1.0)
    assert d.timers() == [(9.0, "slot_wait", call.cid)]
    d.start(call, 2.0)
    # a live handler: its lease is not listed (it outlives the handler, B10)
    assert d.timers() == [(47.0, "dispatch", call.cid)]
    d.fire("dispatch", call.cid, 47.0)
    assert d.timers() == [(52.0, "enqueue", call.cid), (302.0, "lease", call.scope)]
    assert d.tick(51.0) == [] and d.tick(52.0) == [("enqueue", call.cid)]
    assert d.tick(302.0) == [("lease", call.scope)]


# the phone (004) ---------------------------------------------------------------------------------
def test_the_phones_frames_waits_and_retries_exactly():
    from osf_check.relay.wire.phone import Phone
    p = Phone("phone-1", "android")
    assert p.request("r-1", "system.ping", {}, None) == {"type": "rpc.request", "payload": {
        "id": "r-1", "method": "system.ping", "params": {}, "traceparent": env.TRACE}}
    assert p.attempts == {}
    f = p.request("r-2", "run.chatOutboxSubmit", {"x": 1}, "op-9")
    assert f["payload"]["idempotencyKey"] == "op-9" and p.attempts == {"op-9": 1}
    p.request("r-3", "run.chatOutboxSubmit", {"x": 1}, "op-9")
    assert p.attempts == {"op-9": 2} and p.key("op-9", attempt=5) == "op-9"
    assert [Phone("i").waits(m) for m in ("run.chatOutboxSubmit", "run.chatLoad",
                                          "run.chatLoadThread", "run.chatLoadPageBefore",
                                          "system.ping")] == [20.0, 115.0, 115.0, 60.0, 60.0]
    assert p.waits("run.chatOutboxSubmit") == 60.0
    for code in (-32010, -32011, -32012, -32020, -32023, -32024, -32028):
        assert Phone.retries_after(relay_error(code)), code
    assert Phone.retries_after(relay_error(-32021))
    for code in (-32022, -32026, -32027, -32601, -32600, -32700):
        assert not Phone.retries_after(relay_error(code)), code
    assert Phone.retries_after(busy()) and Phone.retries_after(timed_out())
    assert Phone.retries_after(desktop_error("unavailable"))
    assert Phone.retries_after({"error": {"code": 1, "data": {"kind": "x", "retryable": True}}})
    assert not Phone.retries_after(desktop_error("conflict"))
    assert not Phone.retries_after({"result": {}})
    assert not Phone.retries_after({"error": {"code": 1}})
    assert not Phone.retries_after(desktop_error("internal"))
    assert Phone.retries_after(desktop_error("internal", retryable=True))


def test_the_phone_reads_an_answer_by_its_code_not_its_kind():
    """004 classifies errors by code: the relay's duplicate without a kind is still one,
    and a kind that names a retryable class on a final code is not retried."""
    from osf_check.relay.wire.phone import Phone
    assert Phone.retries_after({"error": {"code": -32021, "message": "pending"}})
    assert not Phone.retries_after({"error": {"code": -32009, "message": "x",
                                              "data": {"kind": "duplicate"}}})


def _fwd(rid, key="key-1234", user="user-1"):
    f = env.request(rid, "system.activateCodexAuthProfile", {"sessionId": "s"}, key=key)
    f["payload"].update(clientId="c", userId=user)
    return f


def test_the_wire_desktops_timers_fire_only_when_due_and_only_their_own():
    from osf_check.relay.wire.idempotency import LEASE, RETENTION
    d = DesktopRouter(":memory:", "user-1", light=2)
    first = d.receive(_fwd("a"), 0.0)
    d.start(first, 0.0)
    assert not d.fire("dispatch", first.cid, 44.9)  # not yet due
    assert not d.fire("slot_wait", first.cid, 100.0)  # not its stage
    assert not d.fire("dispatch", 999, 100.0)  # no such call
    assert not d.fire("lease", first.scope, LEASE + 1)  # its handler is alive
    join = d.receive(_fwd("b"), 1.0)
    assert d.start(join, 1.0) == "join"
    assert not d.can_resume(join)  # the first copy still runs
    d.finish(first, {"result": {"ok": 1}}, 2.0)
    assert d.can_resume(join) and not d.can_resume(first)
    assert d.resume(join, 2.0) and join.answer == {"result": {"ok": 1}}
    assert d.memory.get(first.scope).waiters == 0
    assert not d.resume(join, 2.0)  # once
    stored = d.claims.row(first.scope).stored_at
    assert d.timers()[-1] == (stored + RETENTION, "retention", first.scope)
    assert not d.fire("retention", first.scope, stored + RETENTION - 1)
    assert d.claims.row(first.scope) is not None
    assert d.fire("retention", first.scope, stored + RETENTION)
    assert d.claims.row(first.scope) is None  # the key is forgotten
    assert not d.fire("retention", first.scope, stored + RETENTION)


def test_a_joined_copys_own_limit_leaves_the_claim_to_its_owner():
    d = DesktopRouter(":memory:", "user-1", light=2)
    first, join = d.receive(_fwd("a"), 0.0), d.receive(_fwd("b"), 30.0)
    d.start(first, 0.0), d.start(join, 30.0)
    assert d.memory.get(first.scope).waiters == 1
    assert not d.fire("joined", join.cid, 74.9)
    d.finish(first, {"result": {"ok": 1}}, 40.0)  # the owner answers; the joined copy ...
    assert d.fire("joined", join.cid, 75.0)  # ... not woken in time gives up at 30 + 45
    assert join.answer == timed_out() and d.memory.get(first.scope).waiters == 0
    assert d.memory.state(first.scope) == "done"  # the owner's answer stays for replays


def test_the_claims_file_survives_a_reopen_and_a_restart():
    d = DesktopRouter(":memory:", "user-1")
    c = d.receive(_fwd("a"), 0.0)
    d.start(c, 0.0)
    d.finish(c, {"result": {"ok": 1}}, 1.0)
    d.reopen_claims()
    assert d.claims.row(c.scope).answer == {"result": {"ok": 1}}
    d2 = d.restarted()
    assert d2.calls == {} and d2.memory.claims == {}
    assert d2.claims.row(c.scope).answer == {"result": {"ok": 1}}
    again = d2.receive(_fwd("b"), 2.0)
    assert d2.start(again, 2.0) == "answer" and again.answer == {"result": {"ok": 1}}


def test_the_clock_moves_forward_only(tmp_path):
    c = ManualClock(5)
    assert c.now() == 5.0 and c.advance(0) == 5.0 and c.advance(0.5) == 5.5
    with pytest.raises(ValueError, match="^time does not go backwards$"):
        c.advance(-0.1)
    assert c.now() == 5.5


def test_the_outbox_file_is_written_ahead(tmp_path):
    box = Outbox(tmp_path / "o.sqlite")
    assert box.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert Outbox(":memory:").db.execute("PRAGMA journal_mode").fetchone()[0] == "memory"


# the envelope's refusals (004: -32600 with the reason), exactly -------------------------------
@pytest.mark.parametrize("frame, reason", [
    ("text", "not an rpc.request frame"),
    ({"type": "rpc.response"}, "not an rpc.request frame"),
    ({"type": "rpc.request", "payload": {}, "z": 1, "a": 2}, "unknown envelope field: a"),
    ({"type": "rpc.request", "payload": {}, "zz": 1}, "unknown envelope field: zz"),
    ({"type": "rpc.request", "payload": []}, "rpc.request without a payload object"),
    ({"type": "rpc.request", "payload": {"id": "r", "b": 1, "a": 1}},
     "unknown field in rpc.request: a"),
    ({"type": "rpc.request", "payload": {"id": " "}},
     "request id missing or empty"),
    ({"type": "rpc.request", "payload": {"id": "r"}}, "method missing"),
    ({"type": "rpc.request", "payload": {"id": "r", "method": "m", "params": []}},
     "params must be an object"),
    ({"type": "rpc.request", "payload": {"id": "r", "method": "m"}},
     "missing or malformed traceparent"),
    ({"type": "rpc.request", "payload": {"id": "r", "method": "m", "traceparent": env.TRACE,
                                         "tracestate": 5}}, "malformed tracestate"),
    ({"type": "rpc.request", "payload": {"id": "r", "method": "m", "traceparent": env.TRACE,
                                         "idempotencyKey": 5}}, "idempotencyKey must be a string"),
])
def test_each_malformed_frame_is_refused_with_its_reason(frame, reason):
    with pytest.raises(env.FrameError) as e:
        env.validate_request(frame)
    assert str(e.value) == reason


def test_a_valid_frame_comes_back_trimmed_with_its_params():
    p = env.validate_request({"type": "rpc.request", "payload": {
        "id": " r-1 ", "method": "m", "traceparent": env.TRACE, "tracestate": "a=b"}})
    assert p == {"id": "r-1", "method": "m", "traceparent": env.TRACE, "tracestate": "a=b",
                 "params": {}}
    assert env.validate_request(env.request("r", "m", {"a": 1}))["params"] == {"a": 1}


def test_the_desktops_params_rules_exactly():
    sub, stop = "run.chatOutboxSubmit", "run.chatOutboxStopAndSendNow"
    good = env.outbox_params("s", "op")
    assert env.params_problem(sub, good, "k") is None
    assert env.params_problem(sub, good, "") == env.params_problem(sub, good, "é" * 129) == \
        "a mutation needs a non-empty idempotency key of at most 256 bytes"
    assert env.params_problem(sub, good, "é" * 128) is None  # 256 bytes
    assert env.params_problem("system.ping", {}, None) is None  # not a mutation
    assert env.params_problem("no.such", {}, None) is None
    less = {k: v for k, v in good.items() if k not in ("queueId", "userText")}
    assert env.params_problem(sub, less, "k") == "run.chatOutboxSubmit: missing queueId"
    assert env.params_problem(sub, {**good, "zz": 1, "aa": 2}, "k") == \
        "run.chatOutboxSubmit: unknown aa"
    assert env.params_problem(sub, {**good, "threadId": "t"}, "k") is None  # optional
    fields = {"sessionId": "s", "queueId": "q", "operationId": "o", "expectedRunId": "r",
              "expectedThreadId": "t", "expectedTurnId": "u"}
    assert env.params_problem(stop, fields, "k") is None
    assert env.params_problem(stop, {**fields, "x": 1}, "k") == (
        "run.chatOutboxStopAndSendNow takes exactly expectedRunId, expectedThreadId, "
        "expectedTurnId, operationId, queueId, sessionId")
    assert env.params_problem("system.ping", {"session_id": 1}, None) == \
        "snake_case param: session_id"
