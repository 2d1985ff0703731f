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

import time
from typing import Any, Mapping, Sequence

from .configs import PRODUCT_MAX, SWEEP_SETTING, _combinations, configurations, values  # noqa: F401

__all__ = ["values", "configurations", "shares", "SWEEP_SETTING", "PRODUCT_MAX",
           "weights", "fuzz_others", "MAP_DEPTH"]

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
