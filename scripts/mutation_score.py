"""Mutation testing of ``osf_check/relay/`` with mutmut: the tests and the fuzz harness as killers.

    python scripts/mutation_score.py --fast      # development: the implementation's tests
    python scripts/mutation_score.py             # full: the survivors again, with the
                                                 # fuzz harness among the killers (nightly)
    python scripts/mutation_score.py --json      # the figures for a machine

Why mutmut (3.x) rather than cosmic-ray: it rewrites each function once with a
trampoline, so one pytest process serves every mutant (forked per mutant), and it
runs only the tests that reached the mutated function in its first, recorded run.
cosmic-ray re-imports the module per mutant and needs a session database and a
distributor; for 2,000 lines on two cores mutmut is the faster and simpler fit.

The run happens in a temporary copy of the tracked files, so nothing is left in the
working tree, with a Python environment that sees this one's packages but not its
editable install of osf-check (whose import hook would hand the tests the unmutated
``relay``).  The score of each package is killed / (all - equivalent), where a
timeout counts as killed and "no tests" as survived; ``docs/mutation-equivalent.txt``
lists the equivalent mutants, one per line with why.  Exit 0 when every package
reaches ``--target`` (90 %) and the list holds no killed or vanished mutant, 1
otherwise, 150 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = ROOT / "docs" / "mutation-equivalent.txt"
PACKAGES = ("osf_check/relay/graph", "osf_check/relay/wire", "osf_check/relay/jstext")
#: the implementation's own tests (fast mode: seconds per mutant)
UNIT = ["tests/test_impl_contracts.py", "tests/test_graph_impl.py", "tests/test_wire_impl.py",
        "tests/test_wire_idempotency.py", "tests/test_limits_at_edges.py",
        "tests/test_impl_machines.py", "tests/test_fuzz_inputs.py", "tests/test_wire_frames.py",
        "tests/test_graph_exact.py", "tests/test_lone_surrogates.py"]
#: the fuzz harness: the implementation must conform to the model (full mode adds them)
#: (test_trust.py reads relay/'s source text, which mutmut rewrites: not a killer)
FUZZ = ["tests/test_fuzz_time.py", "tests/test_fuzz_noop_steps.py",
        "tests/test_fuzz_graph.py", "tests/test_fuzz_wire.py"]
#: tests that switch on a catalogue mutant prove nothing about a mutmut mutant; a test
#: that runs a second Python cannot report to mutmut's trampolines; slow tests are the
#: nightly fuzz's
SELECT = "not catches_each and not standalone_regression and not killed_process"
#: mutmut's exit codes: a failing test or a timeout kills the mutant
STATUS = {1: "killed", 3: "killed", 36: "killed", -24: "killed", 24: "killed", 152: "killed",
          255: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped"}


def _config(fast: bool) -> str:
    # one process: mutmut records which tests reach a mutant through trampolines in the
    # process that runs them, which the addopts' xdist workers (-n auto) are not
    args = ["-p", "no:cacheprovider", "-n", "0", "-q", "-m", "not slow", "-k", SELECT]
    tests = UNIT + ([] if fast else FUZZ)
    also = ["osf_check/", "docs/", "README.md"]
    return ("\n[tool.mutmut]\n"
            f"source_paths = [\"osf_check/relay/\"]\n"
            f"also_copy = {json.dumps(also)}\n"
            f"pytest_add_cli_args = {json.dumps(args)}\n"
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
            "timeout_multiplier = 5.0\n")


def _copy_tree(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def _environment(dest: Path) -> Path:
    """A virtualenv that imports this one's packages through a plain path entry (so the
    editable install's .pth, and its import hook, are not processed)."""
    venv = dest / ".mutation-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(sysconfig.get_paths()["purelib"])
    target = next((venv / "lib").glob("python*/site-packages"))
    (target / "osf_check_deps.pth").write_text(f"{site}\n", encoding="utf-8")
    return venv / "bin" / "python"


def equivalents() -> dict[str, str]:
    """The committed list: mutant name -> why it cannot be told apart."""
    out: dict[str, str] = {}
    if EQUIVALENT.exists():
        for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, why = line.partition(" ")
                out[name] = why.strip()
    return out


def collect(work: Path) -> dict[str, str]:
    """Every mutant's status from mutmut's result files: name -> status."""
    out: dict[str, str] = {}
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for name, code in sorted(data.get("exit_code_by_key", {}).items()):
            out[name] = STATUS.get(code, "not checked" if code is None else "suspicious")
    return out


def score(statuses: dict[str, str], equivalent: dict[str, str]) -> dict[str, dict]:
    """Per package: the counts, the score and the survivors not listed as equivalent."""
    report: dict[str, dict] = {}
    for pkg in PACKAGES:
        prefix = pkg.replace("/", ".") + "."
        mine = {n: s for n, s in statuses.items() if n.startswith(prefix)}
        counts = Counter(mine.values())
        eq = [n for n in mine if n in equivalent]
        live = len(mine) - len(eq)
        killed = sum(1 for n, s in mine.items() if s == "killed" and n not in equivalent)
        report[pkg] = {
            "mutants": len(mine), "equivalent": len(eq), "killed": killed,
            "counts": dict(sorted(counts.items())),
            "score": round(100.0 * killed / live, 1) if live else None,
            "surviving": sorted(n for n, s in mine.items()
                                if s != "killed" and n not in equivalent),
            # listed as equivalent but killed: the list is wrong and must lose the line
            "killed_equivalents": sorted(n for n in eq if mine[n] == "killed"),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="only the implementation's tests")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--target", type=float, default=90.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", type=Path, help="run in this (new or empty) directory and keep it")
    args = ap.parse_args(argv)
    if args.jobs < 1 or not 0 <= args.target <= 100:
        print("mutation_score: --jobs must be >= 1 and --target within 0..100", file=sys.stderr)
        return 150
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        print(f"mutation_score: {args.keep} is not empty; give a new or empty directory",
              file=sys.stderr)
        return 150
    try:
        import mutmut  # noqa: F401
    except ImportError:
        print("mutation_score: mutmut is not installed; pip install -e '.[mutation]'",
              file=sys.stderr)
        return 150
    work = args.keep or Path(tempfile.mkdtemp(prefix="osf-mutation-"))
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    try:
        _copy_tree(work)
        project = (work / "pyproject.toml").read_text(encoding="utf-8")
        python = _environment(work)
        # phase 1: every mutant against the implementation's own tests; phase 2 (full
        # mode): the survivors again, with the fuzz harness among the killers
        phases = [(True, [])] if args.fast else [(True, []), (False, None)]
        statuses: dict[str, str] = {}
        for fast, names in phases:
            if names is None:
                names = [n for n, st in statuses.items() if st != "killed"]
                if not names:
                    break
            (work / "pyproject.toml").write_text(project + _config(fast), encoding="utf-8")
            print(f"mutation_score: mutmut in {work} ({'fast' if fast else 'full'} killers, "
                  f"{len(names) or 'all'} mutants, {args.jobs} jobs)", file=sys.stderr)
            run = subprocess.run([str(python), "-m", "mutmut", "run", "--max-children",
                                  str(args.jobs), *names], cwd=work, stdout=sys.stderr)
            statuses = collect(work)
            if not statuses:
                print(f"mutation_score: mutmut produced no results (exit {run.returncode})",
                      file=sys.stderr)
                return 1
            if all(st == "not checked" for st in statuses.values()):
                # no score: 0 % would read as tests that kill nothing (with pytest-xdist's
                # workers mutmut saw no test reach any mutant, and stopped)
                print(f"mutation_score: mutmut checked none of the {len(statuses):,} mutants "
                      f"(exit {run.returncode}): no test was seen to reach them",
                      file=sys.stderr)
                return 1
        report = score(statuses, equivalents())
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    seconds = round(time.monotonic() - start)
    if args.json:
        print(json.dumps({"mode": "fast" if args.fast else "full", "seconds": seconds,
                          "packages": report}, indent=2))
    else:
        for pkg, r in report.items():
            print(f"{pkg}: {r['score']} % of {r['mutants'] - r['equivalent']} non-equivalent "
                  f"mutants killed ({r['mutants']} in all, {r['equivalent']} equivalent; "
                  f"{', '.join(f'{k} {v}' for k, v in r['counts'].items())})")
            for n in r["surviving"]:
                print(f"    surviving: {n}")
            for n in r["killed_equivalents"]:
                print(f"    listed as equivalent but killed (remove the line): {n}")
        print(f"{seconds} s")
    stale = [n for pkg in PACKAGES for n in equivalents() if n.startswith(
        pkg.replace("/", ".") + ".") and n not in statuses]
    for n in stale:
        print(f"mutation_score: {n} is listed as equivalent but is no mutant of this run "
              "(the code changed: classify its new name again)", file=sys.stderr)
    ok = all((r["score"] or 0) >= args.target and not r["killed_equivalents"]
             for r in report.values())
    return 0 if ok and not stale else 1


if __name__ == "__main__":
    sys.exit(main())
