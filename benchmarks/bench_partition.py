"""The partitioned search: one process, N worker processes and a local Ray cluster.

Each run is ``osf-check explore --depth unbounded --json`` in a process of its own.
Peak memory is that of the whole process tree (the driver, its workers, Ray's own
processes): the sum of their proportional set sizes (PSS, so that pages the workers
share after the fork, or through shared memory, count once), with the files in shared
memory it holds open deleted and unmapped (which no PSS counts), sampled every 0.2 s in
one more run of each mode, whose time is not used: sampling slows the run it watches
(see ``sample_peak``).
Prints wall time, peak memory, states/s and the bytes moved between workers per level
(from the run's JSON), medians of ``--repeat`` rounds (every mode runs once in each),
the speed-up against one process, and an estimate on paper for 8 and 64 machines.

The mode "2 copies at once" runs two one-process searches side by side, started
together, and reports the slower: on a machine whose cores share caches and memory
bandwidth each copy runs slower than alone, and ``2 x alone / side by side`` is the
most any split of one search over two workers could gain here (no messages, no
barriers, an even split).  It tells the machine's limit from the engine's overhead.

    python benchmarks/bench_partition.py                      # every case, once
    python benchmarks/bench_partition.py --repeat 3           # medians of three
    python benchmarks/bench_partition.py --only two-phase --mode "1 worker" --mode "2 workers"

The estimate: each machine expands and deduplicates 1/M of every level (the measured
one-process time divided by M), sends (M-1)/M of the successors it keeps per chunk
that another machine owns (the measured two-worker volume, scaled: that of the local
cluster where it ran, whose actors, as a cluster's, each expand their own states, so
that a state's successors mostly stay with it; else that of two worker processes,
which expand chunks of every worker's states and send half of what they keep, a
bound above), and
receives every other machine's summary of its new keys (their groups, with how many
keys each holds), (M-1)/M of each level's (to number its own against them: with two
workers, each receives the other's, so the measured volume is one level's summary; a
group is one machine's, so the level's summary does not grow with M), over links of ``--gbit`` Gbit/s, all machines at once;
each level costs ``--rtt-ms`` for each of its three barriers.  It assumes an even
partition (the hash gives one within 10 % per level, tested) and no straggler.
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
from pathlib import Path

MODES = {"1 worker": [], "2 copies at once": [], "2 workers": ["--workers", "2"],
         "cluster local": ["--cluster", "local"]}
#: modes that run two one-process searches side by side (see the module's docstring)
PAIRED = {"2 copies at once"}

#: (name, model, parameters, properties): the runs issue 16 measures.  graph-relay's
#: "search" case checks the properties that need no graph; its full run keeps the
#: graph's edges and checks the reach and fair goals too (in parallel processes)
CASES = [
    ("two-phase N=9", "two-phase", {"rms": 9}, [], tuple(MODES)),
    ("graph-relay search", "graph-relay", {}, "safety", tuple(MODES)),
    ("graph-relay full", "graph-relay", {}, [], tuple(MODES)),
]


def safety_ids(model: str) -> list[str]:
    """The properties of ``model`` that need no graph (invariants, transition checks)."""
    from osf_check.properties import catalogue
    return [p.id for p in catalogue.properties_of(model)
            if all(c.kind not in ("reach", "fair") for c in p.checks)]


def _tree(root: int) -> list[int]:
    """``root`` and its descendants (from the kernel's children lists: cheap enough not
    to slow the run it watches)."""
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _held(pid: int) -> dict[tuple[int, int], int]:
    """Files in shared memory (``/dev/shm``) that ``pid`` holds open after they were
    deleted, without mapping them: their bytes, by (device, inode).  No PSS counts
    them, yet they take memory: a partitioned run's states, left by its workers in
    such files until they are read (``partition.Slices``)."""
    out: dict[tuple[int, int], int] = {}
    try:
        mapped = {int(f[4]) for f in (line.split() for line in
                                      Path(f"/proc/{pid}/maps").read_text().splitlines())
                  if len(f) > 4}
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # the process ended meanwhile
        return out
    for fd in fds:
        try:
            target = os.readlink(fd)
            if target.startswith("/dev/shm/") and target.endswith(" (deleted)"):
                st = os.stat(fd)
                if st.st_ino not in mapped:
                    out[(st.st_dev, st.st_ino)] = st.st_blocks * 512
        except OSError:  # this descriptor closed meanwhile; the others still count
            continue
    return out


def sample_peak(root: int, peak: list[int], done: threading.Event) -> None:
    """The largest sum of the PSS of ``root``'s process tree and of the files it holds
    in shared memory unmapped (:func:`_held`), sampled every 0.2 s until ``done``.

    Reading a process's PSS walks its page tables with its memory map locked (about
    35 ms for a process that maps the graph).  A run that has no idle core to lend
    pays in CPU: at normal priority the reads took about 2 s from a two-worker run.
    At the lowest priority they still slow it, and one process too, through the lock
    (its allocations wait for a read to finish): on TwoPhase N=9, 2026-12-02, in
    turns, two workers took 11.31, 11.30 and 11.02 s sampled against 10.82, 11.04 and
    10.83 s not, one process 18.85 and 18.20 against 17.57 and 17.54.  So no timed run
    is sampled: each mode runs once more, untimed, for its peak."""
    while not done.is_set():
        pids = _tree(root)
        held = {k: v for p in pids for k, v in _held(p).items()}
        peak[0] = max(peak[0], sum(_pss(p) for p in pids) + sum(held.values()))
        time.sleep(0.2)


def once(model: str, params: dict[str, int], props: list[str], mode: list[str],
         sample: bool = False) -> dict:
    """One run in a process of its own; with ``sample``, its peak memory too (and then
    its time is not one to report: see ``sample_peak``)."""
    cmd = [sys.executable, "-m", "osf_check.cli", "explore", "--model", model, "--depth",
           "unbounded", "--json", *mode] + \
        [a for k, v in params.items() for a in ("--param", f"{k}={v}")] + \
        [a for p in props for a in ("--property", p)]
    peak = [0]
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    done = threading.Event()
    t = threading.Thread(target=sample_peak, args=(child.pid, peak, done), daemon=True) \
        if sample else None
    if t is not None:
        t.start()
    out = child.stdout.read() if child.stdout else b""
    code = child.wait()
    wall = time.perf_counter() - t0
    done.set()
    if t is not None:
        t.join()
    if code not in (0, 11, 12, 13, 14):
        raise RuntimeError(f"{' '.join(cmd)} exited {code}")
    [m] = json.loads(out)["models"]
    w = m["workers"]
    return {"distinct": m["distinct_states"], "generated": m["generated_states"],
            "wall_s": wall, "explore_s": m["explore_seconds"], "peak_mb": peak[0] / 2**20,
            "states_per_s": m["distinct_states"] / wall, "partitions": w["partitions"],
            "shuffled": w["shuffled_bytes"], "per_level": w["shuffled_per_level"],
            "keys_per_level": w["new_keys_per_level"],
            "verdict": m["verdict"], "why": w["why"]}


def paired(model: str, params: dict[str, int], props: list[str], mode: list[str],
           sample: bool = False) -> dict:
    """Two runs of ``once`` started together; the slower's figures, peak memory summed."""
    got: list[dict] = [{}, {}]

    def run(i: int) -> None:
        got[i] = once(model, params, props, mode, sample)
    ts = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if not all(got):
        raise RuntimeError("a side-by-side run did not finish")
    slow = max(got, key=lambda r: r["wall_s"])
    return {**slow, "peak_mb": sum(r["peak_mb"] for r in got)}


def estimate(one_s: float, per_level_2: list[int], keys_2: list[int], machines: int,
             gbit: float, rtt_ms: float) -> float:
    """Seconds for ``machines`` on paper (see the module's docstring), from two workers'
    bytes moved per level and the new keys' summaries' part of them.

    8 s of work on 4 machines, links of 1,000 bytes/s: 2 s of work, successors
    (2,000 + 1,000 bytes with two workers) 1.125 s, summaries 0.75 s, 6 barriers:

    >>> round(estimate(8.0, [3_000, 1_000], [1_000, 0], 4, 8e-6, 1.0), 3)
    3.881
    """
    link = gbit * 1e9 / 8
    succ = sum(b - k for b, k in zip(per_level_2, keys_2))
    net = succ * 2 * (machines - 1) / machines / machines + \
        sum(keys_2) * (machines - 1) / machines
    return one_s / machines + net / link + len(per_level_2) * 3 * rtt_ms / 1000


def compile_bytecode() -> None:
    """Compile the package's modules once, before any timed run, as ``pip install``
    does for an installed package: with an editable install on a machine that sets
    ``PYTHONDONTWRITEBYTECODE`` (this one does) every run compiled its 66 modules anew,
    about 0.16 s before the search starts (2026-12-03), in either mode, which time
    before the workers start is not split.  Compiled by a process like the timed
    ones, so that it is the package they import (a clone's, run from it, is not the
    one installed)."""
    subprocess.run([sys.executable, "-c", "import compileall, os, osf_check; "
                    "compileall.compile_dir(os.path.dirname(osf_check.__file__), quiet=1)"],
                   check=True, stdout=subprocess.DEVNULL)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", default=None, help="the cases of this model only")
    ap.add_argument("--mode", action="append", default=[], choices=sorted(MODES),
                    help="these modes only (repeatable)")
    ap.add_argument("--gbit", type=float, default=10.0, help="link speed for the estimate")
    ap.add_argument("--rtt-ms", type=float, default=1.0, help="barrier latency, estimate")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.repeat < 1:
        print("bench_partition: --repeat must be at least 1", file=sys.stderr)
        return 150
    compile_bytecode()
    rows = []
    for name, model, params, props, modes in CASES:
        if args.only and model != args.only:
            continue
        ids = safety_ids(model) if props == "safety" else list(props)
        chosen = {m: f for m, f in MODES.items()
                  if (not args.mode or m in args.mode) and m in modes}
        # the modes take turns, a round at a time: this machine's speed drifts over
        # minutes, and a drift that falls on one mode's runs alone would move its ratio
        runs: dict[str, list[dict]] = {m: [] for m in chosen}
        peaks: dict[str, float] = {}
        for i in range(args.repeat + 1):  # the last round: peak memory, not timed
            for mode, flags in chosen.items():
                what = f"round {i + 1} of {args.repeat}" if i < args.repeat else \
                    "its peak memory (untimed)"
                print(f"bench_partition: {name}, {mode}, {what}", file=sys.stderr, flush=True)
                got = (paired if mode in PAIRED else once)(model, params, ids, flags,
                                                           i == args.repeat)
                if i < args.repeat:
                    runs[mode].append(got)
                else:
                    peaks[mode] = got["peak_mb"]
        base = None
        for mode, got in runs.items():
            med = {k: statistics.median(r[k] for r in got)
                   for k in ("wall_s", "explore_s", "states_per_s")}
            r = {"case": name, "mode": mode, "repeat": args.repeat, **got[0], **med,
                 "peak_mb": peaks[mode]}
            base = r["wall_s"] if mode == "1 worker" else base
            # side by side, the figure is the ceiling: two searches' work in that time
            k = 2 if mode in PAIRED else 1
            r["speedup"] = k * base / r["wall_s"] if base else None
            # each round's own ratio too (against that round's one process): the
            # machine's speed drifts between rounds, which a ratio of medians mixes in
            r["rounds_s"] = [x["wall_s"] for x in got]
            ones = [x["wall_s"] for x in runs.get("1 worker", [])]
            r["round_speedups"] = [k * a / b for a, b in zip(ones, r["rounds_s"])]
            rows.append(r)
            if not args.json:
                sp = f"{r['speedup']:.2f}x" if r["speedup"] else "  -  "
                sp = f"{sp} at most" if mode in PAIRED else sp
                print(f"{name:<20} {mode:<16} {r['distinct']:>12,} states {r['wall_s']:7.2f} s "
                      f"({r['explore_s']:6.2f} exploring) {sp:<13} {r['peak_mb']:7,.0f} MB  "
                      f"{r['states_per_s']:>10,.0f} states/s  partitions {r['partitions']}  "
                      f"moved {r['shuffled'] / 2**20:8,.1f} MiB  {r['verdict']}"
                      + (f"  ({r['why']})" if r["why"] else ""), flush=True)
                if args.repeat > 1:
                    each = "" if mode == "1 worker" or not r["round_speedups"] else \
                        ("; each round's ratio " + " ".join(
                            f"{x:.2f}" for x in r["round_speedups"]) + ", median "
                         f"{statistics.median(r['round_speedups']):.2f}")
                    print(f"{'':<20} {'':<16} rounds " + " ".join(
                        f"{t:.2f}" for t in r["rounds_s"]) + f" s{each}", flush=True)
        one = next((r for r in rows if r["case"] == name and r["mode"] == "1 worker"), None)
        pairs = [r for r in rows if r["case"] == name and r["partitions"] == 2
                 and r["mode"] in ("2 workers", "cluster local")]
        if one and pairs and not args.json:
            for r in pairs:
                print(f"{'':<20} moved per level (MiB, {r['mode']}): "
                      + " ".join(f"{b / 2**20:.1f}" for b in r["per_level"]))
            # a cluster's actors expand their own states (see the module's docstring)
            base = next((r for r in pairs if r["mode"] == "cluster local"), pairs[0])
            for mach in (8, 64):
                est = estimate(one["explore_s"], base["per_level"], base["keys_per_level"],
                               mach, args.gbit, args.rtt_ms)
                print(f"{'':<20} on paper, {mach} machines ({args.gbit:g} Gbit/s, "
                      f"{args.rtt_ms:g} ms a barrier, from {base['mode']}): {est:.2f} s "
                      f"exploring, against {one['explore_s']:.2f} s in one process")
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
