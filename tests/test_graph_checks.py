"""The explorer's own guarantees, on tiny hand-made models."""

from __future__ import annotations

import pytest
from osf_check.models.dsl import Bool, Int, ModelBuilder
from osf_check.models.expr import And, Not
from osf_check.properties.base import Check, Goal, Property

from osf_check.explorer.check import _vacuity
from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.graph.checks import check_graph


def ladder(n: int, *, trap: bool = False, quiet_end: bool = True, fair: str | None = "strong"):
    """x climbs 0..n; with ``trap`` a side step into a pit from which n is unreachable."""
    b = ModelBuilder("ladder")
    b.var("x", Int(0, n), actor="server")
    b.var("pit", Bool(), actor="server")

    @b.action("server", fair=fair)
    def up(s):
        return And(s.x < n, Not(s.pit)), {s.x: s.x + 1}

    if trap:
        @b.action("network")
        def fall(s):
            return And(s.x == 1, Not(s.pit)), {s.pit: True}

        @b.action("network")
        def wobble(s):  # keeps the pit alive: a cycle that never reaches the top
            return s.pit, {s.x: 1 - s.x}

    b.init(x=0, pit=False)
    if quiet_end:
        b.quiescent(lambda s: s.x == n)
    return b.build()


def prop(kind: str) -> Property:
    goals = lambda s, m: [Goal("top", s.x >= 0, s.x == m.var_by_name["x"].domain.hi)]  # noqa: E731
    return Property("L1", "reaches-top", "ladder", "x gets to the top", (Check(kind, goals),), ())


def test_reach_violation_needs_the_whole_future():
    m = ladder(3, trap=True)
    ex = bfs(m, [prop("reach")], depth=None, keep_graph=True)
    rep = check_graph(ex, [prop("reach")])
    assert rep.checked["L1"] == "violated"
    v = ex.violations[0]
    assert v.kind == "reach"
    assert [m.instances[a].name for a in v.actions[1:]] == ["up", "fall"]


def test_states_cut_by_the_bound_are_not_violations():
    # at depth 1 the top (x=3) is beyond the bound: resolved by searching past it
    m = ladder(3)
    ex = bfs(m, [prop("reach")], depth=1, keep_graph=True)
    assert not ex.complete and ex.unexpanded == 1
    rep = check_graph(ex, [prop("reach")])
    assert rep.checked["L1"] == "holds" and not ex.violations
    assert rep.extension_states > 0


def test_fair_lasso_only_on_really_fair_cycles():
    m = ladder(3, trap=True)
    ex = bfs(m, [prop("fair")], depth=None, keep_graph=True)
    rep = check_graph(ex, [prop("fair")])
    assert rep.checked["L1"] == "violated"
    v = ex.violations[0]
    assert v.loop_start is not None and v.path[v.loop_start] == v.path[-1]
    # without the trap the only way to stay below the top is to never take `up`,
    # which strong fairness forbids
    m2 = ladder(3)
    ex2 = bfs(m2, [prop("fair")], depth=None, keep_graph=True)
    assert check_graph(ex2, [prop("fair")]).checked["L1"] == "holds"


def test_unfair_stuttering_is_not_a_counterexample():
    # the same ladder with a self-loop that could spin forever: fairness of `up` rules it out
    b = ModelBuilder("spin")
    b.var("x", Int(0, 2), actor="server")

    @b.action("server", fair="strong")
    def up(s):
        return s.x < 2, {s.x: s.x + 1}

    @b.action("network")
    def spin(s):
        return s.x < 2, {}

    b.init(x=0)
    b.quiescent(lambda s: s.x == 2)
    m = b.build()
    p = Property("S", "s", "spin", "", (Check("fair", lambda s, m: [Goal("g", s.x >= 0, s.x == 2)]),), ())
    ex = bfs(m, [p], depth=None, keep_graph=True)
    assert check_graph(ex, [p]).checked["S"] == "holds"


def test_deadlock_is_told_apart_from_a_legitimate_end():
    ok = bfs(ladder(2), [], depth=None)
    assert not ok.violations and ok.complete
    stuck = bfs(ladder(2, quiet_end=False), [], depth=None)
    assert [v.kind for v in stuck.violations] == ["deadlock"]
    assert len(stuck.violations[0].path) == 3  # 0 -> 1 -> 2, then nothing to do


def test_max_states_is_incomplete_never_a_pass():
    ex = bfs(ladder(5), [], depth=None, max_states=3)
    assert ex.stopped == "max-states" and not ex.complete


def test_vacuity_warnings_name_the_silent_parts():
    m = ladder(2, trap=True)
    p = Property("V", "never", "ladder", "", (Check("inv", lambda s, m: s.x <= 2),), (),
                 witness=lambda s, m: s.x == 7 - 5 + 1, witness_doc="x is three")
    ex = bfs(m, [p], depth=None)
    w = _vacuity(m, [p], ex)
    assert any("V never: its premise never holds (x is three)" in x for x in w)


def test_histogram_and_counts_are_consistent():
    ex = bfs(ladder(4), [], depth=None)
    assert sum(ex.histogram()) == ex.distinct == 5
    assert ex.histogram() == [1, 1, 1, 1, 1]
    assert ex.depth_reached == 4


def _backward_by_reverse_graph(g, mark):
    """Backward reachability the way the reach checks did it before: a breadth-first
    search over the reverse graph (scipy's CSR-to-CSC conversion)."""
    import numpy as np
    from scipy.sparse import csr_matrix
    rev = csr_matrix((np.ones(len(g.dst), dtype=np.int8), g.dst, g.off),
                     shape=(g.n, g.n)).tocsc()
    mark = mark.copy()
    frontier = np.flatnonzero(mark)
    while frontier.size:
        preds = np.concatenate([rev.indices[rev.indptr[u]:rev.indptr[u + 1]]
                                for u in frontier.tolist()] + [np.zeros(0, np.int32)])
        preds = np.unique(preds[~mark[preds]])
        mark[preds] = True
        frontier = preds
    return mark


def _csr(n, src, dst):
    import numpy as np
    from types import SimpleNamespace
    o = np.argsort(src, kind="stable")
    off = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(src, minlength=n), out=off[1:])
    return SimpleNamespace(n=n, off=off, dst=dst[o].astype(np.int32))


def test_the_backward_search_without_a_reverse_graph_finds_what_the_reverse_graph_did(
        monkeypatch):
    """The reach checks' backward search reads the forward edges in passes (no reverse
    graph): the states it marks are those a search over the reverse graph marks, on
    random graphs (slices of a few edges, so that a pass spans many) and on a model's
    graph, for goals of every size."""
    import numpy as np
    from osf_check.explorer.check import prepare
    from osf_check.explorer.graph import checks
    from osf_check.explorer.vector.search import vector_bfs
    rng = np.random.default_rng(3)
    graphs = []
    for n, e in ((1, 0), (30, 20), (500, 700), (2_000, 4_000)):
        graphs.append(_csr(n, rng.integers(0, n, e), rng.integers(0, n, e)))
    m, chosen, _ = prepare("graph-relay", params={"intents": 1})
    graphs.append(checks._Graph(vector_bfs(m, chosen, depth=9, keep_graph=True)))
    assert graphs[-1].n > 4_000
    compared = 0
    for step in (1 << 22, 7):  # (7: a slice of a few edges)
        monkeypatch.setattr(checks, "_STEP", step)
        monkeypatch.setattr(checks, "_IDS", 1 << 20 if step > 7 else 50)
        for r in graphs:
            g = checks._Graph.__new__(checks._Graph)
            g.n, g.off, g.dst = r.n, r.off, r.dst
            for share in (0.0, 0.001, 0.05, 0.5, 1.0):
                mark = rng.random(r.n) < share
                before = mark.copy()
                got = g.backward(mark)
                assert np.array_equal(got, _backward_by_reverse_graph(g, mark))
                assert np.array_equal(mark, before)  # the caller's marks left as they were
                compared += 1
    assert compared == 50


@pytest.mark.parametrize("passes, rounds", [(8, 64), (1, 1), (2, 3)])
def test_a_long_chain_is_finished_over_a_reverse_graph_of_what_is_left(monkeypatch, passes,
                                                                        rounds):
    """Marks travel one state a round along a chain (a counter's states, one a level):
    the passes would cost a round per state over all the slice's edges, so after a few
    passes or rounds the rest is searched over the reverse of the unmarked states'
    edges.  Each way marks what the reverse graph marks, on chains and random graphs;
    a chain of 200,000 states is finished in a number of passes, not one a state."""
    import numpy as np
    from osf_check.explorer.graph import checks
    monkeypatch.setattr(checks, "_PASSES", passes)
    monkeypatch.setattr(checks, "_ROUNDS", rounds)
    rng = np.random.default_rng(5)
    cases = []
    for n in (2, 50, 3_000):  # a chain 0 -> 1 -> ... -> n-1, and one with back edges
        cases.append(_csr(n, np.arange(n - 1), np.arange(1, n)))
        src = np.concatenate([np.arange(n - 1), rng.integers(0, n, n)])
        cases.append(_csr(n, src, np.concatenate([np.arange(1, n), rng.integers(0, n, n)])))
    for r in cases:
        g = checks._Graph.__new__(checks._Graph)
        g.n, g.off, g.dst = r.n, r.off, r.dst
        for share in (0.0, 0.001, 0.3):
            mark = rng.random(r.n) < share
            mark[-1] = True
            assert np.array_equal(g.backward(mark), _backward_by_reverse_graph(g, mark))
    n = 200_000
    long = _csr(n, np.arange(n - 1), np.arange(1, n))
    g = checks._Graph.__new__(checks._Graph)
    g.n, g.off, g.dst = long.n, long.off, long.dst
    rounds_run = []
    rest = checks._Graph._backward_rest
    monkeypatch.setattr(checks._Graph, "_backward_rest",
                        lambda self, m, left: rounds_run.append(left.size) or rest(self, m, left))
    mark = np.zeros(n, dtype=bool)
    mark[-1] = True
    assert g.backward(mark).all()
    assert rounds_run and rounds_run[0] >= n - 1 - passes * rounds  # the rest took it


def _fair_scc_by_hand(g, alive, fair_masks, sets):
    """The fair search's refinement written plainly (networkx, sets), for comparison:
    self-loops are stuttering steps (they neither enable nor take a fair set) and a
    single state is no cycle (its stuttering is judged apart)."""
    import networkx as nx
    succ = {u: [(v, a) for v, a in g.succ(u) if v != u] for u in range(g.n)}
    strong = [set(fs.instances) for fs in sets if fs.kind == "strong"]
    weak = [set(fs.instances) for fs in sets if fs.kind == "weak"]
    alive = {int(u) for u in alive.nonzero()[0]}
    while alive:
        G = nx.DiGraph()
        G.add_nodes_from(alive)
        G.add_edges_from((u, v) for u in alive for v, _ in succ[u] if v in alive)
        found, bad, keep = {}, set(), set()
        for comp in nx.strongly_connected_components(G):
            if len(comp) == 1:
                continue  # no cycle: dropped
            taken = {a for u in comp for v, a in succ[u] if v in comp}
            en = {u: {a for _, a in succ[u]} for u in comp}
            ok = all(any(fm[u] for u in comp) for fm in fair_masks) and not any(
                all(en[u] & w for u in comp) and not taken & w for w in weak)
            worse = {u for u in comp if any(en[u] & s and not taken & s for s in strong)}
            if ok and not worse:
                found[min(comp)] = sorted(comp)
            if ok:
                keep |= comp - worse
            bad |= worse
        if found:
            return found[min(found)]
        if not bad:
            return None
        alive = keep


@pytest.mark.slow
def test_the_fair_search_on_alive_subgraphs_matches_a_plain_refinement():
    """The fair search renumbers the alive states each round and reads only their edges;
    on every fair goal of graph-relay and of its mutants (complete spaces, one intent),
    it finds the component a plain refinement over networkx finds, and both find some."""
    import numpy as np
    from osf_check.explorer.check import prepare
    from osf_check.explorer.graph.checks import _fairness, _find_fair_scc, _Graph
    from osf_check.explorer.vector.search import vector_bfs
    from osf_check.properties import catalogue
    found = compared = 0
    for mutant in [None] + [x.name for x in catalogue.MUTANTS if x.model == "graph-relay"]:
        m, chosen, _ = prepare("graph-relay", params={"intents": 1}, mutant=mutant)
        ex = vector_bfs(m, chosen, depth=None, keep_graph=True, stop_on_violation=False)
        if ex.distinct > 50_000:  # the plain refinement is slow; the rest cover the cases
            continue
        g = _Graph(ex)
        sets = m.fair_sets()
        masks = [np.asarray(g.pred(e)) for _, e in m.fair_states]
        for p in chosen:
            for c in p.checks:
                if c.kind != "fair":
                    continue
                for goal in c.goals(m):
                    alive = np.asarray(g.pred(goal.premise) & ~g.pred(goal.goal)).copy()
                    alive[g.expanded:] = False
                    got = _find_fair_scc(g, alive, masks, _fairness(g, sets))
                    want = _fair_scc_by_hand(g, alive, masks, sets)
                    assert (None if got is None else got.tolist()) == want, (mutant, p.id)
                    compared += 1
                    found += want is not None
    assert compared > 10 and 0 < found < compared


def test_strong_components_with_repeated_targets_match_networkx():
    """The fair check's components on graphs whose rows repeat a target and are not
    sorted (what the search records): scipy needs its canonical form for that, and
    gave wrong components without it (float64 weights skip the conversion)."""
    import networkx as nx
    import numpy as np

    from osf_check.explorer.graph.checks import strong_components

    rng = np.random.default_rng(7)
    for n, e in ((1, 0), (50, 40), (2_000, 5_000), (5_000, 9_000)):
        src = np.sort(rng.integers(0, n, e))
        dst = rng.integers(0, n, e).astype(np.int32)
        dst[1::97] = dst[::97][:len(dst[1::97])]  # some repeated targets
        src[1::97] = src[::97][:len(src[1::97])]
        o = np.argsort(src, kind="stable")
        src, dst = src[o], dst[o]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        got = strong_components(indptr, dst)
        G = nx.DiGraph()
        G.add_nodes_from(range(n))
        G.add_edges_from(zip(src.tolist(), dst.tolist()))
        want = list(nx.strongly_connected_components(G))
        assert len(set(got.tolist())) == len(want)
        for comp in want:
            assert len({int(got[u]) for u in comp}) == 1


def _components_by_scipys_conversion(indptr, dst):
    """The components the way the fair check took them before: scipy's own conversion
    of a matrix of 8-bit weights to its canonical form."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components
    n = len(indptr) - 1
    m = csr_matrix((np.ones(len(dst), dtype=np.int8), dst, indptr), shape=(n, n))
    return connected_components(m, directed=True, connection="strong")[1]


def _same_partition(a, b):
    import numpy as np
    pairs = np.unique(np.stack([a, b]), axis=1)  # each label of a meets one of b
    return len(pairs[0]) == len(np.unique(a)) == len(np.unique(b))


def test_rows_made_canonical_a_slice_at_a_time_give_scipys_components(monkeypatch):
    """The fair check's components come from rows it sorts and rids of repeats itself, a
    slice at a time: the rows are scipy's canonical form (sorted, each target once) and
    the components those of scipy's own conversion, with slices of a few edges (a slice
    boundary inside every few rows) and of the default size."""
    import numpy as np
    from osf_check.explorer.graph import checks
    rng = np.random.default_rng(11)
    for step in (5, 1 << 22):
        monkeypatch.setattr(checks, "_STEP", step)
        for n, e in ((1, 0), (3, 9), (60, 200), (3_000, 12_000)):
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(rng.integers(0, n, e), minlength=n), out=indptr[1:])
            dst = rng.integers(0, max(1, n // 2), e).astype(np.int32)  # many repeats
            ptr, tgt = checks._canonical(indptr, dst)
            for u in range(n):
                row = dst[indptr[u]:indptr[u + 1]]
                assert tgt[ptr[u]:ptr[u + 1]].tolist() == sorted(set(row.tolist()))
            assert _same_partition(checks.strong_components(indptr, dst),
                                   _components_by_scipys_conversion(indptr, dst))
