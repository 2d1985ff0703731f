"""The concrete data the checker chose is in every failure's trace, so that a replay of
the trace alone (through an adapter too) hands the implementation the same; and the
Hypothesis phase walks with several seeds where the profile asks for them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.fuzz import profiles
from osf_check.fuzz.driver import hypothesis_run, make_harness, model_for, path_trace, replay
from osf_check.fuzz.graph_harness import FINISH
from osf_check.fuzz.graph_inputs import AGENT_KEYS
from osf_check.relay.graph import desktop

sys.path.insert(0, str(Path(__file__).parent / "adapters"))
import falsy_result  # noqa: E402

ADAPTER = f"{sys.executable} {Path(falsy_result.__file__)}"


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    # the adapter imports osf_check from this checkout, wherever pytest runs
    root = str(Path(__file__).parent.parent)
    monkeypatch.setenv("PYTHONPATH", root + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _replay_cli(trace: dict, tmp_path: Path, name: str):
    path = tmp_path / name
    path.write_text(json.dumps(trace))
    return CliRunner().invoke(main, ["replay", str(path), "--impl", ADAPTER])


@pytest.mark.slow
def test_a_hypothesis_failure_replays_from_its_trace_alone_through_the_adapter(
        monkeypatch, tmp_path):
    monkeypatch.setattr(desktop.DesktopRelay, "payload",
                        staticmethod(falsy_result.falsy_payload))
    rep = hypothesis_run("graph-relay", examples=100, steps=30, seeds=range(5))
    assert rep.failure is not None and "A8" in rep.failure, rep.failure
    # the tour's data does not show it (the path could not be shrunk with it): the walk's
    # own data is the failure's, and its last step carries the empty result
    assert rep.data is not None and len(rep.data) == len(rep.path)
    assert rep.data[-1] is not None and rep.data[-1]["result"] == ""
    tr = path_trace(model_for("graph-relay", None), rep.path, message=rep.failure,
                    mutant=None, seed=rep.seed, data=rep.data)
    assert tr["steps"][-1]["data"] == {**FINISH, **rep.data[-1]}
    got = _replay_cli(tr, tmp_path, "walk.json")
    assert got.exit_code == 12, got.output
    assert "A8" in got.output and "was not posted whole" in got.output, got.output
    # the same trace without its data hands the tour's results, which the adapter posts
    # correctly: the data is what reproduces the failure
    for step in tr["steps"]:
        step.pop("data", None)
    bare = _replay_cli(tr, tmp_path, "bare.json")
    assert bare.exit_code == 0, bare.output


def _late_bug(model, mutant, tmpdir, seed=0, result_for=None):
    """An implementation whose bug shows only where it runs with seed 1 (its server draws
    its ids from the seed: a bug that only some ids show)."""
    return make_harness(model, "server-ignores-key" if seed == 1 else mutant, tmpdir, seed,
                        result_for)


@pytest.mark.slow
def test_the_ci_profile_splits_its_examples_among_seeds_and_catches_a_later_seeds_bug():
    n = 60
    alone = hypothesis_run("graph-relay", examples=n, steps=30, seed=0, harness=_late_bug)
    assert alone.failure is None and alone.seeds == [0]
    seeds = profiles.seeds("ci", 0, n)
    assert len(seeds) > 1 and seeds[0] == 0
    rep = hypothesis_run("graph-relay", examples=n, steps=30, seed=0, seeds=seeds,
                         harness=_late_bug)
    assert rep.failure is not None and rep.seed == 1 and rep.seeds == [0, 1]
    assert rep.hypothesis_examples <= n  # the same budget, split
    # the trace records the seed that failed, and its replay runs at it
    tr = path_trace(model_for("graph-relay", None), rep.path, message=rep.failure,
                    mutant=None, seed=rep.seed, data=rep.data)
    steps = replay(tr, harness=_late_bug)
    assert steps and not steps[-1].ok, [s.outcome for s in steps]


def test_each_profile_names_its_seeds_from_the_run_seed():
    assert profiles.seeds("dev", 0, 300) == [0]
    assert profiles.seeds("ci", 0, 300) == [0, 1, 2]
    assert len(profiles.seeds("nightly", 7, 10_000)) > len(profiles.seeds("ci", 7, 300))
    assert profiles.seeds("nightly", 7, 10_000)[0] == 7


# the data classes ---------------------------------------------------------------------

def test_keys_equal_only_once_trimmed_are_two_runs(monkeypatch):
    from osf_check.fuzz import graph_inputs
    from osf_check.fuzz.harness import Divergence
    from osf_check.relay.graph.server import GraphServer
    tried = graph_inputs.start_keys(GraphServer)
    assert "key equal to another once trimmed, blanks around it" in tried
    original = GraphServer._existing

    def trimming(self, agent, key):
        return original(self, agent, key.strip())

    monkeypatch.setattr(GraphServer, "_existing", trimming)
    # (the blank-only key's class fails such a server too; this class alone:)
    with pytest.raises(Divergence, match="equal only once trimmed"):
        graph_inputs.trim_variants(GraphServer)


@pytest.mark.slow
def test_a_fuzz_run_reports_its_data_classes_and_its_trace_carries_the_data(tmp_path):
    import jsonschema

    from osf_check.fuzz import command as fz
    from osf_check.fuzz.payloads import step_data, tour_result
    from osf_check.report import result_schema
    got = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--mutant",
                                    "truncate-by-bytes", "--examples", "0", "--json"])
    assert got.exit_code == 12, got.output
    doc = json.loads(got.stdout)
    jsonschema.validate(doc, result_schema())
    run = doc["runs"][0]
    assert {"key equal to another once trimmed, blanks around it", "key ASCII, 129 characters",
            "key in another case, the agent's first key", "result: non-ASCII",
            "arguments: nested, non-ASCII, each intent its own"} <= set(run["data_classes"])
    # the tour's failure: the completed Graph's step carries the result it was handed,
    # the start call its key and arguments, the other steps nothing
    last = run["trace"]["steps"][-1]
    assert last["label"] == "graph_finish(r=0, o=completed)"
    assert last["data"] == {**FINISH, **step_data(tour_result(0, "completed"))}
    for s in run["trace"]["steps"][1:-1]:
        assert ("data" in s) == s["label"].startswith("run_graph_session"), s
        assert s.get("data", {}).get("key") in (None, *AGENT_KEYS)
    assert run["trace"]["seed"] == 0 and run["hypothesis"]["failed_at_seed"] is None
    s = fz.Settings(mutant="truncate-by-bytes", seed=0, steps=40, examples=0, profile="dev",
                    db=None, params={})
    shown = fz.text(doc["runs"], s)
    assert f"  data classes tried: {len(run['data_classes'])}" in shown
    # grouped by subject: the keys' classes on one group's lines, the word "key" once
    assert shown.count("    key (") == 1 and "key ASCII" not in shown, shown
