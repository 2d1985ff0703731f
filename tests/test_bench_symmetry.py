"""benchmarks/bench_symmetry.py's judgement: a row's factor is the plain run's states over
the reduced run's classes, and a reduced run that disagrees with the plain one (verdict,
counterexample lengths) or stores more states stops the script."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from osf_check.explorer.check import check


def _bench():
    path = Path(__file__).parent.parent / "benchmarks" / "bench_symmetry.py"
    spec = importlib.util.spec_from_file_location("bench_symmetry", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.fixture(scope="module")
def runs():
    bench = _bench()
    plain, _ = bench.once("two-phase", {"rms": 3}, None, False)
    red, _ = bench.once("two-phase", {"rms": 3}, None, True)
    return bench, plain, red


def test_a_row_reports_the_classes_and_the_factor(runs):
    bench, plain, red = runs
    r = bench.row("t", None, plain, red)
    assert (r["states"], r["reduced"], r["used"]) == (288, 80, True)  # tests/test_symmetry.py
    assert r["factor"] == pytest.approx(3.6)
    line = bench.table([r], times=False)[1]
    assert line.split() == ["t", "unbounded", "288", "80", "3.60"]


def _like(r, distinct: int | None = None, **changed):
    """Result ``r`` as the script reads it, with some figures changed (what a faulty
    reduction would give)."""
    ex = SimpleNamespace(distinct=r.exploration.distinct if distinct is None else distinct)
    return SimpleNamespace(**{"verdict": r.verdict, "violations": r.violations,
                              "symmetry": r.symmetry, "exploration": ex, **changed})


def test_a_worse_reduction_stops_the_script(runs):
    bench, plain, red = runs
    assert bench.row("t", None, plain, _like(red))["reduced"] == 80
    with pytest.raises(SystemExit, match="stored more states"):
        bench.row("t", None, plain, _like(red, distinct=289))
    with pytest.raises(SystemExit, match="verdict changed"):
        bench.row("t", None, plain, _like(red, verdict="safety"))


def test_a_changed_counterexample_stops_the_script(runs):
    bench, _, _ = runs
    bug = check("graph-relay", mutant="leaky-not-found", depth=4, props=["A7"])
    assert bug.violations
    shorter = [SimpleNamespace(prop=v.prop, path=v.path[:-1]) for v in bug.violations]
    with pytest.raises(SystemExit, match="counterexamples changed"):
        bench.row("t", 4, bug, _like(bug, violations=shorter))
