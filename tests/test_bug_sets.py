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


def _bench():
    """benchmarks/bench_catch_rate.py as a module (benchmarks/ is no package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_catch_rate", ROOT / "benchmarks" /
                                                  "bench_catch_rate.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    return bench


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to apply the patch")
@pytest.mark.parametrize("exit_code, caught", [(12, True), (0, False), (153, False)])
def test_the_catch_rate_counts_only_exit_12_as_caught(monkeypatch, exit_code, caught):
    """The benchmark can come out worse: a fuzz run that ends 0 (nothing found) or 153
    (a bug in osf-check) is a miss.  The fuzz run is stood in for, so this measures the
    benchmark's judgement, not the fuzzer."""
    bench = _bench()
    real_run = subprocess.run

    def fuzz_stand_in(cmd, **kw):
        if cmd[:2] == ["git", "apply"]:
            return real_run(cmd, **kw)
        return subprocess.CompletedProcess(cmd, exit_code, stdout='{"runs": []}',
                                           stderr="the last line\n")
    monkeypatch.setattr(bench.subprocess, "run", fuzz_stand_in)
    patch = next((ROOT / "tests" / "bugs" / "set3").glob("10-*.patch"))
    row = bench.run_one(patch, [])
    assert (row["caught"], row["exit"]) == (caught, exit_code), row
    assert row["why"] == "the last line"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to apply the patch")
def test_a_patch_that_no_longer_applies_is_a_miss_not_a_catch(tmp_path):
    bench = _bench()
    patch = tmp_path / "stale.patch"
    text = (ROOT / "tests" / "bugs" / "set3" / "10-rules-cached-twice-as-long.patch").read_text()
    patch.write_text(text.replace("self._cached = (now, need)", "self._cached = (now, need, 0)"))
    row = bench.run_one(patch, [])
    assert row["caught"] is False and row["exit"] is None
    assert row["why"].startswith("the patch does not apply"), row
