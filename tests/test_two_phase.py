"""TwoPhase in the DSL: state counts equal TLC's and SPIN's exactly (an outside oracle)."""

from __future__ import annotations

import pytest

from osf_check.explorer.check import check
from osf_check.explorer.explicit.bfs import bfs
from osf_check.models.two_phase import SPEC

# N: (distinct, generated).  Source: SPIN 6.5 (Debian's spin), full search of the
# Promela that benchmarks/bench_spin.py writes (gcc -O2 -DSAFETY -DNOREDUCE; "states,
# stored" and "transitions"), run here on 2026-11-30; N=3..6 are also TLC's figures as
# the first stop recorded them.  SPIN prints N=9's transitions as 1.235584e+08, seven
# significant digits: that count is checked to SPIN's precision, and pinned exactly as a
# regression pin of osf-check's own.
SPIN = {3: (288, 1_146), 4: (1_568, 8_258), 5: (8_832, 58_146), 6: (50_816, 402_306),
        7: (296_448, 2_744_706), 8: (1_745_408, 18_507_778)}
SPIN_9 = (10_340_352, 123_558_400, 100)  # distinct, transitions, the last printed digit's weight
REGRESSION_9 = 123_558_402  # regression pin: osf-check's exact generated count at N=9


@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_state_counts_equal_spin_and_tlc(n):
    ex = bfs(SPEC.build({"rms": n}), [], depth=None)
    assert ex.complete
    assert (ex.distinct, ex.generated) == SPIN[n]


@pytest.mark.slow
def test_state_counts_at_n8_and_n9_equal_spin():
    from osf_check.explorer.vector.search import vector_bfs
    ex = vector_bfs(SPEC.build({"rms": 8}), [], depth=None)
    assert ex.complete and (ex.distinct, ex.generated) == SPIN[8]
    ex = vector_bfs(SPEC.build({"rms": 9}), [], depth=None)
    assert ex.complete and ex.distinct == SPIN_9[0]
    assert abs(ex.generated - SPIN_9[1]) < SPIN_9[2]
    assert ex.generated == REGRESSION_9


def test_consistency_holds_and_its_mutant_breaks_it():
    ok = check("two-phase", depth=None, strict=True)
    assert ok.verdict == "ok" and ok.status == {"T1": "holds"}
    bad = check("two-phase", depth=None, mutant="commit-without-all-prepared")
    assert bad.verdict == "safety"
    assert [v.prop for v in bad.violations] == ["T1"]
