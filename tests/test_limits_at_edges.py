"""Every limit of the two documents at its real value, at the edge (limit - 1, limit,
limit + 1), on the implementation alone: what it answers *and* what it stores.

The limits are written here from the documents, not imported from ``relay/``: a
limit that moved in the implementation must fail these tests.  Hypothesis draws
around each edge; the edge values themselves are explicit examples.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from osf_check.fuzz.oracles import utf16_length
from osf_check.relay.graph.desktop import Command, DesktopRelay
from osf_check.relay.graph.server import GraphServer, ToolError
from osf_check.relay.wire.idempotency import DurableClaims, MemoryClaims, Scope
from osf_check.relay.wire.relay_router import Client, RelayRouter, request

SID = "gs_" + "ab" * 16


def shared() -> dict:
    """The server's sessions after a sync uploaded SID (a start needs one)."""
    return {SID: {"slug": "s", "project_id": "p-1"}}
FAST = settings(max_examples=25, deadline=None)


# graph-relay.md / 000 ---------------------------------------------------------------------
@FAST
@given(st.integers(1, 200))
@example(7).via("limit - 1")
@example(8).via("limit")
@example(128).via("limit")
@example(129).via("limit + 1")
def test_idempotency_key_length_8_to_128(n):
    s = GraphServer(sessions=shared())
    args = {"graph_session_id": SID, "idempotency_key": "k" * n}
    if 8 <= n <= 128:
        s.run_graph_session(0, args)
        assert len(s.runs) == 1
    else:
        with pytest.raises(ToolError):
            s.run_graph_session(0, args)
        assert not s.runs  # nothing stored


def _completion_of_length(units: int, unit: str) -> tuple[str, int]:
    """A result text whose completion measures ``units`` JSON.stringify units, or the
    nearest below that ``unit`` reaches."""
    envelope = {"execution_id": "e", "status": "completed", "result": "", "total_tokens": 1,
                "reported_cost": 0.5}
    base = utf16_length(json.dumps(envelope, ensure_ascii=False, separators=(",", ":")))
    k = (units - base) // utf16_length(unit)
    return unit * k, base + k * utf16_length(unit)


@pytest.mark.parametrize("unit", ["a", "日", "😀"])
@pytest.mark.parametrize("target", [99_999, 100_000, 100_001, 100_002])
def test_completion_whole_up_to_100000_units_stored_in_the_outbox(tmp_path, unit, target):
    text, size = _completion_of_length(target, unit)
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.commands["e"] = c = Command("e", SID, d.slug, state="running")
    posted = d.finish(c, "completed", text, 1, 0.5)
    stored = dict(d.outbox.entries())["e"]
    assert stored == posted  # what is stored is what is posted
    if size <= 100_000:
        assert posted["result"] == text
    else:
        assert posted == {"execution_id": "e", "status": "completed", "result_truncated": True}


# an emoji is two UTF-16 code units (JavaScript's length): 1,000 of them fill the 2,000
ERRORS = [(ch, n, min(n, 2_000 // units)) for ch, units in (("é", 1), ("😀", 2))
          for n in (2_000 // units - 1, 2_000 // units, 2_000 // units + 1)]


# ASCII ids: mutmut hands the ids back to pytest, and one with an escape finds no test
@pytest.mark.parametrize("ch, n, kept", ERRORS, ids=[f"{n}xU+{ord(ch):04X}" for ch, n, _ in ERRORS])
def test_errors_cut_to_2000_characters_counted_as_the_100000_are(tmp_path, ch, n, kept):
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.commands["e"] = c = Command("e", SID, d.slug, state="running")
    posted = d.finish(c, "failed", None, 0, 0.0, error=ch * n)
    assert posted["error"] == ch * kept
    assert dict(d.outbox.entries())["e"]["error"] == posted["error"]


@pytest.mark.parametrize("first", ["\U00010000", "😀", "\U0010FC00"], ids=["D800", "D83D", "DBFF"])
def test_an_error_cut_inside_a_pair_drops_its_first_half(tmp_path, first):
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.commands["e"] = c = Command("e", SID, d.slug, state="running")
    posted = d.finish(c, "failed", None, 0, 0.0, error="x" + first * 1_000)  # 2,001 units
    assert posted["error"] == "x" + first * 999
    assert d.finish(c, "failed", None, 0, 0.0, error="xx" + first * 999)["error"] == \
        "xx" + first * 999  # 2,000 units: whole


@pytest.mark.parametrize("n", [99, 100, 101])
def test_sync_with_at_most_100_sessions(n):
    s = GraphServer()
    sessions = [{"graph_session_id": f"gs_{i:032x}", "slug": "x"} for i in range(n)]
    if n <= 100:
        s.sync("p", sessions)
        assert len(s.list_graph_sessions("p", 50)["sessions"]) == min(n, 50)
    else:
        with pytest.raises(ToolError):
            s.sync("p", sessions)
        assert s.list_graph_sessions("p")["sessions"] == []  # nothing stored


@pytest.mark.parametrize("limit", [0, 1, 50, 51])
def test_list_graph_sessions_limit_1_to_50(limit):
    s = GraphServer()
    s.sync("p", [{"graph_session_id": f"gs_{i:032x}", "slug": "x"} for i in range(60)])
    if 1 <= limit <= 50:
        assert len(s.list_graph_sessions("p", limit)["sessions"]) == limit
    else:
        with pytest.raises(ToolError):
            s.list_graph_sessions("p", limit)


# wire-relay.md / 004 -----------------------------------------------------------------------
USER, DESK = "user-1", "desk-1"


def _relay(**kw) -> RelayRouter:
    r = RelayRouter(**kw)
    r.connect_desktop(USER, DESK)
    return r


def _id_of(n: int) -> str:
    return "é" * (n // 2) + "x" * (n % 2)  # n UTF-8 bytes


@pytest.mark.parametrize("n", [127, 128, 129, 4096])
def test_a_request_id_of_any_length_is_admitted_under_the_rate_limit(n):
    r = _relay()
    assert r.on_request(Client(USER, "phone", DESK), request(_id_of(n), "system.ping", {}),
                        0.0) == []
    assert [k[2] for k in r.pending] == [_id_of(n)]


@pytest.mark.parametrize("rid, answered", [(_id_of(127), True), (_id_of(128), True),
                                           (_id_of(129), False), (" " + "x" * 128, False)])
def test_over_the_rate_limit_only_an_id_of_at_most_128_bytes_is_answered(rid, answered):
    # 004: "Es beantwortet nur eine rpc.request mit einer Anfrage-ID von höchstens 128
    # Bytes"; measured as the frame carries it, since the frame is dropped unvalidated
    r = _relay(burst=0, rate=0.0)
    out = r.on_request(Client(USER, "phone", DESK), request(rid, "system.ping", {}), 0.0)
    if answered:
        assert [m.frame["payload"]["error"]["code"] for m in out] == [-32028]
    else:
        assert out == []
    assert not r.pending


@pytest.mark.slow
@pytest.mark.parametrize("scope, limit", [("client", 64), ("desktop", 128), ("user", 512),
                                          ("process", 4_096)])
def test_pending_limits_at_their_real_values(scope, limit):
    r = _relay(burst=10_000, rate=0.0)
    # fill the scope's limit from as many phones (and desktops) as that scope allows
    phones = 1 if scope == "client" else limit // 64 + 1
    desks = [DESK] if scope in ("client", "desktop") else [f"d{i}" for i in range(limit // 128 + 1)]
    users = [USER] if scope != "process" else [f"u{i}" for i in range(limit // 512 + 1)]
    for u in users:
        for d in desks:
            r.connect_desktop(u, d)
    def client(n: int) -> Client:
        # spread over users, then desktops, then phones: only the scope under test fills
        u, rest = users[n % len(users)], n // len(users)
        d, rest = desks[rest % len(desks)], rest // len(desks)
        return Client(u, f"p{rest % phones}", d)

    for n in range(limit):
        assert r.on_request(client(n), request(f"r{n}", "system.ping", {}), 0.0) == []
    assert len(r.pending) == limit  # limit - 1 and limit admitted
    c = client(limit) if scope != "client" else client(0)
    [out] = r.on_request(c, request("one-more", "system.ping", {}), 0.0)
    err = out.frame["payload"]["error"]
    assert err["code"] == -32020 and err["data"]["limit"] == limit
    assert err["data"]["scope"] == scope and len(r.pending) == limit  # nothing stored
    # the counters equal a recount of the pending table
    for (sc, key), count in r.counts.items():
        recount = sum(1 for e in r.pending.values()
                      if {"process": (), "user": (e.client.user,),
                          "desktop": (e.client.user, e.client.desktop),
                          "client": (e.client.user, e.client.client_id)}[sc] == key)
        assert count == recount


def test_the_32028_answers_bucket_burst_300_refill_150_per_second():
    r = _relay(burst=0, rate=0.0)
    c = Client(USER, "phone", DESK)
    answered = [bool(r.on_request(c, request(f"o{i}", "system.ping", {}), 0.0))
                for i in range(301)]
    assert answered == [True] * 300 + [False]
    assert r.on_request(c, request("t1", "system.ping", {}), 1 / 150)  # one token back
    assert not r.on_request(c, request("t2", "system.ping", {}), 1 / 150)


@pytest.mark.parametrize("n", [31, 32, 33])
def test_waiters_per_key_32(n):
    m = MemoryClaims()
    s = Scope("u", "d", "m", "k")
    m.start(s)
    for _ in range(min(n, 32)):
        assert not m.full(s)
        m.join(s)
    assert m.full(s) == (min(n, 32) >= 32)
    assert m.get(s).waiters == min(n, 32)


@pytest.mark.parametrize("n", [511, 512, 513])
def test_512_completed_claims_kept(n):
    m = MemoryClaims()
    for i in range(n):
        s = Scope("u", "d", "m", f"k{i}")
        m.start(s)
        m.complete(s, {"result": {}})
    assert len(m.claims) == min(n, 512)
    assert m.state(Scope("u", "d", "m", f"k{n - 1}")) == "done"  # the newest kept


@pytest.mark.slow
@pytest.mark.parametrize("n", [4_095, 4_096, 4_097])
def test_4096_durable_rows(tmp_path, n):
    reg = DurableClaims(tmp_path / "c.sqlite")
    kinds = [reg.claim(Scope("u", "d", "m", f"k{i:05d}"), {}, 0.0).kind for i in range(n)]
    assert kinds == ["run"] * min(n, 4_096) + ["capacity"] * max(0, n - 4_096)
    assert reg.rows() == min(n, 4_096)  # the one over the limit stored nothing


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_stored_answers_up_to_256_kib(tmp_path, delta):
    reg = DurableClaims(tmp_path / "c.sqlite")
    s = Scope("u", "d", "m", "k")
    reg.claim(s, {}, 0.0)
    overhead = len(json.dumps({"result": ""}).encode("utf-8"))
    answer = {"result": "x" * (256 * 1024 - overhead + delta)}
    sent, stored = reg.store(s, answer, 1.0)
    assert stored
    if delta <= 0:
        assert sent == answer and reg.row(s).answer == answer
    else:
        assert sent != answer and reg.row(s).answer == sent  # stored as ambiguous
        assert sent["error"]["data"]["kind"] == "ambiguous"


# 004's size limits (relay/wire/limits.py), each at its edge, with the exact reason --------------
def test_004s_size_limits_at_their_edges():
    from osf_check.relay.wire import limits as L
    mib, kib = 1 << 20, 1 << 10
    assert (L.MAX_FRAME, L.RECONCILE_SESSIONS, L.RECONCILE_RESULT, L.RECONCILE_OUTBOX,
            L.COMMAND_OUTPUT_PAGE, L.READ_BINARY) == (32 * mib, 16, 8 * mib, 256, 256 * kib,
                                                      16 * mib)
    assert L.size({"a": "é"}) == len('{"a":"é"}'.encode("utf-8")) == 10  # compact UTF-8
    rec = "run.chatReconcileSessions"
    assert L.params_problem(rec, {"sessionIds": ["s"] * 16}) is None
    assert L.params_problem(rec, {"sessionIds": ["s"] * 17}) == \
        "run.chatReconcileSessions takes at most 16 sessions per call"
    assert L.params_problem(rec, {}) is None and L.params_problem("x", {"sessionIds": [1] * 99}) is None
    # the reconcile result: 8 MiB of compact JSON, 256 outbox entries a session
    pad = 8 * mib - L.size({"sessions": [], "pad": ""})
    assert L.result_problem(rec, {"sessions": [], "pad": "x" * pad}) is None
    assert L.result_problem(rec, {"sessions": [], "pad": "x" * (pad + 1)}) == \
        "run.chatReconcileSessions: result over 8 MiB"
    ok = {"sessions": [{"outbox": [0] * 256}, {"outbox": None}, "not a session"]}
    assert L.result_problem(rec, ok) is None
    assert L.result_problem(rec, {"sessions": [{"outbox": [0] * 257}]}) == \
        "run.chatReconcileSessions: over 256 outbox entries in a session"
    assert L.result_problem(rec, None) is None and L.result_problem(rec, [1]) is None
    # a command-output page: 256 KiB of UTF-8 (a 2-byte character counts twice)
    page = "run.chatCommandOutputRead"
    assert L.result_problem(page, {"output": "é" * (128 * kib)}) is None
    assert L.result_problem(page, {"output": "é" * (128 * kib) + "x"}) == \
        "run.chatCommandOutputRead: page over 256 KiB"
    assert L.result_problem(page, "not a dict") is None
    # a binary read: 16 MiB
    assert L.result_problem("files.readBinary", {"data": "x" * (16 * mib)}) is None
    assert L.result_problem("files.readBinary", {"data": "x" * (16 * mib + 1)}) == \
        "files.readBinary: over 16 MiB"
    assert L.result_problem("files.readBinary", "not a dict") is None
    assert L.result_problem("system.ping", {"data": "x" * (16 * mib + 1)}) is None
