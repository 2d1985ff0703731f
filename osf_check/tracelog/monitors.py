"""Properties the models abstract away, judged on the concrete fields a log line carries
(P's monitors over observed events, here over check-log's lines): the same oracles the
fuzzer judges an implementation's outputs by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from osf_check.fuzz.oracles import posted_bounded


@dataclass(frozen=True)
class MonitorSpec:
    fields: tuple[str, ...]
    judge: Callable[..., str | None]  # the fields' values -> why the property fails, or None
    #: fields a mapping may leave out (the judge's default stands in)
    optional: tuple[str, ...] = ()


def _a8(posted: Any, result: Any, total_tokens: Any, reported_cost: Any,
        error: Any = None) -> str | None:
    if not isinstance(posted, dict):
        return None  # nothing was posted: nothing to judge
    why = posted_bounded([{"post": posted}], result, total_tokens, reported_cost,
                         error if isinstance(error, str) else None)
    return why[0] if why else None


# a failed Graph's error is in the posted completion, cut: without it the monitor would
# find that completion "not posted whole"
MONITORS = {"A8": MonitorSpec(("posted", "result", "total_tokens", "reported_cost"), _a8,
                              optional=("error",))}
