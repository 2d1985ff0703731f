"""The vectorized engine gives exactly the explicit engine's results; checkpoints resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from osf_check.explorer.check import prepare
from osf_check.explorer.explicit.bfs import bfs
from osf_check.explorer.graph.checks import check_graph
from osf_check.explorer.vector.search import Layout, vector_bfs
from osf_check.models.two_phase import SPEC
from osf_check.properties import catalogue

CASES = [(m, None) for m in ("graph-relay", "wire-relay", "two-phase")] + [
    (mu.model, mu.name) for mu in catalogue.MUTANTS]


@pytest.mark.slow
@pytest.mark.parametrize("model, mutant", CASES, ids=[f"{m}:{u or 'correct'}" for m, u in CASES])
def test_same_counts_verdicts_and_shortest_depths(model, mutant):
    m, props, _ = prepare(model, mutant=mutant)
    depth = 9 if model != "two-phase" else None
    a = bfs(m, props, depth=depth)
    b = vector_bfs(m, props, depth=depth, chunk=2048)  # small chunks: exercise the merging
    assert (a.distinct, a.generated, a.complete) == (b.distinct, b.generated, b.complete)
    assert a.histogram() == b.histogram() and a.fired == b.fired
    assert [(v.prop, v.kind, len(v.path)) for v in a.violations] == \
        [(v.prop, v.kind, len(v.path)) for v in b.violations]
    assert a.witness_seen == b.witness_seen and a.trans_applied == b.trans_applied


@pytest.mark.parametrize("mutant", [None, "outbox-off", "queue-on-desktop"])
def test_graph_checks_agree(mutant):
    m, props, _ = prepare("graph-relay", params={"intents": 1}, mutant=mutant)
    a = bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False)
    b = vector_bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False, chunk=1000)
    assert check_graph(a, props).checked == check_graph(b, props).checked
    assert [(v.prop, v.kind, len(v.path)) for v in a.violations] == \
        [(v.prop, v.kind, len(v.path)) for v in b.violations]


def test_wide_states_pack_into_several_words():
    m, props, _ = prepare("wire-relay")
    lay = Layout(m)
    assert m.bits() > 64 and lay.words >= 2
    ex = vector_bfs(m, [], depth=6)
    assert ex.distinct == bfs(m, [], depth=6).distinct


def test_storage_is_compact():
    # a one-word state: key 8 + parent 4 + action 2 bytes and a filter of at most 16
    # bits, no sorted copy, no id table
    ex = vector_bfs(SPEC.build({"rms": 6}), [], depth=None)
    assert ex.keys.nbytes + ex.parent.nbytes + ex.via.nbytes == 14 * ex.distinct
    assert 14 * ex.distinct < ex.stored_bytes() <= 16 * ex.distinct
    # a two-word state (wire-relay): 16 + 4 + 2 and the filter
    m, props, _ = prepare("wire-relay")
    ex = vector_bfs(m, [], depth=5)
    assert ex.layout.words == 2 and 22 * ex.distinct < ex.stored_bytes() <= 24 * ex.distinct


def test_the_graph_keeps_no_source_per_edge(tmp_path):
    """The edges' sources are kept as where each state's edges start (8 bytes a state),
    not 4 bytes an edge: the graph checks read that form, so a complete run with reach
    or fair properties never spells the sources out.  The edges are the explicit
    engine's, also after a checkpoint taken half way (whose file keeps a source per
    edge) is resumed."""
    m, props, _ = prepare("graph-relay", params={"intents": 1})
    a = bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False)
    b = vector_bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False, chunk=1000)
    _, dst, act = b.__dict__["_edges"]
    held = b.__dict__["_edges"][0], b.edge_off
    assert held[0] is None and len(held[1]) == b.distinct + 1
    assert act.dtype == np.int8 and len(m.instances) < 128  # one byte an edge's action
    check_graph(b, props)
    assert b.__dict__["_edges"][0] is None  # the checks did not build them
    assert len(dst) > 10 * b.distinct  # (so that per-edge sources would show)
    want = _edge_set(a)
    assert _edge_set(b) == want
    vector_bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False, chunk=1000,
               checkpoint=tmp_path, checkpoint_every=0, stop_after_levels=6)
    c = vector_bfs(m, props, depth=None, keep_graph=True, stop_on_violation=False,
                   chunk=1000, resume=tmp_path)
    assert _edge_set(c) == want


def _edge_set(ex) -> Counter:
    """The edges as (source state, target state, action): the engines number states
    differently."""
    states = [ex.state(i) for i in range(ex.distinct)]
    return Counter((states[s], states[d], a)
                   for s, d, a in zip(*(np.asarray(e).tolist() for e in ex.edges)))


def test_interrupted_run_resumes_to_the_same_counts(tmp_path):
    m = SPEC.build({"rms": 6})
    full = vector_bfs(m, [], depth=None)
    part = vector_bfs(m, [], depth=None, checkpoint=tmp_path, checkpoint_every=0,
                      stop_after_levels=7)
    assert not part.complete and (tmp_path / "state.npz").exists()
    resumed = vector_bfs(m, [], depth=None, resume=tmp_path)
    assert resumed.complete
    assert (resumed.distinct, resumed.generated) == (full.distinct, full.generated)
    assert resumed.histogram() == full.histogram()


@pytest.mark.slow
def test_killed_process_resumes_from_its_checkpoint(tmp_path):
    exe = Path(sys.executable).with_name("osf-check")
    base = [str(exe), "explore", "--model", "two-phase", "--param", "rms=8", "--depth",
            "unbounded", "--engine", "vector", "--json"]
    cp = tmp_path / "cp"
    p = subprocess.Popen(base + ["--checkpoint", str(cp), "--checkpoint-every", "0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not (cp / "state.npz").exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert (cp / "state.npz").exists()
    out = subprocess.run(base + ["--resume", str(cp)], capture_output=True, text=True,
                         timeout=600, env={**os.environ})
    import json
    doc = json.loads(out.stdout)
    assert doc["exit_code"] == 0 and doc["complete"]
    # SPIN's counts for TwoPhase N=8 (tests/test_two_phase.py)
    assert doc["models"][0]["distinct_states"] == 1_745_408
    assert doc["models"][0]["generated_states"] == 18_507_778


def test_two_workers_give_the_same_result():
    m, props, _ = prepare("graph-relay", mutant="complete-overwrites-cancel")
    a = vector_bfs(m, props, depth=12, chunk=512)
    b = vector_bfs(m, props, depth=12, chunk=512, workers=2)
    assert (a.distinct, a.generated, a.fired) == (b.distinct, b.generated, b.fired)
    assert [(v.prop, len(v.path)) for v in a.violations] == \
        [(v.prop, len(v.path)) for v in b.violations]


def test_a_complete_runs_graph_checks_build_no_python_object_per_state():
    """The reach and fair checks read the vector engine's columns and edges as numpy
    arrays; the explicit packing (a Python int per state, and a dict) is built only when
    a bounded run's extension needs it (issue 15: it cost gigabytes on complete runs)."""
    from osf_check.explorer.check import check
    r = check("graph-relay", params={"intents": 1, "retries": 0}, props=["A2", "A10"],
              depth=None, engine="vector")
    ex = r.exploration
    assert ex.complete and r.status == {"A2": "holds", "A10": "holds"}
    assert ex.__dict__.get("_packed") is None and ex.__dict__.get("_ids") is None
    assert all(isinstance(e, np.ndarray) for e in ex.edges)
    assert r.status == check("graph-relay", params={"intents": 1, "retries": 0},
                             props=["A2", "A10"], depth=None, engine="explicit").status


def test_columns_come_narrow_and_exact_at_every_domains_edges():
    """The vector engine decodes each slot in the narrowest type of its domain, straight
    from the key's bits with its offset added modulo 2**64: a domain whose span
    exceeds its type (-100..100 in int8) or lies below zero must come back exact, at
    both ends."""
    from types import SimpleNamespace
    from osf_check.models.dsl import Domain
    doms = [Domain("int", -100, 100), Domain("int", 0, 1), Domain("int", 5, 5),
            Domain("int", -40_000, 40_000), Domain("int", 0, 2**40), Domain("int", -3, -1)]
    lay = Layout(SimpleNamespace(slot_domains=doms))
    rng = np.random.default_rng(0)
    vals = [np.concatenate([[d.lo, d.hi], rng.integers(d.lo, d.hi + 1, size=200)])
            for d in doms]
    cols = lay.unpack(lay.pack(vals, len(vals[0])))
    assert [c.dtype.name for c in cols] == ["int8", "int8", "int8", "int32", "int64", "int8"]
    for c, v in zip(cols, vals):
        assert c.tolist() == v.tolist()


@pytest.mark.parametrize("workers, graph", [(1, False), (2, False), (1, True), (2, True)])
def test_a_search_past_32_bit_state_ids_stops_with_no_verdict(monkeypatch, workers, graph):
    """Ids and parent links are int32: past 2**31 - 1 states they wrapped, and parent
    links with them (counterexamples through the wrong states).  The search now stops
    before a level that would not fit (incomplete, exit 152), a level whose edges were
    logged half way makes it an error said as a resource bound, and a violation found
    before stays reported.  (The limit lowered to 200 states: TwoPhase N=3 has 288.)"""
    from osf_check.explorer.store import levels as store
    from osf_check.explorer.check import check
    monkeypatch.setattr(store, "MAX_IDS", 200)
    kw = dict(depth=None, engine="vector", workers=workers)
    if graph:  # a reach or fair property keeps the graph
        with pytest.raises(store.IdsExhausted, match="more than the vector engine's 32-bit"):
            check("graph-relay", **kw)
        return
    r = check("two-phase", **kw)
    ex = r.exploration
    assert (r.verdict, ex.stopped, ex.complete) == ("incomplete", "state-ids", False)
    assert ex.distinct == 171 == sum(ex.histogram())  # depths 0-5 (220 to depth 6)
    bad = check("two-phase", mutant="commit-without-all-prepared", stop_on_violation=False,
                **kw)
    assert bad.verdict == "safety" and bad.exploration.stopped == "state-ids"
