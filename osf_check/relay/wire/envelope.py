"""Frames and their validation: the phone's ``rpc.request``, the desktop's ``rpc.response``.

Every frame is ``{"type": …, "payload": {…}}``.  A phone's request holds only ``id``,
``method``, ``params``, ``idempotencyKey``, ``traceparent`` and ``tracestate``: any
other field (a ``userId``, a target desktop, a snake_case field) fails the whole frame.

>>> ok = request("r-1", "system.ping", {})
>>> validate_request(ok)["id"]
'r-1'
>>> validate_request({**ok, "payload": {**ok["payload"], "user_id": "u"}})
Traceback (most recent call last):
...
osf_check.relay.wire.envelope.FrameError: unknown field in rpc.request: user_id
>>> snake_keys({"entries": [{"queue_id": 1}]})
['entries[0].queue_id']
"""

from __future__ import annotations

import re
from typing import Any

from .manifest import MANIFEST
from .text import byte_len, trim, unreadable

REQUEST_FIELDS = frozenset({"id", "method", "params", "idempotencyKey", "traceparent",
                            "tracestate"})
MAX_ID_BYTES = 128  # only for the -32028 answers (004)
MAX_KEY_BYTES = 256
TRACEPARENT = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$")
SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

OUTBOX_SUBMIT_FIELDS = frozenset({"queueId", "operationId", "sessionId", "userText", "promptText",
                                  "attachments", "speedMode", "createdAt", "updatedAt", "intent",
                                  "sendMode", "source"})
OUTBOX_SUBMIT_OPTIONAL = frozenset({"threadId", "expectedChatSettings", "accessMode",
                                    "expectedActiveRunId"})
STOP_AND_SEND_FIELDS = frozenset({"sessionId", "queueId", "operationId", "expectedRunId",
                                  "expectedThreadId", "expectedTurnId"})


class FrameError(ValueError):
    """The frame is malformed: it fails as a whole."""


class Unreadable(FrameError):
    """The frame holds half a surrogate pair: no Rust reader takes it, id and all."""


def request(rid: str, method: str, params: dict[str, Any], key: str | None = None,
            traceparent: str = TRACE) -> dict[str, Any]:
    """A well-formed ``rpc.request`` frame, as a phone writes it."""
    p: dict[str, Any] = {"id": rid, "method": method, "params": params, "traceparent": traceparent}
    if key is not None:
        p["idempotencyKey"] = key
    return {"type": "rpc.request", "payload": p}


def has_id(payload: Any) -> bool:
    """Whether the request names itself: a readable string, not empty once trimmed.  004
    sets no length on a request id: the pending key holds it trimmed, whatever its size."""
    rid = payload.get("id") if isinstance(payload, dict) else None
    return isinstance(rid, str) and not unreadable(rid) and trim(rid) != ""


def id_ok(payload: Any) -> bool:
    """Whether a request over the rate limit has an id its -32028 answer may carry: 004
    answers only "eine rpc.request mit einer Anfrage-ID von höchstens 128 Bytes".  The
    frame is discarded before validation, so the id is measured as the frame carries
    it, untrimmed."""
    rid = payload.get("id") if isinstance(payload, dict) else None
    return has_id(payload) and byte_len(rid) <= MAX_ID_BYTES  # type: ignore[arg-type]


def trace_ok(payload: Any) -> bool:
    tp = payload.get("traceparent") if isinstance(payload, dict) else None
    return isinstance(tp, str) and TRACEPARENT.match(tp) is not None


def validate_request(frame: Any) -> dict[str, Any]:
    """The payload of a valid ``rpc.request``; raises :class:`FrameError` otherwise."""
    if unreadable(frame):
        raise Unreadable("text holding half a surrogate pair, which no Rust string holds")
    if not isinstance(frame, dict) or frame.get("type") != "rpc.request":
        raise FrameError("not an rpc.request frame")
    if set(frame) - {"type", "payload"}:
        raise FrameError(f"unknown envelope field: {sorted(set(frame) - {'type', 'payload'})[0]}")
    p = frame.get("payload")
    if not isinstance(p, dict):
        raise FrameError("rpc.request without a payload object")
    extra = sorted(set(p) - REQUEST_FIELDS)
    if extra:
        raise FrameError(f"unknown field in rpc.request: {extra[0]}")
    if not has_id(p):
        raise FrameError("request id missing or empty")
    if not isinstance(p.get("method"), str):
        raise FrameError("method missing")
    if "params" in p and not isinstance(p["params"], dict):
        raise FrameError("params must be an object")
    if not trace_ok(p):
        raise FrameError("missing or malformed traceparent")
    if "tracestate" in p and not isinstance(p["tracestate"], str):
        raise FrameError("malformed tracestate")
    if "idempotencyKey" in p and not isinstance(p["idempotencyKey"], str):
        raise FrameError("idempotencyKey must be a string")
    return {**p, "id": trim(p["id"]), "params": p.get("params", {})}


def snake_keys(value: Any, where: str = "") -> list[str]:
    """Paths of every snake_case key in a result (the desktop refuses to send any)."""
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{where}.{k}" if where else str(k)
            if isinstance(k, str) and SNAKE.match(k):
                out.append(path)
            out.extend(snake_keys(v, path))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(snake_keys(v, f"{where}[{i}]"))
    return out


def params_problem(method: str, params: dict[str, Any], key: str | None) -> str | None:
    """Why the desktop refuses these params (-32602), or None."""
    mutation = method in MANIFEST and MANIFEST[method].mutation
    if mutation and (not key or byte_len(key) > MAX_KEY_BYTES):
        return "a mutation needs a non-empty idempotency key of at most 256 bytes"
    bad = snake_keys(params)
    if bad:
        return f"snake_case param: {bad[0]}"
    if method == "run.chatOutboxSubmit":
        missing = sorted(OUTBOX_SUBMIT_FIELDS - set(params))
        extra = sorted(set(params) - OUTBOX_SUBMIT_FIELDS - OUTBOX_SUBMIT_OPTIONAL)
        if missing or extra:
            return f"run.chatOutboxSubmit: {'missing ' + missing[0] if missing else 'unknown ' + extra[0]}"
    if method == "run.chatOutboxStopAndSendNow" and set(params) != STOP_AND_SEND_FIELDS:
        return "run.chatOutboxStopAndSendNow takes exactly " + ", ".join(sorted(STOP_AND_SEND_FIELDS))
    return None


def outbox_params(session: str, operation: str, text: str = "hello") -> dict[str, Any]:
    """Valid ``run.chatOutboxSubmit`` params (enqueue at the end of the queue)."""
    return {"queueId": "q-1", "operationId": operation, "sessionId": session, "userText": text,
            "promptText": text, "attachments": [], "speedMode": "normal", "createdAt": 0,
            "updatedAt": 0, "intent": "enqueue", "sendMode": "queue", "source": "phone"}
