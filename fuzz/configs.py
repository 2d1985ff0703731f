"""The model's other configurations, fuzzed too: each workload and each parameter at the
ends of its range that the default run does not take, by a short transition tour.

The default run fuzzes one configuration (wire-relay: workload 0, no losses, no
authority switch); a bug that shows only in another workload's data (two phones, one
key for two methods, an outbox submit) or only with a lost frame passed.  Each entry
here is toured to its own depth, judged as the main tour is, and a failure is traced at
its parameters.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Mapping, Sequence

from osf_check.models.dsl import Param

#: a setting (a parameter that is not a bound) with at most this many values is fuzzed at
#: each of them: a workload, a number of projects, lost frames
SWEEP_SETTING = 4
#: the nightly profile runs every combination while there are at most this many, else a
#: set of configurations that holds every pair of values of two parameters
PRODUCT_MAX = 128


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


def _configs(name: str) -> tuple[tuple[dict[str, Any], int], ...]:
    """The configurations the CI profile's sweep names (:func:`configurations`),
    each with its tour's depth: 5 for a workload or a lost frame (its two operations
    sent, forwarded, claimed and run), 4 for any other parameter (the step it adds is at
    most three steps in; the ends of the pending limits, the row cap and the waiters are
    the real limits, which a short tour does not press: the goals and
    ``tests/test_limits_at_edges.py`` do)."""
    from osf_check.properties import catalogue
    return tuple((cfg, 5 if {"workload", "losses"} & set(cfg) else 4)
                 for cfg in configurations(catalogue.spec(name), {}, "ci")[1:])


#: per system: (parameters over the defaults, the tour's depth there)
CONFIGS: dict[str, tuple[tuple[dict[str, Any], int], ...]] = {
    "graph-relay": (), "wire-relay": _configs("wire-relay")}


def sweep(name: str, run: Callable[..., Any], rep: Any, *, log: Callable[[str], None] | None = None
          ) -> Any:
    """Tour each configuration of ``name`` with ``run(params=…, depth=…)`` (the driver's
    tour); the first failure goes into ``rep`` with the parameters it is at."""
    for params, depth in CONFIGS.get(name, ()):
        r = run(params=params, depth=depth)
        rep.configs.append({"params": params, "depth": depth, "states": r.states_covered,
                            "transitions": r.edges_covered, "seconds": round(r.seconds, 1)})
        if log:
            log(f"configuration {' '.join(f'{k}={v}' for k, v in params.items())}: tour to "
                f"depth {depth}, {r.states_covered:,} states, {r.edges_covered:,} transitions "
                f"in {r.seconds:.1f} s")
        if r.failure:
            rep.failure, rep.path, rep.params = r.failure, r.path, params
            break
    return rep
