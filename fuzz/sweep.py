"""The parameter sets a fuzz run drives the implementation at.

The model declares each parameter's range; a bug that needs two projects, a third
agent or a second retry never shows at the defaults.  So every run fuzzes the run's own
parameters first (the tour, the goals, the larger share of the examples) and then the
other *configurations*: the CI and dev profiles move one parameter at a time to each
value it has to visit (both ends of its range; every value of a small setting, such as
a workload), so that every value is fuzzed at least once; the nightly profile sweeps
combinations of those values (every combination when there are few, else every pair
of values of two parameters at least once).

Nothing here knows a model: it reads the parameters the model declares (:class:`Param`).

>>> from osf_check.properties import catalogue
>>> [c for c in configurations(catalogue.spec("graph-relay"), {}, "ci")][:3]
[{}, {'agents': 3}, {'intents': 1}]
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Mapping, Sequence

from osf_check.models.dsl import Param

__all__ = ["values", "configurations", "shares", "SWEEP_SETTING", "PRODUCT_MAX",
           "weights", "fuzz_others", "MAP_DEPTH"]

#: a setting (a parameter that is not a bound) with at most this many values is fuzzed at
#: each of them: a workload, a number of projects, lost frames
SWEEP_SETTING = 4
#: the nightly profile runs every combination while there are at most this many, else a
#: set of configurations that holds every pair of values of two parameters
PRODUCT_MAX = 128
#: the share of a run's examples the run's own parameters keep (they have the tour too)
OWN_SHARE = 0.5
#: the depth of the other configurations' tours and of the map their walks start from
#: (the run's own go to the tour's depth; a wider configuration's graph grows fast with
#: depth, and the bugs only a wider one shows have short paths: two projects, a third
#: agent)
MAP_DEPTH = 4
#: the states a goal search may store at another configuration (a tenth of the run's
#: own: a goal only a wide configuration reaches has a short path there)
GOAL_STATES = 50_000


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


def shares(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` examples split among configurations: the first (the run's own
    parameters) keeps :data:`OWN_SHARE`, the others share the rest by ``weights`` (one
    each, more where goals are unmet), each at least one example while any are given.

    >>> shares(300, [1, 1, 1, 2])
    [150, 38, 37, 75]
    """
    if len(weights) <= 1 or total <= 0:
        return [total] + [0] * (len(weights) - 1)
    own = round(total * OWN_SHARE)
    rest = total - own
    w = list(weights[1:])
    raw = [rest * x / sum(w) for x in w]
    got = [max(1, int(r)) for r in raw]
    # the remainder to the largest fractions, first come first served
    for i in sorted(range(len(raw)), key=lambda i: int(raw[i]) - raw[i])[:max(0, rest - sum(got))]:
        got[i] += 1
    return [own, *got]


def weights(configs: Sequence[Mapping[str, Any]], base: Mapping[str, Any],
            reached: Sequence[Any]) -> list[float]:
    """Each configuration's weight in the share of examples: one, plus one for each goal
    the run's own parameters left unmet (found only at wider parameters, or not found)
    whose wider parameters the configuration moves towards.  ``reached``: the goals
    phase's :class:`~osf_check.fuzz.goals.Reached` at the run's parameters."""
    unmet = [g.wider for g in reached if g.path is None or g.wider]
    out = []
    for cfg in configs:
        moved = {k: v for k, v in cfg.items() if base.get(k) != v}
        out.append(1.0 + sum(1 for w in unmet if moved and any(
            k in w and _towards(v, w[k], base.get(k)) for k, v in moved.items())))
    return out


def _towards(v: Any, want: Any, was: Any) -> bool:
    """``v`` is ``want``, or moved from ``was`` in ``want``'s direction."""
    if v == want or was is None:
        return v == want
    try:
        return (v - was) * (want - was) > 0
    except TypeError:
        return False


def fuzz_others(name: str, configs: Sequence[Mapping[str, Any]], counts: Sequence[int], *,
                mutant: str | None, seed: int, steps: int, profile: str,
                depth: int = MAP_DEPTH, harness: Any = None, db: str | None = None,
                tick: Any = None) -> tuple[list[dict[str, Any]], Any]:
    """Each configuration after the first (the run's own, fuzzed by the caller) as a run
    is, smaller: a tour to ``depth``, the goals at its own parameters, then Hypothesis with
    its share of examples from that depth.  Returns a row per configuration (its
    parameters, tour, goals, examples, seconds, failure) and the report of the first one
    that failed (its ``params`` set, so that its trace is drawn at them), or None; a
    failure stops the sweep.  ``tick(done, total)`` counts configurations."""
    from . import goals
    from .driver import hypothesis_run, tour
    rows: list[dict[str, Any]] = []
    for k, (cfg, n) in enumerate(zip(configs[1:], counts[1:])):
        at = dict(cfg)
        t0 = time.perf_counter()
        rep = tour(name, mutant=mutant, depth=depth, seed=seed, params=at, harness=harness)
        t_tour = rep.seconds
        if rep.failure is None:
            rep.goals, failed = goals.reach(name, mutant=mutant, seed=seed, params=at,
                                            harness=harness, wider={},
                                            max_states=GOAL_STATES)
            if failed is not None:
                rep.failure, rep.path, _ = failed
        if rep.failure is None and n > 0:
            rep = hypothesis_run(name, mutant=mutant, examples=n, steps=steps, seed=seed,
                                 profile=profile, params=at, rep=rep, start_depth=depth,
                                 db=db, harness=harness)
        rows.append({"params": at, "tour": {"depth": depth, "steps": rep.steps,
                                            "states": [rep.states_covered, rep.states_total],
                                            "seconds": round(t_tour, 2)},
                     "goals": [sum(g.path is not None for g in rep.goals), len(rep.goals)],
                     "examples": rep.hypothesis_examples, "steps": rep.hypothesis_steps,
                     "seconds": round(time.perf_counter() - t0, 2), "failure": rep.failure})
        if tick is not None:
            tick(k + 1, len(configs) - 1)
        if rep.failure:
            rep.params = at
            return rows, rep
    return rows, None
