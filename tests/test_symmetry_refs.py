"""Symmetry with references: a lock whose owner (a variable naming one of the
interchangeable clients) is permuted with them.  A representative must be one per class
with the references counted, or the expansion of a reduced counterexample finds no step
of the model that matches (it ended in an internal error)."""

from __future__ import annotations

import itertools
import math

import pytest

from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.compiled.pycompile import compile_pred, compile_steps
from osf_check.explorer.symmetry import Reduction, _Set, apply, expand, prove_symmetric
from osf_check.explorer.vector.search import vector_bfs
from osf_check.models.dsl import Int, ModelBuilder
from osf_check.models.expr import And, If
from osf_check.properties.base import Check, Property

IDLE, WAITING, CRITICAL = 0, 1, 2


def _lock(k: int, buggy: bool):
    """k clients and one lock; ``owner`` is the client holding it (k: nobody).  The bug
    (symmetric: every client has it): acquiring does not look at the lock."""
    b = ModelBuilder("lock", {"k": k}, "ignores-lock" if buggy else None, actors=("c",))
    b.array("st", Int(0, 2), k, actor="c")
    b.var("owner", Int(0, k), actor="c")
    every = range(k)

    @b.action("c", params={"i": every}, name="request")
    def request(s, i):
        return s.st[i] == IDLE, {s.st[i]: WAITING}

    @b.action("c", params={"i": every}, name="acquire")
    def acquire(s, i):
        free = s.st[i] == WAITING
        return (free if buggy else And(free, s.owner == k)), {s.st[i]: CRITICAL, s.owner: i}

    @b.action("c", params={"i": every}, name="release")
    def release(s, i):
        return s.st[i] == CRITICAL, {s.st[i]: IDLE, s.owner: k}

    b.symmetric("client", arrays=("st",), refs=("owner",))
    b.init(st=IDLE, owner=k)
    return b.build()


def _mutex(k: int) -> Property:
    def inv(s, m):
        return sum(If(s.st[i] == CRITICAL, 1, 0) for i in range(k)) <= 1
    return Property("M1", "mutual-exclusion", "lock", "At most one client is critical.",
                    (Check("inv", inv),), ())


def _classes(model) -> int:
    """Reachable states up to permutation, by brute force (the smallest image of each
    state under every permutation, references renamed)."""
    ex = bfs(model, [], depth=None)
    st = _Set(model, model.symmetries[0])
    perms = list(itertools.permutations(range(st.k)))
    return len({min(apply(st, p, ex.state(i)) for p in perms) for i in range(ex.distinct)})


ENGINES = {"explicit": lambda m, p, **kw: bfs(m, p, depth=None, **kw),
           "vector": lambda m, p, **kw: vector_bfs(m, p, depth=None, **kw),
           "vector-2-workers": lambda m, p, **kw: vector_bfs(m, p, depth=None, workers=2, **kw)}


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("k", [2, 3])
def test_a_correct_lock_reduces_to_exactly_its_classes(engine, k):
    m = _lock(k, buggy=False)
    props = [_mutex(k)]
    assert prove_symmetric(m, props, m.symmetries) is None
    full = ENGINES[engine](m, props)
    red = ENGINES[engine](m, props, reduce=Reduction(m, m.symmetries))
    assert full.violations == red.violations == []
    # hand count: the lock free, each client idle or waiting (2^k states; k + 1 classes,
    # by how many wait), or one client critical and owning it, the others idle or waiting
    # (k * 2^(k-1) states; k classes): k=2 8 states, 5 classes; k=3 20 states, 7 classes
    assert full.distinct == 2 ** k + k * 2 ** (k - 1) == {2: 8, 3: 20}[k]
    assert red.distinct == _classes(m) == 2 * k + 1 == {2: 5, 3: 7}[k]
    assert red.distinct * math.factorial(k) >= full.distinct > red.distinct


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("k", [2, 3])
def test_a_buggy_lock_gives_the_unreduced_verdict_and_a_replayable_counterexample(engine, k):
    m = _lock(k, buggy=True)
    props = [_mutex(k)]
    assert prove_symmetric(m, props, m.symmetries) is None
    rd = Reduction(m, m.symmetries)
    full = ENGINES[engine](m, props)
    red = ENGINES[engine](m, props, reduce=rd)
    assert [v.prop for v in full.violations] == [v.prop for v in red.violations] == ["M1"]
    v = red.violations[0]
    assert len(v.path) == len(full.violations[0].path)
    states, acts = expand(m, rd, props, v, [red.state(i) for i in v.path if i >= 0])
    steps = compile_steps(m)
    assert states[0] in m.initial_states
    for s, a, t in zip(states, acts[1:], states[1:]):
        assert steps[a](s) == t
    assert not compile_pred(_mutex(k).checks[0].inv(m))(states[-1])
    # each step of the expansion is in the class of the reduced step it expands
    assert [rd.canon(s) for s in states] == [red.state(i) for i in v.path]
