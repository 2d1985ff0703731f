"""The partitioned search (issue 16): one process and several, the same run.

Each worker owns the states its hash names; the level is numbered as one process
numbers it and parents are chosen by least (action, parent), so not only the counts but
the ids, the parent links and every counterexample must be equal, bit for bit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from osf_check.explorer.check import check, prepare
from osf_check.explorer.store.layout import Layout
from osf_check.explorer.store.levels import LevelStore, least, rank
from osf_check.explorer.vector.search import vector_bfs
from osf_check.models.two_phase import SPEC as TWO_PHASE
from osf_check.models.wire_relay import SPEC as WIRE
from osf_check.properties import catalogue
from osf_check.scratch import memory_dir

SMALL = {"two-phase": ({"rms": 4}, None), "graph-relay": ({}, 7), "wire-relay": ({}, 6)}


def _same(a, b) -> None:
    """Two explorations are the same run: every array and every finding."""
    assert (a.distinct, a.generated, a.fired) == (b.distinct, b.generated, b.fired)
    assert list(a.level_start) == list(b.level_start)
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.parent, b.parent) and np.array_equal(a.via, b.via)
    assert (a.complete, a.stopped, a.expanded) == (b.complete, b.stopped, b.expanded)
    assert a.witness_seen == b.witness_seen and a.trans_applied == b.trans_applied

    def found(ex):
        return sorted((v.prop, v.kind, v.message, list(v.path), list(v.actions))
                      for v in ex.violations)
    assert found(a) == found(b)
    assert (a.edges is None) == (b.edges is None)
    for x, y in zip(a.edges or (), b.edges or ()):  # the graph: same edges, same order
        assert x.dtype == y.dtype and np.array_equal(x, y)
    if a.edges is not None:  # and by source, as the graph checks read them
        for x, y in zip(a.edges_by_source(), b.edges_by_source()):
            assert x.dtype == y.dtype and np.array_equal(x, y)


@pytest.mark.slow  # minutes on a busy 2-core machine: the full suite runs it
@pytest.mark.parametrize("model", sorted(SMALL))
def test_every_model_and_mutant_is_the_same_run_on_1_2_and_3_workers(model):
    params, depth = SMALL[model]
    mutants = [None, *(x.name for x in catalogue.MUTANTS if x.model == model)]
    assert len(mutants) > 1
    broken = 0
    for mu in mutants:
        m, props, _ = prepare(model, params=params, mutant=mu)
        one = vector_bfs(m, props, depth=depth, stop_on_violation=False, chunk=997)
        broken += bool(one.violations)
        for w in (2, 3):
            _same(one, vector_bfs(m, props, depth=depth, stop_on_violation=False,
                                  chunk=1 << 17, workers=w))
        # stopping at the first violation stops at the same level, with the same trace
        _same(vector_bfs(m, props, depth=depth, chunk=4096),
              vector_bfs(m, props, depth=depth, workers=2, chunk=333))
        # the graph (every edge) is the same too, whatever the chunks
        _same(vector_bfs(m, props, depth=depth, keep_graph=True, stop_on_violation=False,
                         chunk=4096),
              vector_bfs(m, props, depth=depth, keep_graph=True, stop_on_violation=False,
                         workers=3, chunk=333))
    assert broken, "no mutant was caught at these bounds: the comparison would be idle"


@pytest.mark.slow  # minutes on a busy 2-core machine: the full suite runs it
def test_complete_graph_relay_runs_with_the_graph_checks_are_the_same_on_1_and_2_workers(
        monkeypatch):
    """Every mutant, run to the end: the partitioned search keeps the graph and the
    reach and fair goals are checked in two processes, with the same verdicts, the
    same counterexamples (lassos included) and the same report as one process.
    (Graph-relay is the model with reach and fair properties.)"""
    from osf_check.explorer.graph import checks as graph
    parallel = []
    real = graph._parallel

    def counted(*a, **k):
        parallel.append(1)
        return real(*a, **k)
    monkeypatch.setattr(graph, "_parallel", counted)
    kinds = set()
    for mu in [None, *(x.name for x in catalogue.MUTANTS if x.model == "graph-relay")]:
        # small and complete (the goals run in parallel only where no state is cut off)
        kw = dict(params={"intents": 1, "slugs": 1}, mutant=mu, depth=None,
                  stop_on_violation=False)
        one = check("graph-relay", **kw)
        n = len(parallel)
        two = check("graph-relay", workers=2, **kw)
        assert one.exploration.complete and two.workers["partitions"] == 2
        assert len(parallel) == n + (one.graph is not None)  # the goals ran in parallel
        assert one.status == two.status and one.verdict == two.verdict
        if one.graph is not None:
            assert vars(one.graph) == vars(two.graph)
        _same(one.exploration, two.exploration)
        kinds |= {v.kind for v in one.exploration.violations}
    assert {"reach", "fair"} <= kinds, "a graph check never failed: the comparison is idle"


def test_parents_do_not_depend_on_chunks():
    """Least (action, parent) is a rule of the state space, not of how a level is cut."""
    m = TWO_PHASE.build({"rms": 5})
    runs = [vector_bfs(m, [], depth=None, chunk=c) for c in (7, 1000, 1 << 17)]
    for r in runs[1:]:
        _same(runs[0], r)


@pytest.mark.parametrize("parts", [1, 2, 8, 9, 64, 70_000])
def test_successors_split_by_owner_the_same_way_for_few_and_many_workers(parts):
    from osf_check.explorer.vector.partition import by_owner
    own = np.random.default_rng(parts).integers(0, parts, size=5_000).astype(np.uint64)
    got = by_owner(own, parts)
    assert len(got) == parts
    assert all(np.array_equal(g, np.flatnonzero(own == np.uint64(w)))
               for w, g in enumerate(got))


def test_more_workers_than_a_pass_each_is_still_the_same_run(monkeypatch):
    # three workers split each chunk by one sort, as more than FEW_OWNERS would
    import osf_check.explorer.vector.partition as partition
    monkeypatch.setattr(partition, "FEW_OWNERS", 1)
    mutant = next(x.name for x in catalogue.MUTANTS if x.model == "two-phase")
    for mu in (None, mutant):
        m, props, _ = prepare("two-phase", params={"rms": 4}, mutant=mu)
        for graph in (False, True):
            kw = dict(depth=None, stop_on_violation=False, keep_graph=graph)
            _same(vector_bfs(m, props, **kw), vector_bfs(m, props, workers=3, chunk=333, **kw))


def test_least_is_the_least_action_then_parent():
    sk = np.array([5, 5, 5, 2, 2], dtype=np.uint64)
    parent = np.array([9, 1, 4, 3, 0], dtype=np.int32)
    act = np.array([2, 3, 2, 1, 1], dtype=np.int16)
    uniq, rows = least(sk, rank(parent, act))
    assert uniq.tolist() == [2, 5] and rows.tolist() == [4, 2]


def test_ownership_is_balanced_and_follows_the_key_only():
    m = TWO_PHASE.build({"rms": 8})
    ex = vector_bfs(m, [], depth=None)
    lay = Layout(m)
    for parts in (2, 3, 8):
        share = np.bincount(lay.owner(ex.keys, parts).astype(np.int64), minlength=parts)
        assert share.sum() == ex.distinct
        assert share.max() <= 1.1 * ex.distinct / parts, share  # within 10 % of even
    # several words: the hash reads every word
    m2, _, _ = prepare("wire-relay")
    lay2 = Layout(m2)
    assert lay2.words == 2
    k = np.zeros((4, 2), dtype=np.uint64)
    k[:, 1] = np.arange(4, dtype=np.uint64)
    assert len(set(lay2.owner(k, 1 << 16).tolist())) == 4



def test_workers_grow_their_filters_at_the_same_level():
    """Each worker sizes its Bloom filter by the total over the workers, so that their
    refills (every key added again) fall on the same level instead of one waiting
    for the other's."""
    m = TWO_PHASE.build({"rms": 7})
    ex = vector_bfs(m, [], depth=None)
    lay = Layout(m)
    own = lay.owner(ex.keys, 2)
    bounds = list(ex.level_start) + [ex.distinct]

    def growth(shared: bool) -> list[list[int]]:
        """The levels at which each worker's filter grew."""
        stores = [LevelStore(ex.keys[:1], np.int16) for _ in range(2)]
        grew: list[list[int]] = [[], []]
        for level, (lo, hi) in enumerate(zip(bounds[1:], bounds[2:])):
            for w, s in enumerate(stores):
                before = s.bloom.capacity
                k = ex.keys[lo:hi][own[lo:hi] == w]
                s.add_level(k, np.zeros(len(k), np.int32), np.zeros(len(k), np.int16),
                            expect=hi // 2 if shared else None)
                if s.bloom.capacity != before:
                    grew[w].append(level)
        return grew

    same = growth(shared=True)
    assert same[0] == same[1] and len(same[0]) > 5  # grew, always together
    apart = growth(shared=False)  # each by its own count: the shares differ a little
    assert apart[0] != apart[1]


def test_check_reports_the_partitions_and_says_why_when_there_are_none():
    r = check("two-phase", params={"rms": 5}, depth=None, workers=2)
    assert r.workers["asked"] == 2 and r.workers["partitions"] == 2
    assert r.workers["why"] is None and r.workers["shuffled_bytes"] > 0
    one = check("two-phase", params={"rms": 5}, depth=None)
    assert one.workers == {"asked": 1, "partitions": 1, "why": None, "cluster": None,
                           "shuffled_bytes": 0, "shuffled_per_level": [],
                           "new_keys_per_level": [], "stolen_chunks": 0}
    assert sum(r.workers["shuffled_per_level"]) == r.workers["shuffled_bytes"]
    assert one.status == r.status and one.exploration.distinct == r.exploration.distinct
    g = check("graph-relay", depth=3, workers=2)  # reach and fair: the graph is kept
    assert g.workers["partitions"] == 2 and g.workers["why"] is None
    e = check("graph-relay", depth=3, workers=2, engine="explicit")
    assert e.workers["partitions"] == 1 and "explicit" in e.workers["why"]
    assert g.status == e.status


def test_a_checkpoint_of_a_partitioned_run_resumes_on_any_number_of_workers(tmp_path):
    m, props, _ = prepare("two-phase", params={"rms": 5}, mutant="commit-without-all-prepared")
    whole = vector_bfs(m, props, depth=None)
    assert whole.violations
    for first, then in ((2, 1), (2, 3), (1, 2)):
        d = tmp_path / f"cp-{first}-{then}"
        part = vector_bfs(m, props, depth=None, workers=first, checkpoint=d,
                          checkpoint_every=0, stop_after_levels=4)
        assert not part.complete and (d / "state.npz").exists()
        _same(whole, vector_bfs(m, props, depth=None, workers=then, resume=d))


@pytest.mark.parametrize("graph", [False, True])
def test_a_checkpoint_of_a_search_that_had_ended_resumes_to_the_same_counts(tmp_path, graph):
    """The last checkpoint of a search is written after its last expansion, which found
    nothing new: the workers expanded that level again (generated and fired counted
    twice, the graph's edges out of it twice), and their own such checkpoint named it
    the frontier, so that one process did too.  Two-phase, to every depth: 288 states,
    the last checkpoint at level 11 (10 levels, then the expansion that ends it)."""
    m, props, _ = prepare("two-phase", params={"rms": 3})
    whole = vector_bfs(m, props, depth=None, keep_graph=graph)
    for first, then in ((1, 2), (2, 1), (2, 2), (1, 1)):
        d = tmp_path / f"cp-{first}-{then}"
        done = vector_bfs(m, props, depth=None, workers=first, checkpoint=d,
                          checkpoint_every=0, keep_graph=graph)
        assert done.complete and (d / "state.npz").exists()
        again = vector_bfs(m, props, depth=None, workers=then, resume=d, keep_graph=graph)
        _same(whole, again)  # (the graph's edges too, by source)
        assert again.generated == whole.generated


def test_a_checkpoint_with_the_graph_resumes_on_any_number_of_workers(tmp_path):
    """The edges are saved with the states: a graph run checkpointed on 2 workers
    resumes on 1 or 3 (and back) to the uninterrupted run's edges."""
    m, props, _ = prepare("graph-relay", params={"intents": 1}, mutant="outbox-off")
    whole = vector_bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False)
    for first, then in ((2, 1), (2, 3), (1, 2)):
        d = tmp_path / f"cp-{first}-{then}"
        part = vector_bfs(m, props, depth=None, workers=first, checkpoint=d, keep_graph=True,
                          stop_on_violation=False, checkpoint_every=0, stop_after_levels=6)
        assert not part.complete and (d / "state.npz").exists()
        _same(whole, vector_bfs(m, props, depth=None, workers=then, keep_graph=True,
                                stop_on_violation=False, resume=d))


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        f = task / "children"
        if f.exists():
            out += [int(x) for x in f.read_text().split()]
    return out


def _shm_dirs(pid: int) -> set[str]:
    """The shared files' directories of the run whose driver is ``pid`` (other runs,
    in tests running alongside, have directories of their own)."""
    d = Path(memory_dir() or tempfile.gettempdir())
    return {p.name for p in d.glob(f"osf-check-shards-{pid}-*")}


def _explore(args: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "osf_check.cli", "explore", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


BASE = ["--model", "two-phase", "--param", "rms=8", "--depth", "unbounded", "--json",
        "--workers", "2"]


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["driver", "worker"])
def test_a_sigkilled_partitioned_run_resumes_to_the_same_verdict(tmp_path, victim):
    """SIGKILL the driver (its workers must leave, with their files) or one worker
    (the run fails as an internal error, never a verdict); the checkpoint then resumes
    to SPIN's counts for TwoPhase N=8 (tests/test_two_phase.py)."""
    cp = tmp_path / "cp"
    p = _explore(BASE + ["--checkpoint", str(cp), "--checkpoint-every", "0"])
    deadline = time.time() + 300
    while not (cp / "state.npz").exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert (cp / "state.npz").exists(), "no checkpoint was written"
    kids = _children(p.pid)
    assert len(kids) == 2, kids
    assert _shm_dirs(p.pid), "the run's shared files are not where this test looks"
    if victim == "driver":
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        for k in kids:  # the workers see the driver gone and leave
            for _ in range(600):
                if not Path(f"/proc/{k}").exists() or \
                        Path(f"/proc/{k}/stat").read_text().split()[2] == "Z":
                    break
                time.sleep(0.05)
            else:
                raise AssertionError(f"worker {k} outlived its driver")
        time.sleep(0.5)
        assert _shm_dirs(p.pid) == set(), "a killed run left its files in /dev/shm"
    else:
        os.kill(kids[0], signal.SIGKILL)
        out, err = p.communicate(timeout=300)
        assert p.returncode == 153, (p.returncode, err[-2000:])
        assert "worker" in err and "Traceback" not in err
    r = subprocess.run([sys.executable, "-m", "osf_check.cli", "explore", *BASE,
                        "--resume", str(cp)], capture_output=True, text=True, timeout=600)
    doc = json.loads(r.stdout)
    assert doc["exit_code"] == 0 and doc["complete"]
    got = doc["models"][0]
    assert (got["distinct_states"], got["generated_states"]) == (1_745_408, 18_507_778)
    assert got["workers"]["partitions"] == 2


def test_the_bytes_moved_between_workers_are_measured_not_assumed():
    """A worker sends each successor it does not own to its owner: with more workers, a
    larger share moves (about (W-1)/W of the successors kept per chunk).  And each
    worker tells every other the groups of its new keys of a level with how many keys
    each holds (8 + 4 bytes a group of one-word keys), which number their own against
    them: a group is one worker's, so a level's groups are as many for any W."""
    m = TWO_PHASE.build({"rms": 6})
    lay = Layout(m)
    succ = {}
    for w in (2, 3, 5):
        ex = vector_bfs(m, [], depth=None, workers=w)
        assert sum(ex.shuffled_levels) == ex.shuffled
        assert len(ex.shuffled_levels) == len(ex.level_start)  # one per level expanded
        bounds = list(ex.level_start) + [ex.distinct]
        groups = [len(np.unique(lay.groups(ex.keys[a:b]))) for a, b in zip(bounds, bounds[1:])]
        # a level's new keys are those of the next level (none after the last)
        assert ex.new_keys_levels == [g * 12 * (w - 1) for g in groups[1:]] + [0]
        assert sum(groups) < ex.distinct / 4  # fewer groups than keys: what it saves
        succ[w] = ex.shuffled - sum(ex.new_keys_levels)
    assert 0 < succ[2] < succ[3] < succ[5]
    assert succ[5] < 2 * succ[2]  # 4/5 against 1/2 of the same successors


def _slow_worker_0(monkeypatch):
    """Worker 0 takes 20 ms more a chunk (the workers are forks: they inherit this)."""
    from osf_check.explorer.vector.partition import Shard
    plain = Shard._chunk

    def slow(self, *a, **k):
        if self.index == 0:
            time.sleep(0.02)
        return plain(self, *a, **k)
    monkeypatch.setattr(Shard, "_chunk", slow)


@pytest.mark.slow
def test_a_slower_worker_takes_fewer_chunks_and_changes_nothing(monkeypatch):
    """With worker 0 slowed down, worker 1 expands more than half the chunks of a
    level, and the run is still one process's: ids, parents, counts and every
    violation, with and without stopping at the first (what a chunk's expander
    changes is only who sends its successors to their owners)."""
    _slow_worker_0(monkeypatch)
    for mutant in (None, "commit-without-all-prepared"):
        m, props, _ = prepare("two-phase", params={"rms": 5}, mutant=mutant)
        for stop in (False, True):
            one = vector_bfs(m, props, depth=None, stop_on_violation=stop, chunk=64)
            two = vector_bfs(m, props, depth=None, stop_on_violation=stop, chunk=64,
                             workers=2)
            _same(one, two)
            assert two.stolen_chunks > 0
    # with the graph each worker keeps the edges out of its own states: no sharing
    m = TWO_PHASE.build({"rms": 5})
    g = vector_bfs(m, [], depth=None, keep_graph=True, stop_on_violation=False, chunk=64,
                   workers=2)
    assert g.stolen_chunks == 0
    _same(vector_bfs(m, [], depth=None, keep_graph=True, stop_on_violation=False), g)


def test_the_workers_expand_a_level_in_chunks_of_consecutive_ids(monkeypatch, tmp_path):
    """A level wider than a chunk is expanded as one process cuts it: chunks of
    consecutive ids of one size (each holding states of both workers), every id once;
    a narrower level, by each worker its own states."""
    from osf_check.explorer.vector.partition import Shard, cut
    plain = Shard._chunk

    def logged(self, level, lo, hi, gid, out, parts):
        with open(tmp_path / f"w{self.index}", "a") as f:
            f.write(f"{len(self.gids)} {' '.join(map(str, gid[lo:hi].tolist()))}\n")
        return plain(self, level, lo, hi, gid, out, parts)
    monkeypatch.setattr(Shard, "_chunk", logged)
    m = TWO_PHASE.build({"rms": 5})
    one = vector_bfs(m, [], depth=None, stop_on_violation=False)
    two = vector_bfs(m, [], depth=None, stop_on_violation=False, chunk=64, workers=2)
    _same(one, two)
    chunks: dict[int, list[list[int]]] = {}
    owner = Layout(m).owner(one.keys, 2)
    for w in (0, 1):
        for line in (tmp_path / f"w{w}").read_text().splitlines():
            level, *ids = map(int, line.split())
            chunks.setdefault(level, []).append(ids)
    shared = 0
    for level, got in chunks.items():
        lo, hi = one.level_start[level - 1], (one.level_start + [one.distinct])[level]
        assert sorted(i for c in got for i in c) == list(range(lo, hi))
        if hi - lo <= 64:
            continue
        shared += 1
        size, count = cut(hi - lo, 2, 64)
        assert len(got) == count and sorted(c[0] for c in got) == list(range(lo, hi, size))
        for c in got:
            assert c == list(range(c[0], c[0] + len(c)))
        assert any(len(set(owner[c].tolist())) == 2 for c in got)
    assert shared >= 3


def test_the_chunks_of_a_level_are_each_claimed_once(tmp_path):
    """Claims hand out each chunk of a level once, and none before every worker has
    published its part; a worker reads the others' parts from their files."""
    import multiprocessing as mp
    from osf_check.explorer.vector.partition import Frontiers
    lock = mp.Lock()
    table = Frontiers.table(mp, 2)
    a, b = (Frontiers(lock, table, tmp_path, w, 2) for w in (0, 1))
    keys = np.arange(35, dtype=np.uint64).reshape(-1, 1)
    assert a.claim(1, 4) is None and b.claim(0, 4) is None  # nothing published
    a.publish(1, keys[::2], np.arange(0, 35, 2, dtype=np.int32) + 100)
    assert a.claim(1, 4) is None  # b's part is not there yet
    b.publish(1, keys[1::2], np.arange(1, 35, 2, dtype=np.int32) + 100)
    mine = (keys[::2], np.arange(0, 35, 2, dtype=np.int32) + 100)
    (ak, ag), (bk, bg) = a.frontiers(1, mine)
    assert ak is mine[0] and ag is mine[1]  # its own part is not read back
    assert bk[:, 0].tolist() == list(range(1, 35, 2)) and bg.tolist()[:2] == [101, 103]
    del ak, ag, bk, bg
    assert [a.claim(1, 4), b.claim(1, 4), b.claim(1, 4), a.claim(1, 4)] == [0, 1, 2, 3]
    assert a.claim(1, 4) is None and b.claim(1, 4) is None
    assert b.claim(2, 4) is None  # a level not published
    for f in (a, b):
        f.done()
        for box in f.boxes:
            box.close()


def test_a_worker_lost_stops_the_others_waiting_for_its_frontier(tmp_path, monkeypatch):
    """A worker waiting for another's part of a level that never comes stops when the
    driver says a worker was lost, or else after a while: a lost worker, not a hang."""
    import multiprocessing as mp
    from osf_check.explorer.vector.partition import Frontiers, WorkerLost
    table = Frontiers.table(mp, 2)
    f = Frontiers(mp.Lock(), table, tmp_path, 0, 2)
    f.publish(1, np.zeros((3, 1), dtype=np.uint64), np.arange(3, dtype=np.int32))
    monkeypatch.setattr(Frontiers, "WAIT", 0.05)
    t0 = time.monotonic()
    with pytest.raises(WorkerLost, match="did not publish"):
        f.frontiers(1, (np.zeros((3, 1), dtype=np.uint64), np.arange(3, dtype=np.int32)))
    assert time.monotonic() - t0 < 5
    monkeypatch.setattr(Frontiers, "WAIT", 30.0)
    Frontiers.lost(table)
    t0 = time.monotonic()
    with pytest.raises(WorkerLost, match="was lost"):
        f.frontiers(1, (np.zeros((3, 1), dtype=np.uint64), np.arange(3, dtype=np.int32)))
    assert time.monotonic() - t0 < 5
    f.boxes[0].close()


def test_a_lock_never_released_is_a_lost_worker_not_a_hang(tmp_path, monkeypatch):
    """A worker killed while it held the frontiers' lock: the others give up waiting
    and the run ends as when a worker dies (no verdict), instead of hanging."""
    import multiprocessing as mp
    from osf_check.explorer.vector.partition import Frontiers, WorkerLost
    monkeypatch.setattr(Frontiers, "WAIT", 0.05)
    lock = mp.Lock()
    f = Frontiers(lock, Frontiers.table(mp, 2), tmp_path, 0, 2)
    lock.acquire()  # as the dead worker left it
    with pytest.raises(WorkerLost, match="lock"):
        f.claim(1, 1)


def test_keys_of_several_words_are_each_their_own_group():
    """A key of several words is hashed whole for its owner: its summary is the key."""
    m = WIRE.build({})
    lay = Layout(m)
    assert lay.words > 1
    ex = vector_bfs(m, [], depth=6, workers=2)
    sizes = np.diff(list(ex.level_start) + [ex.distinct])
    assert ex.new_keys_levels == [int(n) * 8 * lay.words for n in sizes[1:]]


def test_the_states_are_put_together_in_one_process_only_when_read():
    """A run that walks no counterexample leaves the states with its workers and counts
    them without reading them (no file is written); read, they are one process's.  A
    run with a violation reads them to walk its path."""
    m, props, _ = prepare("two-phase", params={"rms": 4})
    one = vector_bfs(m, props, chunk=4096)
    two = vector_bfs(m, props, workers=2, chunk=4096)
    assert not two.violations and "_slices" in two.__dict__
    assert two.distinct == one.distinct > 1_000 and "_slices" in two.__dict__
    assert not list(Path(memory_dir() or tempfile.gettempdir()).glob(
        f"osf-check-states-{os.getpid()}-*"))
    _same(one, two)
    assert "_slices" not in two.__dict__  # read once, kept
    mu = next(x.name for x in catalogue.MUTANTS if x.model == "two-phase")
    m, props, _ = prepare("two-phase", params={"rms": 4}, mutant=mu)
    broken = vector_bfs(m, props, workers=2, chunk=4096)
    assert broken.violations and len(broken.violations[0].path) > 1
    _same(vector_bfs(m, props, chunk=4096), broken)


def _held_by_workers(ex):
    lazy = ex.__dict__["_slices"]
    assert lazy.held
    return lazy, list(lazy._source.procs), lazy._source.dir


def test_the_workers_keep_their_states_until_read_then_stop():
    """Without the graph, the workers outlive their search with the states, which they
    write only when read; then they stop and their files go."""
    m, props, _ = prepare("two-phase", params={"rms": 4})
    two = vector_bfs(m, props, workers=2, chunk=4096)
    lazy, procs, room = _held_by_workers(two)
    assert all(p.is_alive() for p in procs) and room.is_dir()
    _same(vector_bfs(m, props, chunk=4096), two)  # reads them
    assert not lazy.held and not any(p.is_alive() for p in procs) and not room.exists()


def test_unread_states_stop_their_workers_when_dropped_or_released():
    """Dropping an exploration whose states were never read stops its workers; once
    released, the states cannot be read (a clear error, not empty arrays)."""
    import gc
    m, props, _ = prepare("two-phase", params={"rms": 4})
    two = vector_bfs(m, props, workers=2, chunk=4096)
    _, procs, room = _held_by_workers(two)
    del two, _
    gc.collect()
    for p in procs:
        p.join(timeout=10)
    assert not any(p.is_alive() for p in procs) and not room.exists()
    three = vector_bfs(m, props, workers=2, chunk=4096)
    lazy, procs, room = _held_by_workers(three)
    lazy.release()
    assert not any(p.is_alive() for p in procs) and not room.exists()
    with pytest.raises(RuntimeError, match="released"):
        three.keys


def test_a_forked_process_leaving_does_not_stop_its_parents_workers():
    """A process forked while the workers hold the states runs the Slices' finalizer
    when it exits (weakref.finalize at exit): only the process that started the
    workers may stop them."""
    m, props, _ = prepare("two-phase", params={"rms": 4})
    two = vector_bfs(m, props, workers=2, chunk=4096)
    lazy, procs, room = _held_by_workers(two)
    pid = os.fork()
    if pid == 0:  # the child: what its exit would run, then leave at once
        try:
            lazy._stop()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert lazy.held and all(p.is_alive() for p in procs) and room.is_dir()
    _same(vector_bfs(m, props, chunk=4096), two)


def test_each_worker_reserves_its_share_of_a_shared_file(tmp_path):
    """Files every worker writes all over get their pages up front, a share per worker
    (see ``_Files.reserve``): the first worker's half, then all of it."""
    from osf_check.explorer.vector.partition import _Files
    from osf_check.scratch import memory_dir
    d = Path(memory_dir() or tmp_path)
    p = d / f"osf-check-test-reserve-{os.getpid()}.bin"
    size = 8 << 20
    try:
        with open(p, "wb") as f:
            f.truncate(size)
        if os.stat(p).st_blocks:
            pytest.skip("this file system does not keep files sparse")
        _Files(None, 0, 2, d).reserve([str(p)])  # type: ignore[arg-type]
        half = os.stat(p).st_blocks * 512
        _Files(None, 1, 2, d).reserve([str(p)])  # type: ignore[arg-type]
        assert size // 2 <= half < size
        assert os.stat(p).st_blocks * 512 >= size
        assert os.path.getsize(p) == size  # allocated, not grown
    finally:
        p.unlink(missing_ok=True)


def test_a_mailbox_gives_its_reader_what_was_put_as_it_grows(tmp_path):
    """Successors travel from worker to worker through a file both map (``_Mailbox``):
    what the owner reads is what the sender put, level after level, when a level
    needs a bigger file than the last (the sender grows it, the reader maps it again),
    and when it needs less (the rest of the file is not read)."""
    from osf_check.explorer.vector.partition import _Mailbox
    sender, owner = _Mailbox(tmp_path / "box"), _Mailbox(tmp_path / "box")
    rng = np.random.default_rng(7)
    try:
        for n in (3, 0, 5000, 200_000, 17):
            put = [rng.integers(0, 2**63, (n, 2), dtype=np.uint64),
                   rng.integers(-1, 2**31 - 1, n, dtype=np.int32),
                   rng.integers(0, 300, n).astype(np.int16)]
            sender.put(put)
            got = owner.get()
            assert [g.shape for g in got] == [p.shape for p in put]
            assert all(g.dtype == p.dtype and np.array_equal(g, p) for g, p in zip(got, put))
            del got
        assert os.path.getsize(tmp_path / "box") >= 200_000 * 22  # grown, kept
    finally:
        sender.close()
        owner.close()


def test_a_full_scratch_directory_is_a_resource_bound_not_a_crash(monkeypatch):
    """Where /dev/shm has no room for the shared files, touching their pages would kill
    a worker with SIGBUS; the run says it ran out of memory instead (exit 152, one
    line), and never gives a verdict."""
    import errno

    from click.testing import CliRunner

    from osf_check.cli import main

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)  # the workers are forked: theirs too
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--workers", "2"])
    assert r.exit_code == 152, r.output
    lines = r.stderr.strip().splitlines()
    assert "osf-check: out of memory: no room left in" in lines[-1]
    assert r.stdout == "" and "Traceback" not in r.output


def test_a_failed_allocation_is_a_resource_bound_too(monkeypatch):
    from click.testing import CliRunner

    from osf_check.api import Checker
    from osf_check.cli import main

    def explore(self, **kw):
        raise MemoryError("Unable to allocate 12.0 GiB for an array")

    monkeypatch.setattr(Checker, "explore", explore)
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--json"])
    assert r.exit_code == 152, r.output
    assert r.stderr.strip().splitlines()[-1] == (
        "osf-check: out of memory: Unable to allocate 12.0 GiB for an array; the run "
        "stopped before it finished and has no verdict")
    assert r.stdout == ""


def test_a_piece_of_edges_that_misses_its_workers_edges_is_an_internal_error():
    """``fill`` places a worker's piece by a mask of its states' edges in the piece's
    range of sources: a piece without all of them would land shifted, so it stops."""
    from osf_check.explorer.vector.shard_edges import fill
    d = np.zeros(7, dtype=np.int32)
    off, mine = np.array([0, 2, 5, 5, 5, 7]), np.array([1, 1, 0, 0, 1], dtype=bool)
    fill([d], off, mine, np.array([0, 0]), [np.array([3, 4])])  # state 0's edges alone
    assert d.tolist() == [3, 4, 0, 0, 0, 0, 0]
    with pytest.raises(RuntimeError, match="internal error"):  # state 1's are missing
        fill([d], off, mine, np.array([0, 0, 4, 4]), [np.array([3, 4, 5, 6])])


def _bench():
    import importlib.util
    path = Path(__file__).parent.parent / "benchmarks" / "bench_partition.py"
    spec = importlib.util.spec_from_file_location("bench_partition", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.fixture
def megabyte():
    """A file of 1 MiB in /dev/shm, still in its directory: the open file, its path and
    its (device, inode), as the benchmark's ``_held`` names files."""
    if not Path("/dev/shm").is_dir() or not Path(f"/proc/{os.getpid()}/fd").is_dir():
        pytest.skip("no /dev/shm or /proc here")
    p = Path(f"/dev/shm/osf-check-test-held-{os.getpid()}")
    with open(p, "wb+") as f:
        f.write(b"x" * (1 << 20))
        f.flush()
        st = os.fstat(f.fileno())
        try:
            yield f, p, (st.st_dev, st.st_ino)
        finally:
            p.unlink(missing_ok=True)


def test_the_peak_memory_counts_files_held_in_memory_that_no_pss_counts(megabyte):
    """A run's states left in deleted files of /dev/shm (``Slices``) take memory that no
    process's PSS shows: the benchmark adds them while they are not mapped."""
    import mmap
    bench = _bench()
    f, p, this = megabyte  # (other tests' runs may hold files of their own)
    assert this not in bench._held(os.getpid())  # not deleted: in the directory
    p.unlink()
    assert bench._held(os.getpid())[this] == 1 << 20
    with mmap.mmap(f.fileno(), 1 << 20):  # mapped: the PSS counts it, not this
        assert this not in bench._held(os.getpid())


def test_a_descriptor_closed_during_the_scan_leaves_the_others_counted(megabyte,
                                                                       monkeypatch):
    """Descriptors close while the benchmark reads them: that one is skipped, the files
    held by the others still count."""
    bench = _bench()
    f, p, this = megabyte
    p.unlink()
    ours = f"/proc/{os.getpid()}/fd/{f.fileno()}"
    readlink = os.readlink

    def closing(path, *args, **kwargs):  # every other descriptor vanishes first
        if str(path) != ours:
            raise FileNotFoundError(path)
        return readlink(path, *args, **kwargs)
    monkeypatch.setattr(os, "readlink", closing)
    assert bench._held(os.getpid()) == {this: 1 << 20}


def test_the_estimate_for_more_machines_counts_the_keys_each_receives():
    """benchmarks/bench_partition.py's estimate on paper: successors scale down with the
    machines, but each machine receives (M-1)/M of every level's new keys."""
    bench = _bench()
    # 8 s of work, links of 1,000 bytes/s, 4 machines: 2 s of work, successors
    # (2,000 + 1,000 bytes with two workers) 1.125 s, new keys 0.75 s, 6 barriers
    got = bench.estimate(8.0, [3_000, 1_000], [1_000, 0], 4, 8e-6, 1.0)
    assert got == pytest.approx(2 + 1.125 + 0.75 + 0.006)
    # the same bytes counted as successors alone: less, and less again on more machines
    assert bench.estimate(8.0, [3_000, 1_000], [0, 0], 4, 8e-6, 1.0) < got
    assert bench.estimate(8.0, [3_000, 1_000], [1_000, 0], 64, 8e-6, 1.0) > 1.0  # keys stay


def test_a_worker_holding_far_more_than_its_share_sizes_its_filter_for_its_own():
    from osf_check.explorer.store.levels import GROWTH, Bloom
    keys = np.arange(10_000, dtype=np.uint64).reshape(-1, 1)
    b = Bloom(words=1)
    b.add(keys, refill=lambda: iter([keys]), expect=2_000)  # five times its share
    assert b.capacity == int(GROWTH * 8_000)  # sized for most of what it holds
    c = Bloom(words=1)
    c.add(keys, refill=lambda: iter([keys]), expect=9_000)  # about its share: the share
    assert c.capacity == int(GROWTH * 9_000)
