"""Do the structured constructs cost the engines anything?  Side by side, in one run.

Two comparisons, each on the vector engine (the default) and on the explicit one:

- **TwoPhase, flat against structured**: the catalogue's ``two-phase`` (one array per
  field) against ``benchmarks/structured/twophase_records.py`` (a record per resource
  manager and a set of broadcasts), same N, same actions;
- **graph-relay, before against now**: the model and engines of a reference checkout
  (``--base``, by default the commit before the structured constructs entered the DSL,
  checked out with ``git worktree add``) against this checkout's.

Each search runs in a process of its own, imported from its checkout's sources, A and B
alternately (A, B, A, B, ...) so that a machine busier for a while slows both alike; the
figures are medians of ``--repeat`` runs.  Both the search's wall time and its process's
CPU time are shown; the verdict reads the CPU time, since on a machine shared with other
work the wall time of one search varies by more than the 5 % judged (the process waits
for a core).  A comparison whose two sides explore different numbers of states, or whose
median CPU time B/A is over 1.05 (the issue's 5 %), fails the script (exit 1).

    python benchmarks/bench_structured.py [--repeat 3] [--base REV] [--write]

``--write`` also writes the table and the command to ``benchmarks/structured/results.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "structured" / "results.md"
RECORDS = ROOT / "benchmarks" / "structured" / "twophase_records.py"
#: the parent of the commit that brought records, tuples, sets as fields and 2-D arrays
BASE = "4e77ced^"
LIMIT = 1.05

# Imports osf_check from the checkout given (its package-dir mapping read from its
# pyproject), not from the installed editable copy, so that two checkouts share one venv.
CHILD = r"""
import importlib.util, json, sys, time, tomllib
root, model, params, engine = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
sys.meta_path = [f for f in sys.meta_path
                 if not getattr(f, "__module__", "").startswith("__editable__")]
sys.path = [p for p in sys.path if "__editable__" not in p]
dirs = tomllib.load(open(f"{root}/pyproject.toml", "rb"))
for name, d in sorted(dirs["tool"]["setuptools"]["package-dir"].items()):
    spec = importlib.util.spec_from_file_location(
        name, f"{root}/{d}/__init__.py", submodule_search_locations=[f"{root}/{d}"])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
import osf_check
from osf_check.properties import catalogue
from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.vector.search import vector_bfs
if model.endswith(".py"):
    model = osf_check.load(model)
elsewhere = [n for n, mod in sys.modules.items() if n.startswith("osf_check")
             and not (getattr(mod, "__file__", None) or root).startswith(root)]
assert not elsewhere, f"imported from another checkout: {elsewhere}"
t = time.perf_counter()
m = catalogue.spec(model).build(params)
built = time.perf_counter() - t
t, cpu = time.perf_counter(), time.process_time()
ex = (bfs if engine == "explicit" else vector_bfs)(m, [], depth=None, check_deadlock=False)
print(json.dumps({"distinct": ex.distinct, "generated": ex.generated,
                  "build": built, "seconds": time.perf_counter() - t,
                  "cpu": time.process_time() - cpu}))
"""


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a model of a checkout."""

    label: str
    root: Path
    model: str


@dataclass(frozen=True)
class Case:
    """A comparison: A (the reference) against B, one model size, one engine."""

    name: str
    engine: str
    params: dict
    a: Side
    b: Side


@dataclass
class Row:
    """A case's medians."""

    case: str
    engine: str
    params: dict
    a_label: str
    b_label: str
    distinct: tuple[int, int]
    generated: tuple[int, int]
    seconds: tuple[float, float]
    cpu: tuple[float, float]
    problems: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        """B's median CPU time over A's: what the verdict reads."""
        return self.cpu[1] / self.cpu[0]

    @property
    def wall_ratio(self) -> float:
        return self.seconds[1] / self.seconds[0]


def cases(base: Path) -> list[Case]:
    """What the script compares; the sizes make one search take 5 to 20 s on a
    two-core machine."""
    here = ROOT
    flat, rec = Side("flat arrays", here, "two-phase"), Side("records", here, str(RECORDS))
    old, new = Side("base", base, "graph-relay"), Side("now", here, "graph-relay")
    return [
        Case("TwoPhase", "vector", {"rms": 9}, flat, rec),
        Case("TwoPhase", "explicit", {"rms": 8}, flat, rec),
        Case("graph-relay", "vector", {}, old, new),
        Case("graph-relay", "explicit", {"slugs": 1}, old, new),
    ]


def one_run(side: Side, params: dict, engine: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(side.root), side.model,
                          json.dumps(params), engine], capture_output=True, text=True,
                         check=False, cwd=side.root)
    if out.returncode != 0:
        sys.exit(f"{side.label} ({side.root}) failed: {out.stderr.strip()[-600:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(case: Case, repeat: int) -> Row:
    runs: dict[str, list[dict]] = {"A": [], "B": []}
    for k in range(repeat):
        for key, side in (("A", case.a), ("B", case.b)):
            r = one_run(side, case.params, case.engine)
            runs[key].append(r)
            print(f"  {case.name} {case.engine} {side.label} run {k + 1}: "
                  f"{r['distinct']:,} states in {r['seconds']:.2f} s ({r['cpu']:.2f} s CPU)", file=sys.stderr,
                  flush=True)
    return row_of(case, runs)


def row_of(case: Case, runs: dict[str, list[dict]]) -> Row:
    """The medians of a case's runs (``runs["A"]``, ``runs["B"]``: each run's JSON)."""
    def med(key: str, f: str) -> float:
        return statistics.median(r[f] for r in runs[key])
    return Row(case.name, case.engine, case.params, case.a.label, case.b.label,
               (int(med("A", "distinct")), int(med("B", "distinct"))),
               (int(med("A", "generated")), int(med("B", "generated"))),
               (med("A", "seconds"), med("B", "seconds")), (med("A", "cpu"), med("B", "cpu")))


def judge(rows: list[Row], limit: float = LIMIT) -> bool:
    """Mark each row's problems (other counts, B slower than ``limit`` times A); whether
    every row passes."""
    for r in rows:
        if r.distinct[0] != r.distinct[1] or r.generated[0] != r.generated[1]:
            r.problems.append(f"counts differ: {r.distinct[0]:,}/{r.generated[0]:,} "
                              f"against {r.distinct[1]:,}/{r.generated[1]:,}")
        if r.ratio > limit:
            r.problems.append(f"CPU B/A {r.ratio:.3f} is over {limit}")
    return not any(r.problems for r in rows)


def table(rows: list[Row]) -> str:
    head = ("| model | engine | params | A | B | distinct | generated | wall A (s) "
            "| wall B (s) | states/s A | states/s B | wall B/A | CPU A (s) | CPU B (s) "
            "| CPU B/A | verdict |")
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in r.params.items()) or "defaults"
        same = r.distinct[0] == r.distinct[1]
        distinct = f"{r.distinct[0]:,}" if same else f"{r.distinct[0]:,} / {r.distinct[1]:,}"
        gen_same = r.generated[0] == r.generated[1]
        gen = f"{r.generated[0]:,}" if gen_same else f"{r.generated[0]:,} / {r.generated[1]:,}"
        rate = [f"{d / s:,.0f}" for d, s in zip(r.distinct, r.seconds)]
        lines.append(f"| {r.case} | {r.engine} | {params} | {r.a_label} | {r.b_label} | "
                     f"{distinct} | {gen} | {r.seconds[0]:.2f} | {r.seconds[1]:.2f} | "
                     f"{rate[0]} | {rate[1]} | {r.wall_ratio:.3f} | {r.cpu[0]:.2f} | "
                     f"{r.cpu[1]:.2f} | {r.ratio:.3f} | "
                     f"{'; '.join(r.problems) or 'ok'} |")
    return "\n".join(lines)


def base_checkout(rev: str) -> Path:
    """A checkout of ``rev`` beside this one (``git worktree add``, made once)."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True,
                         text=True, check=False)
    if sha.returncode != 0:
        print(f"bench_structured: --base {rev}: not a commit of this repository",
              file=sys.stderr)
        sys.exit(150)
    path = Path("/tmp") / f"osf-check-base-{sha.stdout.strip()}"
    if not (path / "pyproject.toml").exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(path), sha.stdout.strip()],
                       cwd=ROOT, check=True, capture_output=True)
    return path


def report(rows: list[Row], command: str, base: str) -> str:
    """The results page: what was run, where, and the table."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True, check=False).stdout.strip()
    return (f"# Structured state against flat arrays: search speed\n\n"
            f"Written by `benchmarks/bench_structured.py --write`; do not edit by hand.\n\n"
            f"    {command}\n\n"
            f"Checkout {head}, reference checkout for graph-relay `{base}`; Python "
            f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores.  "
            f"Wall and CPU seconds of the search alone are medians, A and B run "
            f"alternately, each search in a process of its own; states/s are distinct "
            f"states per wall second.  CPU B/A over {LIMIT} fails the run.\n\n"
            f"{table(rows)}\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--base", default=BASE, help=f"graph-relay's reference commit ({BASE})")
    ap.add_argument("--only", choices=("TwoPhase", "graph-relay"))
    ap.add_argument("--engine", choices=("vector", "explicit"))
    ap.add_argument("--write", action="store_true", help=f"write {RESULTS.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        print("bench_structured: --repeat is at least 1", file=sys.stderr)
        return 150
    chosen = [c for c in cases(base_checkout(args.base))
              if args.only in (None, c.name) and args.engine in (None, c.engine)]
    rows = [measure(c, args.repeat) for c in chosen]
    ok = judge(rows)
    print(table(rows))
    if args.write:
        cmd = "python benchmarks/bench_structured.py " + " ".join(
            a for a in (argv if argv is not None else sys.argv[1:]))
        RESULTS.write_text(report(rows, cmd.strip(), args.base))
    if not ok:
        print("bench_structured: a comparison failed (see the verdict column)",
              file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
