"""Do the reach and fair checks keep their speed?  Two checkouts, one run, side by side.

The complete graph-relay run with every property is timed with the ``osf-check`` of each
checkout given, alternately (A, B, A, B, ...), so that a machine that is busier for a
while slows both alike.  A run's JSON gives its whole time (``seconds``) and its search's
(``explore_seconds``); the difference is what the reach and fair checks (and the
verdicts' bookkeeping) cost.  Prints each run and the medians, and the ratio B/A.

    python benchmarks/bench_fair_checks.py OLD/.venv/bin/osf-check NEW/.venv/bin/osf-check
    python benchmarks/bench_fair_checks.py A B --repeat 3 --param intents=1

Both checkouts must hold the same model (the state counts are compared and must agree),
or the ratio measures the model's change, not the checks'.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys


def one_run(exe: str, params: list[str]) -> dict:
    cmd = [exe, "explore", "--model", "graph-relay", "--depth", "unbounded", "--json"]
    for p in params:
        cmd += ["--param", p]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{exe} exited {out.returncode}: {out.stderr.strip()[-400:]}")
    m = json.loads(out.stdout)["models"][0]
    return {"states": m["distinct_states"], "seconds": m["seconds"],
            "explore": m["explore_seconds"], "checks": m["seconds"] - m["explore_seconds"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="the osf-check of the reference checkout")
    ap.add_argument("b", help="the osf-check of the checkout measured against it")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    args = ap.parse_args()
    rows: dict[str, list[dict]] = {"A": [], "B": []}
    for k in range(args.repeat):
        for name, exe in (("A", args.a), ("B", args.b)):
            r = one_run(exe, args.param)
            rows[name].append(r)
            print(f"{name} run {k + 1}: {r['states']:,} states, whole {r['seconds']:.1f} s, "
                  f"search {r['explore']:.1f} s, checks {r['checks']:.1f} s", flush=True)
    if {r["states"] for r in rows["A"]} != {r["states"] for r in rows["B"]}:
        sys.exit("the two checkouts explore different state spaces: not comparable")
    med = {n: {f: statistics.median(r[f] for r in rs) for f in ("seconds", "checks")}
           for n, rs in rows.items()}
    for f in ("seconds", "checks"):
        print(f"median {f}: A {med['A'][f]:.1f} s, B {med['B'][f]:.1f} s, "
              f"B/A {med['B'][f] / med['A'][f]:.3f}")


if __name__ == "__main__":
    main()
