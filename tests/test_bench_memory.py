"""benchmarks/bench_memory.py's logic: its comparison flags a budgeted run that saved
nothing or whose counts differ, and it runs end to end on a small model."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest


def _bench():
    path = Path(__file__).parent.parent / "benchmarks" / "bench_memory.py"
    spec = importlib.util.spec_from_file_location("bench_memory", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _run(peak, distinct=100, wall=1.0):
    return {"distinct": distinct, "generated": 300, "depth": 5, "verdict": "ok",
            "wall_s": wall, "peak_mb": peak, "spilled_mb": 10.0, "spill_reads": 4}


def test_a_budget_that_raises_the_peak_is_flagged():
    bench = _bench()
    r = bench.compare("m", "50M", [_run(100.0)], [_run(120.0, wall=2.0)])
    assert r["judgement"] == "NO SAVING" and r["peak_saved"] < 0 and r["slowdown"] == 2.0
    better = bench.compare("m", "50M", [_run(100.0)], [_run(70.0)])
    assert better["judgement"] == "peak 30% lower"


def test_counts_that_differ_under_a_budget_fail_the_script(monkeypatch, capsys):
    bench = _bench()
    monkeypatch.setattr(bench, "RUNS", [("tiny", "two-phase", {"rms": 3})])
    monkeypatch.setattr(bench, "once", lambda model, params, memory:
                        _run(100.0, distinct=100 if memory is None else 99))
    assert bench.main(["--repeat", "2"]) == 1
    out = capsys.readouterr()
    assert "COUNTS DIFFER" in out.out and "counts differ" in out.err


def test_a_small_model_runs_end_to_end_and_spills(monkeypatch, capsys):
    bench = _bench()
    monkeypatch.setattr(bench, "RUNS", [("tiny", "two-phase", {"rms": 5})])
    assert bench.main(["--repeat", "1", "--budget", "tiny=20K", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["same_counts"] and row["plain"]["distinct"] == 8832
    assert row["budgeted"]["spilled_mb"] > 0 and row["plain"]["spilled_mb"] == 0


@pytest.mark.parametrize("bad", ["nosuch=5M", "tiny", "tiny="])
def test_a_bad_budget_is_one_line_and_exit_150(monkeypatch, capsys, bad):
    bench = _bench()
    monkeypatch.setattr(bench, "RUNS", [("tiny", "two-phase", {"rms": 3})])
    assert bench.main(["--budget", bad]) == 150
    err = capsys.readouterr().err
    assert err.startswith("bench_memory: --budget") and err.count("\n") == 1
