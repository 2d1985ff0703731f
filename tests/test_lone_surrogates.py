"""Text that holds half a surrogate pair: ``"\\udc00"`` is valid JSON, so a Graph's result or
a phone's frame may carry one.

The Graph-run relay is JavaScript (000: ``useConnectedGraphRelay.ts``), whose strings
hold such halves: every path that measures, cuts or stores a Graph's text takes it as
JavaScript does (``JSON.stringify`` writes a lone half as the escape ``\\udc00``: 6 code
units; ``String.length`` counts it one), and never raises (Python's UTF-8 codec refuses
lone surrogates, SQLite's binding too).

The wire relay and the desktop router are Rust (004, in German: ``request_validation.rs``,
``pending_requests.rs``, ``router/mod.rs``), whose strings hold no half: a frame holding
one is not a request either side reads.  The relay refuses it at once with JSON-RPC's
parse error and no id (004 names no answer), forwards nothing and admits nothing; the
desktop, given one directly, refuses it before any claim.  Ids are trimmed as Rust's
``str::trim`` trims (Unicode White_Space: not U+001C to U+001F, which Python's
``str.strip`` trims too), and lengths are UTF-8 bytes.

The limits are written here from the documents, not imported from ``relay/``.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osf_check.relay.graph.desktop import Command, DesktopRelay
from osf_check.relay.wire import envelope as env
from osf_check.relay.wire import limits
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.idempotency import DurableClaims, Scope
from osf_check.relay.wire.relay_router import Client, RelayRouter

SID = "gs_" + "ab" * 16
LONE = "\udc00"
USER, DESK = "user-1", "desk-1"
PHONE = Client(USER, "phone-1", DESK)


def _desktop(tmp_path) -> tuple[DesktopRelay, Command]:
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.commands["e"] = c = Command("e", SID, d.slug, state="running")
    return d, c


# graph-relay.md / 000 ---------------------------------------------------------------------
def test_a_failed_graphs_lone_halves_are_posted_and_stored_as_they_are(tmp_path):
    d, c = _desktop(tmp_path)
    posted = d.finish(c, "failed", {"r": "x" + LONE}, 1, 0.5, error="a" + LONE + "b\ud83d")
    assert posted["error"] == "a" + LONE + "b\ud83d" and posted["result"] == {"r": "x" + LONE}
    d.outbox.reopen()  # from the file, not a cache
    assert dict(d.outbox.entries())["e"] == posted


def test_an_error_of_lone_halves_is_cut_at_2000_of_them(tmp_path):
    # String.length counts a lone half as one unit: the cut is 2,000 of them
    d, c = _desktop(tmp_path)
    assert d.finish(c, "failed", None, 0, 0.0, error=LONE * 2_001)["error"] == LONE * 2_000
    assert d.finish(c, "failed", None, 0, 0.0, error="\ud800" * 2_000)["error"] == "\ud800" * 2_000


def _envelope_units(result_units: int) -> int:
    """JSON.stringify length of the completion with a result of that many units (all
    plain, so the envelope is measured on ASCII)."""
    full = {"execution_id": "e", "status": "completed", "result": "x" * result_units,
            "total_tokens": 1, "reported_cost": 0.5}
    return len(json.dumps(full, separators=(",", ":")))


@pytest.mark.parametrize("over", [0, 1])
def test_a_lone_half_in_a_result_measures_six_units_as_json_stringify_writes_it(tmp_path, over):
    # 16,000 lone halves are 96,000 units (16,000 by code points): a measure that counts
    # them once posts whole a completion JavaScript would call 100,000 + over
    halves = 16_000
    pad = 100_000 + over - _envelope_units(0) - 6 * halves
    d, c = _desktop(tmp_path)
    posted = d.finish(c, "completed", LONE * halves + "x" * pad, 1, 0.5)
    assert ("result_truncated" in posted) is bool(over)
    assert dict(d.outbox.entries())["e"] == posted


def test_a_pair_given_as_two_halves_is_one_character(tmp_path):
    # "\ud83d\ude00" as two code points is the pair JavaScript reads as one emoji: 2 units
    pad = 100_000 - _envelope_units(0) - 2 * 10_000
    d, c = _desktop(tmp_path)
    posted = d.finish(c, "completed", "\ud83d\ude00" * 10_000 + "x" * pad, 1, 0.5)
    assert "result" in posted


# wire-relay.md / 004 -----------------------------------------------------------------------
def _refusal(out: list) -> dict:
    [m] = out
    return m.frame["payload"]


def _relay() -> RelayRouter:
    r = RelayRouter()
    r.connect_desktop(USER, DESK)
    return r


def _with_half(where: str) -> dict:
    f = env.request("r-1", "system.activateCodexAuthProfile", {"profileId": "p"}, key="k-1")
    p = f["payload"]
    if where == "params key":
        p["params"] = {"profileId": "p", "x" + LONE: 1}
    elif where == "params value":
        p["params"] = {"profileId": ["p", "q" + LONE]}
    else:
        p[where] = p[where] + LONE
    return f


@pytest.mark.parametrize("where", ["id", "method", "idempotencyKey", "traceparent",
                                   "params key", "params value"])
def test_a_frame_holding_a_lone_half_is_refused_with_no_id_and_nothing_admitted(where):
    r = _relay()
    answer = _refusal(r.on_request(PHONE, _with_half(where), 0.0))
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert answer["error"]["data"]["reason"] == "text holding half a surrogate pair"
    assert not r.pending and r.route((USER, DESK, "r-1")) == []
    with pytest.raises(env.FrameError) as e:
        env.validate_request(_with_half(where))
    assert str(e.value) == "text holding half a surrogate pair, which no Rust string holds"


def test_an_id_holding_a_lone_half_is_no_id_to_answer():
    assert not env.id_ok({"id": "r-1" + LONE}) and env.id_ok({"id": "r-1"})


def test_an_answer_holding_a_lone_half_is_dropped_not_delivered():
    # the desktop is Rust and writes none; the relay could not read one either
    r = _relay()
    gen = r.connect_desktop(USER, DESK)
    r.on_request(PHONE, env.request("r-1", "system.ping", {}), 0.0)
    r.route((USER, DESK, "r-1"))
    answer = {"type": "rpc.response", "payload": {"clientId": PHONE.client_id, "id": "r-1",
                                                  "result": {"t": LONE}}}
    assert r.on_response(USER, DESK, gen, answer) == []
    assert r.pending[USER, DESK, "r-1"].state == "forwarded"


def test_over_the_rate_limit_a_frame_holding_a_lone_half_gets_no_answer():
    # a well-formed request over the limit is answered -32028 (its own bucket); one
    # that cannot be read is not a request the relay can answer
    r = RelayRouter(burst=1, rate=0.0)
    r.connect_desktop(USER, DESK)
    assert r.on_request(PHONE, env.request("r-0", "system.ping", {}), 0.0) == []
    assert r.on_request(PHONE, _with_half("id"), 0.0) == []
    assert r.on_request(PHONE, _with_half("params value"), 0.0) == []  # id and trace fine
    assert _refusal(r.on_request(PHONE, env.request("r-2", "system.ping", {}), 0.0))[
        "error"]["code"] == -32028


@pytest.mark.parametrize("emoji, ok", [(32, True), (33, False)])
def test_an_id_is_measured_in_utf8_bytes_a_pair_of_code_points_one_character(emoji, ok):
    # "\ud83d\ude00" is what a JSON reader makes one 4-byte character of: 32 are 128,
    # the most a -32028 answer's id may have (004)
    r = RelayRouter(burst=0, rate=0.0)
    r.connect_desktop(USER, DESK)
    out = r.on_request(PHONE, env.request("\ud83d\ude00" * emoji, "system.ping", {}), 0.0)
    if ok:
        assert _refusal(out)["error"]["code"] == -32028
    else:
        assert out == []


def test_ids_are_trimmed_of_unicode_white_space_only():
    # U+001F is no White_Space: Rust keeps it, so "\x1fr-1" and "r-1" are two requests
    # (Python's strip made them one: the second was refused as a duplicate, -32021)
    r = _relay()
    assert r.on_request(PHONE, env.request("\u3000r-1\u2028", "system.ping", {}), 0.0) == []
    assert r.on_request(PHONE, env.request("\x1fr-1", "system.ping", {}), 0.0) == []
    assert sorted(k[2] for k in r.pending) == ["\x1fr-1", "r-1"]
    assert r.on_request(PHONE, env.request("\x1c", "system.ping", {}), 0.0) == []
    blank = _refusal(r.on_request(PHONE, env.request("\u3000\x85", "system.ping", {}), 0.0))
    assert blank["error"]["code"] == -32600 and blank["id"] == ""


def test_a_late_answer_is_matched_on_its_trimmed_id():
    r = _relay()
    gen = r.connect_desktop(USER, DESK)
    r.on_request(PHONE, env.request("\x1fr-1", "system.ping", {}), 0.0)
    r.route((USER, DESK, "\x1fr-1"))
    answer = {"type": "rpc.response", "payload": {"clientId": PHONE.client_id,
                                                  "id": " \x1fr-1\t", "result": {}}}
    assert r.on_response(USER, DESK, gen, {**answer, "payload": {
        **answer["payload"], "id": "r-1"}}) == []  # another request's id
    [m] = r.on_response(USER, DESK, gen, answer)
    assert m.frame["payload"]["id"] == "\x1fr-1"


def _forwarded(rid: str, key: str, params: dict) -> dict:
    f = env.request(rid, "system.activateCodexAuthProfile", params, key=key,
                    traceparent=env.TRACE)
    f["payload"].update(clientId=PHONE.client_id, userId=USER)
    return f


def _run(d: DesktopRouter, frame: dict, result: dict, now: float = 0.0) -> dict:
    c = d.receive(frame, now)
    kind = d.start(c, now)
    if kind == "run":
        d.finish(c, result, now)
    return d.take_answer(c)["payload"]


def test_the_desktop_given_a_frame_holding_a_half_refuses_it_before_any_claim(tmp_path):
    d = DesktopRouter(tmp_path / "claims.sqlite", USER)
    answer = _run(d, _forwarded("r-1", "k" + LONE, {"profileId": "p"}), {"result": {}})
    assert answer["id"] is None and answer["error"]["data"]["kind"] == "parse_error"
    assert answer["error"]["message"] == "text holding half a surrogate pair"
    assert d.claims.rows() == 0
    d.close()


@pytest.mark.parametrize("emoji, ok", [(64, True), (65, False)])
def test_a_key_is_measured_in_utf8_bytes(tmp_path, emoji, ok):
    d = DesktopRouter(tmp_path / "claims.sqlite", USER)
    answer = _run(d, _forwarded("r-1", "😀" * emoji, {"profileId": "p"}), {"result": {}})
    assert ("error" not in answer) is ok
    assert ok or answer["error"]["code"] == -32602
    d.close()


def test_keys_of_characters_past_the_bmp_are_kept_apart_and_replayed(tmp_path):
    params = {"profileId": "p😀"}
    d = DesktopRouter(tmp_path / "claims.sqlite", USER)
    first = _run(d, _forwarded("r-1", "k😀", params), {"result": {"t": "😀"}})
    other = _run(d, _forwarded("r-2", "k😁", params), {"result": {"t": "other"}})
    assert (first["result"], other["result"]) == ({"t": "😀"}, {"t": "other"})
    d = d.restarted()  # the replay comes from the file
    again = _run(d, _forwarded("r-3", "k\ud83d\ude00", params), {"result": {"t": "ran twice"}})
    assert again["result"] == {"t": "😀"}
    assert {t[2].key for t in d.claims.timers()} == {"k😀", "k😁"}  # read back whole
    d.close()


def test_a_stored_answer_is_measured_in_utf8_bytes():
    # 256 KiB: 65,536 emoji are 262,144 bytes (131,072 UTF-16 code units, 65,536 code
    # points); with the JSON around them, over the limit
    s = Scope(USER, PHONE.client_id, "system.activateCodexAuthProfile", "key-0001")
    reg = DurableClaims(":memory:")
    reg.claim(s, {}, 0.0)
    answer, stored = reg.store(s, {"result": {"t": "😀" * 65_536}}, 1.0)
    assert stored and answer["error"]["data"]["kind"] == "ambiguous"
    reg.claim(Scope(USER, PHONE.client_id, "m", "k"), {}, 0.0)
    answer, _ = reg.store(Scope(USER, PHONE.client_id, "m", "k"), {"result": {"t": "😀" * 65_000}}, 1.0)
    assert "result" in answer
    assert limits.size({"a": "😀"}) == len('{"a":""}') + 4


# ids as Hypothesis draws them, against an oracle written from the documents --------------
#: characters at the edges of trimming and pairing: Unicode White_Space, U+001C-U+001F
#: (Python's isspace, not White_Space), U+FEFF and U+200B (neither), halves that pair and
#: halves that do not
_EDGE = [" ", "\t", "\x1c", "\x1f", "\x85", "\u3000", "\u2028", "\ufeff", "\u200b", "a", "é",
         "😀", "\ud83d", "\ude00", "\udc00"]


def _expected(rid: str) -> tuple[int | None, str | None]:
    """(the refusal's code or None if admitted, the id the relay keys or answers)."""
    text = rid.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return -32700, None
    white = {c for c in map(chr, range(0x3001)) if c.isspace()} - set("\x1c\x1d\x1e\x1f")
    while text and text[0] in white:
        text = text[1:]
    while text and text[-1] in white:
        text = text[:-1]
    return (None if text else -32600), text


@settings(max_examples=300, derandomize=True, database=None)
@given(st.lists(st.text(st.sampled_from(_EDGE), max_size=6), min_size=1, max_size=8))
def test_ids_are_trimmed_measured_and_refused_as_rust_reads_them(ids):
    r = _relay()
    admitted: set[str] = set()
    for rid in ids:
        code, key = _expected(rid)
        if code is None and key in admitted:
            code = -32021  # the same request (same client, method, params) again
        out = r.on_request(PHONE, env.request(rid, "system.ping", {}), 0.0)
        if code is None:
            assert out == [], (rid, out)
            admitted.add(key)
        else:
            answer = _refusal(out)
            assert (answer["error"]["code"], answer["id"]) == (code, key), rid
    assert {k[2] for k in r.pending} == admitted
