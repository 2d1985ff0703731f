"""Issue 12, blind spot 6: longer stories.  A bug that needs two restarts sits beyond
the default model (one restart) and the tour's depth; Hypothesis walks with the
parameters of longer stories (two restarts, three generations) reach it, and the
fuzzer reports how many states of each long story its walks reached."""

from __future__ import annotations

import pytest

import json

from click.testing import CliRunner

from osf_check.fuzz import mutants, stories
from osf_check.fuzz.driver import hypothesis_run, tour
from osf_check.cli import main
from osf_check.relay.wire.desktop_router import DesktopRouter

LONG = {"restarts": 2, "gens": 3}


class LosesClaimsOnTheSecondRestart(DesktopRouter):
    """The claims file is opened afresh (and empty) once the process has restarted twice."""

    lives = 0

    def restarted(self):
        new = super().restarted()
        new.lives = self.lives + 1
        if new.lives >= 2:
            new.claims.db.execute("DELETE FROM claims")
        return new


def _register(monkeypatch, name):
    monkeypatch.setitem(mutants.MUTANTS, ("wire-relay", name), mutants.ImplMutant(
        name, "wire-relay", "test", {"desktop": LosesClaimsOnTheSecondRestart}))


@pytest.mark.slow
def test_a_bug_of_the_second_restart_needs_a_longer_story(monkeypatch):
    name = "loses-claims-on-second-restart"
    _register(monkeypatch, name)
    # the default model allows one restart: no tour of it, at any depth, can show the bug
    assert tour("wire-relay", mutant=name, depth=6).failure is None
    rep = hypothesis_run("wire-relay", mutant=name, examples=300, steps=60, params=LONG,
                         profile="ci", seed=0)
    assert rep.failure is not None, rep.stories


@pytest.mark.slow
def test_the_fuzzer_reports_the_long_stories_it_reached():
    res = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--tour-depth", "3",
                                    "--examples", "40", "--param", "restarts=2",
                                    "--param", "gens=3", "--json"])
    assert res.exit_code == 0, res.output
    [run] = json.loads(res.stdout)["runs"]
    assert run["params"] == LONG
    stories = run["hypothesis"]["long_stories"]
    assert set(stories) == {"two restarts", "two reconnects", "every operation answered"}
    assert stories["two reconnects"] > 0
    assert run["hypothesis"]["long_stories_out_of_reach"] == {}
    # the default model has one restart and two generations: those stories cannot
    # happen, and the line says so rather than a bare 0 (which read as a blind spot)
    res = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--tour-depth", "3",
                                    "--examples", "40", "--json"])
    hy = json.loads(res.stdout)["runs"][0]["hypothesis"]
    assert hy["long_stories"]["two restarts"] == 0
    assert hy["long_stories_out_of_reach"] == {"two restarts": "restarts=2",
                                               "two reconnects": "gens=3"}
    res = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--tour-depth", "3",
                                    "--examples", "40"])
    assert "    out of reach at these parameters: two restarts (--param restarts=2), two " \
        "reconnects (--param gens=3)" in res.stdout, res.stdout
    assert "two restarts 0" not in res.stdout


@pytest.mark.parametrize("model", sorted(stories.STORIES))
def test_a_story_is_out_of_reach_exactly_where_the_model_cannot_hold_it(model):
    """Each story is asked of the state with every slot at its largest value and every
    run ended (the features count upwards): at the smallest parameters it holds there
    exactly when it is not called out of reach, and the parameter named brings it back."""
    import importlib
    from osf_check.fuzz.driver import model_for
    spec = importlib.import_module(f"osf_check.models.{model.replace('-', '_')}").SPEC
    smallest = {p.name: p.lo for p in spec.params}

    def holds_at_top(m, feature):
        top = [d.hi for d in m.slot_domains]  # (graph-relay's top status, cancelled, ended)
        return feature(stories._View(m, tuple(top)))
    low = model_for(model, None, smallest)
    far = stories.out_of_reach(low)
    assert far, "the smallest parameters rule some story out"
    for name, feature, _ in stories.STORIES[model]:
        assert holds_at_top(low, feature) == (name not in far), name
        if name in far:
            k, v = far[name].split("=")
            back = model_for(model, None, {**smallest, k: int(v)})
            assert name not in stories.out_of_reach(back)
            assert holds_at_top(back, feature), name


def test_param_needs_a_model_and_valid_values():
    r = CliRunner().invoke(main, ["fuzz", "--param", "restarts=2"])
    assert r.exit_code == 150 and "--param needs --model" in r.output
    r = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--param", "restarts=99"])
    assert r.exit_code == 150 and "Traceback" not in r.output
