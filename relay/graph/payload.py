"""Completion payloads and their limits (A8 `bounded-result`).

>>> p = completion_payload("e1", "completed", "ok", 10, 0.01)
>>> sorted(p)
['execution_id', 'reported_cost', 'result', 'status', 'total_tokens']
>>> completion_payload("e1", "completed", "x" * 100_000, 1, 0)["result_truncated"]
True
"""

from __future__ import annotations

import json
from typing import Any

RESULT_LIMIT = 100_000  # characters of the JSON text, not bytes
ERROR_LIMIT = 2_000

#: implementation mutants of this module
MUTANTS = ("truncate-by-bytes", "half-result")


def whole(execution_id: str, status: str, result: Any, total_tokens: int, reported_cost: float,
          error: str | None = None) -> dict[str, Any]:
    """The completion as a whole, before any limit is applied."""
    full: dict[str, Any] = {"execution_id": execution_id, "status": status, "result": result,
                            "total_tokens": total_tokens, "reported_cost": reported_cost}
    if error is not None:
        full["error"] = error
    return full


def _size(text: str, mutant: str | None) -> int:
    # the bug measures UTF-8 bytes: Japanese text that fits is truncated all the same
    return len(text.encode("utf-8")) if mutant == "truncate-by-bytes" else len(text)


def completion_payload(execution_id: str, status: str, result: Any, total_tokens: int,
                       reported_cost: float, error: str | None = None, *,
                       mutant: str | None = None) -> dict[str, Any]:
    """The object the desktop posts: whole if its JSON text fits in 100,000 characters,
    else ``{execution_id, status, result_truncated: true}`` and no result at all."""
    full = whole(execution_id, status, result, total_tokens, reported_cost,
                 None if error is None else error[:ERROR_LIMIT])
    if _size(json.dumps(full, ensure_ascii=False), mutant) <= RESULT_LIMIT:
        return full
    cut: dict[str, Any] = {"execution_id": execution_id, "status": status,
                           "result_truncated": True}
    if mutant == "half-result" and isinstance(result, str):
        cut["result"] = result[: RESULT_LIMIT // 2]  # the bug: half a result
    return cut


def bounded(payload: dict[str, Any], full: dict[str, Any]) -> str | None:
    """A8 on one posted payload, given the whole completion; None if it holds, else why not."""
    full = dict(full)
    if "error" in full:
        full["error"] = full["error"][:ERROR_LIMIT]
    text = json.dumps(payload, ensure_ascii=False)
    fits = len(json.dumps(full, ensure_ascii=False)) <= RESULT_LIMIT
    if "error" in payload and len(payload["error"]) > ERROR_LIMIT:
        return f"error of {len(payload['error'])} characters (limit {ERROR_LIMIT})"
    if fits:
        if payload != full:
            return "a completion that fits in 100,000 characters was not posted whole"
        return None
    if len(text) <= RESULT_LIMIT and payload.get("result_truncated") is not True:
        return "an oversized completion was not marked result_truncated"
    if set(payload) != {"execution_id", "status", "result_truncated"} or \
            payload.get("result_truncated") is not True:
        return f"an oversized completion posted {sorted(payload)}: half a result"
    return None
