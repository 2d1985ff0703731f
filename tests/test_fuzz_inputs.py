"""Issue 12, blind spot 2: inputs the model never varies.

The harness sends one well-formed shape of every input.  Here Hypothesis generates
arbitrary tool inputs and frames (fields dropped, added, of the wrong type, Unicode,
empty, over-long, in another key order) against the implementation alone, with the
property: the input is refused with exactly the spec's error, or it is accepted and
behaves exactly as its canonical form (the same params in another key order are the
same request).  Whether an input is valid is decided here from the documents, not by
asking ``relay/``."""

from __future__ import annotations

import pytest
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osf_check.relay.graph.server import GraphServer, ToolError
from osf_check.relay.wire import envelope as env
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.relay_router import Client, RelayRouter, ToPhone

SETTINGS = settings(max_examples=300, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                               max_size=3),
    max_leaves=6)
#: strings near the documents' limits, in several scripts
TEXT = st.one_of(st.text(max_size=20), st.sampled_from(["", " ", "日本語", "😀" * 5]),
                 st.integers(0, 140).map(lambda n: "k" * n),
                 st.integers(0, 70).map(lambda n: "é" * n))


#: what happens to each field of a well-formed input: mostly kept, so that accepted
#: inputs are common too
HOW = st.sampled_from(["keep"] * 9 + ["drop", "any", "text"])


def _vary(draw, fields: dict) -> None:
    """Each field of a well-formed input is kept, dropped, or replaced by any JSON value
    or by a string near the limits."""
    for field in list(fields):
        how = draw(HOW)
        if how == "drop":
            del fields[field]
        elif how == "any":
            fields[field] = draw(JSON)
        elif how == "text":
            fields[field] = draw(TEXT)


def reordered(d: dict) -> dict:
    """The same mapping, its keys in the reverse order (at every level)."""
    return {k: reordered(v) if isinstance(v, dict) else v for k, v in reversed(list(d.items()))}


# the Graph-run relay's run_graph_session (000) ------------------------------------------
SESSION = "gs_" + "ab" * 16


def _graph_valid(args: dict) -> bool:
    """000: graph_session_id (gs_ + 32 hex), idempotency_key (8 to 128 characters),
    arguments an object if given, and nothing else."""
    return (set(args) <= {"graph_session_id", "arguments", "idempotency_key"}
            and isinstance(args.get("graph_session_id"), str)
            and re.fullmatch(r"gs_[0-9a-f]{32}", args["graph_session_id"]) is not None
            and isinstance(args.get("idempotency_key"), str)
            and 8 <= len(args["idempotency_key"]) <= 128
            and isinstance(args.get("arguments", {}), dict))


@st.composite
def tool_inputs(draw) -> dict:
    args: dict = {"graph_session_id": SESSION, "idempotency_key": "key-12345678",
                  "arguments": {"a": 1, "b": [1, 2]}}
    _vary(draw, args)
    if draw(st.booleans()):
        args[draw(st.sampled_from(["extra", "graphSessionId", "Idempotency_Key", ""]))] = draw(JSON)
    order = draw(st.permutations(list(args)))
    return {k: args[k] for k in order}


@SETTINGS
@given(tool_inputs())
def test_run_graph_session_refuses_exactly_the_invalid_inputs(args):
    server = GraphServer()
    sid = args.get("graph_session_id") if isinstance(args, dict) else None
    if isinstance(sid, str):  # a sync uploaded it: only the input's shape is judged here
        server.sessions[sid] = {"slug": "s", "project_id": "p-1"}
    valid = _graph_valid(args)
    try:
        ticket = server.run_graph_session(0, args)
    except ToolError as e:
        assert not valid, f"a valid input was refused: {e}"
        assert not server.runs and not server.by_key  # nothing stored
        return
    assert valid, f"an invalid input was accepted: {args!r}"
    [run] = server.runs
    assert (run.key, run.session_id) == (args["idempotency_key"], args["graph_session_id"])
    # the same input in another key order is the same request: the same ticket, one run
    assert server.run_graph_session(0, reordered(args)) == ticket
    assert len(server.runs) == 1


# the relay's admission (004) --------------------------------------------------------------
USER, DESK = "user-1", "desk-1"
PHONE = Client(USER, "phone-1", DESK)
TRACE = env.TRACE


def _w3c_traceparent(tp) -> bool:
    """W3C Trace Context: version-traceid-parentid-flags in lower-case hex, neither id all
    zeros, version ff invalid."""
    m = re.fullmatch(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})", tp) \
        if isinstance(tp, str) else None
    return m is not None and m[1] != "ff" and set(m[2]) != {"0"} and set(m[3]) != {"0"}


@st.composite
def frames(draw) -> tuple[dict, str]:
    """A frame and what 004 says the relay does with it: 'malformed' (-32600), 'unknown'
    (-32601), 'keyless' (-32026) or 'admit'."""
    method = draw(st.sampled_from(["system.ping", "system.activateCodexAuthProfile",
                                   "run.chatOutboxSubmit", "session.rename", ""]))
    p: dict = {"id": "r-1", "method": method, "params": {"sessionId": "s", "n": 1},
               "traceparent": TRACE, "idempotencyKey": "key-12345678"}
    _vary(draw, p)
    if draw(st.integers(0, 4)) == 0:
        p[draw(st.sampled_from(["extra", "requestId", "Id"]))] = draw(JSON)
    if draw(st.integers(0, 4)) == 0:  # a mutation without its key, now and then
        p.pop("idempotencyKey", None)
    rid = p.get("id")
    malformed = (set(p) - {"id", "method", "params", "idempotencyKey", "traceparent",
                           "tracestate"}
                 or not isinstance(rid, str) or not rid.strip()
                 or not isinstance(p.get("method"), str)
                 or not isinstance(p.get("params", {}), dict)
                 or not _w3c_traceparent(p.get("traceparent"))
                 or ("idempotencyKey" in p and not isinstance(p["idempotencyKey"], str)))
    if malformed:
        expect = "malformed"
    elif p["method"] not in env.MANIFEST:
        expect = "unknown"
    elif env.MANIFEST[p["method"]][0] and "idempotencyKey" not in p:
        expect = "keyless"
    else:
        expect = "admit"
    order = draw(st.permutations(list(p)))
    return {"type": "rpc.request", "payload": {k: p[k] for k in order}}, expect


CODES = {"malformed": -32600, "unknown": -32601, "keyless": -32026}


def _relay() -> RelayRouter:
    r = RelayRouter()
    r.connect_desktop(USER, DESK)
    return r


@SETTINGS
@given(frames())
def test_the_relay_answers_each_frame_as_004_says(case):
    frame, expect = case
    r = _relay()
    out = r.on_request(PHONE, frame, 0.0)
    if expect == "admit":
        assert out == [] and len(r.pending) == 1, out
        rid = frame["payload"]["id"].strip()
        assert (USER, DESK, rid) in r.pending
        # the same request, its payload and params in another key order, is a duplicate
        # of the pending one (-32021), never a conflict (-32022)
        again = {"type": "rpc.request", "payload": reordered(frame["payload"])}
        [dup] = r.on_request(PHONE, again, 1.0)
        assert dup.frame["payload"]["error"]["code"] == -32021
        return
    assert len(out) == 1 and isinstance(out[0], ToPhone), out
    assert out[0].frame["payload"]["error"]["code"] == CODES[expect], (expect, out)
    assert not r.pending


# the desktop's claims (004) ---------------------------------------------------------------
PARAMS = st.dictionaries(st.sampled_from(["sessionId", "name", "profileId", "zeta", "alpha"]),
                         JSON, min_size=1, max_size=5)


@pytest.mark.slow
@SETTINGS
@given(PARAMS, st.permutations(range(5)))
def test_a_retry_with_its_params_in_another_order_is_the_same_request(params, perm):
    keys = list(params)
    shuffled = {keys[i]: params[keys[i]] for i in perm if i < len(keys)}
    d = DesktopRouter(":memory:", USER)

    def send(rid, p):
        f = env.request(rid, "system.activateCodexAuthProfile", p, key="key-12345678")
        f["payload"].update(clientId="phone-1::desk-1", userId=USER)
        return d.receive(f, 0.0)

    first = send("a", params)
    if d.start(first, 0.0) != "run":  # refused by its params (snake_case keys): no claim
        assert "error" in first.answer
        return
    d.finish(first, {"result": {"ok": True}}, 1.0)
    d.take_answer(first)
    retry = send("b", reordered(shuffled))
    assert d.start(retry, 2.0) == "answer"
    assert retry.answer == {"result": {"ok": True}}  # replayed, not a conflict
