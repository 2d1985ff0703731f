"""Error answers of the wire protocol: the relay's numeric codes and the desktop's classes.

The relay's codes are the spec's (-32010 … -32028).  The desktop's idempotency and
handler errors are named by class in the spec, not by number: each class has a code of
ours, and an answer is classified by that code (004), never by its ``data.kind``, which
only names the class for people; ``data.retryable`` says whether the request may be sent
again.

>>> kind_of(relay_error(-32011))
'reconnecting'
>>> kind_of({"result": {"ok": True}})
'success'
>>> kind_of(desktop_error("conflict"))
'conflict'
"""

from __future__ import annotations

from typing import Any

#: relay decisions: code -> (kind, message, retryable)
RELAY = {
    -32010: ("offline", "Desktop is offline.", True),
    -32011: ("reconnecting", "Desktop is reconnecting.", True),
    -32012: ("relay_timeout", "Relay timed out waiting for the desktop.", True),
    -32020: ("limit", "Too many pending requests.", True),
    -32021: ("duplicate", "A request with this id is already pending.", None),
    -32022: ("id_conflict", "A different request with this id is already pending.", None),
    -32023: ("gen_changed", "Desktop connection changed; retry the request.", True),
    -32024: ("switching", "Routing authority is switching; retry the request.", True),
    -32026: ("key_required", "This mutation needs an idempotency key.", False),
    -32027: ("scope_missing", "The API key lacks a required scope.", False),
    -32028: ("rate_limited", "Too many requests on this connection.", True),
    -32601: ("method_not_found", "Method not found.", False),
    -32600: ("invalid_request", "Invalid request.", False),
    # a frame no Rust reader takes (004 names no answer: JSON-RPC's, with no flag)
    -32700: ("parse_error", "Parse error.", None),
}
CODE = {kind: code for code, (kind, _, _) in RELAY.items()}

BUSY_MESSAGE = "Desktop is busy; retry the request shortly."
TIMEOUT_MESSAGE = "Desktop request timed out."
#: our words: 004 gives the Codex load its own 90 s deadline but not the answer's text
CODEX_LOAD_MESSAGE = "Codex timeline load timed out."
INTERNAL = -32603
INVALID_PARAMS = -32602

#: the desktop's answer classes (wire-relay.md, "Error classes"), with a JSON-RPC code each
DESKTOP = {
    "invalid_request": -32600, "method_not_found": -32601, "invalid_params": -32602,
    "unauthorized": -32001, "forbidden": -32003, "not_found": -32004, "conflict": -32009,
    "validation": -32005, "billing": -32006, "payment_required": -32007,
    "not_implemented": -32008, "capacity": -32030, "busy": -32031, "ambiguous": -32032,
    "internal": -32603, "database": -32033, "foreign_service": -32034, "parse_error": -32700,
    "unavailable": -32035,
}
FINAL = frozenset({"invalid_request", "method_not_found", "invalid_params", "unauthorized",
                   "forbidden", "not_found", "conflict", "validation", "billing",
                   "payment_required", "not_implemented"})
#: 004 classifies an error by its code ("Fehler werden nach Code klassifiziert"), so an
#: answer is judged by the number it carries, whatever its ``data.kind`` says
FINAL_CODES = frozenset(DESKTOP[kind] for kind in FINAL)
PARSE_ERROR = DESKTOP["parse_error"]
#: retryable desktop classes (capacity is not: it clears only when rows expire, 48 h on)
RETRYABLE_KINDS = frozenset({"busy", "unavailable"})


def relay_error(code: int, **data: Any) -> dict[str, Any]:
    kind, message, retryable = RELAY[code]
    err: dict[str, Any] = {"code": code, "message": message, "data": {"kind": kind, **data}}
    if retryable is not None:
        err["data"]["retryable"] = retryable
    return {"error": err}


def desktop_error(kind: str, message: str | None = None, *, retryable: bool | None = None,
                  **data: Any) -> dict[str, Any]:
    if retryable is None:
        retryable = kind in RETRYABLE_KINDS
    return {"error": {"code": DESKTOP[kind], "message": message or kind.replace("_", " "),
                      "data": {"kind": kind, "retryable": retryable, **data}}}


def codex_load_timed_out() -> dict[str, Any]:
    """A Codex timeline load ran past its own deadline: a plain internal error, like the
    desktop's other two timeouts, with no retryable flag."""
    return {"error": {"code": INTERNAL, "message": CODEX_LOAD_MESSAGE}}


def busy() -> dict[str, Any]:
    """The slot wait ran out.  No retryable flag: it is not proof that nothing ran."""
    return {"error": {"code": INTERNAL, "message": BUSY_MESSAGE}}


def timed_out() -> dict[str, Any]:
    """The dispatch limit cut the handler.  No retryable flag either."""
    return {"error": {"code": INTERNAL, "message": TIMEOUT_MESSAGE}}


def kind_of(answer: dict[str, Any]) -> str:
    """What an answer is: ``success``, a relay kind, ``busy`` / ``timed_out`` (the two -32603
    answers), or the desktop class in ``data.kind``."""
    err = answer.get("error")
    if err is None:
        return "success"
    if err.get("code") == INTERNAL and err.get("message") == BUSY_MESSAGE:
        return "busy"
    if err.get("code") == INTERNAL and err.get("message") == TIMEOUT_MESSAGE:
        return "timed_out"
    data = err.get("data") or {}
    return str(data.get("kind", "internal"))


def answer_class(answer: dict[str, Any]) -> str:
    """final, retryable or ambiguous (a success is final), by the error's code as 004
    classifies: the final classes' codes are final, a parse error or a retryable flag is
    retryable, and every other code (internal, database, foreign service, unknown) is
    ambiguous.

    >>> answer_class({"error": {"code": -32004, "message": "gone"}})
    'final'
    >>> answer_class({"error": {"code": -32603, "message": "x", "data": {"kind": "not_found"}}})
    'ambiguous'
    """
    err = answer.get("error")
    if err is None:
        return "final"
    data = err.get("data") if isinstance(err.get("data"), dict) else {}
    code = err.get("code")
    if data.get("retryable") or err.get("retryable") or code == PARSE_ERROR:
        return "retryable"
    return "final" if code in FINAL_CODES else "ambiguous"
