"""benchmarks/bench_complete.py's logic on a small model: each complete run is measured in
a process of its own and judged against its memory target, and a run over its target
is reported and fails the script."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def _bench():
    path = Path(__file__).parent.parent / "benchmarks" / "bench_complete.py"
    spec = importlib.util.spec_from_file_location("bench_complete", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.fixture
def tiny(monkeypatch):
    """The script's runs replaced by one small complete run, TwoPhase N=3."""
    bench = _bench()
    monkeypatch.setattr(bench, "RUNS", [("tiny", "two-phase", {"rms": 3})])
    monkeypatch.setattr(bench, "TARGET_MB", {"tiny": 1.0})

    def run(*args: str) -> int:
        monkeypatch.setattr(sys, "argv", ["bench_complete.py", *args])
        return bench.main()
    return run


def test_a_run_over_its_memory_target_is_reported_and_fails(tiny, capsys):
    # no Python process runs in 1 MB: the measured peak must come out over it
    assert tiny() == 1
    out = capsys.readouterr().out
    assert "288 distinct" in out and "OVER 1 MB target" in out


def test_a_run_within_its_target_passes_with_its_figures(tiny, capsys):
    assert tiny("--target", "tiny=1000000", "--json") == 0
    import json
    [row] = json.loads(capsys.readouterr().out)
    assert row["memory"] == "within" and row["target_mb"] == 1_000_000
    assert row["distinct"] == 288 and row["peak_mb"] > 1
    assert row["bytes_per_state"] == pytest.approx(row["peak_mb"] * 2**20 / 288)


@pytest.mark.parametrize("bad", ["nosuch=5", "tiny=-3", "tiny=lots", "tiny"])
def test_a_bad_target_is_one_line_and_exit_150(tiny, capsys, bad):
    assert tiny("--target", bad) == 150
    err = capsys.readouterr().err
    assert err.startswith("bench_complete: --target") and err.count("\n") == 1


def test_a_runs_options_reach_explore(monkeypatch, capsys):
    # TwoPhase N=3 under --symmetry stores 80 classes of its 288 states (bench_symmetry's
    # row), with a memory budget given to every run on top
    bench = _bench()
    monkeypatch.setattr(bench, "RUNS", [("tiny", "two-phase", {"rms": 3}),
                                        ("tiny sym", "two-phase", {"rms": 3}, ("--symmetry",))])
    monkeypatch.setattr(sys, "argv", ["bench_complete.py", "--json", "--memory", "1G"])
    assert bench.main() == 0
    import json
    rows = {r["run"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["tiny"]["distinct"] == 288 and rows["tiny sym"]["distinct"] == 80
    assert rows["tiny"]["spilled_mb"] == 0 and rows["tiny sym"]["verdict"] == "ok"
