"""The second language: a JavaScript Graph-run relay (examples/node-graph-relay) fuzzed
through its Node adapter, correct and with a planted bug from bugs/."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from osf_check.driver.external import External
from osf_check.fuzz.driver import hypothesis_run, model_for, path_trace, tour
from osf_check.fuzz.late import RANK
from osf_check.traces import sequence

EXAMPLE = Path(__file__).parent.parent / "examples" / "node-graph-relay"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None and os.environ.get("CI") != "true",
                                reason="no node on this machine (CI installs it)")


def adapter(where: Path = EXAMPLE) -> list[str]:
    assert NODE is not None, "node is missing: .ci/run installs it"
    return [NODE, str(where / "adapter.mjs")]


def apply_patch(patch: Path, where: Path) -> None:
    """A one-hunk patch of the example's bugs/, applied by its lines (no patch tool)."""
    lines = patch.read_text().splitlines()
    target = where / lines[0].split()[1].removeprefix("a/")
    old = "\n".join(x[1:] for x in lines if x[:1] == "-" and not x.startswith("---"))
    new = "\n".join(x[1:] for x in lines if x[:1] == "+" and not x.startswith("+++"))
    text = target.read_text()
    assert text.count(old) == 1, f"{patch.name} does not apply to {target.name}"
    target.write_text(text.replace(old, new))


@pytest.mark.slow
def test_the_javascript_relay_follows_the_model():
    with External(adapter()) as ext:
        rep = tour("graph-relay", depth=6, harness=ext)
        assert ext.implementation == "node-graph-relay (JavaScript)"
        assert rep.failure is None, rep.failure
        # the states and transitions to depth 6 covered through the adapter (regression
        # pins, as tests/test_fuzz_graph.py's): its loop starts a fetched command at once,
        # so a state where one waits is covered only as a step it took on the way (168
        # transitions), and no other step is tried from there
        assert (rep.states_covered, rep.states_total) == (5_575, 6_133)
        assert (rep.edges_covered, rep.edges_total) == (30_412, 32_508)
        assert rep.edges_taken == 168 and rep.unreached == 0
        # the relay's desktop ignores a lost sync reply and a control poll's late answer
        assert {"a sync reply after tick",
                "a control poll's answer after the Graph ended"} <= rep.late_answers
        walks = hypothesis_run("graph-relay", examples=40, steps=30, profile="ci", harness=ext)
    assert walks.failure is None and walks.hypothesis_steps > 0


@pytest.mark.slow
def test_a_bug_in_the_javascript_relay_is_caught_with_its_picture(tmp_path):
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    apply_patch(buggy / "bugs" / "measure-bytes.patch", buggy)
    assert "Buffer.byteLength" in (buggy / "relay.mjs").read_text()
    with External(adapter(buggy)) as ext:
        rep = tour("graph-relay", depth=8, harness=ext)
    # JSON.stringify(...).length counts UTF-16 code units; the bug counts UTF-8 bytes, so a
    # Japanese result that fits is posted truncated: A8, judged by the checker on the payload
    assert rep.failure == ("property A8 violated by the implementation: a completion of "
                           "JSON.stringify length 36,128 (at most 100,000) was not posted whole")
    m = model_for("graph-relay", None)
    labels = [m.instances[a].label for a in rep.path]
    assert labels == ["run_graph_session(i=0)", "tick", "sync", "start_graph(r=0)",
                      "graph_finish(r=0, o=completed)"]
    tr = path_trace(m, rep.path, message=rep.failure, mutant=None, seed=0)
    assert tr["property"]["name"] == "bounded-result"
    dot = sequence.dot_sequence(tr).to_string()
    assert 'failing-step' in dot and "graph_finish(r=0, o=completed)" in dot
    # replay --impl: the buggy relay fails the trace at its last step, the correct one follows
    from click.testing import CliRunner
    from osf_check.cli import main
    from osf_check.traces.format import dumps
    path = tmp_path / "a8.trace.json"
    path.write_text(dumps(tr))
    bad = CliRunner().invoke(main, ["replay", str(path), "--impl", " ".join(adapter(buggy))])
    assert bad.exit_code == 12 and "breaks a property at step 5" in bad.output
    good = CliRunner().invoke(main, ["replay", str(path), "--impl", " ".join(adapter())])
    assert good.exit_code == 0 and "followed all 5 steps" in good.output


@pytest.mark.slow
def test_a_relay_that_ends_its_round_while_a_graph_runs_is_caught_by_the_idle_events(tmp_path):
    """The loop asks whether its round is over after every step; the model takes round_end
    only when it is.  Through an adapter with the idle capability the question is asked
    where the model does not take it too, and the relay must change nothing; an adapter
    without it is judged on the model's steps alone, and this bug passed (it still does,
    and fuzz says which events it did not try)."""
    from click.testing import CliRunner
    from osf_check.cli import main
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    apply_patch(buggy / "bugs" / "round-end-while-running.patch", buggy)
    args = ["fuzz", "--model", "graph-relay", "--tour-depth", "5", "--examples", "0",
            "--json", "--impl"]
    res = CliRunner().invoke(main, [*args, " ".join(adapter(buggy))])
    assert res.exit_code == 12, res.output
    [run] = json.loads(res.stdout)["runs"]
    assert "the idle event round_end (where the model does not take round_end) reached the " \
        "implementation and it changed phase" in run["failure"], run["failure"]
    assert run["trace"]["steps"][-1]["label"] == "start_graph(r=0)"
    # the same relay behind an adapter that does not offer the idle events passes
    script = buggy / "adapter.mjs"
    text = script.read_text()
    assert '"reopen", "idle", "late", ' in text
    script.write_text(text.replace('"reopen", "idle", "late", ', '"reopen", "late", '))
    res = CliRunner().invoke(main, [*args, " ".join(adapter(buggy))])
    assert res.exit_code == 0, res.output
    [run] = json.loads(res.stdout)["runs"]
    assert run["implementation"]["idle_events_not_tried"] == ["tick", "round_end"]
    text = CliRunner().invoke(main, [*args[:-2], "--impl", " ".join(adapter(buggy))])
    assert "idle events not tried (the adapter lacks the idle capability): tick, round_end" \
        in text.stdout


def test_a_relay_whose_sharing_change_starts_no_round_is_caught(tmp_path):
    """000: a round starts right after a sharing change.  The adapter is told which tick
    is the owner's change (data cause "sharing", the step after toggle_share) and drives
    the relay's own way in for it; a relay whose change starts nothing passed when every
    tick was the timer's."""
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    apply_patch(buggy / "bugs" / "sharing-change-starts-nothing.patch", buggy)
    with External(adapter(buggy)) as ext:
        rep = tour("graph-relay", depth=4, harness=ext)
    assert rep.failure == "the implementation diverged from the model on tick: phase: the model sync, the implementation idle"
    m = model_for("graph-relay", None)
    assert [m.instances[a].name for a in rep.path][-2:] == ["toggle_share", "tick"]


@pytest.mark.slow
def test_a_relay_that_cuts_errors_by_code_points_is_caught(tmp_path):
    """000 cuts errors to 2,000 "caratteri", as it counts the 100,000: UTF-16 code units
    (the relay is JavaScript: ``slice``).  The fuzzer handed no Graph an error before, so
    a relay that cut errors any way at all passed.  A failed Graph's error of 1,001 emoji
    (2,002 units) in a completion filled to the limit shows the difference."""
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    apply_patch(buggy / "bugs" / "error-cut-by-code-points.patch", buggy)
    with External(adapter(buggy)) as ext:
        rep = tour("graph-relay", depth=8, harness=ext)
    assert rep.failure is not None and rep.failure.startswith("property A8 violated"), \
        rep.failure
    m = model_for("graph-relay", None)
    assert m.instances[rep.path[-1]].label == "graph_finish(r=0, o=failed)"


def caught(tmp_path: Path, patch: str, depth: int = 8):
    """The tour's failure on the relay with ``patch`` applied, the adapter unchanged."""
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    apply_patch(buggy / "bugs" / patch, buggy)
    with External(adapter(buggy)) as ext:
        rep = tour("graph-relay", depth=depth, harness=ext)
    m = model_for("graph-relay", None)
    return rep.failure, [m.instances[a].label for a in rep.path]


def test_a_server_that_compares_keys_without_their_case_is_caught(tmp_path):
    """osf-check chooses the keys (step data): the model's two intents send keys that
    differ only in case, which such a server takes for one."""
    failure, path = caught(tmp_path, "key-case-insensitive.patch", depth=3)
    assert failure is not None and failure.startswith(
        "the implementation diverged from the model on run_graph_session(i=1): ticket[1]: "
        "the model 1, the implementation 0"), failure
    assert path == ["run_graph_session(i=0)", "run_graph_session(i=1)"]


@pytest.mark.slow
def test_a_truncated_completion_that_keeps_its_error_is_caught(tmp_path):
    failure, path = caught(tmp_path, "truncated-keeps-error.patch")
    assert failure is not None and failure.startswith("property A8 violated") and \
        "posted as ['error', 'execution_id', 'result_truncated', 'status']" in failure, failure
    assert path[-1] == "graph_finish(r=1, o=failed)"


@pytest.mark.slow
def test_a_completion_that_overwrites_cancelled_is_caught(tmp_path):
    failure, path = caught(tmp_path, "finish-overwrites-cancelled.patch")
    assert failure == "property A3 violated by the implementation on graph_finish(r=0, " \
        "o=completed)", failure
    assert "control_poll(r=0)" in path


def test_an_outbox_entry_dropped_before_the_2xx_is_reported_as_A2(tmp_path):
    """The drop itself is only a divergence (outbox false where the model keeps it); the
    checker then drives the model's shortest way to a broken invariant (the POST lost)
    on the relay and reports the property its observed state breaks."""
    failure, path = caught(tmp_path, "outbox-drop-before-ack.patch", depth=6)
    # (the relay's loop refuses at the sync a command whose consent is gone: that
    # completion is the first it drops)
    assert failure is not None and failure.startswith(
        "property A2 violated by the implementation after lose_post(r=0), once it diverged "
        "from the model on sync: outbox[0]: the model True, the implementation False "
        "(it says it took sync, refuse(r=0))"), failure
    assert path[-3:] == ["sync", "refuse(r=0)", "lose_post(r=0)"]


def test_an_agent_that_takes_a_late_answer_over_a_newer_one_is_caught_only_late(tmp_path):
    """The agent files every answer it gets as its run's latest.  Answers on time come in
    the server's order, so this passed; a get_graph_run answer lost while the run was
    queued, delivered after the agent's cancel, takes its view back from cancelled.  Only
    an adapter with the late capability is asked to deliver it (the walks do: in the tour a
    lost answer's step comes back to its state, and the tour goes on from the state's
    first visit), and without it fuzz says which answers it did not try."""
    from click.testing import CliRunner
    from osf_check.cli import main
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    apply_patch(buggy / "bugs" / "late-answer-takes-view-back.patch", buggy)
    m = model_for("graph-relay", None)
    with External(adapter(buggy)) as ext:
        rep = hypothesis_run("graph-relay", examples=20, steps=30, profile="ci", harness=ext)
    # (which lost answer the walks find first depends on every step the model has: since
    # late_post and late_ack, a cancel's answer lost before a completion, delivered after
    # a newer cancel's, takes the view back from completed to running)
    got = re.match(r"(get|cancel)_graph_run's answer for run (\d), lost earlier and delivered "
                   r"late after cancel_graph_run, took the agent's view of the run from "
                   r"\{.*'status': '(\w+)'\} back to \{.*'status': '(\w+)'\}$",
                   rep.failure or "")
    assert got is not None, rep.failure
    assert RANK[got[3]] > RANK[got[4]]
    labels = [m.instances[a].label for a in rep.path]
    assert re.fullmatch(rf"cancel_graph_run\(i=\d, r={got[2]}\)", labels[-1]), labels
    assert any(re.fullmatch(rf"lose_{got[1]}_reply\(i=\d, r={got[2]}\)", x) for x in labels)
    # the same relay behind an adapter that does not offer late answers passes the walks
    script = buggy / "adapter.mjs"
    script.write_text(script.read_text().replace('"idle", "late", ', '"idle", '))
    with External(adapter(buggy)) as ext:
        rep = hypothesis_run("graph-relay", examples=20, steps=30, profile="ci", harness=ext)
    assert rep.failure is None and rep.late_answers == set()
    args = ["fuzz", "--model", "graph-relay", "--tour-depth", "3", "--examples", "0", "--impl",
            " ".join(adapter(buggy))]
    res = CliRunner().invoke(main, [*args, "--json"])
    assert res.exit_code == 0, res.output
    [run] = json.loads(res.stdout)["runs"]
    assert run["late_answers"] == []
    assert run["implementation"]["late_answers_not_tried"] == [
        "get_graph_run's answer", "cancel_graph_run's answer", "a completion POST",
        "a completion's 2xx", "a sync reply", "a control poll's answer"]
    assert "late answers not tried (the adapter lacks the late capability): " \
        "get_graph_run's answer," in CliRunner().invoke(main, args).stdout


@pytest.mark.parametrize("patch,failure,path", [
    ("late-sync-reply-taken.patch",
     "a sync reply, lost earlier and delivered late after lose_sync_reply, changed phase from "
     "idle to work where the model has it lost: it must change nothing",
     ["tick", "lose_sync_reply"]),
    pytest.param(
        "late-poll-reopens-ended.patch",
        "property A3 violated by the implementation: a control poll's late answer "
        "(cancelled) for run 0, delivered after the Graph ended, changed exec[0] from done to "
        "stopping; outcome[0] from completed to cancelled where the model has it lost: it "
        "must change nothing",
        ["run_graph_session(i=0)", "tick", "sync", "start_graph(r=0)",
         "graph_finish(r=0, o=completed)"], marks=pytest.mark.slow),
])
def test_a_relay_that_acts_on_a_late_desktop_answer_is_caught_only_late(tmp_path, patch,
                                                                      failure, path):
    """The relay takes a sync reply for a round it gave up (the lost reply, delivered
    late, starts a round of work), or acts on a control poll's "cancelled" after its Graph
    ended.  On time, a reply always answers the current round and a poll comes only while
    the Graph runs, so these passed; the late deliveries catch them.  The same relay behind
    an adapter written before late_kinds (asked for the first four kinds only) passes,
    and fuzz says which answers it did not try."""
    from click.testing import CliRunner
    from osf_check.cli import main
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    apply_patch(buggy / "bugs" / patch, buggy)
    args = ["fuzz", "--model", "graph-relay", "--tour-depth", "4", "--examples", "0",
            "--json", "--out", str(tmp_path / "out"), "--impl", " ".join(adapter(buggy))]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 12, res.output
    [run] = json.loads(res.stdout)["runs"]
    assert run["failure"].startswith(failure), run["failure"]
    assert [x["label"] for x in run["trace"]["steps"]][-len(path):] == path
    script = buggy / "adapter.mjs"
    old = script.read_text().replace(",\n                       late_kinds: Object.keys(LATE) })",
                                     " })")
    assert "late_kinds" not in old
    script.write_text(old)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    [run] = json.loads(res.stdout)["runs"]
    assert run["implementation"]["late_answers_not_tried"] == [
        "a sync reply", "a control poll's answer"]
    assert not any(x.startswith(("a sync reply", "a control poll's")) for x in run["late_answers"])


def test_the_relay_is_asked_for_a_control_polls_late_answer_once_its_graph_stopped():
    """The control poll that finds the cancel flag stops the Graph; a "cancelled" answer of
    an earlier poll then arrives, and again once the Graph ended: the relay ignores both
    (the stop is sent once, the outcome stays)."""
    m = model_for("graph-relay", None)
    steps = {i.label: i for i in m.instances}
    with External(adapter()) as ext:
        h = ext(m, None, None)
        for label in ("run_graph_session(i=0)", "tick", "sync", "cancel_graph_run(i=0, r=0)",
                      "control_poll(r=0)", "graph_finish(r=0, o=completed)"):
            h.apply(steps[label])
        assert m.show_state(h.abstract())["outcome"][0] == "cancelled"
    assert h.late == {"a control poll's answer after the Graph was stopped",
                      "a control poll's answer after the Graph ended"} and h.violations == []


def test_the_relays_loop_starts_at_the_sync_reply_and_says_so_in_took():
    """The relay's loop starts the command it fetched in the same go as its sync (as a
    desktop does); the adapter answers with the model steps taken, not a split relay."""
    from osf_check.driver.external import Adapter
    m = model_for("graph-relay", None)
    a = Adapter(adapter())
    try:
        a.greet(m, 0)
        a.request("reset")
        for inst in ("run_graph_session(i=0)", "tick"):
            [i] = [x for x in m.instances if x.label == inst]
            got = a.request("step", action=i.name, args=dict(i.args), label=i.label,
                            data={"key": "Key-12345", "arguments": {}})
            assert "took" not in got
        got = a.request("step", action="sync", args={}, label="sync")
        assert got["took"] == ["sync", "start_graph(r=0)"]
        assert got["state"]["exec"][0] == "running" and got["offers"] == []
    finally:
        a.close()


def test_the_tour_goes_on_from_where_the_relay_lands():
    """Each state of the map the relay rests in is toured: the tree's way to a running
    Graph passes through a state where the fetched command waits, which this relay never
    rests in (regression pins, as the slow test's)."""
    with External(adapter()) as ext:
        rep = tour("graph-relay", depth=5, harness=ext)
    assert rep.failure is None, rep.failure
    # 2,354 states within 5 steps: 146 hold a fetched command and none running, 2 more
    # are reached only through one of those (refused after the project went off); 18 of
    # the 148 are covered as states a step the relay took together with its sync passes
    # through (was 2,206 before such steps counted)
    assert (rep.states_covered, rep.states_total) == (2_224, 2_354)
    assert rep.unreached == 0 and rep.edges_taken > 0
    # the adapter has the late capability: the answers lost within 5 steps (to the agent:
    # a completion is not lost that soon) were delivered late, and changed nothing; the
    # tour does not go on after a lost answer of a run (its step comes back to the state
    # it left); a lost sync reply arrives after every later step (18 actions of the model
    # follow one within 5 steps: a regression pin, the in-process harness's set too), and a
    # control poll's "cancelled" once a Graph ended (none is stopped within 5 steps)
    sync = {x for x in rep.late_answers if x.startswith("a sync reply after ")}
    assert rep.late_answers - sync == {"get_graph_run's answer after lose_get_reply",
                                       "cancel_graph_run's answer after lose_cancel_reply",
                                       "a control poll's answer after the Graph ended"}
    assert len(sync) == 18 and "a sync reply after tick" in sync


def test_a_trace_with_steps_taken_together_replays_through_the_adapter(tmp_path):
    """The trace records start_graph(r=0) after sync: the relay took it with the sync, and
    replay --impl counts it taken there, then fails the buggy relay at the Graph's end."""
    from click.testing import CliRunner
    from osf_check.cli import main
    from osf_check.traces.format import dumps
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    apply_patch(buggy / "bugs" / "measure-bytes.patch", buggy)
    m = model_for("graph-relay", None)
    idx = {i.label: i.index for i in m.instances}
    path = [idx[x] for x in ("run_graph_session(i=0)", "tick", "sync", "start_graph(r=0)",
                             "graph_finish(r=0, o=completed)")]
    tr = path_trace(m, path, message="property A8 violated", mutant=None, seed=0)
    where = tmp_path / "took.trace.json"
    where.write_text(dumps(tr))
    bad = CliRunner().invoke(main, ["replay", str(where), "--impl", " ".join(adapter(buggy))])
    assert bad.exit_code == 12 and "breaks a property at step 5" in bad.output, bad.output
    good = CliRunner().invoke(main, ["replay", str(where), "--impl", " ".join(adapter())])
    assert good.exit_code == 0 and "followed all 5 steps" in good.output, good.output


@pytest.mark.skipif(shutil.which("git") is None or
                    not (EXAMPLE.parent.parent / ".git").exists(), reason="needs a git checkout")
@pytest.mark.parametrize("patch", sorted((EXAMPLE / "bugs").glob("*.patch")),
                         ids=lambda p: p.stem)
def test_each_planted_bug_still_applies(patch):
    import subprocess
    done = subprocess.run(["git", "apply", "--check", "--directory=examples/node-graph-relay",
                           str(patch)], cwd=EXAMPLE.parent.parent, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("where", ["node", "reference"])
def test_a_late_post_and_a_late_ack_go_through_the_adapter(where):
    """Both adapters take late_post and late_ack as steps: the lost POST reaches the server
    before the re-send (the run completes), its 2xx is held and then lets the completion
    go; a copy a step delivered is no longer asked for in a late request."""
    from test_driver_protocol import reference
    from test_fuzz_graph_catch import LOST_POST
    model = model_for("graph-relay", None)
    by = {i.label: i for i in model.instances}
    with External(adapter() if where == "node" else reference()) as ext:
        h = ext(model, None, None)
        for label in LOST_POST:
            h.apply(by[label])
        assert ("post", 0) in h.held
        h.apply(by["late_post(r=0)"])
        shown = model.show_state(h.abstract())
        assert shown["status"][0] == "completed" and shown["outbox"][0] is True
        assert ("post", 0) not in h.held and ("ack", 0) in h.held
        h.apply(by["late_ack(r=0)"])
        shown = model.show_state(h.abstract())
        assert shown["outbox"][0] is False and ("ack", 0) not in h.held
        assert h.violations == []


#: (the relay's loop starts the Graph with the sync: the path lists the start_graph it
#: takes unasked, as a path of the implementation must)
NODE_LATE_ACK = ["run_graph_session(i=0)", "answer_ticket(i=0)", "tick", "sync",
                 "start_graph(r=0)", "graph_finish(r=0, o=completed)", "deliver_post(r=0)", "lose_ack(r=0)",
                 "round_end", "late_ack(r=0)", "tick"]


def test_a_2xx_handler_tied_to_its_round_is_caught_on_a_late_2xx(tmp_path):
    """The planted bug drops a 2xx that comes after its round ended: the late 2xx leaves
    the completion in the outbox (an on-time 2xx after the round's end shows it too)."""
    from osf_check.fuzz.driver import Checker, _fails
    buggy = tmp_path / "node-graph-relay"
    shutil.copytree(EXAMPLE, buggy)
    model = model_for("graph-relay", None)
    idx = {i.label: i.index for i in model.instances}
    path = [idx[x] for x in NODE_LATE_ACK]
    with External(adapter(buggy)) as ext:
        assert _fails(model, Checker(model), None, path, 0, ext) is None
    apply_patch(buggy / "bugs" / "ack-after-round-dropped.patch", buggy)
    with External(adapter(buggy)) as ext:
        why = _fails(model, Checker(model), None, path, 0, ext)
    assert why and "late_ack(r=0)" in why and "outbox[0]" in why, why
