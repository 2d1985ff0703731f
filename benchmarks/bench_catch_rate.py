"""How many bugs that nobody here planted does the fuzzer alone find?

Each ``*.patch`` under ``tests/bugs/<set>/`` is a bug written into the reference
implementation (``osf_check/relay/``) by someone who had not seen the fuzzer's code, the
way a tired developer writes one. For each, this script copies ``osf_check/relay/``
into a scratch folder, applies the patch there, and runs the fuzzer's CI profile
(``CI=true osf-check fuzz --model M``) with that copy in place of the reference
implementation: the unit tests play no part. A bug is caught when the fuzzer exits 12
(a divergence or a broken property, with its trace); any other exit is a miss, and an
exit 153 (a bug in osf-check) is reported as such.

Usage::

    python benchmarks/bench_catch_rate.py [--set set1] [--only 05] [--json out.json]

The model each bug is fuzzed against follows from the file it patches
(``relay/graph/`` → graph-relay, ``relay/wire/`` → wire-relay).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs the CLI with the patched copy of osf_check/relay found before the real one: the
# copy's folder is put first on osf_check's own search path before anything imports the
# relay, so every other room is still this checkout's.
RUNNER = """\
import sys
import osf_check
copy = sys.argv.pop(1)
osf_check.__path__.insert(0, copy)
import osf_check.relay
assert osf_check.relay.__file__.startswith(copy), "the patched copy was not the one imported"
from osf_check.cli import main
main()
"""


def model_of(patch: str) -> str:
    files = set(re.findall(r"^\+\+\+ b/(\S+)", patch, flags=re.M))
    kinds = {"graph-relay" if "/relay/graph/" in f else "wire-relay" if "/relay/wire/" in f
             else None for f in files}
    if len(kinds) != 1 or None in kinds:
        raise SystemExit(f"a patch must touch osf_check/relay/graph/ or /wire/ only: {files}")
    return kinds.pop()


def run_one(patch_file: Path, extra: list[str]) -> dict:
    patch = patch_file.read_text()
    model = model_of(patch)
    with tempfile.TemporaryDirectory(prefix="osf-bug-") as tmp:
        pkg = Path(tmp) / "osf_check"
        shutil.copytree(ROOT / "osf_check" / "relay", pkg / "relay")
        applied = subprocess.run(["git", "apply", "-p1", str(patch_file)],
                                 cwd=tmp, capture_output=True, text=True)
        if applied.returncode != 0:
            return {"bug": patch_file.stem, "model": model, "caught": False,
                    "exit": None, "why": "the patch does not apply: " + applied.stderr.strip()}
        env = dict(os.environ, CI="true")
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-c", RUNNER, str(pkg), "fuzz", "--model", model,
                            "--json", *extra], capture_output=True, text=True, env=env)
        wall = time.monotonic() - t0
    try:
        runs = json.loads(r.stdout)["runs"]
        why = "; ".join(str(run["failure"]) for run in runs if run.get("failure"))
    except (json.JSONDecodeError, KeyError, TypeError):
        why = ""
    if not why:
        lines = r.stderr.strip().splitlines()
        why = lines[-1] if lines else ""
    return {"bug": patch_file.stem, "model": model, "caught": r.returncode == 12,
            "exit": r.returncode, "wall_s": round(wall, 1), "why": why}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="set1", help="folder under tests/bugs/")
    ap.add_argument("--only", help="run only the bugs whose name starts with this")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    ap.add_argument("fuzz_args", nargs="*", help="extra arguments for osf-check fuzz")
    a = ap.parse_args()
    patches = sorted((ROOT / "tests" / "bugs" / a.set).glob("*.patch"))
    if a.only:
        patches = [p for p in patches if p.name.startswith(a.only)]
    if not patches:
        raise SystemExit(f"no patch under tests/bugs/{a.set}/")
    rows = []
    for p in patches:
        row = run_one(p, a.fuzz_args)
        rows.append(row)
        mark = "caught" if row["caught"] else f"MISSED (exit {row['exit']})"
        print(f"{row['bug']:45} {row['model']:12} {mark:18} {row.get('wall_s', '-')} s",
              flush=True)
    caught = sum(r["caught"] for r in rows)
    print(f"caught {caught} of {len(rows)} (the fuzzer alone, CI profile)")
    if a.json:
        a.json.write_text(json.dumps({"set": a.set, "caught": caught, "bugs": len(rows),
                                      "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
