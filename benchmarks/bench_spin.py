"""osf-check against SPIN, side by side, on TwoPhase and the relay models.

Installs SPIN if it is missing (Debian package ``spin``), writes the Promela
TwoPhase model (one ``d_step`` per TLA+ action instance, self-loops kept, so that
SPIN's "transitions" equals TLC's "generated") and runs, alternating, SPIN's
compiled verifiers and osf-check's engines, each in its own process so that peak
memory is its own.  The tools (``--tools``, any of them, comma-separated):

``spin``
    ``gcc -O2 -DSAFETY -DNOREDUCE``: full search, the like-for-like comparison.
``spin-por``
    SPIN's default build, its partial-order reduction on; it stores at most as many
    states as the full search (on this model as many: one process whose every
    statement reads global variables leaves the reduction nothing to prune).
``spin-collapse``
    ``-DCOLLAPSE`` added to the full search: SPIN's lossless state compression.
``vector``, ``vector-x2``, ``explicit``
    osf-check's vector engine with one or two worker processes, its pure-Python
    engine (skipped above ``--explicit-max-n``).
``symmetry``
    the vector engine with TwoPhase's resource managers interchangeable
    (``--symmetry``): it stores classes, and the factor is states / classes.

Prints distinct and generated states (SPIN: "states, stored" and "transitions"),
wall time, distinct states/s, CPU seconds (user and system, the workers' included:
on a machine shared with other work, the fairer figure of the two), peak resident memory (each process's maximum resident
size; for two workers the sum of the parent's and each worker's, an upper bound),
bytes per stored state and each row's wall time, CPU time and memory over SPIN's, with
and without its reduction (osf-check's times are its search's, without the
interpreter's start and the model's build; SPIN's are the compiled verifier's whole
run); medians of ``--repeat`` runs (peak: the largest).  Exits 1 if
the counts that must agree do not (the full searches' distinct and generated states,
to the digits SPIN prints) or if the reduction stored more than the full search.

    python benchmarks/bench_spin.py [--repeat 3] [--min-n 5] [--max-n 9]
    python benchmarks/bench_spin.py --n 10 --tools spin,spin-por,vector,vector-x2 --no-relay
    python benchmarks/bench_spin.py --n 11 --tools vector,spin-collapse --repeat 1 --no-relay
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

CHILD = r"""
import gc, json, resource, sys, time
from osf_check.properties import catalogue
from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.vector.search import vector_bfs
model, params, depth, engine = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
workers = int(sys.argv[5]) if len(sys.argv) > 5 else 1
depth = None if depth == "none" else int(depth)
m = catalogue.spec(model).build(params)
props = catalogue.properties_of(model) if model != "two-phase" else []
reduce = None
if engine == "symmetry":
    from osf_check.explorer.symmetry import Reduction, prove_symmetric
    why = prove_symmetric(m, props, m.symmetries) if m.symmetries else "no symmetric set"
    if why is not None:
        sys.exit(f"{model}: no symmetry reduction ({why})")
    reduce = Reduction(m, m.symmetries)
t, cpu = time.perf_counter(), time.process_time()
if engine == "explicit":
    ex = bfs(m, props, depth=depth, check_deadlock=False)
else:
    ex = vector_bfs(m, props, depth=depth, check_deadlock=False, workers=workers,
                    reduce=reduce)
dt, cpu = time.perf_counter() - t, time.process_time() - cpu
counts = {"distinct": ex.distinct, "generated": ex.generated, "complete": bool(ex.complete),
          "bytes_per_state": ex.stored_bytes() / ex.distinct}
# the workers live as long as the states they hold: stop them (the states' finalizer
# joins them) so that their CPU time and peak are counted
del ex
gc.collect()
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
forks = kids.ru_maxrss / 1024 if workers > 1 else 0
print(json.dumps({**counts, "seconds": dt, "cpu_seconds": cpu + kids.ru_utime + kids.ru_stime,
                  "peak_mb": own + workers * forks}))
"""

#: the SPIN builds: the flags added to ``gcc -O2 -DSAFETY -DMEMLIM=...``
SPIN_BUILDS = {"spin": ["-DNOREDUCE"], "spin por": [],
               "spin collapse": ["-DNOREDUCE", "-DCOLLAPSE"]}
#: osf-check's rows: (engine, workers)
OSF_ROWS = {"vector": ("vector", 1), "vector x2": ("vector", 2),
            "explicit": ("explicit", 1), "symmetry": ("symmetry", 1)}
TOOLS = list(SPIN_BUILDS) + list(OSF_ROWS)
DEFAULT_TOOLS = "spin,spin-por,vector,vector-x2,explicit,symmetry"
#: the full searches, whose counts must equal each other's
FULL = ("spin", "spin collapse", "vector", "vector x2", "explicit")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """Bad input: one line and exit 150, as osf-check's commands do."""
        print(f"bench_spin.py: {message}", file=sys.stderr)
        raise SystemExit(150)


def ensure_spin() -> str:
    exe = shutil.which("spin")
    if exe:
        return exe
    print("spin not found: installing the Debian package 'spin'", file=sys.stderr)
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "spin"]):
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    exe = shutil.which("spin")
    if not exe:
        sys.exit("could not install spin (apt-get install spin, as root)")
    return exe


def promela(n: int) -> str:
    allprep = " && ".join(f"tmPrepared[{r}]" for r in range(n))
    opts = [f"d_step {{ tmState == 0 && {allprep} -> tmState = 1; msgCommit = 1 }}",
            "d_step { tmState == 0 -> tmState = 2; msgAbort = 1 }"]
    for r in range(n):
        opts += [f"d_step {{ tmState == 0 && msgPrepared[{r}] -> tmPrepared[{r}] = 1 }}",
                 f"d_step {{ rmState[{r}] == 0 -> rmState[{r}] = 1; msgPrepared[{r}] = 1 }}",
                 f"d_step {{ rmState[{r}] == 0 -> rmState[{r}] = 3 }}",
                 f"d_step {{ msgCommit -> rmState[{r}] = 2 }}",
                 f"d_step {{ msgAbort -> rmState[{r}] = 3 }}"]
    body = "\n".join(f"  :: {o}" for o in opts)
    return (f"/* TwoPhase.tla, N={n}: rmState working=0 prepared=1 committed=2 aborted=3; "
            f"tmState init=0 committed=1 aborted=2 */\n"
            f"byte rmState[{n}];\nbyte tmState;\nbool tmPrepared[{n}];\nbool msgPrepared[{n}];\n"
            f"bool msgCommit;\nbool msgAbort;\n"
            f"active proctype TwoPhase() {{\n  do\n{body}\n  od\n}}\n")


def build_spin(spin: str, n: int, d: Path, variant: str = "spin",
               memlim: int = 20000) -> Path:
    """Compile SPIN's verifier of TwoPhase N=``n`` in ``d``, the build ``variant`` names.

    ``memlim`` (MB) is pan's own bound: past it, pan stops and reports how far it got
    instead of being killed by the kernel.
    """
    if not (d / "pan.c").exists():
        (d / "tp.pml").write_text(promela(n))
        subprocess.run([spin, "-a", "tp.pml"], cwd=d, check=True, stdout=subprocess.DEVNULL)
    exe = d / ("pan_" + variant.replace(" ", "_"))
    subprocess.run(["gcc", "-O2", "-DSAFETY", *SPIN_BUILDS[variant], f"-DMEMLIM={memlim}",
                    "-o", exe.name, "pan.c"], cwd=d, check=True)
    return exe


def hash_bits(n: int) -> int:
    """pan's ``-w``: a hash table of 2**w slots of 8 bytes, 3N+2 bits (up to 8 times
    more slots than TwoPhase's about 6**N states), capped at 2**28 slots (2 GiB, so 4
    times more than the states at N=10 and fewer at N=11), beyond which SPIN chains
    the states that share a slot; ``--hash-w`` sets it."""
    return max(18, min(28, (n * 3) + 2))


def run_spin(pan: Path, n: int, w: int | None = None) -> dict[str, Any]:
    """One run of a compiled verifier: its counts, wall time, peak resident memory
    (the process's, as for osf-check) and pan's own account of its memory."""
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen([str(pan), "-m10000", f"-w{w or hash_bits(n)}"], cwd=pan.parent,
                             stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        dt = time.perf_counter() - t
        out.seek(0)
        text = out.read()
    return dict(parse_pan(text, dt, usage.ru_maxrss / 1024),
                cpu_seconds=usage.ru_utime + usage.ru_stime)


def parse_pan(text: str, seconds: float, rss_mb: float) -> dict[str, Any]:
    """pan's report as a row; ``complete`` is False if pan stopped early (out of
    memory, at its -DMEMLIM bound or its depth bound): its counts are then how far it
    got."""
    # pan prints large counts in scientific notation with 8 digits (1.2355840e+08
    # transitions): keep how precise the figure is, to compare counts fairly
    stored_m = re.search(r"([\d.e+]+) states, stored", text)
    if stored_m is None:
        raise SystemExit("pan printed no state count:\n" + text[-2000:])
    stored_s = stored_m.group(1)
    trans_s = _group(r"([\d.e+]+) transitions", text) or "0"
    stored, trans = int(float(stored_s)), int(float(trans_s))
    states_mb = float(_group(r"([\d.]+)\s+actual memory usage for states", text) or 0)
    pan_mb = float(_group(r"([\d.]+)\s+total actual memory usage", text) or 0)
    complete = "errors: 0" in text and not any(m in text for m in INCOMPLETE)
    return {"distinct": stored, "generated": trans, "seconds": seconds, "peak_mb": rss_mb,
            "pan_mb": pan_mb, "bytes_per_state": states_mb * 2**20 / max(stored, 1),
            "tolerance": max(_ulp(stored_s), _ulp(trans_s)), "complete": complete}


#: what pan prints when it stopped before the end (its counts are then a lower bound)
INCOMPLETE = ("Search not completed", "reached -DMEMLIM bound", "out of memory",
              "max search depth too small")


def _group(pattern: str, text: str) -> str | None:
    m = re.search(pattern, text)
    return m.group(1) if m else None


def _ulp(text: str) -> int:
    """The last printed digit's weight: 1 for integers, 10**(e-7) for 1.2355840e+08."""
    if "e" not in text:
        return 0
    mant, exp = text.split("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 10 ** max(int(exp) - decimals, 0)


def run_osf(model: str, params: dict, depth: int | None, engine: str,
            workers: int = 1) -> dict[str, Any]:
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", CHILD, model, json.dumps(params),
                          "none" if depth is None else str(depth), engine, str(workers)],
                         capture_output=True, text=True, cwd=root)
    if out.returncode:
        raise SystemExit(f"osf-check {engine} on {model} {params} failed: "
                         f"{out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout)


def parse_tools(text: str) -> list[str]:
    """``spin,spin-por,vector`` as row names, in :data:`TOOLS`' order."""
    names = [t.strip().replace("-", " ") for t in text.split(",") if t.strip()]
    bad = [t for t in names if t not in TOOLS]
    if bad or not names:
        raise ValueError(f"unknown tool {bad[0] if bad else '(none)'!r}: choose among "
                         + ", ".join(t.replace(' ', '-') for t in TOOLS))
    return [t for t in TOOLS if t in names]


def parse_ns(text: str) -> list[int]:
    """``10`` or ``9,10`` or ``5-9``: the TwoPhase sizes to run."""
    ns: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            raise ValueError(f"--n takes sizes such as 10, 9,10 or 5-9, not {text!r}") from None
        if not 1 <= a <= b:
            raise ValueError(f"--n: sizes from 1 up, not {part!r}")
        ns += range(a, b + 1)
    return sorted(set(ns))


def two_phase(spin: str | None, n: int, tools: list[str], args: argparse.Namespace,
              tmp: Path) -> list[dict[str, Any]]:
    """TwoPhase N=``n`` with every tool, ``args.repeat`` rounds, alternating the tools
    run by run so that machine noise hits all of them; one row per tool."""
    d = tmp / f"n{n}"
    d.mkdir()
    pans = {t: build_spin(spin, n, d, t, args.memlim) for t in tools
            if t in SPIN_BUILDS and spin is not None}
    runs: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
    for _ in range(args.repeat):
        for t in tools:
            if t in pans:
                runs[t].append(run_spin(pans[t], n, args.hash_w))
            elif t == "explicit" and n > args.explicit_max_n:
                continue
            elif t in OSF_ROWS:
                engine, workers = OSF_ROWS[t]
                runs[t].append(run_osf("two-phase", {"rms": n}, None, engine, workers))
    rows = [dict(_med(rs), model=f"TwoPhase N={n}", tool=t) for t, rs in runs.items() if rs]
    judge(rows)
    return rows


def judge(rows: list[dict[str, Any]]) -> None:
    """Set each row's ``counts`` verdict: the full searches against the first complete
    one (SPIN's if it ran), the reduction against the full search, the classes' factor."""
    full = [r for r in rows if r["tool"] in FULL and r.get("complete", True)]
    ref = full[0] if full else None
    for r in rows:
        if not r.get("complete", True):
            r["counts"], r["agree"] = "INCOMPLETE (pan stopped early): counts so far", None
        elif ref is None or r is ref:
            r["counts"], r["agree"] = ("reference" if r is ref else ""), None
        elif r["tool"] in FULL:
            tol = max(ref.get("tolerance", 0), r.get("tolerance", 0))
            r["agree"] = (abs(r["distinct"] - ref["distinct"]) <= tol
                          and abs(r["generated"] - ref["generated"]) <= tol)
            r["counts"] = ("DIFFER" if not r["agree"] else
                           "agree (to SPIN's printed digits)" if tol else "agree")
        elif r["tool"] == "spin por":
            r["agree"] = r["distinct"] <= ref["distinct"] + ref.get("tolerance", 0)
            r["counts"] = (f"POR stores {r['distinct'] / ref['distinct']:.3f} of the states"
                           if r["agree"] else "POR STORED MORE")
        else:  # symmetry: classes, not states
            r["agree"] = r["distinct"] <= ref["distinct"]
            r["counts"] = (f"classes, factor {ref['distinct'] / r['distinct']:.1f}"
                           if r["agree"] else "SYMMETRY STORED MORE")


def _med(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One row of a tool's runs: median times, the largest peak; ``SystemExit`` if two
    complete runs of the same search counted differently."""
    done = {(r["distinct"], r["generated"]) for r in runs if r.get("complete", True)}
    if len(done) > 1:
        raise SystemExit(f"the runs of one search counted differently: {sorted(done)}")
    out = dict(runs[0])
    out["complete"] = all(r.get("complete", True) for r in runs)
    out["seconds"] = statistics.median(r["seconds"] for r in runs)
    out["cpu_seconds"] = statistics.median(r.get("cpu_seconds", 0) for r in runs)
    out["peak_mb"] = max(r["peak_mb"] for r in runs)
    out["runs"] = len(runs)
    out["all_seconds"] = [round(r["seconds"], 3) for r in runs]
    return out


def table(rows: list[dict[str, Any]]) -> list[str]:
    """The rows as text; t/…, c/… and m/… are the row's wall time, CPU time and peak
    memory over SPIN's full search (spin) and over SPIN with its reduction (por), at
    the same N."""
    out = [f"{'model':<20} {'tool':<13} {'distinct':>11} {'generated':>13} {'wall s':>8} "
           f"{'states/s':>10} {'cpu s':>8} {'peak MB':>8} {'B/state':>7} {'t/spin':>6} "
           f"{'c/spin':>6} {'m/spin':>6} {'t/por':>6} {'c/por':>6} {'m/por':>6}  counts"]
    for r in rows:
        same = {x["tool"]: x for x in rows if x["model"] == r["model"]}
        rate = r["distinct"] / r["seconds"] if r["seconds"] else 0
        ratios = [_ratio(r, same.get(ref), key) for ref in ("spin", "spin por")
                  for key in ("seconds", "cpu_seconds", "peak_mb")]
        bps = f"{r['bytes_per_state']:.1f}" if "bytes_per_state" in r else ""
        out.append(f"{r['model']:<20} {r['tool']:<13} {r['distinct']:>11,} "
                   f"{r['generated']:>13,} {r['seconds']:>8.2f} {rate:>10,.0f} "
                   f"{r.get('cpu_seconds', 0):>8.2f} "
                   f"{r['peak_mb']:>8,.0f} {bps:>7} "
                   + " ".join(f"{x:>6}" for x in ratios) + f"  {r.get('counts', '')}")
    return out


def _ratio(r: dict[str, Any], ref: dict[str, Any] | None, key: str) -> str:
    if ref is None or ref is r or r["tool"].startswith("spin") or not ref.get(key):
        return ""
    return f"{r[key] / ref[key]:.2f}"


def main() -> None:
    ap = _Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min-n", type=int, default=5)
    ap.add_argument("--max-n", type=int, default=9)
    ap.add_argument("--n", help="the sizes instead of --min-n..--max-n: 10, 10,11 or 5-9")
    ap.add_argument("--tools", default=DEFAULT_TOOLS,
                    help=f"comma-separated, among {', '.join(t.replace(' ', '-') for t in TOOLS)}"
                         f" (default {DEFAULT_TOOLS})")
    ap.add_argument("--explicit-max-n", type=int, default=8,
                    help="the pure-Python engine is skipped above this N (minutes, GBs)")
    ap.add_argument("--memlim", type=int, default=20000,
                    help="SPIN's -DMEMLIM in MB: pan stops there and says how far it got")
    ap.add_argument("--hash-w", type=int, help="pan's -w (hash table of 2**w slots); "
                    "default about one slot per state, at most 2**28")
    ap.add_argument("--no-relay", action="store_true",
                    help="leave out the relay models' depth-12 rows")
    ap.add_argument("--json", action="store_true", help="the rows as one JSON document")
    args = ap.parse_args()
    try:
        tools = parse_tools(args.tools)
        ns = parse_ns(args.n) if args.n else list(range(args.min_n, args.max_n + 1))
    except ValueError as e:
        ap.error(str(e))
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    spin = ensure_spin() if any(t in SPIN_BUILDS for t in tools) else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in ns:
            rows += two_phase(spin, n, tools, args, Path(tmp))
    for model in () if args.no_relay else ("graph-relay", "wire-relay"):
        for eng in ("vector", "explicit"):
            if eng in tools:
                r = _med([run_osf(model, {}, 12, eng) for _ in range(args.repeat)])
                rows.append(dict(r, model=f"{model} depth 12", tool=eng))
    print(json.dumps(rows, indent=2) if args.json else "\n".join(table(rows)))
    if any(r.get("agree") is False for r in rows):
        sys.exit("state counts differ between SPIN and osf-check, or a reduction stored more")


if __name__ == "__main__":
    main()
