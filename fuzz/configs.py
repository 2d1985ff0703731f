"""The model's other configurations, fuzzed too: each workload and each parameter at the
ends of its range that the default run does not take, by a short transition tour.

The default run fuzzes one configuration (wire-relay: workload 0, no losses, no
authority switch); a bug that shows only in another workload's data (two phones, one
key for two methods, an outbox submit) or only with a lost frame passed.  Each entry
here is toured to its own depth, judged as the main tour is, and a failure is traced at
its parameters.
"""

from __future__ import annotations

from typing import Any, Callable

def _configs(name: str) -> tuple[tuple[dict[str, Any], int], ...]:
    """The configurations the CI profile's sweep names (:func:`.sweep.configurations`),
    each with its tour's depth: 5 for a workload or a lost frame (its two operations
    sent, forwarded, claimed and run), 4 for any other parameter (the step it adds is at
    most three steps in; the ends of the pending limits, the row cap and the waiters are
    the real limits, which a short tour does not press: the goals and
    ``tests/test_limits_at_edges.py`` do)."""
    from osf_check.properties import catalogue

    from .sweep import configurations
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
