"""Every frame the wire implementation sends, compared whole: the relay's refusals, its
forwarded request and delivered response, the desktop's answer frames, and the state
each step leaves (a pending entry, a claim row, a memory claim).

Mutation testing (issue 12) showed the other tests looked at one field of a frame
(its code, its kind) and let a renamed key, a lost ``traceparent`` or a changed text
through.  Where 004 fixes a field these are the document's; where it leaves the text
open they are a regression pin of our wording (change them here, on purpose)."""

from __future__ import annotations

import json

import pytest

from osf_check.relay.wire import envelope as env
from osf_check.relay.wire import limits
from osf_check.relay.wire.app import DesktopApp
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.errors import answer_class, desktop_error, kind_of, relay_error
from osf_check.relay.wire.idempotency import (AMBIGUOUS, BUSY, LEASE, RETENTION, DurableClaims,
                                    MemoryClaims, Scope)
from osf_check.relay.wire.ratelimit import TokenBucket
from osf_check.relay.wire.registration import Device, VersionGate
from osf_check.relay.wire.relay_router import (KEEP_PENDING, Client, Entry, RelayRouter, ToDesktop,
                                     ToPhone)

USER, DESK = "user-1", "desk-1"
PHONE = Client(USER, "phone-1", DESK)
TRACE = env.TRACE


def req(rid="r-1", method="system.ping", params=None, key=None):
    return env.request(rid, method, {} if params is None else params, key=key)


def refusal(rid, code, client=PHONE, **data):
    """The whole frame of a relay refusal."""
    return [ToPhone(client.client_id, {"type": "rpc.response", "payload": {
        "id": rid, **relay_error(code, **data), "isFinal": True}})]


def online(**kw) -> RelayRouter:
    r = RelayRouter(**kw)
    r.connect_desktop(USER, DESK)
    return r


# the relay: each refusal, whole --------------------------------------------------------------
@pytest.mark.parametrize("frame, why", [
    ("not a frame", "not an rpc.request frame"),
    ({"type": "rpc.request", "payload": [1]}, "rpc.request without a payload object"),
    ({"type": "rpc.request", "payload": {"id": 7}}, "request id missing or empty"),
])
def test_a_frame_that_is_not_one_is_refused_without_an_id(frame, why):
    assert online().on_request(PHONE, frame, 0.0) == refusal(None, -32600, reason=why)


def test_an_unknown_envelope_field_is_named():
    frame = {**req(), "extra": 1}
    assert online().on_request(PHONE, frame, 0.0) == refusal(
        "r-1", -32600, reason="unknown envelope field: extra")


def test_each_admission_refusal_whole():
    r = online()
    assert r.on_request(PHONE, req(method="no.such"), 0) == refusal("r-1", -32601)
    keyed = Client(USER, "phone-1", DESK, api_key_scopes=("files",))
    assert r.on_request(keyed, req(), 0) == refusal("r-1", -32027, keyed,
                                                    requiredScopes=["rpc"])
    allowed = Client(USER, "phone-1", DESK, api_key_scopes=("rpc",))
    assert r.on_request(allowed, req("ok"), 0) == []
    assert r.on_request(PHONE, req(method="system.activateCodexAuthProfile"), 0) == refusal(
        "r-1", -32026, reason="protocolUpdateRequired")
    assert r.on_request(PHONE, req(method="session.syncHistoryState"), 0) == refusal(
        "r-1", -32600, reason="malformed session.syncHistoryState params")
    r.switching = True
    assert r.on_request(PHONE, req(), 0) == refusal("r-1", -32024)
    r.switching = False
    r.draining = True
    assert r.on_request(PHONE, req(), 0) == refusal("r-1", -32010)
    r.draining = False
    assert r.on_request(PHONE, req("ok"), 0) == refusal("ok", -32021)
    assert r.on_request(PHONE, req("ok", "system.getReplyStyle"), 0) == refusal("ok", -32022)


PHONE_ID, DESK_ID = "6f1c2a7e-0000-4000-8000-000000000002", "6f1c2a7e-0000-4000-8000-000000000001"


def test_a_stale_registration_whole():
    r = online()
    devices = {PHONE_ID: Device(PHONE_ID, "mobile")}
    reg = {"deviceId": PHONE_ID, "relayProtocolVersion": "1.7"}
    first = r.register(USER, reg, "mobile", devices, VersionGate(lambda: []), 0.0)
    assert first == Client(USER, PHONE_ID, "", registration=0)  # no target: no desktop
    second = r.register(USER, {**reg, "targetDesktopDeviceId": DESK_ID}, "mobile", devices,
                        VersionGate(lambda: []), 0.0)
    assert second == Client(USER, PHONE_ID, DESK_ID, registration=1)
    r.connect_desktop(USER, second.desktop)
    stale = Client(USER, second.device, second.desktop, registration=0)
    assert r.on_request(stale, req(), 0) == refusal("r-1", -32024, stale,
                                                    reason="staleRegistration")
    assert r.on_request(second, req(), 0) == []


def test_a_new_desktop_is_offline_until_it_connects_and_again_after_it_leaves():
    r = RelayRouter()
    assert r.on_request(PHONE, req(), 0) == refusal("r-1", -32010)
    assert r.disconnect_desktop(USER, DESK) == []  # never connected: nothing to answer
    r.connect_desktop(USER, DESK)
    assert r.disconnect_desktop(USER, DESK) == []
    assert r.disconnect_desktop(USER, DESK) == []
    assert r.on_request(PHONE, req(), 0) == refusal("r-1", -32010)


def test_the_first_entry_fits_a_limit_of_one_and_the_second_is_refused_with_the_count():
    r = online(limits={"process": 1, "user": 1, "desktop": 1, "client": 1})
    assert r.on_request(PHONE, req("a"), 0) == []
    assert r.on_request(PHONE, req("b"), 0) == refusal("b", -32020, scope="process", limit=1,
                                                       current=1)
    assert r.counts == {("process", ()): 1, ("user", (USER,)): 1,
                        ("desktop", (USER, DESK)): 1, ("client", (USER, PHONE.client_id)): 1}


def test_an_admitted_entry_whole():
    r = online()
    r.connect_desktop(USER, DESK)  # generation 1
    assert r.on_request(PHONE, req(" r-1 ", "system.activateCodexAuthProfile", {"n": 1},
                                   key="k-1"), 10.0) == []
    e = r.pending[(USER, DESK, "r-1")]
    payload = {"id": "r-1", "method": "system.activateCodexAuthProfile", "params": {"n": 1},
               "traceparent": TRACE, "idempotencyKey": "k-1",
               "clientId": PHONE.client_id, "userId": USER}
    fp = json.dumps([PHONE.client_id, "system.activateCodexAuthProfile", {"n": 1}, "k-1"],
                    sort_keys=True)
    assert e == Entry(PHONE, "r-1", "system.activateCodexAuthProfile", fp, 1,
                      10.0 + KEEP_PENDING, "admitted", payload)
    assert r.timers() == [(10.0 + KEEP_PENDING, (USER, DESK, "r-1"))]


# the relay: forwarding, delivery, loss ---------------------------------------------------------
def test_route_forwards_the_whole_payload_to_its_generation():
    r = online()
    r.on_request(PHONE, req(), 0)
    out = r.route((USER, DESK, "r-1"))
    assert out == [ToDesktop(USER, DESK, 0, {"type": "rpc.request", "payload": {
        "id": "r-1", "method": "system.ping", "params": {}, "traceparent": TRACE,
        "clientId": PHONE.client_id, "userId": USER}})]
    assert r.route((USER, DESK, "r-1")) == []  # already forwarded
    assert r.route((USER, DESK, "nope")) == []


def test_route_after_a_reconnect_answers_32023_and_frees_the_entry():
    r = online()
    r.on_request(PHONE, req(), 0)
    r.disconnect_desktop(USER, DESK)  # answers -32011 and removes it
    r.on_request(PHONE, req("r-2"), 0)  # offline: refused
    r.connect_desktop(USER, DESK)
    r.on_request(PHONE, req("r-3"), 0)
    r.connect_desktop(USER, DESK)  # generation 2: r-3 was admitted for 1
    assert r.route((USER, DESK, "r-3")) == refusal("r-3", -32023)
    assert r.pending == {} and set(r.counts.values()) == {0}


def test_route_waits_while_the_admitted_generation_is_offline():
    r = online()
    r.on_request(PHONE, req(), 0)
    r.desktops[(USER, DESK)].online = False  # the socket closed; nothing answered yet
    assert r.route((USER, DESK, "r-1")) == []
    assert r.pending[(USER, DESK, "r-1")].state == "admitted"


def _forwarded(r: RelayRouter, rid="r-1") -> None:
    r.on_request(PHONE, req(rid), 0)
    r.route((USER, DESK, rid))


def test_a_response_is_delivered_whole_with_its_traceparent():
    r = online()
    _forwarded(r)
    frame = {"type": "rpc.response", "payload": {"clientId": PHONE.client_id, "id": "r-1",
                                                 "result": {"pong": True}, "traceparent": TRACE,
                                                 "junk": 1}}
    assert r.on_response(USER, DESK, 0, frame) == [ToPhone(PHONE.client_id, {
        "type": "rpc.response", "payload": {"id": "r-1", "result": {"pong": True},
                                            "traceparent": TRACE, "isFinal": True}})]
    assert r.pending == {}  # no isFinal: final


def test_a_partial_response_keeps_the_entry_until_the_final_one():
    r = online()
    _forwarded(r)
    part = {"type": "rpc.response", "payload": {"clientId": PHONE.client_id, "id": "r-1",
                                                "error": {"code": 1}, "isFinal": False}}
    assert r.on_response(USER, DESK, 0, part) == [ToPhone(PHONE.client_id, {
        "type": "rpc.response", "payload": {"id": "r-1", "error": {"code": 1},
                                            "isFinal": False}})]
    assert list(r.pending) == [(USER, DESK, "r-1")]


@pytest.mark.parametrize("frame", [
    None, {"payload": []}, {"payload": {"id": 5}},
    {"payload": {"id": "r-1", "clientId": "someone-else::desk-1"}},
    {"payload": {"id": "r-2", "clientId": PHONE.client_id}},  # admitted, not forwarded
])
def test_a_response_that_matches_no_forwarded_entry_is_dropped(frame):
    r = online()
    _forwarded(r)
    r.on_request(PHONE, req("r-2"), 0)
    assert r.on_response(USER, DESK, 0, frame) == []
    assert len(r.pending) == 2


def test_an_answer_is_taken_only_from_the_socket_the_request_went_to():
    r = online()
    _forwarded(r)
    r.connect_desktop(USER, DESK)  # a new socket replaces the old before it closes
    ok = {"payload": {"id": "r-1", "clientId": PHONE.client_id, "result": {}}}
    assert r.on_response(USER, DESK, 1, ok) == []  # the new socket never had it
    assert r.on_response(USER, DESK, 0, ok) == [ToPhone(PHONE.client_id, {
        "type": "rpc.response", "payload": {"id": "r-1", "result": {}, "isFinal": True}})]


def test_a_disconnect_answers_only_that_desktops_entries():
    r = online()
    other = Client(USER, "phone-1", "desk-2")
    r.connect_desktop(USER, "desk-2")
    _forwarded(r)
    r.on_request(other, req("x"), 0)
    assert r.disconnect_desktop(USER, DESK) == refusal("r-1", -32011)
    assert list(r.pending) == [(USER, "desk-2", "x")]


def test_expiry_whole():
    r = online()
    r.on_request(PHONE, req(), 0)
    assert r.expire((USER, DESK, "r-1"), KEEP_PENDING - 0.5) == []
    assert r.expire((USER, DESK, "r-1"), KEEP_PENDING) == refusal("r-1", -32012)
    assert r.expire((USER, DESK, "r-1"), KEEP_PENDING) == []


def test_each_phone_has_its_own_buckets():
    r = online(burst=1, rate=1.0, answer_burst=1, answer_rate=1.0)
    other = Client(USER, "phone-2", DESK)
    assert r.on_request(PHONE, req("a"), 0) == [] and r.on_request(other, req("x"), 0) == []
    assert r.on_request(PHONE, req("b"), 0) == refusal("b", -32028)
    assert r.on_request(other, req("y"), 0) == refusal("y", -32028, other)
    assert r.on_request(PHONE, req("c"), 0) == []  # the answers' bucket is empty: silence
    assert r.on_request(PHONE, req("d"), 1.0) == []  # a token back after 1 s: admitted
    assert r.buckets[PHONE.client_id].rate == 1.0
    assert r.answer_buckets[PHONE.client_id].rate == 1.0


def test_a_token_bucket_refills_with_elapsed_time_only():
    b = TokenBucket(burst=3, rate=2.0)
    assert b.tokens == 3.0
    assert [b.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert b.take(0.75) and b.tokens == pytest.approx(0.5)
    assert not b.take(0.5)  # time going back refills nothing
    assert b.last == 0.75
    assert b.take(1.0) and b.tokens == pytest.approx(0.0)
    assert TokenBucket(burst=2, rate=1.0, tokens=0.0).tokens == 0.0  # given: kept


# the desktop: its answers, whole ------------------------------------------------------------
def fwd(rid="r-1", method="system.activateCodexAuthProfile", params=None, key="key-0001",
        user=USER, trace=TRACE):
    f = env.request(rid, method, {"sessionId": "s", "name": "n"} if params is None else params,
                    key=key, traceparent=trace)
    f["payload"].update(clientId=PHONE.client_id, userId=user)
    return f


def answered(d: DesktopRouter, frame, now=0.0):
    c = d.receive(frame, now)
    assert d.start(c, now) == "answer"
    return d.take_answer(c)


def test_a_call_is_received_whole():
    d = DesktopRouter(":memory:", USER)
    frame = fwd()
    del frame["payload"]["params"]
    c = d.receive(frame, 3.0)
    assert (c.cid, c.client_id, c.rid, c.method, c.params, c.key, c.traceparent, c.heavy,
            c.stage, c.deadline) == (1, PHONE.client_id, "r-1",
                                     "system.activateCodexAuthProfile", {}, "key-0001", TRACE,
                                     False, "slot_wait", 11.0)
    assert c.scope == Scope(USER, PHONE.client_id, "system.activateCodexAuthProfile", "key-0001")
    assert d.receive(fwd("r-2", "no.such", {}, None), 3.0).cid == 2
    assert d.receive(fwd("r-3", "no.such", {}, None), 3.0).heavy is False
    assert d.receive(fwd("r-4", "files.readBinary", {}, None), 3.0).heavy is True


def frame_of(answer, rid="r-1", trace=TRACE):
    payload = {"clientId": PHONE.client_id, "id": rid, **answer, "isFinal": True}
    if trace:
        payload["traceparent"] = trace
    return {"type": "rpc.response", "payload": payload}


def test_each_desktop_refusal_whole():
    d = DesktopRouter(":memory:", USER)
    assert answered(d, fwd(user="other")) == frame_of(
        desktop_error("forbidden", "signed in as another user"))
    assert answered(d, fwd(method="no.such", params={}, key=None)) == frame_of(
        desktop_error("method_not_found"))
    assert answered(d, fwd(key=None)) == frame_of(desktop_error(
        "invalid_params", "a mutation needs a non-empty idempotency key of at most 256 bytes"))
    assert answered(d, fwd(params={"sessionIds": list("abcdefghijklmnopq")},
                           method="run.chatReconcileSessions", key=None)) == frame_of(
        desktop_error("invalid_params", "run.chatReconcileSessions takes at most 16 sessions "
                                        "per call"))


def test_a_success_frame_whole_with_and_without_traceparent():
    d = DesktopRouter(":memory:", USER)
    c = d.receive(fwd(trace=TRACE), 0.0)
    d.start(c, 0.0)
    d.finish(c, {"result": {"renamedTo": "n"}}, 1.0)
    assert d.take_answer(c) == frame_of({"result": {"renamedTo": "n"}})
    assert d.calls == {}
    with pytest.raises(RuntimeError, match=f"call {c.cid} has no answer to send"):
        d.take_answer(c)
    c = d.receive(fwd("r-2", "system.ping", {}, None), 0.0)
    c.traceparent = None  # a desktop test client may omit it: then the frame has none
    assert d.start(c, 0.0) == "run"
    d.finish(c, {"result": {"pong": True}}, 0.0)
    assert d.take_answer(c) == frame_of({"result": {"pong": True}}, "r-2", None)


def test_a_result_the_desktop_may_not_send_becomes_a_validation_error_whole():
    d = DesktopRouter(":memory:", USER)
    c = d.receive(fwd(method="system.ping", params={}, key=None), 0.0)
    d.start(c, 0.0)
    d.finish(c, {"result": {"okKey": 1, "bad_key": 2}}, 0.0)
    assert d.take_answer(c) == frame_of(desktop_error("validation",
                                                      "snake_case key in result: bad_key"))
    c = d.receive(fwd("r-2", "run.chatCommandOutputRead", {}, None), 0.0)
    d.start(c, 0.0)
    d.finish(c, {"result": {"output": "x" * (limits.COMMAND_OUTPUT_PAGE + 1)}}, 0.0)
    assert d.take_answer(c) == frame_of(desktop_error(
        "validation", "run.chatCommandOutputRead: page over 256 KiB"), "r-2")


MIB32 = 32 * 1024 * 1024  # 004: "Relay-Frame 32 MiB, jeder Frame"


def test_a_frame_at_32_mib_leaves_and_one_byte_more_is_refused():
    # the whole frame counts, its envelope too: that is what goes on the socket
    d = DesktopRouter(":memory:", USER)
    c = d.receive(fwd(method="system.ping", params={}, key=None), 0.0)
    d.start(c, 0.0)
    empty = len(json.dumps(frame_of({"result": {"blob": ""}}), separators=(",", ":")))
    d.finish(c, {"result": {"blob": "x" * (MIB32 - empty)}}, 0.0)
    out = d.take_answer(c)
    assert len(json.dumps(out, separators=(",", ":"))) == MIB32 and "result" in out["payload"]
    c = d.receive(fwd("r-2", method="system.ping", params={}, key=None), 0.0)
    d.start(c, 0.0)
    d.finish(c, {"result": {"blob": "x" * (MIB32 - empty + 1)}}, 0.0)
    assert d.take_answer(c) == {"type": "rpc.response", "payload": {
        "clientId": PHONE.client_id, "id": "r-2", "isFinal": True,
        **desktop_error("validation", "response frame over 32 MiB")}}


def _request_of(size: int, rid: str, method: str, key: str | None) -> dict:
    """A forwarded request whose whole frame is ``size`` bytes of compact UTF-8 JSON."""
    f = fwd(rid, method, {"blob": ""}, key)
    f["payload"]["params"]["blob"] = "é" * ((size - len(json.dumps(f, separators=(",", ":")))) // 2)
    assert len(json.dumps(f, ensure_ascii=False, separators=(",", ":")).encode()) == size
    return f


@pytest.mark.parametrize("method, key", [("system.ping", None),
                                         ("system.activateCodexAuthProfile", "key-0001")])
def test_a_request_frame_over_32_mib_is_refused_whole_before_any_claim(method, key):
    # 004 limits every frame, the ones the desktop reads too; it names no answer: the
    # refusal is a final validation error, and a mutation takes no claim
    d = DesktopRouter(":memory:", USER)
    at = d.receive(_request_of(MIB32, "r-1", method, key), 0.0)
    assert at.refusal is None
    over = d.receive(_request_of(MIB32 + 2, "r-2", method, key and "key-0002"), 0.0)
    assert over.refusal == desktop_error("validation", "request frame over 32 MiB")
    assert over.scope is None and over.stage == "slot_wait"  # it waits for a slot too
    assert d.start(over, 0.0) == "answer"
    assert d.take_answer(over) == frame_of(over.refusal, "r-2")
    assert d.claims.db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0


def test_the_claims_answers_whole():
    d = DesktopRouter(":memory:", USER, waiters=1)
    owner = d.receive(fwd(), 0.0)
    assert d.start(owner, 0.0) == "run"
    assert answered(d, fwd("c", params={"sessionId": "s", "name": "other"})) == frame_of(
        desktop_error("conflict", "idempotency key reused with other params"), "c")
    joined = d.receive(fwd("j"), 0.0)
    assert d.start(joined, 0.0) == "join"
    assert answered(d, fwd("b")) == frame_of(desktop_error("busy",
                                                           "too many retries are waiting"), "b")


def test_memory_replays_a_completed_answer_after_the_durable_row_is_forgotten():
    d = DesktopRouter(":memory:", USER)
    c = d.receive(fwd(), 0.0)
    d.start(c, 0.0)
    d.finish(c, {"result": {"renamedTo": "n"}}, 1.0)
    d.take_answer(c)
    assert d.fire("retention", c.scope, 1.0 + RETENTION)
    assert d.claims.row(c.scope) is None
    assert answered(d, fwd("again"), 2.0 + RETENTION) == frame_of({"result": {"renamedTo": "n"}},
                                                                   "again")


def test_a_retryable_answer_is_not_replayed_the_request_runs_again():
    d = DesktopRouter(":memory:", USER)
    c = d.receive(fwd(), 0.0)
    d.start(c, 0.0)
    d.finish(c, desktop_error("unavailable", "try later"), 1.0)
    d.take_answer(c)
    again = d.receive(fwd("again"), 2.0)
    assert d.start(again, 2.0) == "run"
    assert d.claims.row(c.scope).state == "running"


def test_a_call_that_cannot_start_says_so():
    d = DesktopRouter(":memory:", USER, light=1)
    a, b = d.receive(fwd("a"), 0.0), d.receive(fwd("b", key="key-0002"), 0.0)
    d.start(a, 0.0)
    assert not d.can_start(b)
    with pytest.raises(RuntimeError, match=f"call {b.cid} cannot take a slot now"):
        d.start(b, 0.0)
    with pytest.raises(RuntimeError, match=f"call {b.cid} is not running"):
        d.finish(b, {"result": {}}, 0.0)


def test_the_desktops_timers_in_order():
    d = DesktopRouter(":memory:", USER)
    done = d.receive(fwd("a"), 0.0)
    d.start(done, 0.0)
    d.finish(done, {"result": {}}, 0.0)
    d.take_answer(done)
    late = d.receive(fwd("b", key="key-0002"), RETENTION)
    d.start(late, RETENTION)  # its dispatch limit, and a lease the live handler outlives
    assert d.timers() == [(RETENTION, "retention", done.scope),
                          (RETENTION + 45.0, "dispatch", late.cid)]


# the claims, whole -------------------------------------------------------------------------
S = Scope(USER, PHONE.client_id, "system.activateCodexAuthProfile", "k-1")


def test_each_durable_decision_whole():
    reg = DurableClaims(":memory:", max_rows=1)
    assert reg.claim(S, {"a": 1}, 0.0).kind == "run"
    other = Scope(USER, PHONE.client_id, "system.activateCodexAuthProfile", "k-2")
    d = reg.claim(other, {}, 0.0)
    assert (d.kind, d.answer) == ("capacity", desktop_error("capacity",
                                                            "too many idempotency keys"))
    d = reg.claim(S, {"a": 2}, 0.0)
    assert (d.kind, d.answer) == ("conflict", desktop_error(
        "conflict", "idempotency key reused with other params"))
    d = reg.claim(S, {"a": 1}, 1.0, owner_alive=True)
    assert (d.kind, d.answer) == ("busy", BUSY)
    d = reg.claim(S, {"a": 1}, 1.0)
    assert (d.kind, d.answer) == ("busy", BUSY)
    assert reg.end_lease(S, LEASE)
    d = reg.claim(S, {"a": 1}, LEASE + 1)
    assert (d.kind, d.answer) == ("ambiguous", AMBIGUOUS)
    assert reg.row(S).stored_at == LEASE + 1
    assert reg.timers() == [(LEASE + 1 + RETENTION, "retention", S)]


def test_a_lease_ends_once_at_its_time_and_only_for_a_running_row():
    reg = DurableClaims(":memory:")
    assert not reg.end_lease(S, 10 * LEASE)  # no row
    reg.claim(S, {}, 100.0)
    assert not reg.end_lease(S, 100.0 + LEASE - 1)
    assert reg.end_lease(S, 100.0 + LEASE)
    assert not reg.end_lease(S, 100.0 + LEASE)  # already over
    reg.store(S, {"result": {}}, 400.0)
    assert not reg.end_lease(S, 10 * LEASE)  # stored


def test_the_durable_timers_sort_by_time_first():
    reg = DurableClaims(":memory:")
    late = Scope("a", "d", "m", "k")  # sorts first by name, not by time
    reg.claim(S, {}, 0.0)
    reg.store(S, {"result": {}}, 0.0)
    reg.claim(late, {}, RETENTION)
    assert reg.timers() == [(RETENTION, "retention", S), (RETENTION + LEASE, "lease", late)]
    assert reg.tick(RETENTION) == 1 and reg.row(S) is None
    assert reg.tick(RETENTION + LEASE) == 1 and reg.row(late).lease_over


def test_a_stored_answer_keeps_its_characters_and_is_measured_in_utf8_bytes():
    reg = DurableClaims(":memory:")
    reg.claim(S, {}, 0.0)
    text = "日本" * 10
    answer, stored = reg.store(S, {"result": {"t": text}}, 1.0)
    assert stored and answer == {"result": {"t": text}}
    raw = reg.db.execute("SELECT answer FROM claims").fetchone()[0]
    assert raw == json.dumps({"result": {"t": text}}, ensure_ascii=False)
    # just under 256 KiB as UTF-8 (three bytes a character), far over it as \\u escapes
    reg2 = DurableClaims(":memory:")
    reg2.claim(S, {}, 0.0)
    big = {"result": {"t": "日" * ((256 * 1024 - 20) // 3)}}
    assert reg2.store(S, big, 1.0) == (big, True)


def test_memory_claims_step_by_step():
    m = MemoryClaims(waiters=3, completed=1, running=4)
    m.complete(S, {"result": 1})  # never started: still recorded
    assert m.get(S).state == "done"
    m.forget(Scope("x", "y", "z", "w"))  # unknown: nothing
    run = Scope("r", "d", "m", "k")
    m.start(run)
    m.forget(run)  # running: kept
    assert m.state(run) == "running"
    m.complete(Scope("x", "y", "z", "w"), {"result": 2})
    assert m.state(run) == "running" and m.state(S) == "none"  # only completed ones evicted
    m.join(run)
    m.join(run)
    m.leave(run)
    assert m.get(run).waiters == 1
    m.drop(run)  # the owner is cut; a waiter still parked keeps the claim
    assert m.get(run).state == "none" and run in m.claims
    m.leave(run)
    assert run not in m.claims
    m.start(run)
    m.join(run)
    m.leave(run)
    assert m.state(run) == "running" and run in m.claims


def test_answer_classes_and_kinds():
    assert kind_of({"result": {}}) == "success"
    assert answer_class({"error": {"code": -32602}}) == "final"
    assert answer_class({"error": {"code": -32700, "data": {"kind": "parse_error"}}}) == \
        "retryable"
    assert answer_class({"error": {"code": 1, "data": {"kind": "conflict"}}}) == "ambiguous"
    assert answer_class({"error": {"code": 1, "retryable": True}}) == "retryable"


# the app's answers, whole ---------------------------------------------------------------------
def test_outbox_submit_answers_the_queue_and_its_receipt():
    app = DesktopApp(sessions={"s-1": None})
    p = env.outbox_params("s-1", "op-1")
    assert p["userText"] == "hello"
    assert app.handle("run.chatOutboxSubmit", p) == {"result": {
        "entries": [{"queueId": "q-1", "operationId": "op-1", "text": "hello"}],
        "receipt": {"queueId": "q-1", "operationId": "op-1"}}}
    assert app.messages("s-1", "op-1") == 1 and app.messages("nope", "op-1") == 0


def test_the_upload_ledger_records_chunks_by_index():
    app = DesktopApp(sessions={"s-1": None})
    app.handle("files.beginChatAttachmentUpload", {"sessionId": "s-1", "uploadId": "u"})
    assert app.uploads["u"] == {"session": "s-1", "chunks": {}, "end": None}
    app.handle("files.appendChatAttachmentUploadChunk", {"uploadId": "u"})
    app.handle("files.appendChatAttachmentUploadChunk", {"uploadId": "u", "index": 1,
                                                         "data": "b"})
    assert app.uploads["u"]["chunks"] == {0: "", 1: "b"}
    assert app.handle("files.appendChatAttachmentUploadChunk", {"uploadId": 5}) == \
        desktop_error("not_found", "no such upload")


def test_stop_and_send_refuses_another_run_whole():
    app = DesktopApp(sessions={"s-1": ("run-2", "t", "u")})
    p = {"sessionId": "s-1", "expectedRunId": "run-1", "expectedThreadId": "t",
         "expectedTurnId": "u", "queueId": "q", "operationId": "o"}
    assert app.handle("run.chatOutboxStopAndSendNow", p) == desktop_error(
        "conflict", "the session's active run is not the one expected")


# what mutation testing found unobserved (issue 12) --------------------------------------------
def test_a_restarted_desktop_keeps_every_setting_and_its_claims_file(tmp_path):
    path = tmp_path / "claims.sqlite"
    d = DesktopRouter(path, USER, light=1, heavy=1, waiters=2, completed=3, running=4,
                      max_rows=5)
    c = d.receive(fwd(), 0.0)
    d.start(c, 0.0)
    new = d.restarted()
    assert new._init == d._init and new.claims.path == str(path)
    assert (new.slots, new.claims.max_rows) == ({False: 1, True: 1}, 5)
    assert (new.memory.max_waiters, new.memory.max_completed, new.memory.max_running) == \
        (2, 3, 4)
    assert new.claims.row(c.scope).state == "running"  # the file kept the claim
    new.close()


def test_a_sent_call_is_marked_sent():
    d = DesktopRouter(":memory:", USER)
    c = d.receive(fwd("p", "system.ping", {}, None), 0.0)
    d.start(c, 0.0)
    d.finish(c, {"result": {}}, 0.0)
    d.take_answer(c)
    assert (c.stage, c.deadline) == ("sent", None)


def test_timers_skip_only_the_live_handlers_lease_and_break_ties_by_reference():
    d = DesktopRouter(":memory:", USER)
    live = d.receive(fwd("a"), 0.0)
    d.start(live, 0.0)  # running: its lease is not a timer while it runs
    orphan = Scope(USER, "zz::desk", "system.activateCodexAuthProfile", "k-9")
    d.claims.claim(orphan, {}, 0.0)  # a row whose owner is gone (another process)
    assert (LEASE, "lease", orphan) in d.timers()
    calls = [d.receive(fwd(f"t{i}", "system.ping", {}, None), 1.0) for i in range(10)]
    waits = [t for t in d.timers() if t[1] == "slot_wait"]
    assert [t[2] for t in waits] == sorted((c.cid for c in calls), key=str)


def test_the_claims_timers_fire_every_due_one():
    reg = DurableClaims(":memory:")
    a, b = S, Scope(USER, PHONE.client_id, "system.activateCodexAuthProfile", "k-2")
    reg.claim(a, {}, 0.0)
    reg.claim(b, {}, 1.0)
    assert reg.tick(LEASE + 1) == 2


def test_an_unhashable_upload_id_is_no_such_upload():
    app = DesktopApp(sessions={"s-1": None})
    assert app.handle("files.appendChatAttachmentUploadChunk", {"uploadId": ["u"]}) == \
        desktop_error("not_found", "no such upload")


def test_id_and_trace_checks_take_any_payload():
    assert not env.id_ok([1]) and not env.id_ok("x") and env.id_ok({"id": "r"})
    assert not env.trace_ok([1]) and env.trace_ok({"traceparent": TRACE})


def test_a_reconcile_result_without_sessions_is_fine():
    assert limits.result_problem("run.chatReconcileSessions", {}) is None
    assert limits.result_problem("run.chatReconcileSessions", {"sessions": [
        {"outbox": [0] * 257}]}) == "run.chatReconcileSessions: over 256 outbox entries in a session"


def test_unreadable_rules_and_a_version_that_is_not_text():
    from osf_check.relay.wire.registration import RegistrationError, parse_version

    def boom():
        raise OSError("disk gone")
    with pytest.raises(RegistrationError) as e:
        VersionGate(boom).required(0.0)
    assert str(e.value) == ("relayProtocolPolicyUnavailable: compatibility rules unreadable "
                            "(disk gone)")
    assert parse_version(17) is None and parse_version("1.12") == (1, 12)


def test_after_a_restart_new_claims_still_reach_the_file(tmp_path):
    import sqlite3
    path = tmp_path / "claims.sqlite"
    d = DesktopRouter(path, USER).restarted()
    c = d.receive(fwd(), 0.0)
    d.start(c, 0.0)
    rows = sqlite3.connect(path).execute("SELECT key, state FROM claims").fetchall()
    assert rows == [("key-0001", "running")]
    d.close()
