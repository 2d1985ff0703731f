"""The vector engine under a memory budget (``--memory``): its store spills to disk and
the run gives the same counts, verdicts and counterexamples as without one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import osf_check
from osf_check.cli import main
from osf_check.explorer.store.levels import LevelStore
from osf_check.explorer.store.spill import BudgetTooSmall, Spill, parse_size
from osf_check.models.errors import BadValue


def _budgeted(checker, tmp_path):
    """The run without a budget, then under one just above the filter's final size: the
    filter stays in memory, nearly every array else goes to disk."""
    plain = checker.explore()
    budget = plain.raw.exploration.filter_bytes + 256
    spilled = checker.memory(budget, tmp_path).explore()
    return plain, spilled, spilled.raw.exploration.spill


def _same(plain, spilled):
    a, b = plain.raw.exploration, spilled.raw.exploration
    assert (b.distinct, b.generated, b.complete, b.histogram()) == \
        (a.distinct, a.generated, a.complete, a.histogram())
    assert spilled.status == plain.status and spilled.verdict == plain.verdict
    for x, y in zip((a.keys, a.parent, a.via), (b.keys, b.parent, b.via)):
        assert np.array_equal(x, y)
    assert [t["steps"] for t in spilled.traces] == [t["steps"] for t in plain.traces]


def _spilled(counts, budget_of):
    # the counters: something was really on disk and read back
    assert counts["budget"] == budget_of
    assert counts["spilled_bytes"] > 0 and counts["spilled_levels"] > 0
    assert counts["spill_reads"] > 0


@pytest.mark.parametrize("name, params, depth", [
    ("two-phase", {"rms": 5}, None),
    ("graph-relay", {}, 6),  # every property: reach and fair checks on the graph's edges
    ("wire-relay", {}, 6),
])
def test_every_model_gives_the_same_run_under_a_budget_that_spills(name, params, depth,
                                                                   tmp_path):
    checker = osf_check.Checker(name).params(**params).depth(depth)
    plain, spilled, counts = _budgeted(checker, tmp_path)
    _same(plain, spilled)
    _spilled(counts, plain.raw.exploration.filter_bytes + 256)
    assert not list(tmp_path.iterdir())  # the spill directory is gone


def test_a_reach_and_a_fair_check_judge_the_spilled_graph_alike(tmp_path):
    """graph-relay's A2 (reach) and A10 (fair), complete at one intent: their edges are
    spilled and read back by the graph checks."""
    checker = osf_check.Checker("graph-relay").params(intents=1).properties("A2", "A10") \
        .depth(None)
    plain, spilled, counts = _budgeted(checker, tmp_path)
    _same(plain, spilled)
    assert spilled.status == {"A2": "holds", "A10": "holds"}
    a, b = plain.raw.exploration, spilled.raw.exploration
    assert all(np.array_equal(x, y) for x, y in zip(a.edges_by_source(), b.edges_by_source()))
    _spilled(counts, a.filter_bytes + 256)


@pytest.mark.parametrize("name, mutant", [("two-phase", "commit-without-all-prepared"),
                                          ("graph-relay", "outbox-off")])
def test_a_violation_has_the_same_shortest_counterexample_under_a_budget(name, mutant,
                                                                        tmp_path):
    checker = osf_check.Checker(name).mutant(mutant).depth(None if name == "two-phase" else 8)
    if name == "two-phase":
        checker = checker.params(rms=5)  # levels enough to spill before the violation
    plain, spilled, counts = _budgeted(checker, tmp_path)
    assert plain.violations and plain.traces
    _same(plain, spilled)
    _spilled(counts, plain.raw.exploration.filter_bytes + 256)


def test_without_a_budget_nothing_spills_and_the_json_says_so():
    r = osf_check.Checker("two-phase").params(rms=3).explore()
    assert r.to_json()["models"][0]["memory"] == {
        "budget": None, "spilled_bytes": 0, "spilled_levels": 0, "spill_reads": 0}
    assert "memory budget" not in r.text()


def test_the_cli_reports_the_budget_and_what_it_spilled(tmp_path):
    args = ["explore", "--model", "two-phase", "--param", "rms=5", "--depth", "unbounded",
            "--memory", "20K", "--spill-dir", str(tmp_path)]
    out = CliRunner().invoke(main, args + ["--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)["models"][0]["memory"]
    assert got["budget"] == 20 * 1024 and got["spilled_bytes"] > 0 and got["spill_reads"] > 0
    text = CliRunner().invoke(main, args).output
    assert "memory budget 20.0 KB: " in text and "spilled to disk" in text
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("value, says", [
    ("lots", "--memory: a memory size is a number"),
    ("0", "--memory: a memory size is a number"),
    ("-5G", "--memory: a memory size is a number"),
    ("1K", "cannot hold the visited set's filter"),
])
def test_a_bad_or_too_small_budget_is_one_line_and_exit_150(value, says, tmp_path):
    out = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--param", "rms=5",
                                    "--depth", "unbounded", "--memory", value,
                                    "--spill-dir", str(tmp_path)])
    assert out.exit_code == 150
    errors = [ln for ln in out.stderr.splitlines() if "error" in ln]
    assert len(errors) == 1 and says in errors[0] and "Traceback" not in out.output
    assert not list(tmp_path.iterdir())  # removed on the error too


def test_a_budget_needs_one_process_of_the_vector_engine():
    base = osf_check.Checker("two-phase").params(rms=3).memory("1M")
    with pytest.raises(BadValue, match="--memory needs the vector engine"):
        base.engine("explicit").explore()
    with pytest.raises(BadValue, match="one process"):
        base.workers(2).explore()


@pytest.mark.parametrize("bad", [True, 0, 2.5, "1X", ""])
def test_the_api_refuses_a_size_that_is_not_one(bad):
    with pytest.raises(BadValue):
        osf_check.Checker("two-phase").memory(bad)


def test_sizes_are_powers_of_1024():
    assert [parse_size(s) for s in ("512M", "8G", "1.5k", "2 GiB", "64KB", "7")] == \
        [512 * 2**20, 8 * 2**30, 1536, 2 * 2**30, 64 * 2**10, 7]


def _store(levels: int, n: int) -> LevelStore:
    s = LevelStore(np.array([[0]], dtype=np.uint64), np.int16)
    for lv in range(levels):
        keys = (np.arange(n, dtype=np.uint64) * 2 + 1 + lv * 2 * n).reshape(-1, 1)
        s.add_level(keys, np.arange(n) % 7, np.full(n, lv))
    return s


def test_relieving_spills_the_oldest_cold_arrays_first_and_fits_the_budget(tmp_path,
                                                                          monkeypatch):
    from osf_check.explorer.store import spill as sp_mod
    s = _store(6, 10_000)
    held = s.held()
    monkeypatch.setattr(sp_mod, "resident", lambda: s.held())  # the store alone
    monkeypatch.setattr(sp_mod, "peak_resident", lambda: 0)
    with Spill(s.bloom.nbytes + 200_000, tmp_path) as sp:
        s.spill = sp
        sp.relieve(s, None, 6)
        assert s.held() <= sp.budget < held
        # parents and actions (never read by the search) go before any keys
        assert all(sp.spilled(a) for a in s.parent[1:] + s.via[1:])
        assert sp.spilled(s.keys[1]) and not sp.spilled(s.keys[-1])  # oldest keys first
        assert sp.bytes == held - s.held()


def test_a_look_up_in_spilled_levels_passes_the_filter_first(tmp_path):
    """Keys never stored are ruled out by the filter (in memory): few of them read a
    spilled level (each key alone: six levels each without the filter); stored keys are
    found there, with their ids."""
    s = _store(6, 10_000)
    with Spill(1, tmp_path) as sp:
        s.spill = sp
        s.keys[:] = sp.save(list(s.keys))
        for k in range(2, 2_002, 2):  # even: never stored
            found, _ = s.lookup(np.array([k], dtype=np.uint64))
            assert not found.any()
        assert sp.reads < 100  # without the filter: 6,000
        old = np.array([1, 2 * 10_000 * 3 + 1], dtype=np.uint64)
        found, ids = s.lookup(old)
        assert found.all() and ids.tolist() == [1, 1 + 3 * 10_000]
        assert sp.reads >= 2
        assert s.path_to(int(ids[1]))[1] == [-1, 3]


def test_the_filter_alone_over_the_budget_is_refused(tmp_path):
    s = _store(2, 10_000)
    with Spill(s.bloom.nbytes - 1, tmp_path) as sp:
        with pytest.raises(BudgetTooSmall, match="cannot hold the visited set's filter"):
            sp.relieve(s, None, 2)


@pytest.mark.parametrize("working", [0, 300_000])
def test_the_next_levels_working_set_is_left_room_for(working, tmp_path, monkeypatch):
    """The budget is the process's: the store spills enough to leave room for the rest
    of the process (its resident size less the store, here nothing) and for the next
    level's working set, measured on the last one (here ``working`` bytes, twice that
    for a frontier twice as large)."""
    from osf_check.explorer.store import spill as sp_mod
    s = _store(6, 10_000)
    held = s.held()
    monkeypatch.setattr(sp_mod, "resident", lambda: held)
    monkeypatch.setattr(sp_mod, "peak_resident", lambda: 0)
    with Spill(held, tmp_path) as sp:
        s.spill = sp
        sp.level_starts()
        sp._peak += working  # as sampled at the level's largest
        sp.relieve(s, None, 6, grow=2.0)
        assert sp.bytes >= 2 * working and s.held() <= held - 2 * working
        assert (sp.bytes == 0) == (working == 0)


def test_an_interrupted_run_removes_its_spill_directory(tmp_path):
    """Ctrl-C (here, raised by the progress callback once a level has spilled) ends the
    run without leaving its files behind."""
    from osf_check.explorer.vector.search import vector_bfs
    from osf_check.models.two_phase import SPEC
    seen = []

    def progress(depth, *_):
        seen.append([p for p in tmp_path.rglob("*.bin")])
        if depth == 8:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        vector_bfs(SPEC.build({"rms": 5}), [], depth=None, memory=20_000, spill_dir=tmp_path,
                   progress=progress)
    assert seen[-1]  # files were there when it stopped
    assert not list(tmp_path.iterdir())
