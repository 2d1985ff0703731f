"""The driver protocol: an implementation behind an adapter process is fuzzed like the
in-process one, and an adapter that fails is reported as such, never as a verdict."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuzzcheck import assert_reproduces
from osf_check.cli import main
from osf_check.driver import protocol
from osf_check.driver.external import Adapter, External, python_command
from osf_check.driver.protocol import AdapterError, problem
from osf_check.fuzz.driver import (IMPL_MUTANTS, hypothesis_run, model_for, parted_along, path_trace, replay,
                                   tour)

FAULTY = str(Path(__file__).parent / "adapters" / "faulty.py")


def reference(*args: str) -> list[str]:
    return python_command("osf_check.driver.reference", *args)


def faulty(how: str, at: int) -> list[str]:
    return [sys.executable, FAULTY, how, str(at)]


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    # the faulty adapter imports osf_check from this checkout, wherever pytest runs
    root = str(Path(__file__).parent.parent)
    monkeypatch.setenv("PYTHONPATH", root + os.pathsep + os.environ.get("PYTHONPATH", ""))


# the schema ----------------------------------------------------------------------------

def test_the_schema_accepts_the_documented_messages_and_rejects_others():
    ok = {"type": "step", "id": 3, "action": "tick", "args": {}, "label": "tick"}
    assert problem(ok, "step") is None
    assert problem(ok | {"args": {"r": "0"}}, "step") == "args.r: must be integer"
    assert problem(ok | {"colour": 1}, "step") is not None  # nothing undocumented
    assert problem({"type": "observed", "id": 0, "state": {}, "offers": ["tick"]},
                   "observed") is None
    assert "offers" in problem({"type": "observed", "id": 0, "state": {}, "offers": "tick"},
                               "observed")
    assert problem({"type": "observed", "id": 0, "offers": []}, "observed") == \
        "no state, and no violations saying why there is none"
    assert problem({"type": "welcome", "id": 0, "protocol": 2, "implementation": "x",
                    "capabilities": []}, "welcome") is not None
    # late (capability late): the held answers that may arrive now, and what was delivered
    late = {"type": "late", "id": 4, "after": "cancel_graph_run",
            "answers": [{"kind": "get", "r": 0}, {"kind": "ack", "r": 1}]}
    assert problem(late, "late") is None and problem(late, "request") is None
    assert problem(late | {"answers": [{"kind": "lost", "r": 0}]}, "late") is not None
    assert problem(late | {"answers": []}, "late") is not None  # sent only when one may arrive
    # the desktop's own: a sync reply has no run, a control poll's answer has one
    assert problem(late | {"answers": [{"kind": "sync"}]}, "late") is None
    assert problem(late | {"answers": [{"kind": "sync", "r": 0}]}, "late") is not None
    assert problem(late | {"after": "the Graph ended",
                           "answers": [{"kind": "poll", "r": 1}]}, "late") is None
    assert problem(late | {"answers": [{"kind": "poll"}]}, "late") == \
        "answers[0]: must contain ['r'] properties"
    assert problem({"type": "observed", "id": 4, "state": {}, "offers": [],
                    "delivered": ["get_graph_run's answer after cancel_graph_run"],
                    "known": {"c0": {"command_id": "c0", "status": "cancelled"}}},
                   "observed") is None
    assert problem({"type": "welcome", "id": 0, "protocol": 1, "implementation": "x",
                    "capabilities": ["late"]}, "welcome") is None
    assert problem({"type": "welcome", "id": 0, "protocol": 1, "implementation": "x",
                    "capabilities": ["late"], "late_kinds": ["get", "sync", "poll"]},
                   "welcome") is None
    assert problem({"type": "welcome", "id": 0, "protocol": 1, "implementation": "x",
                    "capabilities": ["late"], "late_kinds": ["lost"]}, "welcome") is not None
    # every request type has a schema and an expected reply that has one too
    defs = protocol.schema()["$defs"]
    assert set(protocol.REQUESTS) | set(protocol.REPLY_TYPES) <= set(defs)


def test_parse_reply_says_what_was_wrong_with_the_line():
    req = {"type": "reset", "id": 4}
    with pytest.raises(AdapterError, match="not JSON: hello") as e:
        protocol.parse_reply("hello\n", req)
    assert e.value.kind == "malformed"
    with pytest.raises(AdapterError, match="id is 5, the request's 4"):
        protocol.parse_reply(json.dumps({"type": "observed", "id": 5, "state": {},
                                         "offers": []}), req)
    with pytest.raises(AdapterError, match="refused reset: no store") as e:
        protocol.parse_reply(json.dumps({"type": "error", "id": 4, "message": "no store"}), req)
    assert e.value.kind == "refused"
    long = "x" * 5000
    with pytest.raises(AdapterError) as e:
        protocol.parse_reply(long, req)
    assert len(str(e.value)) < 400 and "5,000 characters" in str(e.value)


# the reference implementation through the protocol --------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", ["graph-relay", "wire-relay"])
@pytest.mark.parametrize("snapshots", [True, False])
def test_the_tour_through_an_adapter_observes_what_it_observes_in_process(name, snapshots):
    inproc = tour(name, depth=4)
    args = () if snapshots else ("--no-snapshot",)
    with External(reference(*args)) as ext:
        rep = tour(name, depth=4, harness=ext)
        sent = dict(ext.adapter.requests)
    assert rep.failure is None and inproc.failure is None
    assert (rep.states_covered, rep.edges_covered, rep.steps) == \
        (inproc.states_covered, inproc.edges_covered, inproc.steps)
    assert rep.edges_covered == rep.edges_total and rep.unreached == 0
    # without snapshots the harness goes back by replaying paths from reset: more steps
    assert sent["step"] > 2 * rep.steps if not snapshots else sent["step"] == rep.steps
    assert ("restore" in sent) == snapshots
    # the idle events (graph-relay's timer and round's end) after steps where the model
    # skips them, also when a path is replayed; wire-relay has none
    assert (sent.get("idle", 0) > rep.steps / 2) if name == "graph-relay" else "idle" not in sent


def test_hypothesis_through_an_adapter_takes_the_same_walks():
    inproc = hypothesis_run("wire-relay", examples=8, steps=20, profile="ci")
    with External(reference()) as ext:
        rep = hypothesis_run("wire-relay", examples=8, steps=20, profile="ci", harness=ext)
    assert rep.failure is None
    assert rep.hypothesis_steps == inproc.hypothesis_steps > 0
    assert rep.visited == inproc.visited


def _catch(name: str, mutant: str, depth: int | None = None):
    if mutant == "queue-on-desktop":  # beyond the tour: the random walks find it
        return lambda **kw: hypothesis_run(name, mutant=mutant, examples=300, steps=40,
                                           profile="ci", **kw)
    depth = depth or (8 if name == "graph-relay" else 9)
    return lambda **kw: tour(name, mutant=mutant, depth=depth, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("name,mutant", [(n, m) for n in IMPL_MUTANTS for m in IMPL_MUTANTS[n]])
def test_every_implementation_mutant_is_caught_through_the_adapter(name, mutant):
    inproc = _catch(name, mutant)()
    assert inproc.failure is not None
    # the tour through the adapter goes as deep as the shortest story in process (its
    # shorter tours, which must all pass, are the same either way)
    with External(reference("--mutant", mutant)) as ext:
        rep = _catch(name, mutant, len(inproc.path))(harness=ext)
        assert rep.failure is not None, mutant
        # the same shortest story and the same words as in process
        assert (rep.path, rep.failure) == (inproc.path, inproc.failure)
        m = model_for(name, mutant)
        tr = path_trace(m, rep.path, message=rep.failure, mutant=None, seed=0,
                        parted=parted_along(m, None, rep.path, harness=ext))
        steps = replay(tr, harness=ext)
    # followed up to the failing step; a divergence shown as the property it breaks adds
    # the steps driven to break it, which fail with it
    assert len(steps) == len(rep.path) and not steps[-1].ok
    first = [s.ok for s in steps].index(False)
    assert all(s.ok for s in steps[:first]) and steps[first].label in \
        [model_for(name, mutant).instances[a].label for a in rep.path[first:]]
    rep.mutant = mutant
    assert_reproduces(rep)


# adapters that fail ---------------------------------------------------------------------

@pytest.mark.parametrize("how,kind,words", [
    ("crash", "crashed", "at step lose_response(i=0) (exit status 3); the end of its stderr (1 line): faulty adapter: giving up"),
    ("hang", "hung", "did not answer step lose_response(i=0) within 2 s"),
    ("garbage", "malformed", "not JSON: Traceback (most recent call last): oops"),
    ("bad-schema", "malformed", "offers: must be array"),
    ("wrong-type", "malformed", "a 'observed' reply was expected, not 'ok'"),
    ("bad-state", "malformed", "variable call"),
    ("refuse", "refused", "LookupError: no handler for"),
])
@pytest.mark.slow
def test_a_failing_adapter_is_reported_as_such(how, kind, words):
    before = _rooms()
    with External(faulty(how, 3), timeout=2) as ext:
        with pytest.raises(AdapterError) as e:
            tour("graph-relay", depth=3, harness=ext)
    assert e.value.kind == kind and words in str(e.value), str(e.value)
    assert "\n" not in str(e.value)
    assert _rooms() - before == set(), "the adapter's scratch room outlived it"


@pytest.mark.slow
def test_an_adapter_that_leaves_out_the_completions_it_posted_is_not_judged_as_holding():
    """A8 is judged on the payload a graph_finish posts, which the adapter reports in
    ``sent``: an adapter that left it out had A8 hold unjudged, whatever it posted."""
    with External(faulty("no-post", 1), timeout=10) as ext:
        with pytest.raises(AdapterError) as e:
            tour("graph-relay", depth=6, harness=ext)
    assert e.value.kind == "malformed"
    assert "reports no completion in sent" in str(e.value) and "graph_finish(" in str(e.value)
    # each message sent is an object, and a completion's payload one too
    seen = {"type": "observed", "id": 0, "state": {}, "offers": []}
    assert problem(seen | {"sent": [{"post": {"status": "completed"}}, {"frame": 1}]},
                   "observed") is None
    assert "sent[0]" in problem(seen | {"sent": [None]}, "observed")
    assert "sent[0].post" in problem(seen | {"sent": [{"post": "x"}]}, "observed")


def test_an_adapter_that_floods_its_output_is_closed_without_a_traceback(monkeypatch):
    """``yes`` as the adapter: its first line is no reply (malformed), and closing it
    while its reader thread still reads the flood ends that thread quietly (it printed
    a ValueError's traceback after the one-line report)."""
    import shutil
    import threading
    from osf_check.driver.external import Adapter
    if shutil.which("yes") is None:
        pytest.skip("no `yes` here")
    caught: list = []
    monkeypatch.setattr(threading, "excepthook", caught.append)
    for _ in range(5):  # the thread is mid-read most times: five tries make it certain
        a = Adapter(["yes"], timeout=2)
        with pytest.raises(AdapterError, match="not JSON: y"):
            a.greet(model_for("wire-relay", None, {}), 0)
        a.close()
        assert not a._reader.is_alive()
    assert caught == [], [c.exc_value for c in caught]


def test_an_adapter_gone_before_its_first_request_is_quoted_not_just_its_exit():
    """``echo garbage`` as the adapter: it has written its line and exited by the time
    hello is sent, so the write fails; the report quotes the line (it said only
    "stopped answering at hello (exit status 0)")."""
    import time
    from osf_check.driver.external import Adapter
    a = Adapter([sys.executable, "-c", "print('garbage')"], timeout=2)
    a.proc.wait(timeout=10)
    time.sleep(0.2)  # its stdin is closed for certain: the write fails
    with pytest.raises(AdapterError, match="not JSON: garbage") as e:
        a.greet(model_for("wire-relay", None, {}), 0)
    assert e.value.kind == "malformed"
    a.close()
    # gone without a word: still the exit status, as before
    a = Adapter([sys.executable, "-c", "raise SystemExit(4)"], timeout=2)
    a.proc.wait(timeout=10)
    with pytest.raises(AdapterError, match=r"stopped answering at hello \(exit status 4\)"):
        a.greet(model_for("wire-relay", None, {}), 0)
    a.close()


def _rooms() -> set[str]:
    import tempfile
    from pathlib import Path
    # this process's rooms only: tests running alongside make rooms of their own
    return {p.name for d in (Path("/dev/shm"), Path(tempfile.gettempdir())) if d.is_dir()
            for p in d.glob(f"osf-adapter-{os.getpid()}-*")}


def test_every_step_message_carries_the_inputs_the_checker_chose(monkeypatch):
    """Keys, arguments, results, errors, tokens and cost are osf-check's choice, in the
    step message of every action that has them (docs/driver-protocol.md lists which)."""
    from osf_check.fuzz.graph_harness import FINISH, arguments
    from osf_check.fuzz.graph_inputs import AGENT_KEYS
    steps: list[dict] = []
    ask = Adapter.request

    def spy(self, kind, **fields):
        if kind == "step":
            steps.append(fields)
        return ask(self, kind, **fields)

    monkeypatch.setattr(Adapter, "request", spy)
    with External(reference()) as ext:
        rep = tour("graph-relay", depth=5, harness=ext)
    assert rep.failure is None, rep.failure
    by: dict[str, list[dict]] = {}
    for f in steps:
        by.setdefault(f["action"], []).append(f)
    for f in by["run_graph_session"]:
        i = f["args"]["i"]
        assert f["data"] == {"key": AGENT_KEYS[i], "arguments": arguments(i)}
    assert {f["args"]["i"] for f in by["run_graph_session"]} == {0, 1}
    finished = by["graph_finish"]
    assert all(f["data"]["tokens"] == FINISH["tokens"] and f["data"]["cost"] == FINISH["cost"]
               and isinstance(f["data"]["result"], str) for f in finished)
    assert any("error" in f["data"] for f in finished if f["label"].endswith("o=failed)"))
    assert any(len(f["data"]["result"]) > 30_000 for f in finished)
    # another agent's question names the id osf-check chose for a run not there yet
    from osf_check.fuzz.graph_harness import made_up_id
    asked = [f for f in steps if f["action"] in ("get_graph_run", "cancel_graph_run")
             and "a" in f["args"]]
    assert {f["action"] for f in asked} == {"get_graph_run", "cancel_graph_run"}
    assert all(f["data"] == {"unknown_id": made_up_id(f["args"]["r"])} for f in asked)
    # the other actions carry none, but the tick the owner's change of sharing starts
    others = [f for f in steps if f["action"] not in ("run_graph_session", "graph_finish")
              and f not in asked]
    assert all(f.get("data", {"cause": "sharing"}) == {"cause": "sharing"} for f in others)
    # wire-relay's requests: the method, the params and the operation key
    steps.clear()
    with External(reference()) as ext:
        assert tour("wire-relay", depth=3, harness=ext).failure is None
    wm = model_for("wire-relay", None)
    sends = [f for f in steps if f["action"] in ("send", "send_malformed", "send_lost")]
    assert {f["action"] for f in sends} == {"send", "send_malformed"}  # (no losses)
    for f in sends:
        op = wm.constants["ctx"].ops[f["args"]["o"]]
        assert f["data"]["method"] == op.method and set(f["data"]) == {"method", "params",
                                                                       "key"}
    assert any("😀" in f["data"]["key"] for f in sends)
    assert all("data" not in f for f in steps if f not in sends)
    # the trace records them as the messages carried them
    m = model_for("graph-relay", None)
    idx = {i.label: i.index for i in m.instances}
    tr = path_trace(m, [idx["run_graph_session(i=1)"]], message="x", mutant=None, seed=0)
    assert tr["steps"][1]["data"] == {"key": AGENT_KEYS[1], "arguments": arguments(1)}


def test_the_reference_adapter_starts_runs_with_the_key_and_arguments_it_is_sent():
    from osf_check.driver.reference import Reference
    from osf_check.fuzz.graph_inputs import AGENT_KEYS
    m = model_for("graph-relay", None)
    ref = Reference("graph-relay", dict(m.params), 0, None)
    ref.reset()
    ref.step("run_graph_session", {"i": 0}, "run_graph_session(i=0)",
             {"key": AGENT_KEYS[1], "arguments": {"given": ["by osf-check"]}})
    [run] = ref.h.server.runs
    assert run.key == AGENT_KEYS[1] and run.arguments == {"given": ["by osf-check"]}


def test_the_reference_adapter_sends_requests_with_the_params_and_key_it_is_sent():
    from osf_check.driver.reference import Reference
    from osf_check.fuzz.payloads import chosen
    m = model_for("wire-relay", None)
    ref = Reference("wire-relay", dict(m.params), 0, None)
    ref.reset()
    [send] = [i for i in m.instances if i.label == "send(o=0)"]
    mine = chosen(m, "send", {"o": 0})
    assert set(mine) == {"method", "params", "key"} and mine["key"].startswith("op-key-")
    frames = []
    ref.h.relay.on_request = lambda client, frame, now: frames.append(frame) or []
    ref.step("send", {"o": 0}, send.label, {**mine, "params": {"profileId": "given"},
                                            "key": "given-key"})
    [frame] = frames
    assert frame["payload"]["params"] == {"profileId": "given"}, frame
    assert "given-key" in json.dumps(frame), frame


def test_the_reference_adapter_keeps_its_files_in_the_room_osf_check_removes():
    """Killed (here: it hangs and is killed), an adapter cannot clean up: its files live
    in the room osf-check made for it, which osf-check removes."""
    import os
    before = _rooms()
    ext = External(reference(), timeout=5)
    ext(model_for("graph-relay", None, {}), None, None)
    ext.adapter.request("reset")
    room = ext.adapter.scratch
    assert os.listdir(room), "the reference adapter did not use OSF_CHECK_SCRATCH"
    ext.adapter.broken = True  # as after a hang: killed, not asked to leave
    ext.close()
    assert not os.path.exists(room) and _rooms() - before == set()


def test_the_cli_exits_154_with_one_line_for_a_failing_adapter(tmp_path):
    r = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--impl",
                                  " ".join(faulty("garbage", 2)), "--out", str(tmp_path / "o")])
    assert r.exit_code == 154, r.output
    line = [x for x in r.output.splitlines() if x.startswith("osf-check: the implementation")]
    assert line == [line[0]] and "(malformed)" in line[0] and "not JSON" in line[0]
    assert "Traceback" not in r.output.replace("Traceback (most recent call last): oops", "")
    assert not (tmp_path / "o" / "fuzz.json").exists()  # nothing claims a verdict


def test_the_cli_refuses_impl_without_a_model_or_with_a_mutant():
    r = CliRunner().invoke(main, ["fuzz", "--impl", "x"])
    assert r.exit_code == 150 and "--impl needs --model" in r.output
    r = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--impl", "x",
                                  "--mutant", "outbox-off"])
    assert r.exit_code == 150 and "--mutant outbox-off" in r.output
    r = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--impl",
                                  "/nonexistent/adapter"])
    assert r.exit_code == 150 and "cannot start the adapter" in r.output


@pytest.mark.slow
def test_the_cli_fuzzes_through_an_adapter_and_records_it(tmp_path):
    cmd = " ".join(reference("--mutant", "outbox-off"))
    r = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--impl", cmd,
                                  "--examples", "0", "--json"])
    assert r.exit_code == 12, r.output
    doc = json.loads(r.output[r.output.index("{"):])
    run = doc["runs"][0]
    assert run["implementation"] == {"command": cmd,
                                     "name": "osf-check reference (Python), mutant outbox-off",
                                     "capabilities": ["clock", "idle", "late", "late_steps",
                                                      "reopen", "snapshot"],
                                     "idle_events_not_tried": [], "late_answers_not_tried": [],
                                     "steps_not_offered": []}
    assert run["mutant"] is None and "outbox[0]" in run["failure"]
    from jsonschema import Draft202012Validator
    schema = json.loads((Path(__file__).parent.parent / "osf_check" / "schema" /
                         "result.schema.json").read_text())
    Draft202012Validator(schema).validate(doc)


def _late_kinds(answers: set[str]) -> set[str]:
    from osf_check.fuzz.late import LATE
    return {k for k, name in LATE.items() for x in answers if x.startswith(name + " after ")}


def test_the_reference_adapter_delivers_the_late_answers_it_is_asked_for():
    """Asked after each step for the held answers that may arrive (the in-process rule,
    fuzz.late), the reference adapter delivers them and names them as the report does;
    the tour lists them, the same ones the in-process harness delivers by itself (the
    last lost sync reply after every later step too).  An adapter whose welcome lists no
    late_kinds (written before them) is asked for the first four kinds only; without the
    capability none is asked for (and the harness behind it delivers none by itself)."""
    with External(reference()) as ext:
        rep = tour("graph-relay", depth=4, harness=ext)
        asked = ext.adapter.requests.get("late", 0)
    assert rep.failure is None and asked > 0
    # (the tour does not go on after a lost answer of a run: its step comes back to the
    # state it left)
    assert rep.late_answers == tour("graph-relay", depth=4).late_answers
    assert {"get_graph_run's answer after lose_get_reply", "a sync reply after tick",
            "cancel_graph_run's answer after lose_cancel_reply"} <= rep.late_answers
    assert _late_kinds(rep.late_answers) == {"get", "cancel", "sync"}
    with External(reference("--no-late-kinds")) as ext:
        old = tour("graph-relay", depth=4, harness=ext)
        assert ext.late_kinds == {"get", "cancel", "post", "ack"}
    assert old.failure is None and _late_kinds(old.late_answers) == {"get", "cancel"}
    with External(reference("--no-late")) as ext:
        rep = tour("graph-relay", depth=4, harness=ext)
        assert "late" not in ext.adapter.requests
    assert rep.failure is None and rep.late_answers == set()


@pytest.mark.slow
def test_the_reference_adapter_delivers_the_control_polls_late_answer():
    """To depth 5 a Graph ends: the control poll's late answer is asked for after it, as
    the in-process harness delivers it, and the reference relay ignores it."""
    with External(reference()) as ext:
        rep = tour("graph-relay", depth=5, harness=ext)
    assert rep.failure is None
    assert rep.late_answers == tour("graph-relay", depth=5).late_answers
    assert "a control poll's answer after the Graph ended" in rep.late_answers


class _Canned:
    """An adapter that answers late with a canned reply (and everything else with the
    model's initial state): the checker's judging of a late delivery, alone."""

    capabilities = frozenset({"late"})

    def __init__(self, model, late, kinds=None):
        self.state, self.late = model.show_state(model.initial_states[0]), late
        self.asked = []
        if kinds is not None:  # else, as an adapter written before late_kinds: none listed
            self.late_kinds = frozenset(kinds)

    def request(self, kind, **fields):
        if kind == "late":
            self.asked.append(fields)
            return {"type": "observed", "offers": ["tick"], **self.late}
        return {"type": "observed", "offers": ["tick"], "state": self.state,
                "known": {"c0": {"command_id": "c0", "status": "cancelled"}}}


@pytest.mark.parametrize("late,why", [
    ({}, None),  # the state, offers and view as before: nothing changed
    ({"status": ["cancelled", "none"]}, "changed status[0] from none to cancelled "
                                         "where the model has it lost"),
    ({"known": {"c0": {"command_id": "c0", "status": "queued"}}},
     "took the agent's view of the run from {'command_id': 'c0', 'status': 'cancelled'} back "
     "to {'command_id': 'c0', 'status': 'queued'}"),
    ({"offers": []}, "changed what the implementation would do next from ['tick'] to []"),
])
def test_the_checker_finds_what_a_late_answer_changed(late, why):
    from osf_check.driver.external import ExternalHarness
    m = model_for("graph-relay", None)
    adapter = _Canned(m, {})
    h = ExternalHarness(adapter, m)  # type: ignore[arg-type]
    h.held = [("get", 0)]
    state = dict(adapter.state, **{k: v for k, v in late.items() if k == "status"})
    adapter.late = {"state": state, "offers": late.get("offers", ["tick"]),
                    "known": late.get("known", h.reply["known"]),
                    "delivered": ["get_graph_run's answer after cancel_graph_run"]}
    h._deliver_late("cancel_graph_run")
    assert adapter.asked == [{"after": "cancel_graph_run", "answers": [{"kind": "get", "r": 0}]}]
    assert h.late == {"get_graph_run's answer after cancel_graph_run"}
    if why is None:
        assert h.violations == []
    else:
        assert h.violations == ["get_graph_run's answer for run 0, lost earlier and delivered "
                                "late after cancel_graph_run, " + why + (
                                    ": it must change nothing" if "status" in late else "")]


def test_a_late_delivery_not_asked_for_is_the_adapters_failure_and_a_2xx_waits():
    from osf_check.driver.external import ExternalHarness
    m = model_for("graph-relay", None)
    adapter = _Canned(m, {})
    h = ExternalHarness(adapter, m)  # type: ignore[arg-type]
    h.held = [("ack", 0), ("post", 0)]
    h._deliver_late("tick")  # no 2xx before the outbox let it go, no POST before an outcome
    assert adapter.asked == []
    h.acked.add(0)
    adapter.late = {"state": adapter.state, "offers": ["tick"],
                    "delivered": ["a completion POST after tick"]}
    with pytest.raises(AdapterError, match="a delivery it was not asked for"):
        h._deliver_late("tick")
    assert adapter.asked == [{"after": "tick", "answers": [{"kind": "ack", "r": 0}]}]


def _inst(m, label):
    [inst] = [x for x in m.instances if x.label == label]
    return inst


def test_the_checker_asks_for_the_desktops_late_answers_at_their_moments():
    """fuzz.late's rules for the desktop's own answers: the last lost sync reply after every
    later step but not after a restart; a control poll's "cancelled" once the step ended
    the run's Graph (or stopped it: exec stopping after a control poll, not here, where it
    is none).  An adapter that lists no late_kinds is asked for neither."""
    from osf_check.driver.external import ExternalHarness
    from osf_check.fuzz.late import LATE, RESTART
    m = model_for("graph-relay", None)
    adapter = _Canned(m, {}, kinds=LATE)
    h = ExternalHarness(adapter, m)  # type: ignore[arg-type]
    adapter.late = {"state": adapter.state, "offers": ["tick"], "delivered": []}
    h._deliver_late("tick", _inst(m, "tick"))
    h._deliver_late("control_poll", _inst(m, "control_poll(r=0)"))
    assert adapter.asked == []  # nothing lost, no Graph stopped
    h.sync_lost = True
    h._deliver_late("tick", _inst(m, "tick"))
    h._deliver_late(RESTART)
    h.sync_lost = False
    h._deliver_late("graph_finish", _inst(m, "graph_finish(r=1, o=failed)"))
    assert adapter.asked == [{"after": "tick", "answers": [{"kind": "sync"}]},
                             {"after": "the Graph ended", "answers": [{"kind": "poll", "r": 1}]}]
    old = _Canned(m, {})
    h = ExternalHarness(old, m)  # type: ignore[arg-type]
    h.sync_lost = True
    h._deliver_late("graph_finish", _inst(m, "graph_finish(r=1, o=failed)"))
    assert old.asked == [] and h.kinds == {"get", "cancel", "post", "ack"}


@pytest.mark.parametrize("kind,after,label,why", [
    ("sync", "tick", "tick",
     "a sync reply, lost earlier and delivered late after tick, changed phase from idle to "
     "work where the model has it lost: it must change nothing"),
    ("poll", "the Graph ended", "graph_finish(r=0, o=completed)",
     "property A3 violated by the implementation: a control poll's late answer (cancelled) "
     "for run 0, delivered after the Graph ended, changed phase from idle to work where the "
     "model has it lost: it must change nothing"),
])
def test_the_checker_finds_what_a_late_desktop_answer_changed(kind, after, label, why):
    """A sync reply or a control poll's answer that changes the relay is a finding named by
    it (a change once the Graph ended breaks A3, as the in-process harness says); one that
    changes nothing is none."""
    from osf_check.driver.external import ExternalHarness
    from osf_check.fuzz.late import LATE
    m = model_for("graph-relay", None)
    adapter = _Canned(m, {}, kinds=LATE)
    h = ExternalHarness(adapter, m)  # type: ignore[arg-type]
    h.sync_lost = kind == "sync"
    delivered = [f"{LATE[kind]} after {after}"]
    adapter.late = {"state": adapter.state, "offers": ["tick"], "delivered": delivered,
                    "known": h.reply["known"]}
    h._deliver_late(label.split("(")[0], _inst(m, label))
    assert h.violations == [] and h.late == set(delivered)
    adapter.late["state"] = dict(adapter.state, phase="work")
    h._deliver_late(label.split("(")[0], _inst(m, label))
    assert h.violations == [why]


def test_the_cli_says_late_answers_were_not_tried_through_an_adapter_without_them():
    cmd = " ".join(reference("--no-late"))
    args = ["fuzz", "--model", "graph-relay", "--impl", cmd, "--tour-depth", "3",
            "--examples", "0"]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    run = json.loads(r.output[r.output.index("{"):])["runs"][0]
    assert run["implementation"]["late_answers_not_tried"] == [
        "get_graph_run's answer", "cancel_graph_run's answer", "a completion POST",
        "a completion's 2xx", "a sync reply", "a control poll's answer"] and \
        run["late_answers"] == []
    text = CliRunner().invoke(main, args).output
    assert "late answers not tried (the adapter lacks the late capability): " \
        "get_graph_run's answer, cancel_graph_run's answer, a completion POST, " \
        "a completion's 2xx, a sync reply, a control poll's answer" in text, text
    # an adapter written before late_kinds: the first four kinds only, and fuzz says so
    old = [*args[:3], "--impl", " ".join(reference("--no-late-kinds")), *args[5:]]
    r = CliRunner().invoke(main, [*old, "--json"])
    run = json.loads(r.output[r.output.index("{"):])["runs"][0]
    assert run["implementation"]["late_answers_not_tried"] == [
        "a sync reply", "a control poll's answer"], run
    assert "late answers not tried (the adapter does not list them in late_kinds): " \
        "a sync reply, a control poll's answer" in CliRunner().invoke(main, old).output
    # with the capability: tried, and listed
    r = CliRunner().invoke(main, [*args[:3], "--impl", " ".join(reference()), *args[5:]])
    assert r.exit_code == 0 and "late answers not tried" not in r.output
    assert "late answers tried: 3, by answer" in r.output, r.output
    assert "get_graph_run's answer (1): lose_get_reply" in r.output, r.output
    assert "a sync reply (1): lose_sync_reply" in r.output, r.output


def test_an_adapter_without_the_clock_or_storage_crashes_is_still_walked():
    class Plain(Adapter):
        def greet(self, model, seed):
            super().greet(model, seed)
            self.capabilities = frozenset()  # as if it had announced none
    ext = External(reference())
    ext.adapter = Plain(reference())
    m = model_for("wire-relay", None)
    ext.adapter.greet(m, 0)
    ext._for = (m.name, tuple(sorted(m.params.items())), 0)
    try:
        rep = hypothesis_run("wire-relay", examples=5, steps=20, profile="ci", harness=ext)
    finally:
        ext.close()
    assert rep.failure is None and rep.hypothesis_steps > 0


def test_the_protocol_document_shows_each_models_state_as_the_code_reads_it():
    from osf_check.explorer.check import prepare
    doc = (Path(__file__).parent.parent / "docs" / "driver-protocol.md").read_text()
    for name in ("graph-relay", "wire-relay"):
        m, _, _ = prepare(name)
        assert protocol.state_table(m) in doc, name
    for kind in protocol.REQUESTS:
        assert f"| `{kind}` |" in doc, kind
    from osf_check.fuzz.late import LATE
    kinds = [x.split("`")[1] for x in doc.splitlines()
             if x.startswith("  | `") and not x.startswith("  | `kind`")]
    assert kinds == list(LATE)  # the late kinds' table, a row each, in LATE's order


def test_the_protocol_document_lists_the_data_of_every_action_that_carries_some():
    from osf_check.fuzz.payloads import chosen
    doc = (Path(__file__).parent.parent / "docs" / "driver-protocol.md").read_text()
    rows = [x.strip() for x in doc.splitlines()
            if x.strip().startswith(("| graph-relay |", "| wire-relay |"))]
    for name in ("graph-relay", "wire-relay"):
        m = model_for(name, None, {"losses": 1} if name == "wire-relay" else None)
        for i in m.instances:
            fields = chosen(m, i.name, dict(i.args))
            if not fields:
                continue
            [row] = [x for x in rows if x.startswith(f"| {name} |") and f"`{i.name}`" in
                     x.split("|")[2]]
            assert all(f"`{f}`" in row for f in fields), (i.label, row)


def test_the_reference_adapter_fails_a_handler_with_the_error_it_is_sent():
    """A handler's failure is osf-check's choice too: the step's ``error`` (class, message,
    retryable flag) is what the desktop stores and answers, in its own code for the class."""
    from collections import deque

    from osf_check.driver.reference import Reference
    from osf_check.explorer.compiled.pycompile import compile_steps
    from osf_check.fuzz.payloads import chosen
    m = model_for("wire-relay", None)
    steps = compile_steps(m)
    goal = next(i for i in m.instances if i.label == "execute(o=0, a=0, out=final_error, "
                                                     "stored=1)")
    # the model's shortest way to where that step is enabled
    start = m.initial_states[0]
    back: dict[tuple, tuple | None] = {start: None}
    todo = deque([start])
    while steps[goal.index](todo[0]) is None:
        s = todo.popleft()
        for i in m.instances:
            t = steps[i.index](s)
            if t is not None and t not in back:
                back[t] = (s, i)
                todo.append(t)
    path, s = [], todo[0]
    while back[s] is not None:
        s, i = back[s]  # type: ignore[misc]
        path.append(i)
    ref = Reference("wire-relay", dict(m.params), 0, None)
    ref.reset()
    for i in reversed(path):
        ref.step(i.name, dict(i.args), i.label, chosen(m, i.name, dict(i.args)))
    mine = {"kind": "validation", "message": "Ungültige Eingabe: „ä“ 😀", "retryable": False}
    assert chosen(m, "execute", dict(goal.args))["error"] != mine
    ref.step("execute", dict(goal.args), goal.label, {"error": mine})
    call = ref.h._call(0, 0)
    stored = ref.h.desktop.claims.row(call.scope).answer
    err = stored["error"]
    assert err["message"] == mine["message"] and err["data"]["kind"] == "validation"
    assert err["data"]["retryable"] is False and err["code"] != -32004


# late_post and late_ack: only for an adapter that announces late_steps --------------------
#: the smallest graph-relay where a tour meets a late step: late_post at depth 7
SMALL = {"intents": 1, "slugs": 1, "retries": 0}


def _steps_asked(monkeypatch) -> list[str]:
    """The actions of every step request sent to an adapter from now on."""
    asked: list[str] = []
    request = Adapter.request

    def spy(self, kind, **fields):
        if kind == "step":
            asked.append(fields["action"])
        return request(self, kind, **fields)
    monkeypatch.setattr(Adapter, "request", spy)
    return asked


def _transitions(depth: int, without: tuple[str, ...] = ()) -> int:
    from osf_check.explorer.explicit.bfs import bfs
    m = model_for("graph-relay", None, SMALL)
    ex = bfs(m, [], depth=depth, keep_graph=True, check_deadlock=False)
    return sum(1 for a in ex.edges[2] if m.instances[a].name not in without)  # type: ignore[index]


def test_an_adapter_that_announces_late_steps_is_asked_for_them(monkeypatch):
    asked = _steps_asked(monkeypatch)
    with External(reference()) as ext:
        rep = tour("graph-relay", depth=7, params=SMALL, harness=ext)
        assert ext.skips(model_for("graph-relay", None, SMALL)) == ()
    assert rep.failure is None and "late_post" in asked
    # every transition of the model is the tour's to cover, the late ones too
    assert rep.edges_covered == rep.edges_total == _transitions(7)


def test_an_adapter_without_late_steps_passes_a_tour_that_leaves_them_out(monkeypatch):
    """The reference adapter with --no-late-steps, as an adapter written before the two
    steps: never sent one (it would fail the run, exit 154), the tour passes (exit 0), the
    report lists them, and the coverage counts the model without them, in which it
    covers every transition (not 4 of 2,280 missed)."""
    asked = _steps_asked(monkeypatch)
    cmd = " ".join(reference("--no-late-steps"))
    args = ["fuzz", "--model", "graph-relay", "--impl", cmd, "--tour-depth", "7",
            "--examples", "0", *(x for k, v in SMALL.items() for x in ("--param", f"{k}={v}"))]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    assert asked and not {"late_post", "late_ack"} & set(asked)
    run = json.loads(r.output[r.output.index("{"):])["runs"][0]
    assert run["implementation"]["steps_not_offered"] == ["late_post", "late_ack"]
    assert "late_steps" not in run["implementation"]["capabilities"]
    full, without = _transitions(7), _transitions(7, ("late_post", "late_ack"))
    assert without < full  # (the late steps are there to be left out at this depth)
    assert run["tour"]["transitions"] == [without, without], run["tour"]
    text = CliRunner().invoke(main, args).output
    assert "model steps not offered (the adapter lacks the late_steps capability; left out " \
        "of the tour, goals, walks and coverage): late_post, late_ack" in text, text


def test_a_late_step_is_refused_by_an_adapter_that_does_not_take_it():
    """A trace from elsewhere replayed on an adapter without late_steps: one clear line,
    never the adapter's failure on a step it does not know."""
    from osf_check.models.errors import BadValue
    from test_fuzz_graph_catch import LOST_POST
    model = model_for("graph-relay", None)
    by = {i.label: i for i in model.instances}
    with External(reference("--no-late-steps")) as ext:
        h = ext(model, None, None)
        for label in LOST_POST:
            h.apply(by[label])
        with pytest.raises(BadValue, match="cannot be asked to take late_post"):
            h.apply(by["late_post(r=0)"])
