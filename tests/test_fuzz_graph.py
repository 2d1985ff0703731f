"""The Graph-run relay implementation, fuzzed against the model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from osf_check.fuzz.driver import hypothesis_run, tour
from fuzzcheck import assert_reproduces
from osf_check.fuzz.graph_harness import IMPL_MUTANTS
from osf_check.cli import main
from osf_check.fuzz import mutants
from osf_check.fuzz.oracles import bounded
from osf_check.relay.graph.payload import RESULT_LIMIT, whole
from osf_check.relay.graph.payload import cut_units as UNITS
from test_graph_impl import _sized



@pytest.mark.slow
def test_tour_covers_every_state_and_transition_and_finds_nothing():
    rep = tour("graph-relay", depth=6)
    assert rep.failure is None
    # regression pins: the explorer's graph to this depth (covered = observed, see
    # test_tour_coverage_drops_when_the_harness_skips_transitions); re-pinned when every
    # exchange learnt to lose its request and its reply (was 2,930 and 14,055)
    assert rep.states_covered == rep.states_total == 6_133
    assert rep.edges_covered == rep.edges_total == 32_508


def test_hypothesis_finds_nothing_on_the_correct_implementation():
    rep = hypothesis_run("graph-relay", examples=30, steps=30, profile="ci")
    assert rep.failure is None and rep.hypothesis_steps > 0


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [m for m in IMPL_MUTANTS if m != "queue-on-desktop"])
def test_tour_catches_each_implementation_mutant(mutant):
    rep = tour("graph-relay", depth=8, mutant=mutant)
    assert rep.failure is not None, mutant
    assert 1 <= len(rep.path) <= 8
    assert_reproduces(rep)


@pytest.mark.slow
def test_hypothesis_catches_the_lost_offline_queue():
    # the tour reaches every model state once, by one path; this bug needs the path where
    # the run is queued while the desktop is offline, which random walks find
    rep = tour("graph-relay", depth=6, mutant="queue-on-desktop")
    assert rep.failure is None
    rep = hypothesis_run("graph-relay", mutant="queue-on-desktop", examples=300, steps=40,
                         profile="ci")
    assert rep.failure is not None and "sync" in rep.failure
    assert len(rep.path) <= 12  # shrunk on the model's steps
    assert_reproduces(rep)


def test_fuzz_cli_writes_a_trace_that_renders_and_replays(tmp_path):
    res = CliRunner().invoke(main, ["fuzz", "--mutant", "leaky-not-found", "--out",
                                    str(tmp_path), "--json"])
    assert res.exit_code == 12, res.output
    doc = json.loads(res.stdout)["runs"][0]
    assert "not_found" in doc["failure"] and len(doc["trace"]["steps"]) == 3
    tr = tmp_path / "graph-relay-leaky-not-found-fuzz.trace.json"
    assert CliRunner().invoke(main, ["render", str(tr), "--format", "mermaid"]).exit_code == 0
    rep = CliRunner().invoke(main, ["replay", str(tr)])
    assert rep.exit_code == 12 and "at step 2" in rep.stdout, rep.output
    ok = CliRunner().invoke(main, ["replay", str(tr), "--mutant", "none"])
    assert ok.exit_code == 0 and "followed all 2 steps" in ok.stdout


def test_explore_counterexample_reproduces_on_the_implementation_mutant(tmp_path):
    CliRunner().invoke(main, ["explore", "--mutant", "complete-overwrites-cancel", "--out",
                              str(tmp_path)])
    tr = str(tmp_path / "graph-relay-complete-overwrites-cancel-A3-trans.trace.json")
    bad = CliRunner().invoke(main, ["replay", tr])
    assert bad.exit_code == 12 and "property A3 violated by the implementation" in bad.stdout
    good = CliRunner().invoke(main, ["replay", tr, "--mutant", "none"])
    assert good.exit_code == 0 and "differs from the trace in outcome" in good.stdout
    assert "does not reproduce the trace: at step" in good.stdout


def test_a_desktop_decision_only_the_mutants_model_takes_is_not_forced(tmp_path):
    """The correct desktop does not start a Graph it must refuse (no-consent-recheck's
    step 5): replay says so, where asking the harness to start it anyway would have
    blamed the correct implementation for A4."""
    CliRunner().invoke(main, ["explore", "--mutant", "no-consent-recheck", "--out",
                              str(tmp_path)])
    [tr] = tmp_path.glob("graph-relay-no-consent-recheck-A4*.trace.json")
    good = CliRunner().invoke(main, ["replay", str(tr), "--mutant", "none"])
    assert good.exit_code == 0 and "5. start_graph(r=0)" in good.stdout, good.output
    assert "the model does not enable this step here, nor does the implementation offer " \
        "it" in good.stdout and "violated" not in good.stdout, good.stdout
    bad = CliRunner().invoke(main, ["replay", str(tr)])
    assert bad.exit_code == 12 and "the desktop would take ['start_graph(r=0)']" in bad.stdout


def test_replaying_a_liveness_counterexample_says_what_it_does_not_judge(tmp_path):
    CliRunner().invoke(main, ["explore", "--mutant", "queue-on-desktop", "--out",
                              str(tmp_path)])
    [tr] = tmp_path.glob("graph-relay-queue-on-desktop-A10*.trace.json")
    r = CliRunner().invoke(main, ["replay", str(tr)])
    assert r.exit_code == 0 and "followed all" in r.stdout, r.output
    assert "A10 is a reach property, about what may follow the last step, which replay " \
        "does not judge" in r.stdout, r.stdout


def test_fuzz_bad_input():
    res = CliRunner().invoke(main, ["fuzz", "--mutant", "nope"])
    assert res.exit_code == 150 and "neither implementation has a mutant 'nope'" in res.stderr
    res = CliRunner().invoke(main, ["fuzz", "--model", "two-phase"])
    assert res.exit_code == 150 and "no implementation to fuzz" in res.stderr
    res = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--mutant", "outbox-off"])
    assert res.exit_code == 150 and "wire-relay has no mutant 'outbox-off'" in res.stderr


# A8 at the edge ------------------------------------------------------------------------


def _mutant_payload(name):
    return mutants.lookup("graph-relay", name).classes["desktop"].payload


def test_the_mutants_of_a8_break_it():
    jp = _sized(RESULT_LIMIT, "日")
    full = whole("e", "completed", jp, 1, 0.5)
    assert "not posted whole" in bounded(_mutant_payload("truncate-by-bytes")(
        "e", "completed", jp, 1, 0.5), full)
    big = "x" * (RESULT_LIMIT + 10)
    assert "half a result" in bounded(_mutant_payload("half-result")(
        "e", "completed", big, 1, 0.5), whole("e", "completed", big, 1, 0.5))
    # 60,000 emoji: 60,000 code points (fits when counted so), 120,000 UTF-16 units
    emoji = "😀" * 60_000
    assert "over 100,000" in bounded(_mutant_payload("measure-code-points")(
        "e", "completed", emoji, 1, 0.5), whole("e", "completed", emoji, 1, 0.5))





@pytest.mark.slow
def test_replay_emits_a_standalone_regression_test(tmp_path):
    CliRunner().invoke(main, ["explore", "--mutant", "leaky-not-found", "--out", str(tmp_path)])
    tr = tmp_path / "graph-relay-leaky-not-found-A7-trans.trace.json"
    out = tmp_path / "test_regression_leak.py"
    res = CliRunner().invoke(main, ["replay", str(tr), "--emit-pytest", str(out)])
    assert res.exit_code == 12 and out.exists()
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(out)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout


def test_an_emitted_regression_test_pins_the_reference_unless_told_otherwise(tmp_path):
    """A test emitted from an explore counterexample (a mutant's trace) pinned the
    mutant's behaviour: it passed while the bug was there.  It pins the reference now,
    fails against the mutant, and says in its docstring which implementation it pins."""
    import runpy

    from osf_check.fuzz.driver import replay
    CliRunner().invoke(main, ["explore", "--mutant", "leaky-not-found", "--out", str(tmp_path)])
    tr = tmp_path / "graph-relay-leaky-not-found-A7-trans.trace.json"
    out = tmp_path / "test_pinned.py"
    assert CliRunner().invoke(main, ["replay", str(tr), "--emit-pytest", str(out)]).exit_code == 12
    mod = runpy.run_path(str(out))
    assert mod["MUTANT"] is None and "the reference implementation (no mutant)" in mod["__doc__"]
    mod[next(k for k in mod if k.startswith("test_replay_"))]()  # passes on the reference
    with_bug = [(s.index, s.outcome) for s in replay(mod["TRACE"], mutant="leaky-not-found")]
    assert with_bug != mod["EXPECTED"]  # so it fails while the bug is there
    asked = tmp_path / "test_bug.py"
    CliRunner().invoke(main, ["replay", str(tr), "--mutant", "leaky-not-found",
                              "--emit-pytest", str(asked)])
    bug = runpy.run_path(str(asked))
    assert bug["MUTANT"] == "leaky-not-found" and bug["EXPECTED"] == with_bug
    assert "passes while the bug is there" in bug["__doc__"]


# coverage is what the implementation was seen to do ------------------------------------------
@pytest.mark.slow
def test_tour_coverage_drops_when_the_harness_skips_transitions():
    from osf_check.fuzz.driver import make_harness

    class Forgetful:
        """Every 5th restore does nothing: the transitions tried then start elsewhere."""

        def __init__(self, h):
            self.h, self.n = h, 0

        def __getattr__(self, name):
            return getattr(self.h, name)

        def restore(self, snap):
            self.n += 1
            if self.n % 5:
                self.h.restore(snap)

    def forgetful(*args):
        return Forgetful(make_harness(*args))

    full = tour("graph-relay", depth=4)
    assert full.edges_covered == full.edges_total and full.unreached == 0
    cut = tour("graph-relay", depth=4, harness=forgetful)
    assert cut.failure is None, cut.failure
    assert 0 < cut.edges_covered < cut.edges_total
    assert cut.states_covered < cut.states_total and cut.unreached > 0




@pytest.mark.parametrize("value, profile", [("true", "ci"), ("1", "ci"), ("yes", "ci"),
                                            ("false", "dev"), ("0", "dev"), ("", "dev")])
def test_the_ci_variable_picks_the_profile_as_ci_services_set_it(monkeypatch, value, profile):
    """CI=false picked the ci profile (any value did)."""
    from osf_check.fuzz.profiles import current
    monkeypatch.setenv("CI", value)
    assert current() == profile


@pytest.mark.parametrize("over", [0, 1])
def test_an_edge_result_measures_exactly_at_or_one_past_the_limit(over):
    from osf_check.fuzz.oracles import Edge, stringify, utf16_length
    for status in ("completed", "failed", "cancelled"):
        text = Edge(over).text(status, 123, 0.01)
        full = whole("e3e70682-c209-4cac-a29f-6fbed82c07cd", status, text, 123, 0.01)
        assert utf16_length(stringify(full)) == RESULT_LIMIT + over
        assert {"😀", "日", "x"} <= set(text)


@pytest.mark.parametrize("bug, depth", [("<", 6), pytest.param("<= 1 +", 8, marks=pytest.mark.slow)])
def test_the_tour_finds_a_limit_off_by_one(monkeypatch, bug, depth):
    """`measure(full) < RESULT_LIMIT` (a completion of exactly 100,000 posted truncated)
    and one unit of slack the other way passed every fuzz run: the results only came
    near the limit (36,000 Japanese characters, 49,990 emoji; Hypothesis's rarely reach
    a Graph's end).  A failed Graph's result now fills its completion to the limit or
    one unit past it."""
    from osf_check.relay.graph.desktop import DesktopRelay
    from osf_check.relay.graph.payload import completion_payload, stringify_length

    def measure(full):
        n = stringify_length(full)
        return n + 1 if bug == "<" else n - 1  # '<' posts 100,000 cut; '+1' posts 100,001

    class OffByOne(DesktopRelay):
        @staticmethod
        def payload(*args, **kw):
            return completion_payload(*args, measure=measure, **kw)

    monkeypatch.setitem(mutants.MUTANTS, ("graph-relay", "off-by-one"), mutants.ImplMutant(
        "off-by-one", "graph-relay", "test", {"desktop": OffByOne}))
    rep = tour("graph-relay", mutant="off-by-one", depth=depth)  # (8: a cancelled Graph's)
    assert rep.failure is not None and "A8" in rep.failure, rep.failure
    assert ("length 100,000 (at most 100,000) was not posted whole" if bug == "<" else
            "length 100,001 (over 100,000) was posted whole") in rep.failure, rep.failure



@pytest.mark.parametrize("cut, why", [
    (lambda text, units: text, "was not posted whole"),  # no cut: the completion overflows
    (lambda text, units: text[:units], "was not posted whole"),  # by code points: 1,001 emoji
    (lambda text, units: UNITS(text, units - 1), "a failed Graph's error of 2,002 characters "
     "was posted with 1,998"),  # one unit short (the pair it splits dropped)
])
@pytest.mark.slow
def test_the_tour_hands_a_failed_graph_an_error_and_judges_its_cut(monkeypatch, cut, why):
    """000: "Gli errori vengono tagliati a 2,000 caratteri", counted as the 100,000 are
    (UTF-16 code units: the relay is JavaScript).  No Graph the fuzzer finished had an
    error, so a desktop that cut errors any way at all passed every run, and the reference
    cut by code points.  Run 0's failed Graph now reports 1,001 emoji (2,002 units) in a
    completion filled to the limit."""
    import osf_check.relay.graph.payload as payload
    monkeypatch.setattr(payload, "cut_units", cut)
    rep = tour("graph-relay", depth=6)
    assert rep.failure is not None and rep.failure.startswith("property A8 violated"), \
        rep.failure
    assert why in rep.failure, rep.failure


def test_an_error_cut_inside_a_pair_may_keep_or_drop_the_half():
    """JavaScript's slice keeps the first half of a pair it cuts; the reference drops it
    (a lone half is not valid Unicode to store): the oracle takes either, and nothing
    else."""
    from osf_check.fuzz.oracles import bounded, error_cuts
    from osf_check.relay.graph.payload import completion_payload
    error = "x" + "😀" * 1_000  # 2,001 units: the 2,000th is the first half of a pair
    full = whole("e", "failed", "r", 1, 0.5, error)
    js = error.encode("utf-16-le", "surrogatepass")[:4_000].decode("utf-16-le", "surrogatepass")
    assert error_cuts(error) == [js, "x" + "😀" * 999]
    for kept in error_cuts(error):
        assert bounded(dict(full, error=kept), full) is None
    assert completion_payload("e", "failed", "r", 1, 0.5, error)["error"] == "x" + "😀" * 999
    assert "posted with 1,997" in bounded(dict(full, error="x" + "😀" * 998), full)
    assert "error of 2,001 characters" in bounded(dict(full, error=error), full)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["server", "desktop"])
def test_the_graph_runs_with_the_arguments_its_agent_passed(monkeypatch, where):
    """run_graph_session's arguments are the Graph's input.  The harness passed none, and
    the reference desktop dropped what the sync reply carried: a Graph ran without its
    arguments and nothing saw it.  Each intent now passes its own, and the command the
    desktop starts must carry them (a bug planted on either side)."""
    from osf_check.relay.graph.desktop import DesktopRelay
    from osf_check.relay.graph.server import GraphServer
    if where == "server":
        sync = GraphServer.sync
        monkeypatch.setattr(GraphServer, "sync", lambda self, p, s: [
            dict(c, arguments={}) for c in sync(self, p, s)])
    else:
        reply = DesktopRelay.sync_reply
        monkeypatch.setattr(DesktopRelay, "sync_reply", lambda self, cmds, **kw: reply(
            self, [dict(c, arguments={}) for c in cmds], **kw))
    rep = tour("graph-relay", depth=6)
    assert rep.failure is not None and rep.failure.startswith(
        "start_graph(r=0): the desktop would run the Graph with the arguments {}, the agent "
        "passed {'intent': 0"), rep.failure


def _json_as_python_writes_it(value, **dumps):
    dumps.setdefault("separators", (",", ":"))  # compact, as stringify is
    return json.dumps(value, ensure_ascii=False, **dumps)  # a lone half stays a character


@pytest.mark.slow
def test_the_tour_measures_a_lone_half_as_json_stringify_writes_it(monkeypatch):
    """Run 1's completed Graph returns emoji with lone halves: a measure that counts a
    half once (84,000 units) posts whole what JavaScript measures at 104,000."""
    import osf_check.relay.graph.payload as payload
    monkeypatch.setattr(payload, "stringify", _json_as_python_writes_it)
    rep = tour("graph-relay", depth=8)
    assert rep.failure is not None and rep.failure.startswith("property A8 violated"), \
        rep.failure
    assert "was posted whole" in rep.failure, rep.failure


@pytest.mark.slow
def test_an_implementation_that_raises_is_a_failure_where_it_raised(monkeypatch):
    """An outbox that writes a lone half as Python does hands SQLite text its UTF-8 codec
    refuses: the implementation raised, and the run says where (it was an internal error
    of osf-check, with no path)."""
    import osf_check.relay.graph.outbox as outbox
    monkeypatch.setattr(outbox, "stringify", _json_as_python_writes_it)
    rep = tour("graph-relay", depth=6)
    assert rep.failure is not None and rep.failure.startswith(
        "the implementation raised UnicodeEncodeError on graph_finish("), rep.failure
    assert re.search(r"\(relay/graph/outbox\.py:\d+ in put\)$", rep.failure), rep.failure
    assert rep.path, "no path to the failure"


def test_the_checkers_own_exception_stays_an_internal_error(monkeypatch):
    from osf_check.fuzz.graph_harness import GraphHarness

    def broken(self, inst):
        raise RuntimeError("a bug in the harness")
    monkeypatch.setattr(GraphHarness, "apply", broken)
    with pytest.raises(RuntimeError, match="a bug in the harness"):
        tour("graph-relay", depth=2)
