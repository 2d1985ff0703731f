"""Which of the model's configurations a fuzzing run visits besides its own: each
parameter moved to the values it has to visit (the CI and dev profiles), or their
combinations (nightly).

The default run fuzzes one configuration (wire-relay: workload 0, no losses); a bug that
shows only in another workload's data (two phones, one key for two methods, an outbox
submit), with a lost frame, with two projects or a third agent passes there.
:func:`.sweep.fuzz_others` fuzzes each configuration listed here (a short tour, the
goals, a share of the examples) and traces a failure at its parameters.
"""

from __future__ import annotations

import itertools
from typing import Any, Mapping, Sequence

from osf_check.models.dsl import Param

#: a setting (a parameter that is not a bound) with at most this many values is fuzzed at
#: each of them: a workload, a number of projects, lost frames
SWEEP_SETTING = 4
#: the nightly profile runs every combination while there are at most this many, else a
#: set of configurations that holds every pair of values of two parameters (graph-relay's
#: 216, with listing, are still run whole: pairs alone would be 12)
PRODUCT_MAX = 256


def values(p: Param) -> list[Any]:
    """The values of ``p`` a run visits: both ends of its range and its default, and every
    value of a setting whose range is small (a tuple-valued parameter: its default).

    >>> values(Param("projects", 1, 1, 2, "projects"))
    [1, 2]
    >>> values(Param("lim", 1, 1, 4096, "a limit"))
    [1, 4096]
    >>> values(Param("intents", 2, 1, 3, "runs", bound="size"))
    [1, 2, 3]
    """
    if isinstance(p.default, tuple):
        return [p.default]
    if not p.bound and p.hi - p.lo + 1 <= SWEEP_SETTING:
        return list(range(p.lo, p.hi + 1))
    return sorted({p.lo, p.default, p.hi})


def configurations(spec: Any, base: Mapping[str, Any], profile: str) -> list[dict[str, Any]]:
    """The parameter overrides a run fuzzes, the run's own (``base``) first.

    ``spec`` is the model's :class:`~osf_check.models.spec.ModelSpec`.  A parameter the
    user set (``base``) stays as set in every configuration.  ci and dev: one parameter
    moved at a time to each value :func:`values` names; nightly: combinations of them
    (:data:`PRODUCT_MAX`)."""
    own = dict(base)
    free = [p for p in spec.params if p.name not in own]
    at = {p.name: own.get(p.name, p.default) for p in spec.params}
    out: list[dict[str, Any]] = [own]
    if profile == "nightly":
        rows = _combinations([(p.name, values(p)) for p in free])
    else:
        rows = [{p.name: v} for p in free for v in values(p) if v != p.default]
    for row in rows:
        cfg = {**own, **{k: v for k, v in row.items() if v != at[k]}}
        if cfg not in out:
            out.append(cfg)
    return out


def _combinations(axes: Sequence[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    """Every combination of the axes' values, or, past :data:`PRODUCT_MAX`, rows that
    hold every pair of values of two axes (greedy: each row starts from a pair not yet
    held and takes, axis by axis, the value that holds the most new pairs)."""
    names = [n for n, _ in axes]
    every = list(itertools.product(*(v for _, v in axes)))
    if len(every) <= PRODUCT_MAX:
        return [dict(zip(names, row)) for row in every]
    left = {((a, x), (b, y)) for (a, xs), (b, ys) in itertools.combinations(axes, 2)
            for x in xs for y in ys}
    rows = []
    while left:
        (a, x), (b, y) = min(left)
        row = {a: x, b: y}
        for n, vs in axes:
            if n not in row:
                row[n] = max(vs, key=lambda v: sum(
                    (((m, row[m]), (n, v)) if names.index(m) < names.index(n)
                     else ((n, v), (m, row[m]))) in left for m in row))
        left -= {((m, row[m]), (n, row[n])) for m, n in itertools.combinations(names, 2)}
        rows.append(row)
    return rows
