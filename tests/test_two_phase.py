"""TwoPhase in the DSL: state counts equal TLC's exactly (regression oracle)."""

from __future__ import annotations

import pytest

from explorer.check import check
from explorer.explicit import bfs
from models.two_phase import SPEC

# N: (distinct, generated) as TLC reports them
TLC = {3: (288, 1_146), 4: (1_568, 8_258), 5: (8_832, 58_146), 6: (50_816, 402_306)}


@pytest.mark.parametrize("n", sorted(TLC))
def test_state_counts_equal_tlc(n):
    ex = bfs(SPEC.build({"rms": n}), [], depth=None)
    assert ex.complete
    assert (ex.distinct, ex.generated) == TLC[n]


def test_consistency_holds_and_its_mutant_breaks_it():
    ok = check("two-phase", depth=None, strict=True)
    assert ok.verdict == "ok" and ok.status == {"T1": "holds"}
    bad = check("two-phase", depth=None, mutant="commit-without-all-prepared")
    assert bad.verdict == "safety"
    assert [v.prop for v in bad.violations] == ["T1"]
