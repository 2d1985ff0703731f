"""Shared by the fuzz tests: a failure the fuzzer found must render and reproduce."""

from __future__ import annotations

from osf_check.fuzz.driver import PARTED, FuzzReport, model_for, parted_along, path_trace, replay
from osf_check.traces import render as rnd


def assert_reproduces(rep: FuzzReport) -> None:
    """The failure's trace renders; replayed on the same implementation mutant it fails at
    its last step; the correct implementation follows every step of it."""
    assert rep.failure is not None
    m = model_for(rep.model, rep.mutant)
    tr = path_trace(m, rep.path, message=rep.failure, mutant=rep.mutant, seed=0,
                    parted=parted_along(m, rep.mutant, rep.path))
    assert len(tr["steps"]) == len(rep.path) + 1
    assert "sequenceDiagram" in rnd.mermaid_sequence(tr) and rnd.text(tr)
    bad = replay(tr, mutant=rep.mutant)
    # it fails at its last step, or (a divergence shown as the property it breaks) at the
    # step that diverged and the steps driven after it to break the property
    oks = [s.ok for s in bad]
    assert len(bad) == len(rep.path) and not oks[-1], bad[-1].note
    assert all(oks[:oks.index(False)]) and not any(oks[oks.index(False):]), bad[-1].note
    good = replay(tr, mutant=None)
    # the correct implementation follows the story up to the step the bug diverged on;
    # steps driven after it from the buggy implementation's state it may decline
    first = oks.index(False)
    assert len(good) == len(rep.path) and all(s.ok for s in good[:first + 1])
    assert all(s.ok or s.outcome == PARTED for s in good[first + 1:]), good


def run_then_kill(child: str, path: str) -> None:
    """Run ``child`` (Python source taking ``path`` as argv[1]) until it prints "written",
    then SIGKILL it: whatever it wrote must be on disk."""
    import os
    import signal
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-c", child, path], stdout=subprocess.PIPE, text=True,
                         env={**os.environ})
    assert p.stdout is not None and p.stdout.readline().strip() == "written"
    p.send_signal(signal.SIGKILL)
    p.wait()
