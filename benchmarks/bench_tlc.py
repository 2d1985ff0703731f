"""TLC and osf-check on the public specifications of ``tests/public_specs/``, side by side.

Each run of ``RUNS`` is one TLC run (its ``.cfg``, and an ``MC*.tla`` where it checks
something the published module does not define, kept in ``tests/public_specs/tlc/<run>/``)
and the osf-check exploration the tests pin against it.  TLC runs in a fresh folder holding
the ``.tla`` files of the specification's folder in tlaplus/Examples and the run's own
files, with one worker; osf-check explores the model file in this process, to the end.

    python benchmarks/bench_tlc.py --jar tla2tools.jar --examples ~/Examples
    python benchmarks/bench_tlc.py --jar tla2tools.jar --examples ~/Examples --only ewd840
    python benchmarks/bench_tlc.py --jar tla2tools.jar --examples ~/Examples \\
        --tlc-only --write benchmarks/tlc
    python benchmarks/bench_tlc.py --jar tla2tools.jar --examples ~/Examples \\
        --only parreach --write benchmarks/tlc

Prints states (distinct, generated), depth and wall time of both, and flags each run
whose figures differ (MISMATCH) or where osf-check took longer (slower).  ``--write DIR``
writes TLC's figures to DIR/results.json and DIR/results.md; with ``--only`` the runs
not named keep the figures DIR/results.json already holds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "tests" / "public_specs"
JAVA_FLAGS = ["-XX:+UseParallelGC"]
TLC_FLAGS = ["-workers", "1", "-fp", "0"]


@dataclass(frozen=True)
class Run:
    """One TLC run and the osf-check exploration that answers it."""
    name: str
    examples_dir: str | None  # the specification's folder in tlaplus/Examples
    module: str  # the module TLC is given (``X`` of ``X.tla``)
    cfg: str
    model: str  # tests/public_specs/<model>.py
    mutant: str | None = None
    params: dict[str, int] = field(default_factory=dict)
    props: tuple[str, ...] = ()
    # False where TLC checks TypeOK alone and osf-check the model's own properties
    same_checks: bool = True


_EWD, _ALLOC = "specifications/ewd840", "specifications/allocator"
_DIN, _TR = "specifications/DiningPhilosophers", "specifications/ewd426"
_TC, _CH = "specifications/transaction_commit", "specifications/Chameneos"
_MC, _DH = "specifications/MissionariesAndCannibals", "specifications/DieHard"
_PR = "specifications/MisraReachability"

RUNS = [
    Run("ewd840", _EWD, "EWD840", "EWD840.cfg", "ewd840"),
    Run("ewd840_nofair", _EWD, "MCEWD840", "MCEWD840.cfg", "ewd840", "no-fairness",
        props=("E2",)),
    Run("missionaries_typeok", _MC, "MissionariesAndCannibals",
        "MissionariesAndCannibals.cfg", "missionaries", same_checks=False),
    Run("missionaries", _MC, "MissionariesAndCannibals", "MissionariesAndCannibals.cfg",
        "missionaries"),
    Run("diehard_typeok", _DH, "DieHard", "DieHard.cfg", "diehard", same_checks=False),
    Run("diehard", _DH, "DieHard", "DieHard.cfg", "diehard"),
    Run("tcommit", _TC, "TCommit", "TCommit.cfg", "tcommit", props=("TC1",)),
    Run("tcommit_decided", _TC, "MCTCommit", "MCTCommit.cfg", "tcommit", props=("TC2",)),
    Run("tc5", _TC, "TCommit", "TCommit.cfg", "tcommit", params={"rms": 5},
        props=("TC1",)),
    Run("twophase_tc", _TC, "MCTwoPhase", "MCTwoPhase.cfg", "twophase"),
    Run("tp4", _TC, "TwoPhase", "TwoPhase.cfg", "twophase", params={"rms": 4}),
    Run("chameneos", _CH, "Chameneos", "Chameneos.cfg", "chameneos"),
    Run("chameneos_44", _CH, "Chameneos", "Chameneos.cfg", "chameneos",
        params={"meetings": 4, "chameneoses": 4}),
    Run("ch34", _CH, "Chameneos", "Chameneos.cfg", "chameneos",
        params={"meetings": 3, "chameneoses": 4}),
    Run("dining", _DIN, "DiningPhilosophers", "DiningPhilosophers.cfg", "dining"),
    Run("dining_nofair", _DIN, "MCDiningPhilosophers", "MCDiningPhilosophers.cfg",
        "dining", "no-fairness", props=("DP2",)),
    Run("dp2", _DIN, "DiningPhilosophers", "DiningPhilosophers.cfg", "dining",
        params={"np": 2}),
    Run("dp3", _DIN, "DiningPhilosophers", "DiningPhilosophers.cfg", "dining",
        params={"np": 3}),
    Run("dp4", _DIN, "DiningPhilosophers", "DiningPhilosophers.cfg", "dining",
        params={"np": 4}),
    Run("token_ring", _TR, "TokenRing", "TokenRing.cfg", "token_ring"),
    Run("token_ring_nofair", _TR, "MCTokenRing", "MCTokenRing.cfg", "token_ring",
        "no-fairness"),
    Run("tr32", _TR, "TokenRing", "TokenRing.cfg", "token_ring",
        params={"nodes": 3, "values": 2}),
    Run("tr53", _TR, "TokenRing", "TokenRing.cfg", "token_ring",
        params={"nodes": 5, "values": 4}),
    Run("alloc", _ALLOC, "SimpleAllocator", "SimpleAllocator.cfg", "allocator"),
    Run("alloc_3c2r", _ALLOC, "SimpleAllocator", "SimpleAllocator.cfg", "allocator",
        params={"clients": 3}),
    Run("alloc2_obtain", _ALLOC, "SimpleAllocator", "SimpleAllocator.cfg", "allocator",
        "weak-return", props=("SA3",)),
    Run("alloc2_infoften", _ALLOC, "SimpleAllocator", "SimpleAllocator.cfg", "allocator",
        "weak-return", props=("SA4",)),
    Run("alloc2_return", _ALLOC, "SimpleAllocator", "SimpleAllocator.cfg", "allocator",
        "weak-return", props=("SA2",)),
    Run("alloc_wf", _ALLOC, "MCSimpleAllocator", "MCSimpleAllocator.cfg", "allocator",
        "weak-allocate", props=("SA3",)),
    Run("a23", _ALLOC, "SimpleAllocator", "SimpleAllocator.cfg", "allocator",
        params={"resources": 3}),
    Run("a12w", _ALLOC, "SimpleAllocator", "SimpleAllocator.cfg", "allocator",
        "weak-return", {"clients": 1}, ("SA3", "SA4")),
    Run("a32w", _ALLOC, "SimpleAllocator", "SimpleAllocator.cfg", "allocator",
        "weak-return", {"clients": 3}, ("SA3",)),
    Run("parreach", _PR, "MCParReach", "MCParReach.cfg", "parreach", props=("PR1", "PR2")),
    Run("parreach_term", _PR, "MCParReach", "MCParReach.cfg", "parreach",
        props=("PR1", "PR3")),
    Run("parreach_nofair", _PR, "MCParReachNoFair", "MCParReachNoFair.cfg", "parreach",
        "no-fairness", props=("PR3",)),
    Run("parreach_graph", _PR, "MCParReachGraph", "MCParReachGraph.cfg", "parreach",
        params={"graph": 1}),
    Run("sf_subcycle", None, "SFSub", "SFSub.cfg", "sf_subcycle"),
    Run("wf_set", None, "WFSet", "SpecSet.cfg", "wf_set"),
    Run("wf_set_each", None, "WFSet", "SpecEach.cfg", "wf_set", "each"),
]


def run_folder(run: Run) -> Path:
    """The run's own files: ``wf_set_each`` shares ``wf_set``'s folder (a second cfg)."""
    return SPECS / "tlc" / run.name.removesuffix("_each")


# TLC ---------------------------------------------------------------------------------------

def tlc_command(jar: str, run: Run) -> list[str]:
    return ["java", *JAVA_FLAGS, "-cp", jar, "tlc2.TLC", *TLC_FLAGS, "-config", run.cfg,
            f"{run.module}.tla"]


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _last(pattern: str, out: str) -> re.Match[str] | None:
    found = list(re.finditer(pattern, out, re.M))
    return found[-1] if found else None


def parse_tlc(out: str) -> dict[str, Any]:
    """TLC's figures from its standard output: version, initial/generated/distinct
    states, depth, verdict, and a counterexample's states and how it ends."""
    version = _last(r"^(TLC2 Version .*)$", out)
    init = _last(r"Finished computing initial states: ([\d,]+) distinct", out)
    totals = _last(r"^([\d,]+) states generated, ([\d,]+) distinct states found", out)
    depth = _last(r"depth of the complete state graph search is ([\d,]+)", out)
    error = re.search(r"^Error: (.*)$", out, re.M)  # the first says what failed
    states = re.findall(r"^State \d+: (?!Stuttering|Back to state)", out, re.M)
    back = _last(r"^(?:State \d+: )?Back to state (\d+)", out)
    end = ("stuttering" if re.search(r"^State \d+: Stuttering", out, re.M)
           else f"back to state {back.group(1)}" if back else None)
    return {
        "version": version.group(1).strip() if version else None,
        "initial": _int(init.group(1)) if init else None,
        "generated": _int(totals.group(1)) if totals else None,
        "distinct": _int(totals.group(2)) if totals else None,
        "depth": _int(depth.group(1)) if depth else None,
        "verdict": ("holds" if "Model checking completed. No error has been found." in out
                    else "violated" if error else "failed"),
        "error": error.group(1).strip() if error else None,
        # a temporal property is checked on the whole graph only when TLC says so
        "complete": not error or "for the complete state space" in out,
        "trace_states": len(states) or None,
        "trace_end": end,
    }


def run_tlc(jar: str, examples: Path, run: Run) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"tlc-{run.name}-") as tmp:
        work = Path(tmp)
        if run.examples_dir:
            for tla in (examples / run.examples_dir).glob("*.tla"):
                shutil.copy(tla, work)
        for own in run_folder(run).iterdir():
            shutil.copy(own, work)
        cmd = tlc_command(str(Path(jar).resolve()), run)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - t0
    figures = parse_tlc(p.stdout)
    if figures["verdict"] == "failed":
        sys.exit(f"TLC failed on {run.name} (exit {p.returncode}):\n{p.stdout[-1500:]}"
                 f"{p.stderr[-500:]}")
    return {**figures, "seconds": seconds}


# osf-check ---------------------------------------------------------------------------------

def run_osf(run: Run) -> dict[str, Any]:
    import osf_check
    c = (osf_check.Checker(SPECS / f"{run.model}.py").mutant(run.mutant)
         .params(**run.params).properties(*run.props).depth(None).keep_going())
    t0 = time.perf_counter()
    r = c.explore()
    seconds = time.perf_counter() - t0
    safety = [v["length"] for v in r.to_json()["violations"]
              if v["trace"].get("loop_start") is None]
    return {"initial": len(r.model.initial_states), "generated": r.generated,
            "distinct": r.distinct, "depth": len(r.histogram),
            "verdict": "violated" if "violated" in r.status.values() else "holds",
            "trace_states": min(safety) + 1 if safety else None, "seconds": seconds}


# side by side ------------------------------------------------------------------------------

def compare(tlc: dict[str, Any], osf: dict[str, Any], same_checks: bool = True
            ) -> list[str]:
    """What differs.  TLC's depth counts states (an initial state is depth 1) and is
    compared with osf-check's number of BFS levels (step 0 is the first).  TLC stops at
    an invariant's violation, so there its counts are not compared, but its trace is:
    both searches are breadth-first, so both traces are shortest."""
    keys = ["initial"]
    if tlc["complete"]:
        keys += ["distinct", "generated", "depth"]
    if same_checks:
        keys.append("verdict")
        if tlc["trace_states"] and tlc["trace_end"] is None:
            keys.append("trace_states")
    return [f"{key} {tlc[key]} != {osf[key]}" for key in keys
            if tlc[key] is not None and tlc[key] != osf[key]]


def row(run: Run, tlc: dict[str, Any], osf: dict[str, Any]) -> str:
    diffs = compare(tlc, osf, run.same_checks)
    flags = (["MISMATCH: " + "; ".join(diffs)] if diffs else ["match"])
    if osf["seconds"] > tlc["seconds"]:
        flags.append(f"slower x{osf['seconds'] / max(tlc['seconds'], 1e-9):.1f}")
    return (f"{run.name:<20} {tlc['distinct']!s:>7} {osf['distinct']:>7} "
            f"{tlc['generated']!s:>7} {osf['generated']:>7} {tlc['depth']!s:>4} "
            f"{osf['depth']:>4} {tlc['seconds']:>7.2f} {osf['seconds']:>7.2f}  "
            + ", ".join(flags))


HEADER = (f"{'run':<20} {'TLC':>7} {'osf':>7} {'TLC':>7} {'osf':>7} {'TLC':>4} {'osf':>4} "
          f"{'TLC s':>7} {'osf s':>7}\n{'':<20} {'distinct':^15} {'generated':^15} "
          f"{'depth':^9}")


# results files -----------------------------------------------------------------------------

def examples_commit(examples: Path) -> str | None:
    p = subprocess.run(["git", "-C", str(examples), "rev-parse", "HEAD"],
                       capture_output=True, text=True, check=False)
    return p.stdout.strip() or None


def results_document(jar: str, examples: Path, figures: dict[str, dict]) -> dict:
    versions = {f["version"] for f in figures.values()}
    return {
        "tlc_version": versions.pop() if len(versions) == 1 else sorted(versions),
        "jar_sha256": hashlib.sha256(Path(jar).read_bytes()).hexdigest(),
        "examples_commit": examples_commit(examples),
        "command": " ".join(tlc_command("tla2tools.jar", Run("X", None, "X", "X.cfg", ""))),
        "runs": [{"run": r.name, "folder": str(run_folder(r).relative_to(ROOT)),
                  "examples_dir": r.examples_dir,
                  "command": " ".join(tlc_command("tla2tools.jar", r)),
                  **{k: v for k, v in figures[r.name].items() if k != "seconds"}}
                 for r in RUNS if r.name in figures],
    }


def results_markdown(doc: dict) -> str:
    lines = [
        "# TLC's figures for the public specifications",
        "",
        "Written by `benchmarks/bench_tlc.py --tlc-only --write benchmarks/tlc`; do not "
        "edit by hand.",
        "",
        f"- TLC: `{doc['tlc_version']}` (tla2tools.jar, sha256 `{doc['jar_sha256']}`)",
        f"- tlaplus/Examples at commit `{doc['examples_commit']}`",
        f"- command, in a folder holding the run's files: `{doc['command']}`",
        "",
        "| run | cfg, module | initial | generated | distinct | depth | verdict | "
        "counterexample |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["runs"]:
        cmd = r["command"].split("-config ")[1]
        trace = (f"{r['trace_states']} states, {r['trace_end'] or 'end'}"
                 if r["trace_states"] else "")
        verdict = r["verdict"] + (f" ({r['error']})" if r["error"] else "")
        counts = [r["generated"], r["distinct"]] if r["complete"] else ["(stopped)"] * 2
        lines.append(f"| {r['run']} | `{cmd}` | {r['initial']} | {counts[0]} | "
                     f"{counts[1]} | {'' if r['depth'] is None else r['depth']} | {verdict} | {trace} |")
    return "\n".join(lines) + "\n"


def recorded_figures(out: Path) -> dict[str, dict]:
    """The figures DIR/results.json holds, by run, as :func:`run_tlc` returns them (less
    the wall time): a run of ``--only`` replaces its own and keeps the others'."""
    path = out / "results.json"
    if not path.is_file():
        return {}
    own = ("run", "folder", "examples_dir", "command")
    return {r["run"]: {k: v for k, v in r.items() if k not in own}
            for r in json.loads(path.read_text())["runs"]}


def write_results(out: Path, doc: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "results.md").write_text(results_markdown(doc))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jar", required=True, help="tla2tools.jar")
    ap.add_argument("--examples", required=True, type=Path,
                    help="a checkout of tlaplus/Examples")
    ap.add_argument("--only", action="append", help="a run's name (repeatable)")
    ap.add_argument("--tlc-only", action="store_true", help="run TLC alone")
    ap.add_argument("--write", type=Path, help="write results.json and results.md here")
    a = ap.parse_args(argv)
    if not Path(a.jar).is_file() or not (a.examples / "specifications").is_dir():
        sys.exit(f"need a tla2tools.jar ({a.jar}) and a tlaplus/Examples checkout "
                 f"({a.examples})")
    runs = [r for r in RUNS if not a.only or r.name in a.only]
    figures: dict[str, dict] = {}
    print(HEADER)
    for r in runs:
        figures[r.name] = run_tlc(a.jar, a.examples, r)
        if a.tlc_only:
            f = figures[r.name]
            print(f"{r.name:<20} {f['distinct']!s:>7} {'':>7} {f['generated']!s:>7} "
                  f"{'':>7} {f['depth']!s:>4}", flush=True)
        else:
            print(row(r, figures[r.name], run_osf(r)), flush=True)
    if a.write:
        kept = recorded_figures(a.write) if a.only else {}
        write_results(a.write, results_document(a.jar, a.examples, {**kept, **figures}))


if __name__ == "__main__":
    main()
