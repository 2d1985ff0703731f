"""Symmetry reduction: the reduction factor of each model, and the time it saves.

For each run, the complete space is explored twice with the vector engine (without and
with ``--symmetry``), and the states stored, the wall times and their ratios are
printed.  A model whose declared sets are not proved symmetric (or that declares none)
says why, and its factor is 1.

    python benchmarks/bench_symmetry.py
    python benchmarks/bench_symmetry.py --json
"""

from __future__ import annotations

import argparse
import json
import time

from osf_check.explorer.check import check

#: (name, model, parameters, depth): the complete runs compared (None: unbounded)
RUNS = [
    ("two-phase N=3", "two-phase", {"rms": 3}, None),
    ("two-phase N=6", "two-phase", {"rms": 6}, None),
    ("two-phase N=9", "two-phase", {"rms": 9}, None),
    ("graph-relay", "graph-relay", {}, 8),
    ("wire-relay w0", "wire-relay", {"workload": 0}, 8),
]


def once(model: str, params: dict, depth: int | None, symmetry: bool) -> tuple[object, float]:
    t0 = time.perf_counter()
    r = check(model, params=params, depth=depth, symmetry=symmetry)
    return r, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = ap.parse_args()
    rows = []
    for name, model, params, depth in RUNS:
        plain, t_plain = once(model, params, depth, False)
        red, t_red = once(model, params, depth, True)
        if red.verdict != plain.verdict:
            raise SystemExit(f"{name}: the verdict changed under symmetry "
                             f"({plain.verdict} -> {red.verdict})")
        rows.append({"run": name, "depth": "unbounded" if depth is None else depth,
                     "states": plain.exploration.distinct,
                     "reduced": red.exploration.distinct,
                     "factor": plain.exploration.distinct / red.exploration.distinct,
                     "seconds": t_plain, "reduced_seconds": t_red,
                     "used": red.symmetry["used"], "why": red.symmetry["why"]})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'run':<15} {'depth':>9} {'states':>12} {'classes':>10} {'factor':>8} "
          f"{'time':>8} {'reduced':>8}")
    for r in rows:
        print(f"{r['run']:<15} {r['depth']:>9} {r['states']:>12,} {r['reduced']:>10,} "
              f"{r['factor']:>8.1f} {r['seconds']:>7.2f}s {r['reduced_seconds']:>7.2f}s"
              + ("" if r["used"] else f"  (not reduced: {r['why']})"))


if __name__ == "__main__":
    main()
