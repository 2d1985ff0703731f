"""Explicit-engine throughput: distinct states/s and bytes per stored state.

Runs the default models at depth 12 and TwoPhase at N=6 and N=7 (complete), each
``--repeat`` times, and prints the median.  Reference on a machine of this kind:
TLC (one worker) does TwoPhase N=7 (296,448 distinct) in about 9.6 s, about
31,000 distinct states/s; SPIN's compiled verifier in about 0.33 s.

    python benchmarks/bench_explore.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from osf_check.explorer.explicit.bfs import bfs
from osf_check.properties import catalogue


def run(model: str, params: dict, depth: int | None, props: bool) -> tuple[float, int, int, int]:
    spec = catalogue.spec(model)
    m = spec.build(params)
    ps = catalogue.properties_of(model) if props else []
    t0 = time.perf_counter()
    ex = bfs(m, ps, depth=depth, check_deadlock=False)
    dt = time.perf_counter() - t0
    return dt, ex.distinct, ex.generated, ex.stored_bytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = [("graph-relay", {}, 12, True), ("wire-relay", {}, 12, True),
            ("two-phase", {"rms": 6}, None, False),
            ("two-phase", {"rms": 7}, None, False)]
    print(f"{'model':<22} {'depth':>6} {'distinct':>10} {'generated':>11} {'median s':>9} "
          f"{'states/s':>10} {'bytes/state':>12}")
    for model, params, depth, props in rows:
        times, res = [], None
        for _ in range(args.repeat):
            dt, d, g, b = run(model, params, depth, props)
            times.append(dt)
            res = (d, g, b)
        d, g, b = res  # type: ignore[misc]
        med = statistics.median(times)
        name = model + "".join(f" {k}={v}" for k, v in params.items())
        print(f"{name:<22} {str(depth if depth is not None else 'all'):>6} {d:>10,} {g:>11,} "
              f"{med:>9.2f} {d / med:>10,.0f} {b / d:>12.1f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of this process: {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
