"""Peak memory of the steps that put a search's pieces together: measured in a process of
its own (its resident size, not its speed), with the CLI's allocator settings."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent("""
    import numpy as np
    from osf_check.explorer.store.allocator import keep_freed_memory
    from osf_check.explorer.store.levels import LevelStore
    from osf_check.explorer.store.edges import cat_free
    keep_freed_memory()  # as the CLI: freed memory kept for reuse

    def rss(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024

    what = {what!r}
    n, levels = 500_000, 24  # each piece below glibc's mapping threshold: from the heap
    if what == "levels":
        s = LevelStore(np.array([[0]], dtype=np.uint64), np.int16)
        for lv in range(levels):
            keys = (np.arange(n, dtype=np.uint64) + 1 + lv * n).reshape(-1, 1)
            s.add_level(keys, np.arange(n) % 7, np.full(n, lv))
        size = s.nbytes - s.bloom.nbytes
    else:
        parts = [np.arange(n * 2, dtype=np.int32) + lv for lv in range(levels)]
        size = sum(p.nbytes for p in parts)
    before = rss("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak resident size starts again from here
    got = s.finish() if what == "levels" else cat_free(parts, np.int32)
    print((rss("VmHWM") - before) / size)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("what", ["levels", "edges"])
def test_one_array_from_many_pieces_costs_about_its_size_once(what):
    """The store's levels (keys, parent links, actions) and the edges' chunks are put
    into one array each as a search ends, each piece freed once copied.  The pieces
    come from the heap, which keeps freed memory for reuse: the large result, mapped
    on its own, then cost its whole size again (wire-relay's complete run rose by a
    quarter there).  The freed pieces now go back as they are copied."""
    out = subprocess.run([sys.executable, "-c", _CHILD.format(what=what)],
                         capture_output=True, text=True, check=True)
    grew = float(out.stdout)  # how much the peak rose, in the store's sizes
    assert grew < 0.3, f"putting the pieces together raised the peak by {grew:.2f} of their size"


def _random_graph(n: int, deg: int, nacts: int):
    import numpy as np
    from types import SimpleNamespace
    rng = np.random.default_rng(0)
    off = np.arange(n + 1, dtype=np.int32) * deg
    dst = rng.integers(0, n, size=n * deg, dtype=np.int32)
    act = rng.integers(0, nacts, size=n * deg).astype(np.int16)
    return SimpleNamespace(n=n, off=off, dst=dst, act=act, nacts=nacts)


def test_the_fair_searchs_subgraph_costs_its_size_and_a_bounded_slice():
    """The fair search reads the alive states' edges a slice at a time: its temporaries
    (positions, sources, targets, each edge's fair-set column) must stay those of one
    slice however large the graph, on top of the subgraph it returns.  Slices of 16 M
    edges with 64-bit positions and columns cost half a gigabyte, the largest part of
    graph-relay's peak; numpy's allocations are counted exactly (tracemalloc)."""
    import tracemalloc
    from types import SimpleNamespace
    import numpy as np
    from osf_check.explorer.graph import checks
    g = _random_graph(1_000_000, 24, 40)  # 24 M edges
    sets = [SimpleNamespace(instances=[0, 1, 2], kind="strong"),
            SimpleNamespace(instances=[3, 4], kind="weak")]
    f = checks._fairness(g, sets)
    alive = np.ones(g.n, dtype=bool)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        s = checks._alive_csr(g, alive, f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kept = sum(a.nbytes for a in (s.ids, s.indptr, s.dst, s.act, s.strong_src, s.strong_col,
                                  s.fair_moves, *s.weak_en.values()))
    temporaries = peak - before - kept
    assert len(s.dst) > 23_000_000  # (every state alive: nearly every edge kept)
    assert temporaries < 160 * 2**20, f"{temporaries / 2**20:.0f} MB of temporaries"


def test_numbering_a_level_releases_every_piece_of_its_candidates():
    """A level's candidates (keys, parents, actions) are joined before they are numbered;
    the caller's pieces are released then, all three (not the keys alone): the parent
    and action pieces held to the end were 6 bytes a candidate more at the level's peak."""
    import numpy as np
    from osf_check.explorer.store.levels import LevelStore
    s = LevelStore(np.array([[0]], dtype=np.uint64), np.int16)
    keys = [np.array([[5], [3]], dtype=np.uint64), np.array([[3]], dtype=np.uint64)]
    parent = [np.array([0, 0], dtype=np.int32), np.array([0], dtype=np.int32)]
    via = [np.array([1, 2], dtype=np.int16), np.array([0], dtype=np.int16)]
    assert s.add_found(keys, parent, via) == 1
    assert (keys, parent, via) == ([], [], [])
    assert s.keys[1].ravel().tolist() == [3, 5] and s.via[1].tolist() == [0, 1]


@pytest.mark.parametrize("way", ["backward", "forward"])
def test_a_reach_or_region_search_reads_a_slice_of_edges_at_a_time(way):
    """The reach checks' backward search starts from every goal state, the fair checks'
    forward search from every seed: a frontier of millions of states whose edges were
    gathered at once (positions, targets, sources: gigabytes on graph-relay's complete
    run).  They are read a slice at a time; the result is the same."""
    import tracemalloc
    import numpy as np
    from osf_check.explorer.graph import checks
    r = _random_graph(1_000_000, 24, 40)
    g = checks._Graph.__new__(checks._Graph)
    g.n, g.off, g.dst, g.act = r.n, r.off, r.dst, r.act
    start = np.zeros(g.n, dtype=bool)
    start[::2] = True  # a frontier of half the states (12 M edges)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        got = g.backward(start) if way == "backward" else g.forward(start, ~start)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    reached = got if way == "backward" else got[0]
    kept = reached.nbytes + (sum(a.nbytes for lv in got[1] for a in lv) if way == "forward"
                             else 0)
    assert reached.all()  # (random edges: every state reaches and is reached)
    temporaries = peak - before - kept
    assert temporaries < 110 * 2**20, f"{temporaries / 2**20:.0f} MB of temporaries"


def test_numbering_a_level_costs_a_bounded_number_of_bytes_a_candidate():
    """A level's candidates are numbered at its end, the search's peak: sorted by key, a
    winner chosen per key by least (action, parent).  The temporaries of that choice
    are released as soon as read, and no rank is kept for every candidate beside them:
    measured with two-word keys, as wire-relay's (numpy's allocations, tracemalloc)."""
    import tracemalloc
    import numpy as np
    from osf_check.explorer.store.levels import LevelStore
    rng = np.random.default_rng(1)
    n = 2_000_000
    s = LevelStore(np.zeros((1, 2), dtype=np.uint64), np.int16)
    keys = rng.integers(1, n, size=(n, 2)).astype(np.uint64)
    keys[:, 1] = 0  # a quarter of the candidates repeat another (one word varies)
    parent = rng.integers(0, 1, size=n).astype(np.int32)
    via = rng.integers(0, 60, size=n).astype(np.int16)
    pieces = [keys], [parent], [via]
    del keys, parent, via  # held by the lists alone, as the search hands them over
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        s.add_found(*pieces)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    per = (peak - before) / n
    assert per < 60, f"{per:.0f} bytes a candidate"  # (51 measured, 61 before the slices)


def _least_rows_whole_level(sk, parent, via):
    """The winners of a level's candidates chosen the way the search did before: the
    keys in order, each candidate's rank and each key's least rank repeated, each over
    the whole level at once."""
    import numpy as np
    o = np.argsort(sk, kind="stable")
    so = sk[o]
    head = np.ones(len(o), dtype=bool)
    head[1:] = so[1:] != so[:-1]
    starts = np.flatnonzero(head)
    r = (via[o].astype(np.int64) << 32) + parent[o].astype(np.int64)
    r -= np.repeat(np.minimum.reduceat(r, starts), np.diff(starts, append=len(r)))
    return o[r == 0]


def _candidates(n, words, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    keys = np.zeros((n, words), dtype=np.uint64)
    keys[:, 0] = rng.integers(0, max(1, n // 3), size=n)  # most keys repeat
    parent = rng.integers(0, 50, size=n).astype(np.int32)
    via = rng.integers(0, 60, size=n).astype(np.int16)
    return keys, parent, via


def test_a_levels_winners_chosen_a_slice_at_a_time_are_those_of_the_whole_level(
        monkeypatch):
    """The least (action, parent) of each key of a level is chosen reading slices of the
    candidates: the rows chosen are those the whole-level way chose, with slices of a few
    rows (a key's candidates across slices) and of the default size, and the slices'
    numpy allocations peak lower on the same candidates."""
    import tracemalloc
    import numpy as np
    from osf_check.explorer.store import levels
    for rows in (7, levels._ROWS):
        monkeypatch.setattr(levels, "_ROWS", rows)
        for n, words, seed in ((0, 1, 0), (1, 2, 0), (50, 1, 1), (3_000, 2, 2), (40_000, 1, 3)):
            keys, parent, via = _candidates(n, words, seed)
            sk = levels.sortable(keys)
            assert np.array_equal(levels.least_rows(sk, parent, via),
                                  _least_rows_whole_level(sk, parent, via))
    keys, parent, via = _candidates(2_000_000, 2, 4)
    sk = levels.sortable(keys)

    def peak(way):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            got = way(sk, parent, via)
            return got, tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
    got, new = peak(levels.least_rows)
    want, old = peak(_least_rows_whole_level)
    assert np.array_equal(got, want)
    assert new < old * 0.7, f"{new / len(sk):.1f} bytes a candidate against {old / len(sk):.1f}"


def test_the_backward_search_costs_less_than_a_reverse_graph():
    """The reach checks' backward search reads the forward edges a slice at a time: its
    temporaries, all told, stay below what the reverse graph it replaced held (4 bytes
    an edge, and 1 more while scipy built it)."""
    import tracemalloc
    import numpy as np
    from scipy.sparse import csr_matrix
    from osf_check.explorer.graph import checks
    r = _random_graph(1_000_000, 24, 40)
    g = checks._Graph.__new__(checks._Graph)
    g.n, g.off, g.dst, g.act = r.n, r.off, r.dst, r.act.astype(np.int8)
    start = np.zeros(g.n, dtype=bool)
    start[:1000] = True  # few goal states: the passes read nearly every edge

    def peak(way):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            got = way()
            return got, tracemalloc.get_traced_memory()[1] - before - got.nbytes
        finally:
            tracemalloc.stop()

    def by_reverse():  # what the reach checks built before
        rev = csr_matrix((g.act, g.dst, g.off), shape=(g.n, g.n)).tocsc()
        mark = start.copy()
        mark[rev.indices[rev.indptr[0]:rev.indptr[1000]]] = True  # (one step suffices)
        return mark

    got, new = peak(lambda: g.backward(start))
    _, old = peak(by_reverse)
    assert got.all()  # (random edges: every state reaches the goal states)
    # below the reverse graph's predecessors alone (a slice's temporaries, whatever the
    # graph's size), which were below what building it took
    assert new < 4 * len(g.dst) < old, f"{new / 2**20:.0f} MB against {old / 2**20:.0f} MB"


def test_strong_components_cost_less_than_scipys_conversion():
    """The fair check's components: rows made canonical a slice at a time and a weight
    seen at every edge (4 bytes an edge, the targets once) against scipy's conversion
    of 8-bit weights (a copy of the targets and float64 weights: 13 bytes an edge), on
    the same graph (numpy's allocations, tracemalloc); the same components."""
    import tracemalloc
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components
    from osf_check.explorer.graph import checks
    r = _random_graph(500_000, 24, 40)
    indptr = r.off.astype(np.int64)

    def by_conversion(indptr, dst):
        m = csr_matrix((np.ones(len(dst), dtype=np.int8), dst, indptr), shape=(r.n, r.n))
        return connected_components(m, directed=True, connection="strong")[1]

    def peak(way):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            got = way(indptr, r.dst)
            return got, tracemalloc.get_traced_memory()[1] - before - got.nbytes
        finally:
            tracemalloc.stop()
    got, new = peak(checks.strong_components)
    want, old = peak(by_conversion)
    assert np.array_equal(np.unique(got, return_inverse=True)[1],
                          np.unique(want, return_inverse=True)[1])
    # (7.7 against 13.7 here: a slice's temporaries weigh more on a graph this small)
    assert new < 0.6 * old, f"{new / len(r.dst):.1f} bytes an edge against {old / len(r.dst):.1f}"


_GOAL_CHILD = textwrap.dedent("""
    import numpy as np
    from osf_check.explorer.store.allocator import keep_freed_memory
    from osf_check.explorer.check import prepare
    from osf_check.explorer.graph import checks
    from osf_check.explorer.vector.search import vector_bfs
    keep_freed_memory()  # as the CLI: freed memory kept for reuse

    def rss():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024

    m, props, _ = prepare("graph-relay", params={{"intents": 1}}, props=["A2"])
    ex = vector_bfs(m, props, depth=None, keep_graph=True)
    g, ext = checks._Graph(ex), checks._Extension(ex, 1000)
    [p] = props
    c = [c for c in p.checks if c.kind == {kind!r}][0]
    goal = c.goals(m)[0]
    junk = [np.ones(1 << 20) for _ in range(40)]  # a goal's slices: 8 MB each, the heap's
    del junk
    before = rss()
    checks._goal(g, ex, ext, p, c.kind, goal)
    print((before - rss()) / 2**20)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("kind", ["reach", "fair"])
def test_a_goal_starts_with_the_memory_the_last_one_freed_given_back(kind):
    """Each reach or fair goal of the graph checks gives back to the kernel what the goals
    before it freed into the heap (their slices), so that it does not add to the
    resident peak of the next: of 320 MB freed before a goal, the allocator keeps about
    200 MB (its threshold), which must be gone after it (the goal's own use aside)."""
    out = subprocess.run([sys.executable, "-c", _GOAL_CHILD.format(kind=kind)],
                         capture_output=True, text=True, check=True)
    assert float(out.stdout) > 100, f"{float(out.stdout):.0f} MB given back"
