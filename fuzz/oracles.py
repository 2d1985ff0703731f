"""What the harness judges the implementation's outputs by, written from the specs
(``graph-relay.md``, ``wire-relay.md``), never with the implementation's own helpers:
an oracle that shares the code it judges shares its bugs.

>>> utf16_length('{"a":"😀"}'), utf16_length(stringify({"a": "\\udc00"}))
(10, 14)
>>> bounded({"execution_id": "e", "status": "completed", "result_truncated": True},
...         {"execution_id": "e", "status": "completed", "result": "x" * 100_000,
...          "total_tokens": 1, "reported_cost": 0.0})
"""

from __future__ import annotations

import decimal
import functools
import json
import re
from typing import Any, NamedTuple

from osf_check.relay.wire.manifest import MANIFEST

#: the properties judged only here, on concrete data (the models abstract it away)
CONCRETE = {"A8": "bounded-result"}

#: graph-relay.md: the completion's JSON.stringify length, and the error text
RESULT_LIMIT = 100_000
ERROR_LIMIT = 2_000


def utf16_length(text: str) -> int:
    """JavaScript's ``String.length``: UTF-16 code units (2 for a character past U+FFFF)."""
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


def stringify(value: Any) -> str:
    """``JSON.stringify(value)`` for the JSON values a completion holds: no spaces, a lone
    surrogate (half a pair a cut left) escaped as JavaScript escapes it, and numbers as
    JavaScript writes them (:func:`js_number`).  Keys stay in Python's order: only the
    length is judged, which no order changes."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{stringify(str(k))}:{stringify(v)}"
                              for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(stringify(v) for v in value) + "]"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return js_number(value)
    text = json.dumps(value, ensure_ascii=False)
    text = _units(text).decode("utf-16-le", "surrogatepass")  # halves that pair: one character
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def js_number(x: float) -> str:
    """ECMA-262 Number::toString of the double ``x`` stands for: positional from 1e-6 up
    to below 1e21, else ``1.5e+21``; NaN and the infinities are ``null`` in JSON.

    >>> [js_number(v) for v in (0.0, -0.0, 1e21, 1e-7, 1.5e-6, 2.0**60, 2.0**70, float("nan"))]
    ['0', '0', '1e+21', '1e-7', '0.0000015', '1152921504606847000', '1.1805916207174113e+21', 'null']
    """
    try:
        d = decimal.Decimal(repr(float(x))).normalize()  # repr: the shortest digits
    except (OverflowError, decimal.InvalidOperation):
        return "null"  # an int past the largest double, NaN
    if not d.is_finite():
        return "null"
    if d.is_zero():
        return "0"
    return format(d, "f" if _POSITIONAL[0] <= abs(d) < _POSITIONAL[1] else "e")


#: the magnitudes JavaScript writes without an exponent
_POSITIONAL = (decimal.Decimal("1e-6"), decimal.Decimal("1e21"))


_LONE = re.compile("[\ud800-\udfff]")


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def error_cuts(error: str) -> list[str]:
    """The errors a completion may carry for a Graph's ``error``: whole up to 2,000
    characters (UTF-16 code units, as the 100,000 are counted), else its first 2,000
    units; when that cut splits a pair, its first 1,999 too (the half pair dropped).
    JavaScript's ``slice`` keeps the half; 000 says only "tagliati a 2,000 caratteri".

    >>> [len(e) for e in error_cuts("😀" * 1_001)], [len(e) for e in error_cuts("x" + "😀" * 1_000)]
    ([1000], [1001, 1000])
    """
    data = _units(error)
    if len(data) <= 2 * ERROR_LIMIT:
        return [error]
    cuts = [data[:2 * ERROR_LIMIT]]
    if 0xD800 <= int.from_bytes(cuts[0][-2:], "little") <= 0xDBFF:
        cuts.append(cuts[0][:-2])
    return [c.decode("utf-16-le", "surrogatepass") for c in cuts]


def bounded(payload: dict[str, Any], full: dict[str, Any]) -> str | None:
    """A8 on one posted payload, given the whole completion: None if it holds, else why
    not.  A completion that fits is posted whole (its error cut to 2,000 characters);
    one that does not is exactly ``{execution_id, status, result_truncated: true}``."""
    full = dict(full)
    error = full.get("error") if isinstance(full.get("error"), str) else ""
    if isinstance(payload.get("error"), str) and len(_units(payload["error"])) > 2 * ERROR_LIMIT:
        return f"error of {len(_units(payload['error'])) // 2:,} characters (limit {ERROR_LIMIT:,})"
    if isinstance(full.get("error"), str):
        cuts = error_cuts(full["error"])
        full["error"] = payload["error"] if payload.get("error") in cuts else cuts[-1]
    size = utf16_length(stringify(full))
    if size <= RESULT_LIMIT:
        if payload != full and isinstance(payload.get("error"), str) and \
                {**payload, "error": full.get("error")} == full:
            return (f"a failed Graph's error of {len(_units(error)) // 2:,} characters was "
                    f"posted with {len(_units(payload['error'])) // 2:,} (the first "
                    f"{ERROR_LIMIT:,}, counted as the {RESULT_LIMIT:,} are: UTF-16 code units)")
        if payload != full:
            return (f"a completion of JSON.stringify length {size:,} (at most {RESULT_LIMIT:,}) "
                    f"was not posted whole")
        return None
    want = {"execution_id": full["execution_id"], "status": full["status"],
            "result_truncated": True}
    if payload == full:
        return (f"a completion of JSON.stringify length {size:,} (over {RESULT_LIMIT:,}) was "
                f"posted whole")
    if payload != want:
        return (f"a completion of JSON.stringify length {size:,} (over {RESULT_LIMIT:,}) was "
                f"posted as {sorted(payload)}"
                + (": half a result" if "result" in payload else ""))
    return None


class Edge(NamedTuple):
    """A Graph's result chosen so that its completion measures exactly ``over`` units
    past :data:`RESULT_LIMIT` (0: at the limit, posted whole; 1: one unit past it,
    posted truncated): the harness makes the text once it knows the completion's status
    (:meth:`text`).  The fixed samples only come near the limit, where an off-by-one
    (``<`` for ``<=``) goes unseen."""

    over: int

    def text(self, status: str, tokens: int, cost: float, error: str | None = None) -> str:
        """Emoji, Japanese and ASCII (no character JSON escapes) filling the completion
        ``{execution_id, status, result, total_tokens, reported_cost}`` of a UUID command
        id (000: command ids are UUIDs), and ``error`` cut as posted, to its measure."""
        return _filling(RESULT_LIMIT + self.over, status, tokens, cost,
                        None if error is None else error_cuts(error)[-1])


#: a completion at the limit and one unit past it
EDGES = (Edge(0), Edge(1))


@functools.lru_cache(maxsize=64)
def _filling(units: int, status: str, tokens: int, cost: float, error: str | None) -> str:
    empty = {"execution_id": "0" * 36, "status": status, "result": "",
             "total_tokens": tokens, "reported_cost": cost}
    if error is not None:
        empty["error"] = error
    need = units - utf16_length(stringify(empty))
    emoji, japanese = need // 6, need // 3  # units: a third each
    return "😀" * emoji + "日" * japanese + "x" * (need - 2 * emoji - japanese)


class Failed(NamedTuple):
    """What a failed Graph hands over: its result and its error message (the error is
    cut to 2,000 characters when posted)."""

    result: Any
    error: str


def handed_over(got: Any) -> tuple[Any, str | None]:
    """(result, error) of what a harness's ``result_for`` gave: a result, or a
    :class:`Failed`."""
    return (got.result, got.error) if isinstance(got, Failed) else (got, None)


def posted_bounded(sent: list[Any], result: Any, tokens: int, cost: float,
                   error: str | None = None) -> list[str]:
    """A8 on the completions an implementation reports it posted (the driver protocol's
    ``sent``, items ``{"post": payload}``) when its Graph finished with ``result`` (and
    ``error``): the checker judges the concrete payload itself, whatever the adapter
    thinks of it."""
    out = []
    for item in sent:
        payload = item.get("post") if isinstance(item, dict) else None
        if not isinstance(payload, dict):
            continue
        full = {"execution_id": payload.get("execution_id"), "status": payload.get("status"),
                "result": result, "total_tokens": tokens, "reported_cost": cost}
        if error is not None:
            full["error"] = error
        why = bounded(payload, full)
        if why:
            out.append(f"property A8 violated by the implementation: {why}")
    return out


# 000, the start call's idempotency key ------------------------------------------------------
#: "idempotency_key è obbligatoria, 8–128 caratteri", and the tool's schema ("minLength": 8,
#: "maxLength": 128).  JSON Schema counts characters (code points): neither UTF-8 bytes
#: nor UTF-16 units
GRAPH_KEY_MIN, GRAPH_KEY_MAX = 8, 128


def graph_key_ok(key: str) -> bool | None:
    """Whether 000 admits ``key`` as an idempotency key: True, False, or None where it
    does not say.  A key holding half a surrogate pair is no Unicode text (JSON carries
    one only as an escape): a server may take it or refuse it with a tool error, but
    only that (000 says nothing either way, and the wire protocol's Rust readers refuse
    such text).

    >>> graph_key_ok("日" * 48), graph_key_ok("日" * 4), graph_key_ok("k" * 9 + "\\udc00")
    (True, False, None)
    """
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in key):
        return None
    return GRAPH_KEY_MIN <= len(key) <= GRAPH_KEY_MAX


def graph_key_classes() -> dict[str, str]:
    """Idempotency keys from 000's domain by data class, at and around both limits in
    ASCII, Japanese (3 UTF-8 bytes a character) and emoji (4 bytes, 2 UTF-16 units), so
    that a key measured in bytes or in units is judged wrong on one side or the other;
    blanks (000 names no trimming); and half a surrogate pair."""
    ja, emoji = "日", "😀"
    out = {}
    for script, ch in (("ASCII", "k"), ("Japanese", ja), ("emoji", emoji)):
        for n in (GRAPH_KEY_MIN - 1, GRAPH_KEY_MIN, GRAPH_KEY_MAX, GRAPH_KEY_MAX + 1):
            out[f"{script}, {n} characters"] = ch * n
    out |= {"Japanese, 4 characters in 12 bytes": ja * 4,
            "Japanese, 48 characters in 144 bytes": ja * 48,
            "emoji, 4 characters in 8 UTF-16 units": emoji * 4,
            "emoji, 65 characters in 130 UTF-16 units": emoji * 65,
            "mixed case with accents": "Schlüssel-ÄÖÜ-Σίγμα",
            "blanks only": " " * GRAPH_KEY_MIN,
            "half a surrogate pair": "key-half-\udc00"}
    return out


# wire-relay.md, "Relay decisions and codes" and the desktop stages -----------------------
RELAY_CODES = {-32010: "offline", -32011: "reconnecting", -32012: "relay_timeout",
               -32020: "limit", -32021: "duplicate", -32022: "id_conflict",
               -32023: "gen_changed", -32024: "switching",
               # refusals the model's phones never meet, by their "retryable" column
               -32026: "final_error", -32027: "final_error", -32028: "retryable_error"}
BUSY_TEXT = "Desktop is busy; retry the request shortly."
TIMEOUT_TEXT = "Desktop request timed out."
#: "Error classes": final ones are replayed as is; retryable: parse errors and anything
#: flagged retryable; everything else is ambiguous
FINAL_CLASSES = frozenset({"invalid_request", "method_not_found", "invalid_params",
                           "unauthorized", "forbidden", "not_found", "conflict", "validation",
                           "billing", "payment_required", "not_implemented"})


def wire_answer(answer: dict[str, Any] | None) -> str:
    """An answer (a response payload, or what the desktop stored) in the model's words:
    none, success, a relay decision, busy (the -32603 slot answer, or the desktop's busy
    class), timed_out, conflict, capacity, ambiguous, final_error or retryable_error."""
    if answer is None:
        return "none"
    err = answer.get("error")
    if err is None:
        return "success"
    code, message = err.get("code"), err.get("message")
    data = err.get("data") if isinstance(err.get("data"), dict) else {}
    if code in RELAY_CODES:
        return RELAY_CODES[code]
    if code == -32603 and message == BUSY_TEXT:
        return "busy"
    if code == -32603 and message == TIMEOUT_TEXT:
        return "timed_out"
    kind = data.get("kind")
    if kind in ("conflict", "capacity", "ambiguous", "busy"):
        return kind
    if data.get("retryable") is True or err.get("retryable") is True or kind == "parse_error":
        return "retryable_error"
    return "final_error" if kind in FINAL_CLASSES else "ambiguous"


# wire-relay.md (004), the desktop router's own checks of concrete data ---------------------
#: "Verlangt für die gelisteten Mutationen einen nicht leeren Idempotenzschlüssel von
#: höchstens 256 Bytes" (UTF-8 bytes)
KEY_LIMIT = 256
#: 004's heavy group (two slots), a sample of each line, and light calls (eight slots)
HEAVY_SAMPLE = ("run.chatLoad", "files.readBinary", "files.saveChatAttachment",
                "files.getGitFileDiffPatch")
LIGHT_SAMPLE = "system.ping"
LIGHT_SLOTS, HEAVY_SLOTS = 8, 2


def key_classes() -> dict[str, tuple[str, bool]]:
    """Idempotency keys by data class: (key, whether 004 admits it).  Lengths are UTF-8
    bytes; a four-byte character makes the multibyte edges.

    >>> {k: (len(v.encode()), ok) for k, (v, ok) in key_classes().items()}["over limit"]
    (257, False)
    """
    emoji = "😀"  # four UTF-8 bytes
    return {
        "empty": ("", False),
        "length 8": ("k" * 8, True),
        "length 128": ("k" * 128, True),
        "at limit": ("k" * KEY_LIMIT, True),
        "over limit": ("k" * (KEY_LIMIT + 1), False),
        "unicode at limit": (emoji * (KEY_LIMIT // 4), True),
        "unicode over limit": ("k" + emoji * (KEY_LIMIT // 4), False),
        "whitespace only": ("   ", True),  # not empty: 004 names no trimming of keys
    }


#: 004: the four methods that may run again after an interrupted first copy; only
#: chunk-append also releases its completed claim (the upload ledger reconciles it)
REPLAY_SAFE = ("run.chatOutboxSubmit", "files.appendChatAttachmentUploadChunk",
               "files.finishChatAttachmentUpload", "files.cancelChatAttachmentUpload")
RELEASES_COMPLETED = frozenset({"files.appendChatAttachmentUploadChunk"})

#: 004, "Die Versionsschranke sitzt bei der Registrierung": registrations by data class,
#: (payload changes, the compatibility rules, the refusal's code or None: admitted).
#: A rules value of None stands for rules the relay cannot read.
REGISTRATIONS = {
    "current version": ({}, [], None),
    "version missing": ({"relayProtocolVersion": ...}, [], "protocolUpdateRequired"),
    "older version": ({"relayProtocolVersion": "1.6"}, [], "protocolUpdateRequired"),
    "unreadable version": ({"relayProtocolVersion": "1.x"}, [], "invalidRelayProtocolVersion"),
    "a rule above it": ({}, ["1.8"], "protocolUpdateRequired"),
    # versions whose text order is not their order: 1.10 is above 1.7 and 1.9
    "newer minor 1.10": ({"relayProtocolVersion": "1.10"}, [], None),
    "major 10": ({"relayProtocolVersion": "10.0"}, [], None),
    "1.9 under a rule of 1.10": ({"relayProtocolVersion": "1.9"}, ["1.10"],
                                 "protocolUpdateRequired"),
    "1.10 under a rule of 1.10": ({"relayProtocolVersion": "1.10"}, ["1.10"], None),
    "version empty": ({"relayProtocolVersion": ""}, [], "invalidRelayProtocolVersion"),
    "version a number": ({"relayProtocolVersion": 17}, [], "invalidRelayProtocolVersion"),
    "rules unreadable": ({}, None, "relayProtocolPolicyUnavailable"),
    "a rule unreadable": ({}, ["one.eight"], "relayProtocolPolicyUnavailable"),
    "unknown field userId": ({"userId": "someone-else"}, [], "any"),
    "unknown device": ({"deviceId": "6f1c2a7e-0000-4000-8000-0000000000ff"}, [], "any"),
    "wrong role": ({"deviceId": "phone"}, [], "any"),
}


# 004, the shape of every answer -------------------------------------------------------------
#: "Relay-Entscheidung": the codes the table marks retryable or not (with the fields it
#: names); -32021, -32022 and -32601 have no column value in 004, so no flag is asked of them
RELAY_RETRYABLE = {-32010: True, -32011: True, -32012: True, -32020: True, -32023: True,
                   -32024: True, -32028: True, -32026: False, -32027: False}
#: refusals the English rendering's table marks "no" where 004 gives no value: a flag, if
#: any, must not invite a retry
RELAY_FINAL = frozenset({-32600, -32601})
RELAY_FIELDS = {-32020: ("scope", "limit", "current"), -32027: ("requiredScopes",)}


def retry_flag(err: dict[str, Any]) -> Any:
    """The error's ``retryable`` flag wherever it stands (``data`` or the error itself),
    or None when it carries none."""
    data = err.get("data") if isinstance(err.get("data"), dict) else {}
    return data.get("retryable", err.get("retryable"))


def shape_problem(answer: Any) -> str | None:
    """Why an answer (a response payload, or what the desktop stored) is not shaped as
    004 says, or None.  "Beide -32603-Antworten sind einfache interne Fehler ohne
    retryable-Kennzeichen"; the relay's decisions carry the retryable value and the
    fields of their row in the decisions table (-32026's reason protocolUpdateRequired).

    >>> shape_problem({"error": {"code": -32603, "message": TIMEOUT_TEXT,
    ...                          "data": {"retryable": True}}})[:60]
    "the -32603 answer 'Desktop request timed out.' carries retry"
    >>> shape_problem({"error": {"code": -32011, "message": "m", "data": {"retryable": True}}})
    """
    if not isinstance(answer, dict):
        return f"an answer that is not an object: {answer!r}"
    err = answer.get("error")
    if err is None:
        return None if "result" in answer else "an answer with neither result nor error"
    if "result" in answer:
        return "an answer with both result and error"
    if not isinstance(err, dict) or not isinstance(err.get("code"), int) or \
            isinstance(err.get("code"), bool) or not isinstance(err.get("message"), str):
        return f"an error without an integer code and a message: {err!r}"
    code, flag = err["code"], retry_flag(err)
    data = err.get("data") if isinstance(err.get("data"), dict) else {}
    if code == -32603 and err["message"] in (BUSY_TEXT, TIMEOUT_TEXT) and flag is not None:
        return (f"the -32603 answer {err['message']!r} carries retryable={flag!r} (004: both "
                f"-32603 answers are plain internal errors without a retryable flag)")
    if code in RELAY_RETRYABLE and flag is not RELAY_RETRYABLE[code]:
        return (f"the relay's {code} carries retryable={flag!r} (004's decisions table: "
                f"{str(RELAY_RETRYABLE[code]).lower()})")
    if code in RELAY_FINAL and flag is True:
        return f"the relay's {code} carries retryable=True (a refusal a retry cannot change)"
    missing = [f for f in RELAY_FIELDS.get(code, ()) if f not in data and f not in err]
    if missing:
        return f"the relay's {code} lacks {', '.join(missing)} (004's decisions table)"
    if code == -32026 and (data.get("reason") or err.get("reason")) != "protocolUpdateRequired":
        return "the relay's -32026 does not give the reason protocolUpdateRequired (004)"
    return None


#: 004's method list, read from the one manifest the reference relay and desktop use
#: (``osf_check.relay.wire.manifest``, where each entry cites 004): every method it names,
#: its heavy group (the two heavy slots), its mutations (they need a key) and the rest,
#: which need none
NAMED_004 = tuple(MANIFEST)
HEAVY_004 = tuple(m for m, d in MANIFEST.items() if d.slot == "heavy")
MUTATIONS_004 = tuple(m for m, d in MANIFEST.items() if d.mutation)
READS_004 = tuple(m for m, d in MANIFEST.items() if not d.mutation)
#: "Eine gespeicherte Antwort über 256 KiB wird als mehrdeutig festgehalten" (UTF-8 bytes)
STORED_ANSWER_LIMIT = 256 * 1024
