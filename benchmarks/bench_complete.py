"""Complete state spaces: wall time, peak memory and bytes per state of a whole check.

Each run is ``osf-check explore --depth unbounded --json`` in a process of its own, so
that its peak resident size (``wait4``'s ``ru_maxrss``) is its own: the search, the
frontier, the temporaries and the reach and fair checks all count, not only the
stored states.  Prints one row per run and the median of ``--repeat`` runs.

    python benchmarks/bench_complete.py                        # every complete run below
    python benchmarks/bench_complete.py --only graph-relay     # the runs of one model
    python benchmarks/bench_complete.py --repeat 3 --json      # medians, for a machine
    python benchmarks/bench_complete.py --run "wire-relay w1" --timeout 600 --limit-gb 16
    python benchmarks/bench_complete.py --run "wire-relay w1" --memory 1G   # spilling

Each row ends with the run's memory target, where it has one (:data:`TARGET_MB`), and
whether its peak stayed within it; the script exits 1 if a run went over (a run stopped
by ``--timeout`` or ``--limit-gb`` is not counted either way).  The targets, on the
2-core, 24 GB development machine: graph-relay complete with every property in at
most 2 GB of peak memory, each wire-relay workload in at most 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from typing import Sequence

#: (name, model, parameters[, options]): the complete runs measured; options are given
#: to ``explore`` as they are (graph-relay's intents are interchangeable: with
#: ``--symmetry`` one state a class is stored and every property is still judged)
RUNS: list[tuple] = [
    ("graph-relay", "graph-relay", {}),
    ("graph-relay sym", "graph-relay", {}, ("--symmetry",)),
    ("wire-relay w0", "wire-relay", {"workload": 0}),
    ("wire-relay w1", "wire-relay", {"workload": 1}),
    ("wire-relay w2", "wire-relay", {"workload": 2}),
    ("wire-relay w3", "wire-relay", {"workload": 3}),
    ("two-phase N=9", "two-phase", {"rms": 9}),
    ("two-phase N=10", "two-phase", {"rms": 10}),
]


#: peak resident memory a complete run should stay within, in MB (``--target`` overrides)
TARGET_MB = {"graph-relay": 2048.0, "graph-relay sym": 2048.0, "wire-relay w0": 1536.0, "wire-relay w1": 1536.0,
             "wire-relay w2": 1536.0, "wire-relay w3": 1536.0}


def against(peak_mb: float, target_mb: float | None) -> str:
    """How a peak compares with its target: "within", "OVER" or "" (no target).

    >>> against(1900.0, 2048.0), against(2100.0, 2048.0), against(5.0, None)
    ('within', 'OVER', '')
    """
    if target_mb is None:
        return ""
    return "within" if peak_mb <= target_mb else "OVER"


class Exceeded(Exception):
    """A run stopped by --timeout or --limit-gb: its figures are unknown."""


def once(model: str, params: dict[str, int], timeout: float | None = None,
         limit_gb: float | None = None, options: Sequence[str] = ()) -> dict[str, float]:
    """One complete run in a child process: its figures and its own peak memory."""
    cmd = [sys.executable, "-m", "osf_check.cli", "explore", "--model", model, "--depth",
           "unbounded", "--json", *options] + [a for k, v in params.items()
                                                for a in ("--param", f"{k}={v}")]

    def limit() -> None:  # in the child: its address space, so that it fails, not the machine
        if limit_gb is not None:
            import resource
            b = int(limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (b, b))

    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             preexec_fn=limit)
    # a timer kills a run past its time; wait4 (not communicate) keeps the child's own
    # resource usage
    timer = threading.Timer(timeout, child.kill) if timeout else None
    if timer:
        timer.start()
    out = child.stdout.read() if child.stdout else b""
    _, status, usage = os.wait4(child.pid, 0)
    if timer:
        timer.cancel()
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if timeout and wall >= timeout and code < 0:
        raise Exceeded(f"stopped after {timeout:.0f} s")
    if code not in (0, 11, 12, 13, 14):
        if limit_gb is not None:
            raise Exceeded(f"failed (exit {code}) within {limit_gb:g} GB of address space")
        raise RuntimeError(f"{' '.join(cmd)} exited {code}")
    doc = json.loads(out)
    [m] = doc["models"]
    peak = usage.ru_maxrss * 1024  # kilobytes on Linux
    return {"distinct": m["distinct_states"], "generated": m["generated_states"],
            "depth": m["depth_reached"], "wall_s": wall, "explore_s": m["seconds"],
            "peak_mb": peak / 2**20, "bytes_per_state": peak / max(1, m["distinct_states"]),
            "stored_bytes_per_state": m["stored_bytes"] / max(1, m["distinct_states"]),
            "states_per_s": m["distinct_states"] / wall, "verdict": m["verdict"],
            "spilled_mb": (m.get("memory") or {}).get("spilled_bytes", 0) / 2**20}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", default=None, help="the runs of this model only")
    ap.add_argument("--run", action="append", default=[],
                    help="this run only, by its name (repeatable), e.g. 'wire-relay w0'")
    ap.add_argument("--timeout", type=float, default=None,
                    help="stop a run after this many seconds (reported, not measured)")
    ap.add_argument("--limit-gb", type=float, default=None,
                    help="address space a run may take (reported, not measured, if past)")
    ap.add_argument("--target", action="append", default=[], metavar="RUN=MB",
                    help="the peak memory target of a run, in MB (repeatable)")
    ap.add_argument("--memory", default=None, metavar="SIZE",
                    help="explore's memory budget for every run (e.g. 1G): over it, the "
                         "search spills to disk")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.repeat < 1:
        print("bench_complete: --repeat must be at least 1", file=sys.stderr)
        return 150
    try:
        targets = {**TARGET_MB, **parse_targets(args.target)}
    except ValueError as e:
        print(f"bench_complete: {e}", file=sys.stderr)
        return 150
    rows = []
    extra = ("--memory", args.memory) if args.memory else ()
    for name, model, params, *options in RUNS:
        if (args.only and model != args.only) or (args.run and name not in args.run):
            continue
        opts = (*(options[0] if options else ()), *extra)
        try:
            runs = [once(model, params, args.timeout, args.limit_gb, opts)
                    for _ in range(args.repeat)]
        except Exceeded as e:
            rows.append({"run": name, "exceeded": str(e)})
            if not args.json:
                print(f"{name:<16} not measured: {e}", flush=True)
            continue
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "verdict"}
        target = targets.get(name)
        rows.append({"run": name, "repeat": args.repeat, "verdict": runs[0]["verdict"], **med,
                     "target_mb": target, "memory": against(med["peak_mb"], target)})
        if not args.json:
            r = rows[-1]
            print(f"{name:<16} {r['distinct']:>13,.0f} distinct {r['generated']:>14,.0f} "
                  f"generated  depth {r['depth']:>3.0f}  {r['wall_s']:8.1f} s  "
                  f"{r['peak_mb']:9,.0f} MB peak  {r['bytes_per_state']:7,.0f} B/state "
                  f"(stored {r['stored_bytes_per_state']:4.1f})  "
                  f"{r['states_per_s']:>10,.0f} states/s  {r['verdict']}"
                  + (f"  spilled {r['spilled_mb']:,.0f} MB" if r["spilled_mb"] else "")
                  + (f"  {r['memory']} {target:,.0f} MB target" if target else ""), flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 1 if any(r.get("memory") == "OVER" for r in rows) else 0


def parse_targets(given: list[str]) -> dict[str, float]:
    """``RUN=MB`` options as a dict; a run name not in :data:`RUNS` or a size that is not
    a positive number is refused (ValueError, with the reason)."""
    names = {run[0] for run in RUNS}
    out = {}
    for g in given:
        name, eq, mb = g.rpartition("=")
        if not eq or name not in names:
            raise ValueError(f"--target {g!r}: expected RUN=MB with RUN one of "
                             f"{', '.join(sorted(names))}")
        try:
            out[name] = float(mb)
        except ValueError:
            out[name] = -1.0
        if not out[name] > 0:
            raise ValueError(f"--target {g!r}: the size must be a positive number of MB")
    return out


if __name__ == "__main__":
    sys.exit(main())
