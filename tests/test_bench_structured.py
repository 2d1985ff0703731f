"""benchmarks/bench_structured.py's judgement on made-up figures (no search is timed
here), and its structured TwoPhase against the flat one at a small N."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import osf_check

BENCH = Path(__file__).parent.parent / "benchmarks" / "bench_structured.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_structured", BENCH)
    mod = importlib.util.module_from_spec(spec)
    # its dataclasses look their module up while they are made
    sys.modules["bench_structured"] = mod
    spec.loader.exec_module(mod)
    yield mod
    del sys.modules["bench_structured"]


def _case(bench, name="TwoPhase"):
    here = bench.ROOT
    return bench.Case(name, "vector", {"rms": 9}, bench.Side("flat arrays", here, "two-phase"),
                      bench.Side("records", here, "two-phase"))


def _runs(a_seconds, b_seconds, a_states=100, b_states=100):
    # wall time made twice the CPU time: the verdict must read the CPU time
    def one(s, n):
        return {"distinct": n, "generated": 10 * n, "build": 0.1, "seconds": 2 * s, "cpu": s}
    return {"A": [one(s, a_states) for s in a_seconds],
            "B": [one(s, b_states) for s in b_seconds]}


def test_the_ratio_is_of_the_medians(bench):
    # one slow outlier on each side: the medians ignore it
    row = bench.row_of(_case(bench), _runs([10.0, 10.2, 30.0], [10.4, 50.0, 10.3]))
    assert row.cpu == (10.2, 10.4) and row.seconds == (20.4, 20.8)
    assert row.ratio == pytest.approx(10.4 / 10.2)


def test_b_within_the_limit_passes_and_over_it_fails(bench):
    within = bench.row_of(_case(bench), _runs([10.0] * 3, [10.4] * 3))
    assert bench.judge([within]) and not within.problems
    # the same comparison with B made 6 % slower comes out worse, and is flagged
    over = bench.row_of(_case(bench), _runs([10.0] * 3, [10.6] * 3))
    assert not bench.judge([over])
    assert over.problems == ["CPU B/A 1.060 is over 1.05"]
    assert "CPU B/A 1.060 is over 1.05" in bench.table([over])


def test_other_state_counts_fail_whatever_the_speed(bench):
    row = bench.row_of(_case(bench), _runs([10.0] * 3, [5.0] * 3, a_states=100, b_states=99))
    assert not bench.judge([row])
    assert row.problems[0].startswith("counts differ: 100/1,000 against 99/990")


def test_the_script_exits_1_on_a_slower_b_and_0_otherwise(bench, monkeypatch, capsys):
    monkeypatch.setattr(bench, "base_checkout", lambda rev: bench.ROOT)
    figures = {"b": [10.0] * 3}
    monkeypatch.setattr(bench, "measure", lambda case, repeat: bench.row_of(
        case, _runs([10.0] * 3, figures["b"])))
    assert bench.main(["--only", "TwoPhase"]) == 0
    figures["b"] = [12.0] * 3
    assert bench.main(["--only", "TwoPhase"]) == 1
    out = capsys.readouterr()
    assert "CPU B/A 1.200 is over 1.05" in out.out and "a comparison failed" in out.err


def test_a_repeat_below_one_is_refused_in_one_line(bench, capsys):
    assert bench.main(["--repeat", "0"]) == 150
    assert capsys.readouterr().err.strip() == "bench_structured: --repeat is at least 1"


def test_a_base_that_is_no_commit_is_refused_in_one_line(bench, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--base", "no-such-commit-61"])
    assert e.value.code == 150
    assert capsys.readouterr().err.strip() == (
        "bench_structured: --base no-such-commit-61: not a commit of this repository")


def test_the_records_twophase_explores_what_the_flat_one_does(bench):
    # TLC's figures for TwoPhase.tla with N = 3 (models/two_phase.py): 288 distinct,
    # 1,146 generated; the records version must find the same graph
    flat = osf_check.Checker("two-phase").params(rms=3).depth(None).explore()
    rec = osf_check.Checker(str(bench.RECORDS)).params(rms=3).depth(None).explore()
    assert (flat.distinct, flat.generated) == (288, 1146)
    assert (rec.distinct, rec.generated) == (288, 1146)


def test_a_slower_wall_time_alone_is_shown_but_not_judged(bench):
    # another process took the core from B: its wall time doubled, its CPU time did not
    runs = _runs([10.0] * 3, [10.0] * 3)
    for r in runs["B"]:
        r["seconds"] *= 2
    row = bench.row_of(_case(bench), runs)
    assert row.wall_ratio == pytest.approx(2.0) and row.ratio == pytest.approx(1.0)
    assert bench.judge([row]) and "| 2.000 |" in bench.table([row])
