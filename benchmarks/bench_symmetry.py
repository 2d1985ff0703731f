"""Symmetry reduction: the reduction factor of each model, and the time it saves.

For each run, the space is explored twice with the vector engine (without and with
``--symmetry``), checking the safety properties (a bounded search of classes leaves
reach and fair checks inconclusive, so both runs leave them out), and the states stored, the wall times and
their ratios are printed.  The script stops if the reduction changes a verdict or a
counterexample's length, or stores more than the plain run.  A model whose declared
sets are not proved symmetric (or that declares none) says why, and its factor is 1.

    python benchmarks/bench_symmetry.py            # every run, with times
    python benchmarks/bench_symmetry.py --counts   # the quick runs' counts only (no times)
    python benchmarks/bench_symmetry.py --json
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from osf_check.explorer.check import check
from osf_check.properties import catalogue, kinds

#: (name, model, parameters, depth, quick): the runs compared (depth None: unbounded);
#: the quick ones are what ``--counts`` shows
RUNS = [
    ("two-phase N=3", "two-phase", {"rms": 3}, None, True),
    ("two-phase N=6", "two-phase", {"rms": 6}, None, True),
    ("two-phase N=9", "two-phase", {"rms": 9}, None, False),
    ("graph-relay", "graph-relay", {}, 8, True),
    ("graph-relay r0 s1", "graph-relay", {"retries": 0, "slugs": 1}, None, True),
    ("graph-relay i3", "graph-relay", {"intents": 3}, 7, True),
    ("graph-relay i3", "graph-relay", {"intents": 3}, 10, False),
    ("graph-relay i3", "graph-relay", {"intents": 3}, 12, False),
    ("graph-relay p2", "graph-relay", {"projects": 2}, 8, True),
    ("wire-relay w0", "wire-relay", {"workload": 0}, 8, True),
]


def safety(model: str) -> list[str]:
    """The model's properties a reduced search judges (no reach or fair checks)."""
    return [p.id for p in catalogue.properties_of(model)
            if not any(kinds.on_graph(c.kind) for c in p.checks)]


def once(model: str, params: dict, depth: int | None, symmetry: bool) -> tuple[Any, float]:
    t0 = time.perf_counter()
    r = check(model, params=params, depth=depth, props=safety(model), symmetry=symmetry)
    return r, time.perf_counter() - t0


def row(name: str, depth: int | None, plain: Any, red: Any, t_plain: float = 0.0,
        t_red: float = 0.0) -> dict[str, Any]:
    """One line of the table, or ``SystemExit`` if the reduced run disagrees with the
    plain one (verdict, counterexample lengths) or stored more states than it.

    Parameters
    ----------
    name, depth : the run's label and depth bound (None: unbounded)
    plain, red : the results (:class:`~osf_check.explorer.check.ModelResult`) without
        and with ``--symmetry``
    t_plain, t_red : their wall times in seconds

    Returns
    -------
    dict
        The run, its depth, states, classes, factor, times, and whether the reduction was
        used (and if not, why).
    """
    if red.verdict != plain.verdict:
        raise SystemExit(f"{name}: the verdict changed under symmetry "
                         f"({plain.verdict} -> {red.verdict})")
    lengths = [[(v.prop, len(v.path)) for v in r.violations] for r in (plain, red)]
    if lengths[0] != lengths[1]:
        raise SystemExit(f"{name}: the counterexamples changed under symmetry "
                         f"({lengths[0]} -> {lengths[1]})")
    states, classes = plain.exploration.distinct, red.exploration.distinct
    if classes > states:
        raise SystemExit(f"{name}: the reduced run stored more states ({classes:,}) than "
                         f"the plain one ({states:,})")
    return {"run": name, "depth": "unbounded" if depth is None else depth,
            "states": states, "reduced": classes, "factor": states / classes,
            "seconds": t_plain, "reduced_seconds": t_red,
            "used": red.symmetry["used"], "why": red.symmetry["why"]}


def table(rows: list[dict[str, Any]], times: bool) -> list[str]:
    """The rows as the text table (the times left out unless ``times``)."""
    head = f"{'run':<18} {'depth':>9} {'states':>12} {'classes':>10} {'factor':>7}"
    out = [head + (f" {'time':>8} {'reduced':>8}" if times else "")]
    for r in rows:
        line = (f"{r['run']:<18} {r['depth']:>9} {r['states']:>12,} {r['reduced']:>10,} "
                f"{r['factor']:>7.2f}")
        if times:
            line += f" {r['seconds']:>7.2f}s {r['reduced_seconds']:>7.2f}s"
        out.append(line + ("" if r["used"] else f"  (not reduced: {r['why']})"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ap.add_argument("--counts", action="store_true",
                    help="the quick runs only, their counts and factors without times")
    args = ap.parse_args()
    rows = []
    for name, model, params, depth, quick in RUNS:
        if args.counts and not quick:
            continue
        plain, t_plain = once(model, params, depth, False)
        red, t_red = once(model, params, depth, True)
        rows.append(row(name, depth, plain, red, t_plain, t_red))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("\n".join(table(rows, times=not args.counts)))


if __name__ == "__main__":
    main()
