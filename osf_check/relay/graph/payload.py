"""Completion payloads and their limits (A8 `bounded-result`).

The limit is measured as the desktop measures it: the length of JavaScript's
``JSON.stringify(payload)``, i.e. compact JSON counted in UTF-16 code units (an
astral character such as an emoji counts 2, a Japanese character 1).

>>> p = completion_payload("e1", "completed", "ok", 10, 0.01)
>>> sorted(p)
['execution_id', 'reported_cost', 'result', 'status', 'total_tokens']
>>> completion_payload("e1", "completed", "x" * 100_000, 1, 0)["result_truncated"]
True
>>> stringify_length({"a": "😀"}), stringify_length({"a": "日本"}), stringify_length([0.0])
(10, 10, 3)
>>> len(cut_units("😀" * 1_001, ERROR_LIMIT)), len(cut_units("x" + "😀" * 1_000, ERROR_LIMIT))
(1000, 1000)
"""

from __future__ import annotations

from typing import Any, Callable

from ..jstext import stringify, units

RESULT_LIMIT = 100_000  # JSON.stringify(payload).length: UTF-16 code units, compact JSON
ERROR_LIMIT = 2_000


def stringify_length(value: Any) -> int:
    """``JSON.stringify(value).length``: compact JSON, UTF-16 code units (a lone half of a
    pair is written as its 6-character escape, a cost of ``0.0`` as ``0``)."""
    return units(stringify(value))


def cut_units(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units of ``text`` (JavaScript's ``slice``, the unit
    the desktop counts in), less the first half of a pair the cut would split: the
    posted text stays valid Unicode."""
    data = text.encode("utf-16-le", "surrogatepass")
    if len(data) <= 2 * units:
        return text  # whole, even if it ends in half a pair
    head = data[:2 * units]
    if 0xD800 <= int.from_bytes(head[-2:], "little") <= 0xDBFF:
        head = head[:-2]
    return head.decode("utf-16-le", "surrogatepass")


def whole(execution_id: str, status: str, result: Any, total_tokens: int, reported_cost: float,
          error: str | None = None) -> dict[str, Any]:
    """The completion as a whole, before any limit is applied."""
    full: dict[str, Any] = {"execution_id": execution_id, "status": status, "result": result,
                            "total_tokens": total_tokens, "reported_cost": reported_cost}
    if error is not None:
        full["error"] = error
    return full


def completion_payload(execution_id: str, status: str, result: Any, total_tokens: int,
                       reported_cost: float, error: str | None = None, *,
                       measure: Callable[[Any], int] = stringify_length) -> dict[str, Any]:
    """The object the desktop posts: whole if it measures at most 100,000, else
    ``{execution_id, status, result_truncated: true}`` and no result at all.  The error
    is cut to 2,000 characters first, counted as the 100,000 are (UTF-16 code units)."""
    full = whole(execution_id, status, result, total_tokens, reported_cost,
                 None if error is None else cut_units(error, ERROR_LIMIT))
    if measure(full) <= RESULT_LIMIT:
        return full
    return {"execution_id": execution_id, "status": status, "result_truncated": True}
