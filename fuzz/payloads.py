"""The concrete data the fuzzer hands the implementation where the model abstracts it
away: Graph results and errors at the limits, in the encodings where an off-by-one or a
wrong unit shows."""

from __future__ import annotations

import functools
from typing import Any

from osf_check.models.dsl import Model
from osf_check.models.wire_relay.desktop import OUT

from . import oracles
from .graph_harness import FINISH, arguments, made_up_id
from .graph_inputs import AGENT_KEYS
from .wire_harness import handler_failure, op_key, op_params

__all__ = ["HALF", "TOUR_RESULTS", "ERRORS", "tour_result", "concrete", "step_data",
           "handed_from", "data_classes", "chosen"]

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


#: wire-relay's actions that make a request frame of the phone
SENDS = ("send", "send_malformed", "send_lost")


def chosen(model: Model, name: str, args: dict[str, int]) -> dict[str, Any]:
    """The concrete inputs of a step that are the checker's choice whatever the run:
    graph-relay's start call's idempotency key (the first two differ only in case) and
    the arguments its agent passes (nested, not ASCII), a finishing Graph's tokens and
    cost, the command id another agent asks for about a run that does not exist yet;
    wire-relay's request's method, params and operation key (even-numbered ones
    end in an emoji), and the error a handler fails with (its class, message and
    retryable flag).  A Graph's result and error (:func:`step_data`) come on top, from
    the phase that drives it."""
    if name == "run_graph_session":
        return {"key": AGENT_KEYS[args["i"]], "arguments": arguments(args["i"])}
    if name == "graph_finish":
        return dict(FINISH)
    if name in ("get_graph_run", "cancel_graph_run") and "a" in args:
        return {"unknown_id": made_up_id(args["r"])}
    if model.name == "wire-relay" and name in SENDS:
        op = model.constants["ctx"].ops[args["o"]]
        return {"method": op.method, "params": op_params(op), "key": op_key(op)}
    if model.name == "wire-relay" and name == "execute":
        q = model.constants["ctx"].q(args["o"], args["a"])  # the copy, as the harness's
        outcome = OUT.names[args["out"]]
        return {} if outcome == "success" else {"error": handler_failure(outcome, q)}
    return {}


def handed_from(data: dict[str, Any]) -> Any:
    """:func:`step_data`'s inverse: the ``result_for`` value a recorded step hands over."""
    return oracles.Failed(data["result"], data["error"]) if "error" in data else data["result"]



def data_classes(got: Any, status: str) -> frozenset[str]:
    """The data classes what a Graph handed over (a ``result_for`` value) falls in, for the
    coverage report: its result's and error's texts, where its completion stands to the
    100,000 limit, and where its error stands to the 2,000 cut.

    >>> sorted(data_classes(oracles.Failed("", "x" + "😀" * 1_000), "failed"))  # doctest: +NORMALIZE_WHITESPACE
    ['completion under the limit', 'error cut inside a surrogate pair',
     'error past the 2,000 cut', 'error: UTF-16 length differs from code points',
     'error: non-ASCII', 'result: empty']
    """
    result, error = oracles.handed_over(got)
    if not isinstance(result, str) or not (error is None or isinstance(error, str)):
        return frozenset({"result: not text"})
    return _classes(result, error, status)


@functools.lru_cache(maxsize=256)  # the same texts come back at every step (str hashes once)
def _classes(result: str, error: str | None, status: str) -> frozenset[str]:
    out = _text_classes("result", result)
    completion: dict[str, Any] = {"execution_id": "0" * 36, "status": status, "result": result,
                                  **{"total_tokens": FINISH["tokens"],
                                     "reported_cost": FINISH["cost"]}}
    if error is not None:
        completion["error"] = oracles.error_cuts(error)[-1]
    over = oracles.utf16_length(oracles.stringify(completion)) - oracles.RESULT_LIMIT
    out.add({0: "completion at the 100,000 limit", 1: "completion one past the 100,000 limit"}
            .get(over, "completion under the limit" if over < 0 else "completion over the limit"))
    if error is None:
        return frozenset(out | {"error: none"})
    out |= _text_classes("error", error)
    units = oracles.utf16_length(error)
    cut = oracles.ERROR_LIMIT
    out.add("error within the 2,000 cut" if units < cut else "error at the 2,000 cut"
            if units == cut else "error past the 2,000 cut")
    if units > cut and oracles.utf16_length(error[:_chars_within(error, cut)]) == cut - 1:
        out.add("error cut inside a surrogate pair")
    return frozenset(out)


def _chars_within(text: str, units: int) -> int:
    """How many characters of ``text`` fit in ``units`` UTF-16 code units."""
    n = used = 0
    for ch in text:
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > units:
            break
        n += 1
    return n


def _text_classes(what: str, text: str) -> set[str]:
    if not text:
        return {f"{what}: empty"}
    out = {f"{what}: ASCII" if text.isascii() else f"{what}: non-ASCII"}
    if oracles.utf16_length(text) != len(text):
        out.add(f"{what}: UTF-16 length differs from code points")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        out.add(f"{what}: half a surrogate pair")
    return out
