"""Hypothesis's random walks through an implementation, steered by the model.

A rule-based state machine draws, at each step, an action the model enables (mostly
one that leads off the explored map), a storage crash or a clock jump, and checks the
implementation's answer against the model's successor.  A walk starts at the initial
state or at a state of the explored map (reached by its shortest path), so the random
part begins where the tour stopped.  :func:`run_walks` runs them; the driver's
``hypothesis_run`` shrinks a failure on the model's steps.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import hypothesis
import hypothesis.strategies as st
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from osf_check.explorer.result import Exploration
from osf_check.models.dsl import Model

from . import hidden, oracles
from .harness import Divergence
from .payloads import ERRORS, HALF, concrete, data_classes, step_data

__all__ = ["Walks", "run_walks", "walk_settings"]

#: the clock jumps a walk draws: past the polls, the timeouts and a day's expiry
JUMPS = (1.0, 3.0, 8.0, 20.0, 60.0, 3600.0, 48 * 3600.0)

# st.text() leaves lone halves out: some short texts hold them among other characters
_HALVES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
_SHORT = st.one_of(st.text(max_size=40),
                   st.text(st.one_of(st.characters(), _HALVES), max_size=40))
#: a completed Graph's result: short texts, and long ones at the size limits
TEXTS = st.one_of(
    _SHORT,
    st.sampled_from(["日本語の結果" * 5_000, "日本語" * 40_000, "x" * 99_900, "😀" * 49_990,
                     "𝄞" * 30_000 + "z" * 40_000, HALF * 16_650, *oracles.EDGES]))
#: a failed Graph's error: short texts, and long ones around the 2,000-unit cut
ERROR_TEXTS = st.one_of(_SHORT, st.sampled_from(ERRORS),
                        st.integers(1_990, 2_010).map(lambda n: "é" * n),
                        st.integers(1_990, 2_010).map(lambda n: HALF * n),
                        st.integers(990, 1_010).map(lambda n: "x" + "😀" * n))


@dataclass
class Walks:
    """What the walks share: the model and its checker, how to build the harness, the
    explored map they start from, and the report they fill."""

    model: Model
    chk: Any  # the driver's Checker (steps, enabled, check)
    build: Callable[..., Any]
    tree: Exploration
    rep: Any  # the driver's FuzzReport
    mutant: str | None
    seed: int
    examples: int
    tick: Callable[[int, int], None] | None = None
    #: the model steps of the example running now (the failing one when a walk fails)
    path: list[int] = field(default_factory=list)
    #: the concrete data each step of ``path`` handed the implementation (driver.step_data)
    data: list[dict[str, Any] | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        tree = self.tree
        # the starts: the deepest level first (where the tour stopped), then the rest
        last = tree.level_start[-1] if tree.level_start else 0
        self.starts = list(range(last, tree.distinct)) + list(range(last))
        self.mapped = {tree.state(i) for i in range(tree.distinct)}
        self.labels = {i.label: i.index for i in self.model.instances}


class Walk(RuleBasedStateMachine):
    """One example: a walk through the implementation, checked step by step."""

    w: ClassVar[Walks]

    def __init__(self) -> None:
        super().__init__()
        w = self.w
        self.tmp = tempfile.TemporaryDirectory(dir=_memory_disk())
        self.results: dict[int, Any] = {}
        self.errors: dict[int, str | None] = {}
        self.h = w.build(w.model, w.mutant, self.tmp.name, w.seed, self.handed_over)
        self.s = self.h.abstract()
        self.handed: Any = None  # what the step running now handed over
        w.path, w.data = [], []
        if self.s != w.model.initial_states[0]:
            raise Divergence("the implementation's initial state is not the model's")
        w.rep.visited.add(self.s)  # every walk is there first
        self.seen: set[tuple] = {self.s}
        w.rep.hypothesis_examples += 1
        if w.tick is not None:
            w.tick(w.rep.hypothesis_examples, w.examples)

    @initialize(start=st.integers(0, 2**32 - 1))
    def begin(self, start: int) -> None:
        # a quarter of the walks start at the initial state (bugs that hide behind one
        # particular path to a state); the others at a state of the explored map,
        # reached by its shortest path (a wide integer taken modulo: Hypothesis's draws
        # from a small range lean heavily on a few values).  Shrinks to the initial state.
        if start % 4 == 0:
            return
        starts = self.w.starts
        todo = self.w.tree.path_to(starts[(start // 4) % len(starts)])[1][1:]
        while todo and self.w.chk.steps[todo[0]](self.s) is not None:
            self.apply(todo.pop(0))
            todo = hidden.unasked(todo, self.w.chk.hidden)  # (done with the step before)

    @rule(data=st.data())
    def step(self, data: Any) -> None:
        # one rule, so that Hypothesis's simplest examples are model actions, not a
        # run of crashes; shrinking turns crashes and clock jumps into actions
        what = data.draw(st.integers(0, 9), label="what")
        if what == 8:
            self.storage_crash()
        elif what == 9:
            self.clock_jump(data.draw(st.sampled_from(JUMPS), label="seconds"))
        else:
            self.act(data)

    def act(self, data: Any) -> None:
        w = self.w
        en = w.chk.enabled(self.s)
        if not en:
            return
        # steering: mostly take an action that leads out of the explored map (the
        # tour's states) and out of this example's own past; the map is fixed during
        # the run, so a failing example replays exactly when Hypothesis shrinks it
        novel = [a for a in en if (t := w.chk.steps[a](self.s)) not in w.mapped
                 and t not in self.seen]
        pool = novel if novel and data.draw(st.integers(0, 3), label="steer") else en
        ai = pool[data.draw(st.integers(0, 2**16 - 1), label="action") % len(pool)]
        inst = w.model.instances[ai]
        if inst.name == "graph_finish":
            r = inst.args["r"]
            self.results[r] = data.draw(TEXTS, label="result")
            failed = inst.label.endswith("o=failed)")
            self.errors[r] = data.draw(st.none() | ERROR_TEXTS, label="error") if failed \
                else None
        self.apply(ai)

    def handed_over(self, r: int, status: str) -> Any:
        error = self.errors.get(r) if status == "failed" else None
        result = concrete(self.results.get(r, "done"), status, error)
        self.handed = result if error is None else oracles.Failed(result, error)
        self.w.rep.data_classes.update(data_classes(self.handed, status))
        return self.handed

    def apply(self, ai: int) -> None:
        w = self.w
        w.path.append(ai)
        self.handed = None
        try:
            self.s = w.chk.check(self.h, ai, self.s)
        finally:  # the failing step's data too: a replay hands it the same; the steps the
            # implementation took unasked belong to the path too, with no data of their own
            w.data.append(None if self.handed is None else step_data(self.handed))
            w.path.extend(w.chk.hidden)
            w.data.extend([None] * len(w.chk.hidden))
        w.rep.visited.add(self.s)
        self.seen.add(self.s)
        w.rep.hypothesis_steps += 1

    def storage_crash(self) -> None:
        # the database is closed and reopened between two steps
        self.h.reopen()
        if self.h.abstract() != self.s:
            raise Divergence("reopening the database lost or changed a completion or a "
                             "durable claim")

    def clock_jump(self, seconds: float) -> None:
        # time passes; every timer now due fires, earliest first, each a model step
        self.h.advance(seconds)
        for _ in range(1000):
            due = self.h.due()
            if not due:
                break
            ai = self.w.labels[due[0]]
            if self.w.chk.steps[ai](self.s) is None:
                raise Divergence(f"the timer {due[0]} fired where the model does not "
                                 f"enable it")
            self.apply(ai)

    def teardown(self) -> None:
        self.w.rep.data_classes.update(getattr(self.h, "classes", ()))
        self.w.rep.late_answers.update(getattr(self.h, "late", ()))
        self.h.close()
        self.tmp.cleanup()


def walk_settings(profile: str | None, examples: int, steps: int, shrink: bool,
                  db: str | None) -> settings:
    """Hypothesis's settings for the walks: the profile's, with the run's numbers."""
    base = settings.get_profile(profile) if profile else settings()
    phases = tuple(base.phases)
    if not shrink:
        # Hypothesis would replay thousands of whole examples (a database file each) to
        # shrink; the driver's shrink_path does it on the model's steps in a fraction of
        # the time
        phases = tuple(p for p in phases if p.name != "shrink")
    # derandomize would seed from a digest of the machine; --seed drives Hypothesis
    # instead (the same examples wherever it runs)
    return settings(base, max_examples=examples, stateful_step_count=steps, phases=phases,
                    suppress_health_check=list(HealthCheck), deadline=None,
                    derandomize=False,
                    database=DirectoryBasedExampleDatabase(db) if db else None)


def run_walks(w: Walks, s: settings, seed: int) -> str | None:
    """Run the walks; the failure's message (its path in ``w.path``), or None."""
    machine = type("Walk", (Walk,), {"w": w})
    hypothesis.seed(seed)(machine)
    try:
        with _no_local_constants():
            run_state_machine_as_test(machine, settings=s)
    except Divergence as e:
        return str(e)
    return None


def _memory_disk() -> str | None:
    """A directory in memory (Linux's /dev/shm) for the walks' database files, else the
    default temporary directory.  Each commit of the implementation's SQLite file waited
    for the disk (fsync): most of the walks' time under cProfile.  A storage crash
    (close and reopen) is the same on either."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


@contextlib.contextmanager
def _no_local_constants():
    """Hypothesis mixes constants found in the *local* modules loaded so far (not in
    site-packages) into its draws: the same seed then gives other examples depending on
    what was imported before, and on whether osf-check is installed editable or from a
    wheel.  For one seed to mean one run everywhere, that pool is empty while we fuzz
    (a private hook of Hypothesis: where it is missing, nothing is changed)."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    constants = getattr(providers, "Constants", None)
    if original is None or constants is None:  # pragma: no cover
        yield
        return
    empty = constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()
