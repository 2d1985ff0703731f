"""osf-check against SPIN, side by side, on TwoPhase N = 5…9 and the relay models.

Installs SPIN if it is missing (Debian package ``spin``), writes the Promela
TwoPhase model (one ``d_step`` per TLA+ action instance, self-loops kept, so that
SPIN's "transitions" equals TLC's "generated"), and runs, alternating, SPIN's
compiled verifier (``gcc -O2 -DSAFETY -DNOREDUCE``, full search) and osf-check's
two engines, each in its own process so that peak memory is its own.  Prints
distinct and generated states, wall time, distinct states/s, peak resident memory
and the ratio osf-check / SPIN (states/s), medians of ``--repeat`` runs, and checks
that the state counts agree.

    python benchmarks/bench_spin.py [--repeat 3] [--max-n 9] [--explicit-max-n 8]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from osf_check.properties import catalogue
from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.vector.search import vector_bfs
model, params, depth, engine = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
workers = int(sys.argv[5]) if len(sys.argv) > 5 else 1
depth = None if depth == "none" else int(depth)
m = catalogue.spec(model).build(params)
props = catalogue.properties_of(model) if model != "two-phase" else []
t = time.perf_counter()
if engine == "explicit":
    ex = bfs(m, props, depth=depth, check_deadlock=False)
else:
    ex = vector_bfs(m, props, depth=depth, check_deadlock=False, workers=workers)
dt = time.perf_counter() - t
print(json.dumps({"distinct": ex.distinct, "generated": ex.generated, "seconds": dt,
                  "bytes_per_state": ex.stored_bytes() / ex.distinct,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


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


def build_spin(spin: str, n: int, d: Path) -> Path:
    (d / "tp.pml").write_text(promela(n))
    subprocess.run([spin, "-a", "tp.pml"], cwd=d, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["gcc", "-O2", "-DSAFETY", "-DNOREDUCE", "-DMEMLIM=20000", "-o", "pan",
                    "pan.c"], cwd=d, check=True)
    return d / "pan"


def run_spin(pan: Path, n: int) -> dict:
    w = max(18, min(28, (n * 3) + 2))
    t = time.perf_counter()
    out = subprocess.run([str(pan), "-m10000", f"-w{w}"], cwd=pan.parent, capture_output=True,
                         text=True, check=True).stdout
    dt = time.perf_counter() - t
    # pan prints large counts in scientific notation with 8 digits (1.2355840e+08
    # transitions): keep how precise the figure is, to compare counts fairly
    stored_s = re.search(r"([\d.e+]+) states, stored", out).group(1)
    trans_s = re.search(r"([\d.e+]+) transitions", out).group(1)
    stored, trans = int(float(stored_s)), int(float(trans_s))
    mem = float(re.search(r"([\d.]+)\s+total actual memory usage", out).group(1))
    return {"distinct": stored, "generated": trans, "seconds": dt, "peak_mb": mem,
            "tolerance": max(_ulp(stored_s), _ulp(trans_s))}


def _ulp(text: str) -> int:
    """The last printed digit's weight: 1 for integers, 10**(e-7) for 1.2355840e+08."""
    if "e" not in text:
        return 0
    mant, exp = text.split("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 10 ** max(int(exp) - decimals, 0)


def run_osf(model: str, params: dict, depth: int | None, engine: str, workers: int = 1) -> dict:
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", CHILD, model, json.dumps(params),
                          "none" if depth is None else str(depth), engine, str(workers)],
                         capture_output=True, text=True, check=True, cwd=root).stdout
    return json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min-n", type=int, default=5)
    ap.add_argument("--max-n", type=int, default=9)
    ap.add_argument("--explicit-max-n", type=int, default=8,
                    help="the pure-Python engine is skipped above this N (minutes, GBs)")
    ap.add_argument("--no-relay", action="store_true",
                    help="leave out the relay models' depth-12 rows")
    args = ap.parse_args()
    spin = ensure_spin()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.min_n, args.max_n + 1):
            d = Path(tmp) / f"n{n}"
            d.mkdir()
            pan = build_spin(spin, n, d)
            # alternate the tools run by run, so that machine noise hits all of them
            res: dict[str, list[dict]] = {"spin": [], "vector": [], "vector x2": [],
                                          "explicit": []}
            for _ in range(args.repeat):
                res["spin"].append(run_spin(pan, n))
                res["vector"].append(run_osf("two-phase", {"rms": n}, None, "vector"))
                if n >= 8:  # two worker processes pay off only on large levels
                    res["vector x2"].append(run_osf("two-phase", {"rms": n}, None, "vector", 2))
                if n <= args.explicit_max_n:
                    res["explicit"].append(run_osf("two-phase", {"rms": n}, None, "explicit"))
            sp = _med(res["spin"])
            rows.append((f"TwoPhase N={n}", "spin", sp, sp))
            for eng in ("vector", "vector x2", "explicit"):
                if res[eng]:
                    r = _med(res[eng])
                    tol = sp.get("tolerance", 0)
                    ok = (abs(r["distinct"] - sp["distinct"]) <= tol
                          and abs(r["generated"] - sp["generated"]) <= tol)
                    r["agree"] = ok
                    r["rounded"] = bool(tol)
                    rows.append((f"TwoPhase N={n}", eng, r, sp))
    for model in () if args.no_relay else ("graph-relay", "wire-relay"):
        for eng in ("vector", "explicit"):
            r = _med([run_osf(model, {}, 12, eng) for _ in range(args.repeat)])
            rows.append((f"{model} depth 12", eng, r, None))
    # osf/SPIN: states/s against SPIN's (higher is better); wall: osf-check's wall time
    # over SPIN's for the same search (issue 15's target: at most 0.7 at N=9)
    print(f"{'model':<22} {'tool':<9} {'distinct':>11} {'generated':>12} {'wall s':>8} "
          f"{'states/s':>10} {'peak MB':>8} {'B/state':>8} {'osf/SPIN':>9} {'wall':>5}  counts")
    for name, tool, r, sp in rows:
        rate = r["distinct"] / r["seconds"] if r["seconds"] else 0
        ratio = "" if sp is None or tool == "spin" else \
            f"{rate / (sp['distinct'] / sp['seconds']):.2f}"
        wall = "" if sp is None or tool == "spin" else f"{r['seconds'] / sp['seconds']:.2f}"
        bps = f"{r['bytes_per_state']:.1f}" if "bytes_per_state" in r else ""
        agree = "" if "agree" not in r else ("DIFFER" if not r["agree"] else
                                             "agree (to SPIN's 8 printed digits)"
                                             if r.get("rounded") else "agree")
        print(f"{name:<22} {tool:<9} {r['distinct']:>11,} {r['generated']:>12,} "
              f"{r['seconds']:>8.2f} {rate:>10,.0f} {r['peak_mb']:>8,.0f} {bps:>8} {ratio:>9} "
              f"{wall:>5}  {agree}")
    if any(r.get("agree") is False for _, _, r, _ in rows):
        sys.exit("state counts differ between SPIN and osf-check")


def _med(runs: list[dict]) -> dict:
    out = dict(runs[0])
    out["seconds"] = statistics.median(r["seconds"] for r in runs)
    out["peak_mb"] = max(r["peak_mb"] for r in runs)
    return out


if __name__ == "__main__":
    main()
