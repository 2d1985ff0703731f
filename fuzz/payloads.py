"""The concrete data the fuzzer hands the implementation where the model abstracts it
away: Graph results and errors at the limits, in the encodings where an off-by-one or a
wrong unit shows."""

from __future__ import annotations

from typing import Any

from . import oracles
from .graph_harness import FINISH

__all__ = ["HALF", "TOUR_RESULTS", "ERRORS", "tour_result", "concrete", "step_data",
           "handed_from"]

#: half a surrogate pair: valid JSON ("\\udc00") that a JavaScript string holds, and that
#: Python's UTF-8 codec (and so SQLite's binding) refuses
HALF = "\udc00"

#: results the tour's completed Graphs produce: Japanese whose completion fits in
#: 100,000 UTF-16 code units but not in 100,000 UTF-8 bytes, and emoji with lone halves
#: that fit when code points are counted (44,000) or a half counts one unit (84,000), but
#: not as JSON.stringify writes them (104,000: a half is its 6-unit escape)
TOUR_RESULTS = ("日本語の結果です。" * 4_000, "😀" * 40_000 + HALF * 4_000)
#: a failed Graph's error past 2,000 characters: counted in UTF-16 code units, 2 lone
#: halves and 1,000 emoji are 2,002 and keep all but the last emoji (a cut by code
#: points keeps them all; the halves are posted and stored as they are); the second cut
#: falls inside a pair
ERRORS = (HALF * 2 + "😀" * 1_000, "x" + "😀" * 1_000, "é" * 2_001)


def tour_result(r: int, status: str) -> Any:
    """Run ``r``'s result when its completion says ``status``: a completed Graph's from
    :data:`TOUR_RESULTS`; a failed or cancelled one's fills the completion to the limit
    exactly or one unit past it, where an off-by-one shows (run 0: failed at the limit,
    cancelled past it; run 1 the other way round).  A failed Graph reports an error from
    :data:`ERRORS` too, run 0's in the completion at the limit."""
    if status == "completed":
        return TOUR_RESULTS[r % len(TOUR_RESULTS)]
    edge = oracles.EDGES[(r + (status == "cancelled")) % len(oracles.EDGES)]
    if status == "failed":
        error = ERRORS[r % len(ERRORS)]
        return oracles.Failed(concrete(edge, status, error), error)
    return concrete(edge, status)


def concrete(result: Any, status: str, error: str | None = None) -> Any:
    """A drawn result as the Graph hands it over (an :class:`~.oracles.Edge` made text,
    beside ``error``)."""
    if isinstance(result, oracles.Edge):
        return result.text(status, FINISH["tokens"], FINISH["cost"], error)
    return result


def step_data(got: Any) -> dict[str, Any]:
    """What a step's Graph handed over (a ``result_for`` value) as the driver protocol's
    step ``data``: its result, and a failed one's error."""
    result, error = oracles.handed_over(got)
    return {"result": result} if error is None else {"result": result, "error": error}


def handed_from(data: dict[str, Any]) -> Any:
    """:func:`step_data`'s inverse: the ``result_for`` value a recorded step hands over."""
    return oracles.Failed(data["result"], data["error"]) if "error" in data else data["result"]
