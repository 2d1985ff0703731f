"""A memory budget (``explore --memory``) against none: wall time, peak memory, bytes spilled.

Each complete run is ``osf-check explore --depth unbounded --json`` in a process of its
own, so that its peak resident size (``wait4``'s ``ru_maxrss``) is its own.  For each
model the first run has no budget; the budget is then about half its peak (``--budget
RUN=SIZE`` to choose), and runs with and without it alternate, ``--repeat`` of each,
medians reported.  The counts (distinct, generated, depth) and the verdict must be the
same with and without the budget: the script exits 1 when they are not.  A budgeted
peak that is not below the unbudgeted one is said (``NO SAVING``): the budget bounds
the store, not what the search and the checks after it use besides.

    python benchmarks/bench_memory.py                     # both runs, medians of 3
    python benchmarks/bench_memory.py --repeat 1 --only two-phase
    python benchmarks/bench_memory.py --write             # also benchmarks/memory/results.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "memory" / "results.md"

#: (name, model, parameters): graph-relay's default complete run with every property
#: (reach and fair: the graph's edges are kept), and TwoPhase N=10
RUNS = [
    ("graph-relay", "graph-relay", {}),
    ("two-phase N=10", "two-phase", {"rms": 10}),
]

#: what must not change under a budget
SAME = ("distinct", "generated", "depth", "verdict")


def once(model: str, params: dict[str, int], memory: str | None) -> dict[str, object]:
    """One complete run in a child process: its counts, wall time, peak and spill."""
    cmd = [sys.executable, "-m", "osf_check.cli", "explore", "--model", model, "--depth",
           "unbounded", "--json"] + [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
    if memory is not None:
        cmd += ["--memory", memory]
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = child.stdout.read() if child.stdout else b""
    _, status, usage = os.wait4(child.pid, 0)  # (not communicate: the child's own usage)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 11, 12, 13, 14):
        raise RuntimeError(f"{' '.join(cmd)} exited {code}")
    [m] = json.loads(out)["models"]
    return {"distinct": m["distinct_states"], "generated": m["generated_states"],
            "depth": m["depth_reached"], "verdict": m["verdict"], "wall_s": wall,
            "peak_mb": usage.ru_maxrss / 1024,  # kilobytes on Linux
            "spilled_mb": m["memory"]["spilled_bytes"] / 2**20,
            "spill_reads": m["memory"]["spill_reads"]}


def half(peak_mb: float) -> str:
    """A budget of about half a peak, as ``--memory`` takes it.

    >>> half(3000.0), half(10.0)
    ('1500M', '5M')
    """
    return f"{max(1, round(peak_mb / 2))}M"


def median(runs: list[dict[str, object]]) -> dict[str, object]:
    """Medians of the figures; the counts of the first run (they are compared apart)."""
    out = {k: runs[0][k] for k in SAME}
    for k in ("wall_s", "peak_mb", "spilled_mb", "spill_reads"):
        out[k] = statistics.median(float(r[k]) for r in runs)  # type: ignore[arg-type]
    return out


def compare(name: str, budget: str, plain: list[dict[str, object]],
            budgeted: list[dict[str, object]]) -> dict[str, object]:
    """One row: the medians of both, whether every run's counts agree, and the saving.

    >>> a = [{"distinct": 9, "generated": 20, "depth": 3, "verdict": "ok", "wall_s": 1.0,
    ...       "peak_mb": 100.0, "spilled_mb": 0.0, "spill_reads": 0}]
    >>> b = [dict(a[0], wall_s=1.5, peak_mb=60.0, spilled_mb=30.0, spill_reads=7)]
    >>> r = compare("m", "50M", a, b)
    >>> r["same_counts"], r["peak_saved"], r["slowdown"], r["judgement"]
    (True, 0.4, 1.5, 'peak 40% lower')
    """
    p, b = median(plain), median(budgeted)
    same = all(all(r[k] == plain[0][k] for k in SAME) for r in plain + budgeted)
    saved = 1 - float(b["peak_mb"]) / float(p["peak_mb"])  # type: ignore[arg-type]
    if not same:
        judgement = "COUNTS DIFFER"
    elif saved <= 0:
        judgement = "NO SAVING"
    else:
        judgement = f"peak {saved:.0%} lower"
    return {"run": name, "budget": budget, "repeat": len(plain), "plain": p, "budgeted": b,
            "same_counts": same, "peak_saved": round(saved, 3),
            "slowdown": round(float(b["wall_s"]) / float(p["wall_s"]), 3),  # type: ignore[arg-type]
            "judgement": judgement}


def measure(name: str, model: str, params: dict[str, int], repeat: int,
            budget: str | None) -> dict[str, object]:
    """``repeat`` runs without a budget and with one, in turns."""
    plain = [once(model, params, None)]
    budget = budget or half(float(plain[0]["peak_mb"]))  # type: ignore[arg-type]
    budgeted = [once(model, params, budget)]
    for _ in range(repeat - 1):
        plain.append(once(model, params, None))
        budgeted.append(once(model, params, budget))
    return compare(name, budget, plain, budgeted)


def table(rows: list[dict[str, object]]) -> str:
    """A markdown table of the rows."""
    out = ["| run | budget | wall s (none / budget) | peak MB (none / budget) | spilled MB "
           "| spill reads | distinct | judgement |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p, b = r["plain"], r["budgeted"]
        out.append(f"| {r['run']} | {r['budget']} | {p['wall_s']:.1f} / {b['wall_s']:.1f} "  # type: ignore[index]
                   f"| {p['peak_mb']:,.0f} / {b['peak_mb']:,.0f} | {b['spilled_mb']:,.0f} "  # type: ignore[index]
                   f"| {b['spill_reads']:,.0f} | {p['distinct']:,} | {r['judgement']} |")  # type: ignore[index]
    return "\n".join(out)


def report(rows: list[dict[str, object]], command: str) -> str:
    """The results page: what was run, where, and the table."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True, check=False).stdout.strip()
    return (f"# A memory budget against none\n\n"
            f"Written by `benchmarks/bench_memory.py --write`; do not edit by hand.\n\n"
            f"    {command}\n\n"
            f"Checkout {head}; Python {platform.python_version()}, {platform.machine()}, "
            f"{os.cpu_count()} cores.  Each run a complete `explore --depth unbounded` in "
            f"a process of its own, runs with and without the budget in turns; medians of "
            f"{rows[0]['repeat'] if rows else 0}.  Peak: the child's `ru_maxrss`.\n\n"
            f"{table(rows)}\n")


def parse_budgets(given: list[str]) -> dict[str, str]:
    """``RUN=SIZE`` options; an unknown run is refused (ValueError)."""
    names = {name for name, _, _ in RUNS}
    out = {}
    for g in given:
        name, eq, size = g.rpartition("=")
        if not eq or name not in names or not size:
            raise ValueError(f"--budget {g!r}: expected RUN=SIZE with RUN one of "
                             f"{', '.join(sorted(names))}")
        out[name] = size
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=sorted({m for _, m, _ in RUNS}))
    ap.add_argument("--budget", action="append", default=[], metavar="RUN=SIZE",
                    help="the budget of a run (default: half its first unbudgeted peak)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--write", action="store_true", help=f"write {RESULTS.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        print("bench_memory: --repeat is at least 1", file=sys.stderr)
        return 150
    try:
        budgets = parse_budgets(args.budget)
    except ValueError as e:
        print(f"bench_memory: {e}", file=sys.stderr)
        return 150
    rows = [measure(name, model, params, args.repeat, budgets.get(name))
            for name, model, params in RUNS if args.only in (None, model)]
    print(json.dumps(rows, indent=2) if args.json else table(rows))
    if args.write:
        cmd = "python benchmarks/bench_memory.py " + " ".join(
            argv if argv is not None else sys.argv[1:])
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(report(rows, cmd.strip()))
    if not all(r["same_counts"] for r in rows):
        print("bench_memory: the counts differ under a budget", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
