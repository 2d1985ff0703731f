"""Throughput of ``osf-check check-log`` on logs of the Graph-run relay, and the cost of
driving an implementation through the driver protocol.

1. Logs of random runs of the reference implementation (``python -m
   osf_check.tracelog.record``) of 10,000, 100,000 and 1,000,000 steps, each checked in
   its own process against ``examples/graph-relay.logmap.toml``: lines/s of the check
   alone (reading and parsing included, model compilation excluded) and the process's
   peak resident memory.  The target is 50,000 lines/s.
2. The fuzzer's tour of graph-relay to depth 6 (14,055 transitions) in process, through
   the reference adapter (Python, a child process) and through the Node adapter of
   ``examples/node-graph-relay``: steps/s and the ratio to in process.

Medians of ``--repeat`` runs.

    python benchmarks/bench_check_log.py [--repeat 3] [--sizes 10000,100000,1000000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPPING = ROOT / "examples" / "graph-relay.logmap.toml"

CHECK = r"""
import json, resource, sys
from pathlib import Path
from osf_check.fuzz.driver import model_for
from osf_check.tracelog.check import check_log
from osf_check.tracelog.mapping import compile_mapping, read_document
m = model_for("graph-relay", None)
mp = compile_mapping(m, read_document(Path(sys.argv[2])))
with open(sys.argv[1], encoding="utf-8") as f:
    res = check_log(f, m, mp)
print(json.dumps({"lines": res.lines, "seconds": res.seconds, "explained": res.explained,
                  "peak_possible": res.peak_possible,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

TOUR = r"""
import json, sys, time
from osf_check.fuzz.driver import tour
from osf_check.driver.external import External
cmd = json.loads(sys.argv[1])
t = time.perf_counter()
if cmd is None:
    rep = tour("graph-relay", depth=6)
else:
    with External(cmd) as ext:
        rep = tour("graph-relay", depth=6, harness=ext)
assert rep.failure is None and rep.edges_covered == rep.edges_total
print(json.dumps({"steps": rep.steps, "seconds": time.perf_counter() - t}))
"""


def child(code: str, *args: str) -> dict:
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                       cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    print("check-log, graph-relay (lines/s of the check; peak RSS of its process)")
    print(f"{'steps':>10} {'lines':>10} {'seconds':>8} {'lines/s':>10} {'peak MB':>8} "
          f"{'possible':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            log = Path(tmp) / f"run-{n}.jsonl"
            with open(log, "w") as f:
                subprocess.run([sys.executable, "-m", "osf_check.tracelog.record", "--steps",
                                str(n), "--seed", "1"], stdout=f, check=True, cwd=ROOT)
            runs = [child(CHECK, str(log), str(MAPPING)) for _ in range(a.repeat)]
            assert all(r["explained"] for r in runs)
            sec = statistics.median(r["seconds"] for r in runs)
            rss = statistics.median(r["rss_mb"] for r in runs)
            lines = runs[0]["lines"]
            print(f"{n:>10,} {lines:>10,} {sec:>8.2f} {lines / sec:>10,.0f} {rss:>8.0f} "
                  f"{runs[0]['peak_possible']:>8}")
    print()
    print("the fuzzer's tour of graph-relay to depth 6, through the driver protocol")
    print(f"{'implementation':<34} {'steps':>7} {'seconds':>8} {'steps/s':>8} {'ratio':>6}")
    kinds = {"in process (Python)": None,
             "reference adapter (Python)": [sys.executable, "-m", "osf_check.driver.reference"]}
    node = shutil.which("node")
    if node:
        kinds["node adapter (JavaScript)"] = [node, str(ROOT / "examples" / "node-graph-relay"
                                                        / "adapter.mjs")]
    base = None
    for name, cmd in kinds.items():
        runs = [child(TOUR, json.dumps(cmd)) for _ in range(a.repeat)]
        sec = statistics.median(r["seconds"] for r in runs)
        base = base or sec
        print(f"{name:<34} {runs[0]['steps']:>7,} {sec:>8.2f} {runs[0]['steps'] / sec:>8,.0f} "
              f"{sec / base:>6.2f}")


if __name__ == "__main__":
    main()
