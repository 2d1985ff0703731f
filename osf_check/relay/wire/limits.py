"""The size limits 004's manifest sets and the desktop enforces in code.

004 gives the limits, not the shapes of the payloads they apply to: the field names
below (``sessionIds`` of a reconcile call, its ``sessions[].outbox``, the ``output`` of a
command-output page, the ``data`` of a binary read) are this implementation's.

>>> result_problem("files.readBinary", {"data": "x" * 10})
>>> params_problem("run.chatReconcileSessions", {"sessionIds": [str(i) for i in range(17)]})
'run.chatReconcileSessions takes at most 16 sessions per call'
"""

from __future__ import annotations

from typing import Any

from .text import byte_len, compact

MiB, KiB = 1 << 20, 1 << 10
MAX_FRAME = 32 * MiB  # every relay frame, in and out ("32 MiB, jeder Frame")
RECONCILE_SESSIONS = 16  # sessions per run.chatReconcileSessions call
RECONCILE_RESULT = 8 * MiB  # its result
RECONCILE_OUTBOX = 256  # outbox entries per session in its result
COMMAND_OUTPUT_PAGE = 256 * KiB  # run.chatCommandOutputRead
READ_BINARY = 16 * MiB  # files.readBinary
#: the results whose text has a limit of its own: the field, its bytes, why it is refused
TEXT_LIMITS = {"run.chatCommandOutputRead": ("output", COMMAND_OUTPUT_PAGE, "page over 256 KiB"),
               "files.readBinary": ("data", READ_BINARY, "over 16 MiB")}


def size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (what goes on the socket)."""
    return len(compact(value, separators=(",", ":")).encode("utf-8"))


def frame_over(frame: Any) -> bool:
    """Whether a whole frame, envelope and all, is over 32 MiB on the socket."""
    return size(frame) > MAX_FRAME


def params_problem(method: str, params: dict[str, Any]) -> str | None:
    if method == "run.chatReconcileSessions" and \
            len(params.get("sessionIds") or []) > RECONCILE_SESSIONS:
        return f"run.chatReconcileSessions takes at most {RECONCILE_SESSIONS} sessions per call"
    return None


def result_problem(method: str, result: Any) -> str | None:
    """Why this handler's result may not be sent, or None."""
    if method == "run.chatReconcileSessions":
        if size(result) > RECONCILE_RESULT:
            return "run.chatReconcileSessions: result over 8 MiB"
        for s in (result or {}).get("sessions", []) if isinstance(result, dict) else []:
            if isinstance(s, dict) and len(s.get("outbox") or []) > RECONCILE_OUTBOX:
                return f"run.chatReconcileSessions: over {RECONCILE_OUTBOX} outbox entries in a session"
    if method in TEXT_LIMITS and isinstance(result, dict):
        field, limit, why = TEXT_LIMITS[method]
        if isinstance(result.get(field), str) and byte_len(result[field]) > limit:
            return f"{method}: {why}"
    return None
