"""benchmarks/bench_spin.py (SPIN beside osf-check): its reading of pan's report, its
verdicts on the counts, its options; and, where SPIN is installed, a run at N=3 and 4
with every variant whose counts must equal SPIN's and TLC's."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


ROOT = Path(__file__).resolve().parent.parent
TWO_PHASE = _load("test_two_phase_pins", ROOT / "tests" / "test_two_phase.py")
SCRIPT = ROOT / "benchmarks" / "bench_spin.py"
bench = _load("bench_spin", SCRIPT)

# Source: SPIN 6.5 (see tests/test_two_phase.py), the full search's
# "states, stored" and "transitions".
SPIN = {3: (288, 1_146), 4: (1_568, 8_258)}

# pan's report (SPIN 6.5.2) of TwoPhase N=7 built with -DCOLLAPSE -DMEMLIM=6, stopped at
# its memory bound (exit status 0 all the same), trimmed
STOPPED = """pan: reached -DMEMLIM bound
	6.2637e+06 bytes used
	102400 bytes more needed
	6.29146e+06 bytes limit
(Spin Version 6.5.2 -- 6 December 2019)
Warning: Search not completed
	+ Compression
State-vector 36 byte, depth reached 22, errors: 0
    34438 states, stored
   306408 states, matched
   340846 transitions (= stored+matched)
Stats on memory usage (in Megabytes):
    3.604	actual memory usage for states
    2.000	memory used for hash table (-w18)
    5.974	total actual memory usage
"""

# pan's report of the full search at N=9 (-DNOREDUCE -w28), trimmed: counts past 1e8 in
# scientific notation
COMPLETE = """State-vector 44 byte, depth reached 28, errors: 0
 10340352 states, stored
1.1321805e+08 states, matched
1.235584e+08 transitions (= stored+matched)
        0 atomic steps
hash conflicts:  16535563 (resolved)

Stats on memory usage (in Megabytes):
  631.125	equivalent memory usage for states (stored*(State-vector + overhead))
  552.796	actual memory usage for states (compression: 87.59%)
         	state-vector as stored = 36 byte + 20 byte overhead
 2048.000	memory used for hash table (-w28)
    0.458	memory used for DFS stack (-m10000)
 2600.997	total actual memory usage
"""


def test_a_run_pan_stopped_early_is_incomplete_with_its_counts_so_far():
    r = bench.parse_pan(STOPPED, 0.1, 20.0)
    assert not r["complete"]
    assert (r["distinct"], r["generated"]) == (34_438, 340_846)
    rows = [dict(r, tool="spin collapse"), dict(r, tool="vector", complete=True,
                                                distinct=296_448, generated=2_744_706)]
    bench.judge(rows)
    assert rows[0]["counts"].startswith("INCOMPLETE") and rows[0]["agree"] is None
    assert rows[1]["counts"] == "reference"  # the complete search is the reference


def test_counts_printed_to_seven_digits_compare_to_their_last_digit():
    r = bench.parse_pan(COMPLETE, 21.0, 2603.0)
    assert r["complete"] and r["distinct"] == 10_340_352
    assert (r["generated"], r["tolerance"]) == (123_558_400, 100)
    assert r["bytes_per_state"] == pytest.approx(552.796 * 2**20 / 10_340_352)  # 56 B
    vec = {"tool": "vector", "distinct": 10_340_352, "generated": 123_558_402}
    rows = [dict(r, tool="spin"), vec, dict(vec, tool="vector x2", generated=123_558_600)]
    bench.judge(rows)
    assert rows[1]["agree"] and "printed digits" in rows[1]["counts"]
    assert rows[2]["agree"] is False and rows[2]["counts"] == "DIFFER"


def test_a_reduction_storing_more_than_the_full_search_is_flagged():
    full = {"tool": "spin", "distinct": 100, "generated": 500}
    rows = [full, {"tool": "spin por", "distinct": 101, "generated": 400},
            {"tool": "symmetry", "distinct": 25, "generated": 90}]
    bench.judge(rows)
    assert rows[1]["agree"] is False and rows[1]["counts"] == "POR STORED MORE"
    assert rows[2]["agree"] and rows[2]["counts"] == "classes, factor 4.0"


def test_tools_and_sizes():
    assert bench.parse_tools("vector,spin-por,spin") == ["spin", "spin por", "vector"]
    assert bench.parse_ns("10") == [10]
    assert bench.parse_ns("5-7,11") == [5, 6, 7, 11]
    for bad in ("spin,tlc", ""):
        with pytest.raises(ValueError, match="unknown tool"):
            bench.parse_tools(bad)
    for bad in ("ten", "0", "9-8"):
        with pytest.raises(ValueError, match="--n"):
            bench.parse_ns(bad)


@pytest.mark.parametrize("argv", [["--tools", "spin,tlc"], ["--n", "x"], ["--repeat", "0"],
                                  ["--max-n", "nine"]])
def test_bad_options_say_one_line_and_exit_150(argv):
    out = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 150
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_the_hash_table_grows_with_n_up_to_two_gib():
    assert [bench.hash_bits(n) for n in (3, 8, 9, 10, 11)] == [18, 26, 28, 28, 28]


@pytest.mark.skipif(shutil.which("spin") is None or shutil.which("gcc") is None,
                    reason="SPIN or gcc is not installed (CI does not install SPIN)")
def test_every_variant_at_n3_and_n4_counts_as_spin_and_tlc():
    tools = "spin,spin-por,spin-collapse,vector,vector-x2,explicit,symmetry"
    out = subprocess.run([sys.executable, str(SCRIPT), "--n", "3-4", "--tools", tools,
                          "--repeat", "1", "--no-relay", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    for n, counts in SPIN.items():
        got = {r["tool"]: r for r in rows if r["model"] == f"TwoPhase N={n}"}
        assert set(got) == {t.replace("-", " ") for t in tools.split(",")}
        for tool in ("spin", "spin collapse", "vector", "vector x2", "explicit"):
            assert (got[tool]["distinct"], got[tool]["generated"]) == counts, tool
            assert got[tool].get("agree") in (True, None) and got[tool]["complete"]
        assert got["spin por"]["distinct"] <= got["spin"]["distinct"]
        assert got["spin por"]["agree"] is True
        # symmetry stores classes: fewer than the states, at least states / N!
        classes = got["symmetry"]["distinct"]
        assert counts[0] / {3: 6, 4: 24}[n] <= classes < counts[0]
        assert got["symmetry"]["agree"] is True


def test_the_hand_count_of_twophase_states_and_transitions_equals_spins():
    """Hand count: with the TM undecided each RM is working, aborted (by choice: no
    abort message yet) or prepared with or without the TM having received it (4); once
    committed every RM is prepared or committed (2); once aborted an RM is working (1),
    prepared, the TM having received its message or not (2), or aborted before preparing
    or after, then the TM having received the message or not (3): 4**N + 2**N + 6**N,
    the figure RESULTS.md gives for N=10 and 11.

    Generated: the initial state, then each state's enabled action instances (self-loops
    included). Undecided: TMAbort in each, TMCommit in one, and per RM TMRcvPrepared
    where it prepared (2 of 4) and RMPrepare, RMChooseToAbort where it works (1 of 4);
    committed: RMRcvCommitMsg per RM; aborted: RMRcvAbortMsg per RM and RMPrepare,
    RMChooseToAbort where it works (1 of 6)."""
    def states(n):
        return 4**n + 2**n + 6**n

    def generated(n):
        undecided = 4**n + 1 + n * 2 * 4**(n - 1) + n * 2 * 4**(n - 1)
        return 1 + undecided + n * 2**n + n * 6**n + n * 2 * 6**(n - 1)

    spin = TWO_PHASE.SPIN  # SPIN's exact counts, N=3..8
    assert {n: (states(n), generated(n)) for n in spin} == spin
    assert states(9) == TWO_PHASE.SPIN_9[0] and generated(9) == TWO_PHASE.REGRESSION_9
    # osf-check's counts at N=10 and 11 (RESULTS.md, "TwoPhase N=10 and N=11 against SPIN")
    assert (states(10), generated(10)) == (61_515_776, 817_760_258)
    assert (states(11), generated(11)) == (366_993_408, 5_371_377_666)


def test_runs_of_one_search_that_count_differently_stop_the_script():
    one = {"distinct": 10, "generated": 30, "seconds": 1.0, "peak_mb": 5.0}
    row = bench._med([one, dict(one, seconds=3.0, peak_mb=7.0), dict(one, seconds=2.0)])
    assert (row["seconds"], row["peak_mb"], row["complete"]) == (2.0, 7.0, True)
    assert not bench._med([one, dict(one, complete=False, distinct=4)])["complete"]
    with pytest.raises(SystemExit, match="counted differently"):
        bench._med([one, dict(one, generated=31)])
