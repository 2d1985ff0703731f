"""One registry per extension point (``docs/extending.md``): an engine, a check kind or a
model registered in its one place is picked up by the command line, the API and the
checker, with no other module touched."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import osf_check
from osf_check.cli import main
from osf_check.explorer import engines
from osf_check.models.two_phase import SPEC as TWO_PHASE
from osf_check.properties import catalogue, kinds
from osf_check.properties.base import Check, Property


@pytest.fixture
def engine():
    """An engine of the test's own: the explicit search, counted."""
    calls: list[str] = []

    def search(m, props, s):
        calls.append(m.name)
        return engines.ENGINES["explicit"].search(m, props, s)
    engines.register(engines.Engine("counted", "the explicit search, counted", search))
    yield calls
    engines.unregister("counted")


@pytest.fixture
def kind():
    """A check kind no engine judges."""
    kinds.register(kinds.Kind("eventually-quiet", "a kind of the test's own", "liveness"))
    yield "eventually-quiet"
    kinds.unregister("eventually-quiet")


def _two_phase_with(check: Check, name: str = "tp-ext") -> None:
    """Two-phase commit again under ``name``, with one property holding ``check``."""
    spec = osf_check.ModelSpec(name, "two-phase, extended", TWO_PHASE.params, {},
                               lambda p, mu: TWO_PHASE.build_fn(p, mu))
    catalogue.register(spec, [Property("X1", "ext", name, "a property of the test",
                                       (check,), ())], source="test")


def test_a_registered_engine_is_a_choice_of_the_cli_and_the_api_and_runs(engine):
    helped = CliRunner().invoke(main, ["explore", "--help"]).output
    assert "auto|explicit|vector|counted" in helped
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--param", "rms=3",
                                  "--depth", "unbounded", "--engine", "counted", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # TLC: TwoPhase.tla with RM = {r1, r2, r3}: 288 distinct states, 1146 generated
    assert (doc["models"][0]["distinct_states"], doc["models"][0]["generated_states"]) == (288, 1146)
    assert engine == ["two-phase"]
    assert osf_check.Checker("two-phase").engine("counted").params(rms=2).explore().distinct
    assert engine == ["two-phase", "two-phase"]


def test_an_engine_is_refused_what_it_does_not_offer_naming_those_that_do(engine, tmp_path):
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--engine", "counted",
                                  "--checkpoint", str(tmp_path / "ck")])
    assert r.exit_code == 150
    assert "--checkpoint and --resume need the vector engine" in r.output
    assert engine == []


def test_an_unregistered_engine_is_no_choice():
    assert "counted" not in engines.choices()
    r = CliRunner().invoke(main, ["explore", "--engine", "counted"])
    assert r.exit_code == 150 and "'counted' is not one of" in r.output
    with pytest.raises(osf_check.BadValue, match="unknown engine 'counted'"):
        osf_check.Checker("two-phase").engine("counted")


def test_a_registered_kind_is_accepted_and_judged_by_nobody_is_inconclusive(kind):
    with pytest.raises(ValueError, match="unknown check kind nope"):
        Check("nope", lambda s, m: True)
    _two_phase_with(Check(kind, lambda s, m: []))
    r = CliRunner().invoke(main, ["explore", "--model", "tp-ext", "--param", "rms=2",
                                  "--depth", "unbounded", "--json"])
    assert r.exit_code == 152, r.output  # no verdict: nothing decided the kind
    m = json.loads(r.stdout)["models"][0]
    assert m["properties"][0]["status"] == "inconclusive"
    assert any("eventually-quiet checks are judged by no phase" in w for w in m["warnings"])


def test_an_engine_that_judges_the_kind_decides_it(kind):
    def search(m, props, s):
        return engines.ENGINES["explicit"].search(m, props, s)
    engines.register(engines.Engine("judging", "judges the test's kind", search,
                                    judges=frozenset({"inv", "trans", kind})))
    try:
        _two_phase_with(Check(kind, lambda s, m: []))
        r = osf_check.Checker("tp-ext").params(rms=2).depth(None).engine("judging").explore()
        assert r.status == {"X1": "holds"} and r.verdict == "ok"
    finally:
        engines.unregister("judging")


def test_a_kind_s_verdict_comes_from_its_registration(kind):
    assert kinds.verdict_of(kind) == "liveness" and not kinds.on_graph(kind)
    assert [kinds.verdict_of(k) for k in ("inv", "trans", "reach", "fair", "deadlock")] == \
        ["safety", "safety", "liveness", "liveness", "deadlock"]
    with pytest.raises(osf_check.BadValue, match="already registered"):
        kinds.register(kinds.Kind(kind, "again", "safety"))


def test_a_registered_model_is_listed_and_explored():
    _two_phase_with(Check("inv", lambda s, m: True), name="tp-listed")
    listed = CliRunner().invoke(main, ["list", "--json"])
    assert "tp-listed" in listed.output
    r = CliRunner().invoke(main, ["explore", "--model", "tp-listed", "--param", "rms=3",
                                  "--depth", "unbounded"])
    assert r.exit_code == 0 and "288" in r.output, r.output  # TLC, as above
