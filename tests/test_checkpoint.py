"""A run killed at any level and resumed from its checkpoint gives exactly the
uninterrupted run's result: counts, histogram, every verdict (inv, trans, reach, fair),
warnings and shortest counterexamples; a checkpoint of another run is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.explorer.check import check
from osf_check.cli import main

CHILD = """
import os, signal, sys
from osf_check.explorer.check import check
cp, level, mutant = sys.argv[1], int(sys.argv[2]), sys.argv[3] or None

def progress(done, distinct, generated, seconds):
    if done == level + 1:  # the checkpoint of `level` is on disk: die without a word
        os.kill(os.getpid(), signal.SIGKILL)

check("graph-relay", params={"intents": 1}, mutant=mutant, depth=None, engine="vector",
      stop_on_violation=False, checkpoint=cp, checkpoint_every=0, progress=progress)
"""


def _summary(r):
    ex = r.exploration
    return {"distinct": ex.distinct, "generated": ex.generated, "histogram": ex.histogram(),
            "fired": list(ex.fired), "complete": ex.complete, "status": r.status,
            "verdict": r.verdict, "warnings": r.warnings,
            "violations": sorted((v.prop, v.kind, list(v.path), list(v.actions), v.loop_start)
                                 for v in r.violations)}


@pytest.mark.slow
@pytest.mark.parametrize("mutant, level", [(None, 2), (None, 6), (None, 11),
                                           ("outbox-off", 3), ("outbox-off", 8)])
def test_a_killed_run_resumes_to_exactly_the_uninterrupted_result(tmp_path, mutant, level):
    cp = tmp_path / "cp"
    child = subprocess.run([sys.executable, "-c", CHILD, str(cp), str(level), mutant or ""],
                           cwd=Path(__file__).resolve().parents[1], capture_output=True)
    assert child.returncode == -9, child.stderr.decode()[-2000:]  # SIGKILLed
    kw = dict(params={"intents": 1}, mutant=mutant, depth=None, engine="vector",
              stop_on_violation=False)
    resumed = check("graph-relay", resume=str(cp), **kw)
    full = check("graph-relay", **kw)
    assert _summary(resumed) == _summary(full)
    assert "holds" in full.status.values() or mutant  # the reach and fair checks ran
    assert {"A2", "A10"} <= set(full.status)


def test_wire_relay_resumes_to_the_same_verdicts(tmp_path):
    cp = tmp_path / "cp"
    kw = dict(mutant="disconnect-leaves-pending", depth=7, engine="vector",
              stop_on_violation=False)
    from osf_check.explorer.check import prepare
    from osf_check.explorer.vector.search import vector_bfs
    m, props, _ = prepare("wire-relay", mutant=kw["mutant"])
    vector_bfs(m, props, depth=7, stop_on_violation=False, checkpoint=cp, checkpoint_every=0,
               stop_after_levels=4, keep_graph=any(c.kind in ("reach", "fair")
                                                  for p in props for c in p.checks))
    assert _summary(check("wire-relay", resume=str(cp), **kw)) == \
        _summary(check("wire-relay", **kw))


def test_a_checkpoint_of_other_parameters_is_refused(tmp_path):
    cp = tmp_path / "cp"
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--param", "rms=4",
                                  "--depth", "3", "--checkpoint", str(cp),
                                  "--checkpoint-every", "0"])
    assert r.exit_code == 0 and (cp / "state.npz").exists()
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--param", "rms=3",
                                  "--depth", "unbounded", "--resume", str(cp)])
    assert r.exit_code == 150, r.output
    assert "it was written with parameters rms=4, and this run has parameters rms=3" \
        in r.stderr
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--param", "rms=4",
                                  "--mutant", "commit-without-all-prepared",
                                  "--depth", "unbounded", "--resume", str(cp)])
    assert r.exit_code == 150, r.output  # (it said "mutant is None there")
    assert "it was written with no mutant, and this run has mutant " \
        "'commit-without-all-prepared'" in r.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_checkpoint_past_the_depth_asked_is_refused(tmp_path, workers):
    """Resumed with a smaller --depth than it had reached, a checkpoint of depth 6 was
    reported as "depth bound 4" with depth 6's counts and "holds up to depth 6"."""
    cp = tmp_path / "cp"
    base = ["explore", "--model", "two-phase", "--param", "rms=4", "--engine", "vector"]
    r = CliRunner().invoke(main, base + ["--depth", "6", "--checkpoint", str(cp),
                                         "--checkpoint-every", "0"])
    assert r.exit_code == 0 and (cp / "state.npz").exists(), r.output
    r = CliRunner().invoke(main, base + ["--depth", "4", "--resume", str(cp),
                                         "--workers", workers])
    assert r.exit_code == 150, r.output
    assert "has explored to depth 6 already, past --depth 4" in r.stderr
    r = CliRunner().invoke(main, base + ["--depth", "6", "--resume", str(cp),
                                         "--workers", workers])
    assert r.exit_code == 0 and "depth bound 6" in r.stdout, r.output


@pytest.mark.parametrize("was, now, words", [
    ("b.init(x=0)", "b.init(x=2)", "the model is not the one it was written for"),
    ("b.quiescent(lambda s: s.x == 9)", "b.quiescent(lambda s: s.x == 5)",
     "the model is not the one it was written for"),
    ("lambda s, m: s.x != 7", "lambda s, m: s.x != 1",
     "the properties' expressions are not the ones"),
])
@pytest.mark.slow
def test_a_checkpoint_of_a_model_file_edited_since_is_refused(tmp_path, was, now, words):
    """The identity held names, parameters and the actions' guards and updates only: a
    model file whose initial state moved resumed from the old one's states (it reported
    x = 0 and x = 1, which it cannot reach, and a counterexample from x = 0), and a
    property edited under its id kept the old one's verdicts on the levels judged."""
    from test_user_models import counter
    p = counter(tmp_path, NAME="edited", HI=9, ACTION="inc", GUARD="s.x < 9",
                UPDATE="s.x + 1", INVARIANT="s.x != 7")
    cp = tmp_path / "cp"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "osf_check.cli", "explore", "--model-file",
                               str(p), "--continue", *args], capture_output=True, text=True)
    first = cli("--depth", "3", "--checkpoint", str(cp), "--checkpoint-every", "0")
    assert first.returncode == 0 and (cp / "state.npz").exists(), first.stderr
    assert cli("--depth", "unbounded", "--resume", str(cp)).returncode == 12  # as it was
    text = p.read_text()
    assert was in text
    p.write_text(text.replace(was, now))
    r = cli("--depth", "unbounded", "--resume", str(cp))
    assert r.returncode == 150, r.stdout + r.stderr
    assert words in r.stderr and "start the run again" in r.stderr, r.stderr


def test_a_new_run_does_not_write_over_a_checkpoint(tmp_path):
    """A run started afresh with the --checkpoint of an interrupted one wrote over it
    (its levels lost at the first save): refused before any work, unless it resumes
    from that very directory."""
    cp = tmp_path / "cp"
    args = ["explore", "--model", "two-phase", "--param", "rms=4", "--checkpoint", str(cp),
            "--checkpoint-every", "0"]
    assert CliRunner().invoke(main, args + ["--depth", "3"]).exit_code == 0
    other = tmp_path / "other"
    assert CliRunner().invoke(main, args[:-4] + ["--depth", "2", "--checkpoint", str(other),
                                                  "--checkpoint-every", "0"]).exit_code == 0
    before = (cp / "state.npz").read_bytes()
    for again in (["--depth", "5"], ["--mutant", "commit-without-all-prepared"],
                  ["--resume", str(other)]):
        r = CliRunner().invoke(main, args + again)
        assert r.exit_code == 150, r.output
        assert r.stderr.strip().splitlines()[-1] == (
            f"osf-check: error: --checkpoint {cp} holds a checkpoint already: continue it "
            f"with --resume {cp}, or choose an empty directory")
    assert (cp / "state.npz").read_bytes() == before
    r = CliRunner().invoke(main, args + ["--depth", "unbounded", "--resume", str(cp)])
    assert r.exit_code == 0, r.output


def test_a_corrupt_checkpoint_is_bad_input(tmp_path):
    cp = tmp_path / "cp"
    cp.mkdir()
    (cp / "state.npz").write_bytes(b"not a zip")
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--resume", str(cp)])
    assert r.exit_code == 150 and "not a checkpoint" in r.stderr, r.output


def _resume_after(tmp_path, spoil):
    """A real checkpoint of TwoPhase rms=3, ``spoil``ed, then resumed from."""
    import numpy as np
    cp = tmp_path / "cp"
    args = ["explore", "--model", "two-phase", "--param", "rms=3"]
    r = CliRunner().invoke(main, args + ["--depth", "4", "--checkpoint", str(cp),
                                         "--checkpoint-every", "0"])
    assert r.exit_code == 0 and (cp / "state.npz").exists(), r.output
    with np.load(cp / "state.npz") as z:
        st = {k: z[k] for k in z.files}
    spoil(cp / "state.npz", st)
    return CliRunner().invoke(main, args + ["--depth", "unbounded", "--resume", str(cp)])


def test_a_checkpoint_cut_short_is_bad_input(tmp_path):
    def cut(path, st):  # a copy that stopped half-way (it was an internal error)
        path.write_bytes(path.read_bytes()[:3000])
    r = _resume_after(tmp_path, cut)
    assert r.exit_code == 150 and "cut short" in r.stderr, r.output


@pytest.mark.parametrize("change, words", [
    (lambda st: st.update(parent=st["parent"][:-1]), "rows and parent"),
    (lambda st: st.update(keys=st["keys"][:3]), "keys has 3 rows"),
    (lambda st: st.update(frontier=st["frontier"] + len(st["keys"])), "the frontier"),
    (lambda st: st.update(frontier=st["frontier"] - 1), "is not the last level"),
    (lambda st: st.update(level_start=st["level_start"][::-1]), "the levels' starts"),
    (lambda st: st.pop("via"), "no via"),
])
def test_a_checkpoint_whose_arrays_disagree_is_bad_input(tmp_path, change, words):
    """Arrays changed since the save failed deep inside the search, as a bug of
    osf-check's (a broadcast error); they are refused before the search."""
    import numpy as np

    def spoil(path, st):
        change(st)
        np.savez(path, **st)
    r = _resume_after(tmp_path, spoil)
    assert r.exit_code == 150 and "the checkpoint is damaged" in r.stderr \
        and words in r.stderr, r.output


def test_the_checkpoint_records_what_it_belongs_to(tmp_path):
    import numpy as np
    cp = tmp_path / "cp"
    CliRunner().invoke(main, ["explore", "--model", "two-phase", "--param", "rms=3",
                              "--depth", "2", "--checkpoint", str(cp), "--checkpoint-every", "0"])
    with np.load(cp / "state.npz") as z:
        ident = json.loads(str(z["meta"]))["identity"]
    assert ident["model"] == "two-phase" and ident["params"] == {"rms": 3}
    assert ident["engine"] == "vector" and ident["tool"].startswith("osf-check ")
    assert set(ident) >= {"mutant", "properties", "structure", "checks"}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_resumed_run_already_past_max_states_stops_at_once(tmp_path, workers):
    """Resumed with a --max-states its checkpoint had passed, a run expanded one more
    level (764 states to depth 6 became 1,034) before it stopped."""
    cp = tmp_path / "cp"
    base = ["explore", "--model", "two-phase", "--param", "rms=4", "--engine", "vector",
            "--json"]
    r = CliRunner().invoke(main, base + ["--depth", "6", "--checkpoint", str(cp),
                                         "--checkpoint-every", "0"])
    assert r.exit_code == 0 and json.loads(r.stdout)["states"] == 764, r.output
    r = CliRunner().invoke(main, base + ["--depth", "unbounded", "--max-states", "500",
                                         "--resume", str(cp), "--workers", workers])
    assert r.exit_code == 152, r.output
    out = json.loads(r.stdout)["models"][0]
    assert (out["distinct_states"], out["stopped"]) == (764, "max-states"), out


@pytest.mark.parametrize("workers", ["1", "2"])
def test_max_states_reached_at_the_depth_bound_cut_nothing(workers):
    """A run that stores its --max-states-th state on the level of its --depth has
    explored everything to that depth: it holds up to the bound (it said 'no verdict')."""
    base = ["explore", "--model", "two-phase", "--param", "rms=4", "--engine", "vector",
            "--json", "--depth", "6", "--workers", workers]
    r = CliRunner().invoke(main, base + ["--max-states", "764"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)["models"][0]
    assert (out["distinct_states"], out["stopped"]) == (764, None), out
    r = CliRunner().invoke(main, base[:-4] + ["--depth", "7", "--workers", workers,
                                              "--max-states", "764"])
    assert r.exit_code == 152, r.output
