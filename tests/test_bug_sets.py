"""The hand-written bug sets stay usable: every patch still applies to the reference
implementation as it is, so a catch rate measured on them measures the fuzzer, not a
patch that silently stopped applying."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# set1/04's change became the design (its README says why): kept for the record only
RETIRED = {"set1/04-sync-redelivers-running-runs.patch"}
PATCHES = sorted(p for p in (ROOT / "tests" / "bugs").glob("set*/*.patch")
                 if f"{p.parent.name}/{p.name}" not in RETIRED)


def test_there_are_bug_sets():
    assert len(PATCHES) >= 30


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="needs a git checkout")
@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: f"{p.parent.name}/{p.stem[:2]}")
def test_each_bug_still_applies(patch):
    done = subprocess.run(["git", "apply", "--check", str(patch)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
