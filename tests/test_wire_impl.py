"""The wire reference implementation (relay.wire): envelopes, relay router, desktop router."""

from __future__ import annotations

import pytest

from osf_check.relay.wire import envelope as env
from osf_check.relay.wire.app import DesktopApp, Task
from osf_check.relay.wire.desktop_router import (DISPATCH, DISPATCH_LOADS, ENQUEUE, SLOT_WAIT,
                                       DesktopRouter)
from osf_check.relay.wire.errors import BUSY_MESSAGE, TIMEOUT_MESSAGE, kind_of
from osf_check.relay.wire.idempotency import LEASE
from osf_check.relay.wire.relay_router import (KEEP_LOADS, KEEP_OUTBOX, KEEP_PENDING, Client,
                                     RelayRouter, ToDesktop, ToPhone)

USER, DESK = "user-1", "desk-1"
PHONE = Client(USER, "phone-1", DESK)
RENAME = {"sessionId": "s-1", "name": "n"}


def req(rid: str = "r-1", method: str = "system.ping", params: dict | None = None,
        key: str | None = None) -> dict:
    return env.request(rid, method, params if params is not None else {}, key=key)


def code(out: list) -> int:
    assert len(out) == 1 and isinstance(out[0], ToPhone)
    return out[0].frame["payload"]["error"]["code"]


# envelopes --------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, why", [
    ({"userId": "u"}, "unknown field"), ({"target_desktop": "d"}, "unknown field"),
    ({"traceparent": None}, "traceparent"), ({"traceparent": "00-xyz"}, "traceparent"),
    ({"id": ""}, "id"), ({"id": " \t"}, "id"),
    ({"params": [1]}, "params"),
])
def test_a_malformed_request_fails_as_a_whole(bad, why):
    frame = req()
    frame["payload"].update(bad)
    with pytest.raises(env.FrameError, match=why):
        env.validate_request(frame)


def test_valid_requests_whatever_the_length_of_their_id():
    # 004 sets 128 bytes only on the ids its -32028 answers carry, not on every request
    for rid in ("x" * 128, "x" * 129, "é" * 65, "r" * 10_000):
        assert env.validate_request(req(rid))["id"] == rid
    assert env.validate_request(req("  r-1 "))["id"] == "r-1"  # trimmed
    assert env.snake_keys({"entries": [{"queueId": 1, "queue_id": 2}]}) == ["entries[0].queue_id"]


def test_desktop_params_rules():
    assert env.params_problem("system.activateCodexAuthProfile", RENAME, None)
    assert env.params_problem("system.activateCodexAuthProfile", RENAME, "k" * 257)
    assert env.params_problem("system.activateCodexAuthProfile", RENAME, "k" * 256) is None
    assert "snake_case" in env.params_problem("system.activateCodexAuthProfile", {"session_id": "s"}, "k")
    p = env.outbox_params("s", "op")
    assert env.params_problem("run.chatOutboxSubmit", p, "k") is None
    assert env.params_problem("run.chatOutboxSubmit", {**p, "threadId": "t"}, "k") is None
    assert "unknown" in env.params_problem("run.chatOutboxSubmit", {**p, "userId": "u"}, "k")


# the relay ----------------------------------------------------------------------------------
def online_relay(**kw) -> RelayRouter:
    r = RelayRouter(**kw)
    r.connect_desktop(USER, DESK)
    return r


def test_relay_refusals_in_order():
    r = RelayRouter()
    assert code(r.on_request(PHONE, req(), 0)) == -32010  # no desktop
    r.connect_desktop(USER, DESK)
    assert code(r.on_request(PHONE, req(method="system.nope"), 0)) == -32601
    assert code(r.on_request(PHONE, req(method="system.activateCodexAuthProfile", params=RENAME), 0)) == -32026
    api = Client(USER, "bot", DESK, api_key_scopes=("read",))
    out = r.on_request(api, req(), 0)
    assert code(out) == -32027 and out[0].frame["payload"]["error"]["data"]["requiredScopes"]
    bad = req()
    bad["payload"]["userId"] = "someone"
    assert code(r.on_request(PHONE, bad, 0)) == -32600
    assert code(r.on_request(PHONE, req(method="session.syncHistoryState"), 0)) == -32600
    r.switching = True
    assert code(r.on_request(PHONE, req(), 0)) == -32024


def test_duplicate_and_conflicting_request_ids():
    r = online_relay()
    assert r.on_request(PHONE, req("r-1", "system.activateCodexAuthProfile", RENAME, "k-1"), 0) == []
    assert code(r.on_request(PHONE, req("r-1", "system.activateCodexAuthProfile", RENAME, "k-1"), 1)) == -32021
    assert code(r.on_request(PHONE, req("r-1", "system.activateCodexAuthProfile", RENAME, "k-2"), 1)) == -32022
    other = Client(USER, "phone-2", DESK)  # ids are unique per user and desktop
    assert code(r.on_request(other, req("r-1"), 1)) == -32022


@pytest.mark.parametrize("scope, limits", [
    ("client", {"client": 2}), ("desktop", {"desktop": 2}), ("user", {"user": 2}),
    ("process", {"process": 2})])
def test_each_pending_limit_refuses_with_its_scope(scope, limits):
    r = online_relay(limits=limits)
    assert r.on_request(PHONE, req("a"), 0) == [] and r.on_request(PHONE, req("b"), 0) == []
    out = r.on_request(PHONE, req("c"), 0)
    assert code(out) == -32020
    data = out[0].frame["payload"]["error"]["data"]
    assert (data["scope"], data["limit"], data["current"]) == (scope, 2, 2)


def test_real_limits_are_the_defaults():
    assert RelayRouter().limits == {"process": 4096, "user": 512, "desktop": 128, "client": 64}
    r = online_relay()
    for i in range(64):
        assert r.on_request(PHONE, req(f"r{i}"), 0) == []
    assert r.on_request(PHONE, req("r64"), 0)[0].frame["payload"]["error"]["data"]["scope"] == \
        "client"


def test_over_the_connection_limit_nothing_is_forwarded_and_answers_have_their_own_bucket():
    r = online_relay(burst=10, rate=1.0, answer_burst=3, answer_rate=1.0)
    for i in range(10):  # the connection's own burst (a setting: 004 does not give it)
        assert r.on_request(PHONE, req(f"r{i}"), 0.0) == []
    # over the limit: answered -32028 from the answers' own bucket, 3 here (300 by default)
    assert [code(r.on_request(PHONE, req(f"over{i}"), 0.0)) for i in range(3)] == [-32028] * 3
    assert r.on_request(PHONE, req("over-3"), 0.0) == []  # that bucket is empty too
    assert not any(k[2].startswith("over") for k in r.pending)
    later = 1.0  # one token back in each bucket
    junk = req("bad-trace")
    junk["payload"]["traceparent"] = "bad"
    r2 = online_relay(burst=1, rate=0.0)
    r2.on_request(PHONE, req("first"), 0.0)
    assert r2.on_request(PHONE, junk, 0.0) == []  # over the limit, no usable trace: no answer
    assert r2.on_request(PHONE, {"type": "rpc.request", "payload": {"id": "x" * 200}}, 0.0) == []
    assert r2.on_request(PHONE, {"type": "ping", "payload": {"id": "p"}}, 0.0) == []
    assert r.on_request(PHONE, req("later"), later) == []  # admitted again
    assert (USER, DESK, "later") in r.pending


def test_the_answers_bucket_defaults_to_burst_300_and_150_per_second():
    r = online_relay(burst=0, rate=0.0)
    outs = [r.on_request(PHONE, req(f"o{i}"), 0.0) for i in range(301)]
    assert [code(o) for o in outs[:300]] == [-32028] * 300 and outs[300] == []
    assert code(r.on_request(PHONE, req("next"), 1 / 150)) == -32028


@pytest.mark.parametrize("mangle, reason", [
    (lambda p: p.update(traceparent="00-bad"), "traceparent"),
    (lambda p: p.update(id=" "), "request id"),
    (lambda p: p.update(userId="u"), "unknown field"),
])
def test_a_malformed_frame_is_answered_at_once_not_dropped(mangle, reason):
    r = online_relay()
    f = req("m-1")
    mangle(f["payload"])
    [out] = r.on_request(PHONE, f, 0.0)
    err = out.frame["payload"]["error"]
    assert err["code"] == -32600 and reason in err["data"]["reason"]
    assert out.frame["payload"]["id"] == f["payload"]["id"].strip()  # the phone can match it
    assert not r.pending


def test_a_missing_key_is_the_relays_32026_an_empty_one_goes_to_the_desktop():
    r = online_relay()
    assert code(r.on_request(PHONE, req("k-1", "run.chatOutboxSubmit", {}), 0.0)) == -32026
    assert r.on_request(PHONE, req("k-2", "run.chatOutboxSubmit", {}, key=""), 0.0) == []
    assert env.params_problem("run.chatOutboxSubmit", {}, "") is not None  # desktop: -32602


def test_the_relay_passes_traceparent_on_in_the_response():
    r = online_relay()
    r.on_request(PHONE, req("t-1"), 0.0)
    [fwd] = r.route((USER, DESK, "t-1"))
    [out] = r.on_response(USER, DESK, fwd.gen, {"type": "rpc.response", "payload": {
        "clientId": PHONE.client_id, "id": "t-1", "result": {}, "isFinal": True,
        "traceparent": env.TRACE}})
    assert out.frame["payload"]["traceparent"] == env.TRACE


def test_routing_generations_disconnect_and_expiry():
    r = online_relay()
    r.on_request(PHONE, req("a"), 0)
    r.on_request(PHONE, req("b"), 0)
    [fwd] = r.route((USER, DESK, "a"))
    assert isinstance(fwd, ToDesktop) and fwd.frame["payload"]["clientId"] == "phone-1::desk-1"
    assert fwd.frame["payload"]["userId"] == USER
    out = r.disconnect_desktop(USER, DESK)  # every pending request of that generation
    assert [code([m]) for m in out] == [-32011, -32011]  # forwarded or not yet routed
    assert not r.pending
    r.connect_desktop(USER, DESK)
    assert r.route((USER, DESK, "b")) == []  # nothing left to route
    # a late answer from the old socket finds no entry of its generation
    r.on_request(PHONE, req("a"), 1)
    r.route((USER, DESK, "a"))
    late = {"type": "rpc.response", "payload": {"clientId": PHONE.client_id, "id": "a",
                                                  "result": {}, "isFinal": True}}
    assert r.on_response(USER, DESK, 0, late) == []
    assert r.on_response(USER, DESK, 1, late) != []
    assert r.on_response(USER, DESK, 1, late) == []  # the final answer removed the entry


def test_relay_keeps_each_request_pending_for_its_deadline():
    r = online_relay()
    r.on_request(PHONE, req("p"), 0)
    r.on_request(PHONE, req("l", "run.chatLoad"), 0)
    r.on_request(PHONE, req("o", "run.chatOutboxSubmit", env.outbox_params("s", "op"), "k"), 0)
    assert [t for t, _ in r.timers()] == [KEEP_PENDING, KEEP_LOADS, KEEP_OUTBOX]
    assert (KEEP_PENDING, KEEP_LOADS, KEEP_OUTBOX) == (90, 120, 31 * 60)
    assert r.expire((USER, DESK, "p"), 89.9) == []
    assert [code([m]) for m in r.tick(120)] == [-32012, -32012]
    assert list(r.pending) == [(USER, DESK, "o")]


# the desktop ----------------------------------------------------------------------------------
def forwarded(rid: str, method: str = "system.activateCodexAuthProfile", params: dict | None = None,
              key: str | None = "key-0001", user: str = USER) -> dict:
    f = req(rid, method, RENAME if params is None else params, key)
    f["payload"].update(clientId=PHONE.client_id, userId=user)
    return f


def _answered(d: DesktopRouter, frame: dict, now: float = 0) -> dict | None:
    c = d.receive(frame, now)
    assert c.stage == "slot_wait" and c.answer is None  # every call waits for a slot (004)
    assert d.start(c, now) == "answer"
    return c.answer


def test_desktop_refusals_are_answered_once_a_slot_is_free():
    d = DesktopRouter(":memory:", USER)
    assert kind_of(_answered(d, forwarded("a", user="other"))) == "forbidden"
    assert kind_of(_answered(d, forwarded("b", key=None))) == "invalid_params"
    assert kind_of(_answered(d, forwarded("c", params={"session_id": "s"}))) == "invalid_params"
    assert kind_of(_answered(d, forwarded("d", "no.suchMethod", {}, None))) == "method_not_found"


def test_every_call_waits_for_a_slot_even_a_replay_a_conflict_or_a_join():
    # W17 (004: "Auf dem Desktop wartet jeder Relay-RPC auf eine von zwei Semaphoren"):
    # with the slots taken, a replay, a conflict, a refusal and a join all wait, and
    # the 8 s slot limit answers them busy
    d = DesktopRouter(":memory:", USER, light=2)
    done = d.receive(forwarded("a", key="key-done"), 0)
    d.start(done, 0)
    d.finish(done, {"result": {"ok": True}}, 0)
    d.take_answer(done)
    first = d.receive(forwarded("b", key="key-run"), 0)
    assert d.start(first, 0) == "run"
    join = d.receive(forwarded("c", key="key-run"), 0)
    assert d.start(join, 0) == "join"  # the second slot: a joined copy keeps it
    waiting = [d.receive(f, 1) for f in (
        forwarded("r", key="key-done"),  # a replay
        forwarded("x", params={"sessionId": "other", "name": "n"}, key="key-done"),  # conflict
        forwarded("u", user="other"),  # a refusal
        forwarded("j", key="key-run"))]  # another join
    assert [d.can_start(c) for c in waiting] == [False] * 4
    d.tick(1 + SLOT_WAIT)
    assert [c.answer["error"]["message"] for c in waiting] == [BUSY_MESSAGE] * 4


def test_a_joined_copy_has_its_own_dispatch_limit_and_frees_its_slot():
    d = DesktopRouter(":memory:", USER, light=2)
    first = d.receive(forwarded("a"), 0)
    d.start(first, 0)
    join = d.receive(forwarded("b"), 10)
    assert d.start(join, 10) == "join" and join.deadline == 10 + DISPATCH
    d.tick(DISPATCH)  # the running copy is dropped first
    assert first.answer == {"error": {"code": -32603, "message": TIMEOUT_MESSAGE}}
    assert join.stage == "joined"  # not yet woken by the shell ...
    d.tick(10 + DISPATCH)  # ... then its own limit ends its wait
    assert join.answer == {"error": {"code": -32603, "message": TIMEOUT_MESSAGE}}
    d2 = DesktopRouter(":memory:", USER, light=2)
    first, join = d2.receive(forwarded("a"), 0), d2.receive(forwarded("b"), 10)
    d2.start(first, 0), d2.start(join, 10)
    d2.finish(first, {"result": {"ok": True}}, 1)
    d2.take_answer(first)
    ping = d2.receive(forwarded("p", "system.ping", {}, None), 2)
    assert d2.can_start(ping)  # the finished copy gave its slot back
    d2.start(ping, 2)
    other = d2.receive(forwarded("q", "system.ping", {}, None), 2)
    assert not d2.can_start(other)  # the joined copy (not yet woken) still holds one


def test_slots_and_the_three_deadlines_with_their_exact_answers():
    d = DesktopRouter(":memory:", USER)
    heavy = [d.receive(forwarded(f"h{i}", "files.readBinary", {}, None), 0) for i in range(3)]
    assert [d.can_start(c) for c in heavy] == [True, True, True]
    d.start(heavy[0], 0), d.start(heavy[1], 0)
    assert not d.can_start(heavy[2])  # two heavy slots
    ping = d.receive(forwarded("p", "system.ping", {}, None), 0)
    assert d.start(ping, 0) == "run"  # a slow media read never blocks system.ping
    assert d.tick(SLOT_WAIT - 0.1) == []
    d.tick(SLOT_WAIT)
    assert heavy[2].answer["error"] == {"code": -32603, "message": BUSY_MESSAGE}
    d.tick(DISPATCH)  # ping's dispatch limit
    assert ping.answer["error"] == {"code": -32603, "message": TIMEOUT_MESSAGE}
    assert "retryable" not in str(ping.answer)  # not proof that nothing ran
    d.tick(SLOT_WAIT + ENQUEUE)  # heavy[2] never sent its answer: dropped, no answer
    assert heavy[2].cid not in d.calls
    load = d.receive(forwarded("L", "run.chatLoad", {}, None), 100)
    d.start(load, 100)  # the heavy slots were freed at their dispatch limit
    assert load.deadline == 100 + DISPATCH_LOADS


def test_eight_light_slots():
    d = DesktopRouter(":memory:", USER)
    calls = [d.receive(forwarded(f"p{i}", "system.ping", {}, None), 0) for i in range(9)]
    for c in calls[:8]:
        d.start(c, 0)
    assert not d.can_start(calls[8])


def test_snake_case_result_becomes_a_validation_error():
    d = DesktopRouter(":memory:", USER)
    c = d.receive(forwarded("a"), 0)
    d.start(c, 0)
    d.finish(c, {"result": {"session_id": "s"}}, 1)
    assert kind_of(d.take_answer(c)["payload"]) == "validation"


def test_retry_joins_the_running_copy_and_gets_its_answer():
    d = DesktopRouter(":memory:", USER)
    first, retry = d.receive(forwarded("a"), 0), d.receive(forwarded("b"), 1)
    assert (d.start(first, 0), d.start(retry, 1)) == ("run", "join")
    assert not d.resume(retry, 2)  # still running
    d.finish(first, {"result": {"ok": True}}, 3)
    assert d.resume(retry, 3) and retry.answer == {"result": {"ok": True}}


def test_waiter_limit_then_busy():
    # a joined copy keeps its slot, so 32 waiters need more than the real 8 light slots
    # (docs/conformance.md, W17b and W19c): the limit is tested on a router with 34
    d = DesktopRouter(":memory:", USER, waiters=32, light=34)
    d.start(d.receive(forwarded("a"), 0), 0)
    kinds = [d.start(d.receive(forwarded(f"r{i}"), 0), 0) for i in range(33)]
    assert kinds[:32] == ["join"] * 32 and kinds[32] == "answer"


def test_dropped_handler_leaves_the_durable_claim_running_then_busy_then_ambiguous():
    d = DesktopRouter(":memory:", USER)
    first = d.receive(forwarded("a"), 0)
    d.start(first, 0)
    d.tick(DISPATCH)
    assert d.claims.row(first.scope).state == "running"
    again = d.receive(forwarded("b"), 60)
    d.start(again, 60)
    assert kind_of(again.answer) == "busy"
    d.tick(LEASE)
    late = d.receive(forwarded("c"), LEASE + 1)
    d.start(late, LEASE + 1)
    assert kind_of(late.answer) == "ambiguous"


def test_memory_limits_of_completed_and_running_claims():
    d = DesktopRouter(":memory:", USER, completed=2, running=2)
    calls = [d.receive(forwarded(f"r{i}", key=f"key-{i:04d}"), 0) for i in range(3)]
    d.start(calls[0], 0), d.start(calls[1], 0)
    assert not d.can_start(calls[2])  # 64 running claims in the real router
    for c in calls[:2]:
        d.finish(c, {"result": {}}, 1)
    d.start(calls[2], 1)
    d.finish(calls[2], {"result": {}}, 2)
    assert len(d.memory.claims) == 2  # the oldest completed result was let go


def test_outbox_ledger():
    app = DesktopApp(sessions={"s": None})
    p = env.outbox_params("s", "op-1")
    app.handle("run.chatOutboxSubmit", p)
    app.handle("run.chatOutboxSubmit", p)
    assert app.messages("s", "op-1") == 1
    from osf_check.fuzz.mutants import OutboxWithoutLedger
    bad = OutboxWithoutLedger(sessions={"s": None})
    bad.handle("run.chatOutboxSubmit", p)
    bad.handle("run.chatOutboxSubmit", p)
    assert bad.messages("s", "op-1") == 2


# registration and the version gate ------------------------------------------------------------
from osf_check.relay.wire.registration import (Device, RegistrationError, VersionGate,  # noqa: E402
                                     register)

DESK_ID = "6f1c2a7e-0000-4000-8000-000000000001"
PHONE_ID = "6f1c2a7e-0000-4000-8000-000000000002"
DEVICES = {DESK_ID: Device(DESK_ID, "desktop"), PHONE_ID: Device(PHONE_ID, "mobile")}


def reg(payload: dict, role: str = "desktop", gate: VersionGate | None = None,
        devices: dict | None = None) -> str:
    try:
        register(payload, role, DEVICES if devices is None else devices,
                 gate or VersionGate(lambda: []), 0.0)
        return "ok"
    except RegistrationError as e:
        return e.reason


@pytest.mark.parametrize("payload, reason", [
    ({"deviceId": DESK_ID, "relayProtocolVersion": "1.7"}, "ok"),
    ({"deviceId": DESK_ID, "relayProtocolVersion": "2.0", "deviceName": "Mac"}, "ok"),
    ({"deviceId": DESK_ID}, "protocolUpdateRequired"),
    ({"deviceId": DESK_ID, "relayProtocolVersion": "1.6"}, "protocolUpdateRequired"),
    ({"deviceId": DESK_ID, "relayProtocolVersion": "v1.7"}, "invalidRelayProtocolVersion"),
    ({"deviceId": DESK_ID, "relayProtocolVersion": "1.7", "userId": "u"}, "invalidRegistration"),
    ({"deviceId": "not-a-uuid", "relayProtocolVersion": "1.7"}, "invalidRegistration"),
    ({"deviceId": PHONE_ID, "relayProtocolVersion": "1.7"}, "forbidden"),  # wrong role
])
def test_registration(payload, reason):
    assert reg(payload) == reason


def test_forgotten_or_unknown_devices_and_permission():
    p = {"deviceId": DESK_ID, "relayProtocolVersion": "1.7"}
    assert reg(p, devices={DESK_ID: Device(DESK_ID, "desktop", forgotten=True)}) == "unknownDevice"
    assert reg(p, devices={}) == "unknownDevice"
    assert reg(p, devices={DESK_ID: Device(DESK_ID, "desktop", relay_permission=False)}) == "forbidden"
    assert reg({"deviceId": PHONE_ID, "relayProtocolVersion": "1.7",
                "targetDesktopDeviceId": DESK_ID}, role="mobile") == "ok"


def test_version_gate_takes_the_highest_rule_and_caches_it_60_seconds():
    rules = [["1.5", "1.8"]]
    gate = VersionGate(lambda: rules[0])
    assert gate.required(0.0) == (1, 8)
    rules[0] = ["1.9"]
    assert gate.required(59.9) == (1, 8)  # cached
    assert gate.required(60.0) == (1, 9)
    assert VersionGate(lambda: []).required(0.0) == (1, 7)  # 1.7 is the floor


def test_unreadable_or_unparsable_rules_make_the_policy_unavailable():
    def broken() -> list:
        raise OSError("database down")
    p = {"deviceId": DESK_ID, "relayProtocolVersion": "1.7"}
    assert reg(p, gate=VersionGate(broken)) == "relayProtocolPolicyUnavailable"
    assert reg(p, gate=VersionGate(lambda: ["1.x"])) == "relayProtocolPolicyUnavailable"


def test_the_version_refusal_asks_the_user_to_update_the_app():
    for p in ({"deviceId": DESK_ID}, {"deviceId": DESK_ID, "relayProtocolVersion": "1.6"}):
        with pytest.raises(RegistrationError, match="Update the app"):
            register(p, "desktop", DEVICES, VersionGate(lambda: []), 0.0)


def test_a_phone_may_register_without_a_target_and_then_reaches_no_desktop():
    r = RelayRouter()
    r.connect_desktop(USER, DESK)
    phone = r.register(USER, {"deviceId": PHONE_ID, "relayProtocolVersion": "1.7"}, "mobile",
                       DEVICES, VersionGate(lambda: []), 0.0)
    assert code(r.on_request(phone, req("x-1"), 0.0)) == -32010


# the implementation's deadlines are the ones B9 and B10 are proved with -----------------------
def test_implementation_deadlines_match_the_timing_analysis():
    from osf_check.explorer.symbolic.timing import DEADLINES, analyse
    from osf_check.relay.wire.idempotency import RETENTION
    from osf_check.relay.wire.phone import Phone
    from osf_check.relay.wire.relay_router import keep_pending
    impl = {
        "slot": SLOT_WAIT, "dispatch": DISPATCH, "dispatch_load": DISPATCH_LOADS,
        "enqueue": ENQUEUE, "lease": LEASE, "retention": RETENTION,
        "relay_older_page": keep_pending("run.chatLoadPageBefore"),
        "relay_first_load": keep_pending("run.chatLoad"),
        "relay_outbox": keep_pending("run.chatOutboxSubmit"),
        "relay_other": keep_pending("system.activateCodexAuthProfile"),
        "phone_older_page": Phone("p").waits("run.chatLoadPageBefore"),
        "phone_first_load": Phone("p").waits("run.chatLoadThread"),
        "phone_outbox_ios": Phone("p", "ios").waits("run.chatOutboxSubmit"),
        "phone_outbox_android": Phone("p", "android").waits("run.chatOutboxSubmit"),
        "phone_other": Phone("p").waits("system.ping"),
    }
    assert impl == DEADLINES
    assert analyse(impl).ok


def test_the_relay_routes_a_phone_to_the_desktop_its_registration_names():
    r = RelayRouter()
    gate = VersionGate(lambda: [])
    assert r.register(USER, {"deviceId": DESK_ID, "relayProtocolVersion": "1.7"}, "desktop",
                      DEVICES, gate, 0.0) == 0
    phone = r.register(USER, {"deviceId": PHONE_ID, "relayProtocolVersion": "1.7",
                              "targetDesktopDeviceId": DESK_ID}, "mobile", DEVICES, gate, 0.0)
    assert phone == Client(USER, PHONE_ID, DESK_ID)
    assert r.on_request(phone, req("r-1"), 0.0) == []  # the desktop is online: admitted


def test_a_stale_source_registration_is_refused_at_admission():
    # W32: the phone registered again on a new socket; the old socket's requests are refused
    r = RelayRouter()
    gate = VersionGate(lambda: [])
    r.register(USER, {"deviceId": DESK_ID, "relayProtocolVersion": "1.7"}, "desktop",
               DEVICES, gate, 0.0)
    hello = {"deviceId": PHONE_ID, "relayProtocolVersion": "1.7", "targetDesktopDeviceId": DESK_ID}
    old = r.register(USER, hello, "mobile", DEVICES, gate, 0.0)
    new = r.register(USER, hello, "mobile", DEVICES, gate, 1.0)
    [refusal] = r.on_request(old, req("r-1"), 2.0)
    assert refusal.frame["payload"]["error"]["code"] == -32024
    assert refusal.frame["payload"]["error"]["data"]["retryable"] is True
    assert not r.pending  # nothing admitted
    assert r.on_request(new, req("r-1"), 2.0) == [] and len(r.pending) == 1


def test_the_phone_never_sends_an_unlisted_method_or_a_mutation_without_its_key():
    from osf_check.relay.wire.phone import Phone
    p = Phone("phone-1")
    with pytest.raises(ValueError, match="not in the phone's method list"):
        p.request("r-1", "session.rename", {}, None)
    with pytest.raises(ValueError, match="needs its idempotency key"):
        p.request("r-2", "run.chatOutboxSubmit", env.outbox_params("s", "op"), None)
    assert p.attempts == {}  # nothing counted as sent
    assert p.request("r-3", "system.ping", {}, None)["payload"]["method"] == "system.ping"


def test_the_outbox_adapter_checks_that_the_session_exists():
    app = DesktopApp(sessions={"s": None})
    r = app.handle("run.chatOutboxSubmit", env.outbox_params("nope", "op-1"))
    assert r["error"]["data"]["kind"] == "not_found" and not app.outbox


def test_stop_and_send_now_never_stops_another_run():
    app = DesktopApp(sessions={"s": ("run-2", "th-1", "turn-9")})
    app.handle("run.chatOutboxSubmit", env.outbox_params("s", "op-1"))
    queue = app.outbox["s"][0]["queueId"]
    stop = {"sessionId": "s", "queueId": queue, "operationId": "op-1",
            "expectedRunId": "run-1", "expectedThreadId": "th-1", "expectedTurnId": "turn-9"}
    r = app.handle("run.chatOutboxStopAndSendNow", stop)
    assert r["error"]["data"]["kind"] == "conflict" and not app.stopped  # not the run it saw
    r = app.handle("run.chatOutboxStopAndSendNow", {**stop, "expectedRunId": "run-2"})
    assert r["result"] == {"stopped": True, "sent": True,
                           "receipt": {"queueId": queue, "operationId": "op-1"}}
    assert app.stopped == [("run-2", "th-1", "turn-9")]


def test_stop_and_send_now_finishes_as_its_own_task_when_its_handler_is_dropped():
    # 004: "startet sie als eigenen Task und wartet nur auf das Ergebnis ... auch wenn das
    # Relay nicht mehr wartet": the dispatch limit drops the handler while the run stops
    app = DesktopApp(sessions={"s": ("run-1", "th-1", "turn-1")})
    app.handle("run.chatOutboxSubmit", env.outbox_params("s", "op-1"))
    stop = {"sessionId": "s", "queueId": "q-1", "operationId": "op-1",
            "expectedRunId": "run-1", "expectedThreadId": "th-1", "expectedTurnId": "turn-1"}
    handler = app.start("run.chatOutboxStopAndSendNow", stop)
    assert not handler.done and app.stopped == [("run-1", "th-1", "turn-1")]
    assert not app.outbox["s"][0].get("sent")  # awaiting the run's end
    handler.drop()
    assert handler.done and handler.answer is None  # the relay gets no answer from it
    app.tick()
    assert app.outbox["s"][0]["sent"] is True and app.tasks == []


def test_a_dropped_handler_ends_at_its_await_point():
    ran = []

    def steps():
        try:
            ran.append("before")
            yield
            ran.append("after")
            return {"result": {}}
        finally:
            ran.append("ended")  # a Rust future dropped at an await point runs its drops
    t = Task(steps())
    t.advance()
    t.drop()
    assert ran == ["before", "ended"] and t.done and t.dropped and t.answer is None
    t.advance()
    assert ran == ["before", "ended"]


def test_004s_size_limits_are_enforced_by_the_desktop():
    from osf_check.relay.wire import limits
    d = DesktopRouter(":memory:", USER)
    ids = [f"s{i}" for i in range(17)]
    answer = _answered(d, forwarded("rc", "run.chatReconcileSessions", {"sessionIds": ids}, None))
    assert answer["error"]["data"]["kind"] == "invalid_params"
    c = d.receive(forwarded("rb", "files.readBinary", {}, None), 0)
    assert d.start(c, 0) == "run"
    d.finish(c, {"result": {"data": "x" * (limits.READ_BINARY + 1)}}, 1)
    frame = d.take_answer(c)
    assert frame["payload"]["error"]["data"]["kind"] == "validation"
    c = d.receive(forwarded("ok", "files.readBinary", {}, None), 2)
    d.start(c, 2)
    d.finish(c, {"result": {"data": "x" * limits.READ_BINARY}}, 3)
    assert "result" in d.take_answer(c)["payload"]  # at the limit: sent


def test_the_chunked_upload_has_its_own_ledger_and_append_releases_its_claim():
    app = DesktopApp(sessions={"s": None})
    assert app.handle("files.beginChatAttachmentUpload", {"sessionId": "s", "uploadId": "u1"})[
        "result"] == {"uploadId": "u1"}
    chunk = {"uploadId": "u1", "index": 0, "data": "abc"}
    app.handle("files.appendChatAttachmentUploadChunk", chunk)
    r = app.handle("files.appendChatAttachmentUploadChunk", chunk)  # a rerun: harmless
    assert r["result"]["chunks"] == 1
    fin = {"uploadId": "u1"}
    assert app.handle("files.finishChatAttachmentUpload", fin)["result"]["state"] == "finished"
    assert app.handle("files.finishChatAttachmentUpload", fin)["result"]["state"] == "finished"
    assert app.handle("files.cancelChatAttachmentUpload", fin)["error"]["data"]["kind"] == \
        "conflict"
    # the router lets chunk-append's completed claim go: a retry runs again (harmlessly)
    d = DesktopRouter(":memory:", USER)
    params = {"uploadId": "u1", "index": 1, "data": "d"}
    c = d.receive(forwarded("a1", "files.appendChatAttachmentUploadChunk", params, "key-12345678"), 0)
    assert d.start(c, 0) == "run"
    d.finish(c, {"result": {"chunks": 2}}, 1)
    assert d.claims.rows() == 0 and d.memory.state(c.scope) == "none"
    c2 = d.receive(forwarded("a2", "files.appendChatAttachmentUploadChunk", params, "key-12345678"),
                   2)
    assert d.start(c2, 2) == "run"
