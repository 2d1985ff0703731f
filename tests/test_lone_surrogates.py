"""Text that holds half a surrogate pair: ``"\\udc00"`` is valid JSON, so a phone's frame or
a Graph's result may carry one, and both relays run on JavaScript strings, which hold
them.  Every path that measures, cuts, stores or hashes such text must take it as
JavaScript does (``JSON.stringify`` writes a lone half as the escape ``\\udc00``: 6 code
units, 6 bytes; ``Buffer.byteLength`` writes it as U+FFFD: 3 bytes), and never raise:
Python's UTF-8 codec refuses lone surrogates, SQLite's binding too.

The limits are written here from the documents, not imported from ``relay/``.
"""

from __future__ import annotations

import json

import pytest

from osf_check.relay.graph.desktop import Command, DesktopRelay
from osf_check.relay.wire import envelope as env
from osf_check.relay.wire import limits
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.idempotency import DurableClaims, Scope, fingerprint
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
@pytest.mark.parametrize("halves, ok", [(42, True), (43, False)])
def test_a_request_id_of_lone_halves_is_measured_as_node_writes_it(halves, ok):
    # Buffer.byteLength writes a lone half as U+FFFD, 3 bytes: 42 are 126, 43 are 129
    r = RelayRouter()
    r.connect_desktop(USER, DESK)
    out = r.on_request(PHONE, env.request(LONE * halves, "system.ping", {}), 0.0)
    if ok:
        assert out == [] and len(r.pending) == 1
    else:
        assert out[0].frame["payload"]["error"]["code"] == -32600 and not r.pending


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


def test_keys_of_lone_halves_are_kept_apart_and_replayed(tmp_path):
    # SQLite's binding refuses a lone half; one that wrote U+FFFD for it would merge
    # these two keys, and the second call would be answered with the first one's result
    params = {"sessionId": "s" + LONE, "name": "n"}
    d = DesktopRouter(tmp_path / "claims.sqlite", USER)
    first = _run(d, _forwarded("r-1", "k" + LONE, params), {"result": {"t": LONE}})
    other = _run(d, _forwarded("r-2", "k\udc01", params), {"result": {"t": "other"}})
    assert (first["result"], other["result"]) == ({"t": LONE}, {"t": "other"})
    d = d.restarted()  # the replay comes from the file
    again = _run(d, _forwarded("r-3", "k" + LONE, params), {"result": {"t": "ran twice"}})
    assert again["result"] == {"t": LONE}
    assert d.claims.timers()[0][2].key in ("k" + LONE, "k\udc01")  # read back whole
    d.close()


def test_a_stored_answer_is_measured_as_json_stringify_writes_it():
    # 256 KiB: 44,000 lone halves are 264,000 bytes written as escapes (132,000 as UTF-8)
    s = Scope(USER, PHONE.client_id, "system.activateCodexAuthProfile", "key-0001")
    reg = DurableClaims(":memory:")
    reg.claim(s, {}, 0.0)
    answer, stored = reg.store(s, {"result": {"t": LONE * 44_000}}, 1.0)
    assert stored and answer["error"]["data"]["kind"] == "ambiguous"
    assert limits.size({"a": LONE}) == len('{"a":"\\udc00"}')


def test_params_with_lone_halves_have_a_fingerprint_of_their_own():
    assert fingerprint({"a": LONE}) != fingerprint({"a": "\udc01"}) != fingerprint({"a": ""})
