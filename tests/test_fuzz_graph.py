"""The Graph-run relay implementation, fuzzed against the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fuzz.driver import hypothesis_run, tour
from fuzzcheck import assert_reproduces, run_then_kill
from fuzz.graph_harness import IMPL_MUTANTS
from osf_check.cli import main
from relay.graph.desktop import DesktopRelay
from fuzz import mutants
from fuzz.oracles import bounded, utf16_length
from relay.graph.payload import (ERROR_LIMIT, RESULT_LIMIT, completion_payload,
                                 stringify_length, whole)
from relay.graph.server import NOT_FOUND, GraphServer, ToolError

SID = "gs_" + "ab" * 16


def test_tour_covers_every_state_and_transition_and_finds_nothing():
    rep = tour("graph-relay", depth=6)
    assert rep.failure is None
    # regression pins: the explorer's graph to this depth (covered = observed, see
    # test_tour_coverage_drops_when_the_harness_skips_transitions)
    assert rep.states_covered == rep.states_total == 2_930
    assert rep.edges_covered == rep.edges_total == 14_056


def test_hypothesis_finds_nothing_on_the_correct_implementation():
    rep = hypothesis_run("graph-relay", examples=30, steps=30, profile="ci")
    assert rep.failure is None and rep.hypothesis_steps > 0


@pytest.mark.parametrize("mutant", [m for m in IMPL_MUTANTS if m != "queue-on-desktop"])
def test_tour_catches_each_implementation_mutant(mutant):
    rep = tour("graph-relay", depth=8, mutant=mutant)
    assert rep.failure is not None, mutant
    assert 1 <= len(rep.path) <= 8
    assert_reproduces(rep)


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
    assert rep.exit_code == 12 and "does not follow the trace at step 2" in rep.stdout
    ok = CliRunner().invoke(main, ["replay", str(tr), "--mutant", "none"])
    assert ok.exit_code == 0 and "followed all 2 steps" in ok.stdout


def test_explore_counterexample_reproduces_on_the_implementation_mutant(tmp_path):
    CliRunner().invoke(main, ["explore", "--mutant", "complete-overwrites-cancel", "--out",
                              str(tmp_path)])
    tr = str(tmp_path / "graph-relay-complete-overwrites-cancel-A3-trans.trace.json")
    bad = CliRunner().invoke(main, ["replay", tr])
    assert bad.exit_code == 12 and "property A3 violated by the implementation" in bad.stdout
    good = CliRunner().invoke(main, ["replay", tr, "--mutant", "none"])
    assert good.exit_code == 12 and "differs from the trace in outcome" in good.stdout


def test_fuzz_bad_input():
    res = CliRunner().invoke(main, ["fuzz", "--mutant", "nope"])
    assert res.exit_code == 150 and "neither implementation has a mutant 'nope'" in res.stderr
    res = CliRunner().invoke(main, ["fuzz", "--model", "two-phase"])
    assert res.exit_code == 150 and "no implementation to fuzz" in res.stderr
    res = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--mutant", "outbox-off"])
    assert res.exit_code == 150 and "wire-relay has no mutant 'outbox-off'" in res.stderr


# A8 at the edge ------------------------------------------------------------------------
def _sized(units: int, unit: str) -> str:
    """A result whose completion's JSON.stringify length is ``units`` (UTF-16 code units),
    or as close below as ``unit`` allows."""
    base = whole("e", "completed", "", 1, 0.5)
    overhead = utf16_length(json.dumps(base, ensure_ascii=False, separators=(",", ":")))
    return unit * ((units - overhead) // utf16_length(unit))


@pytest.mark.parametrize("unit", ["a", "日", "😀", "𝄞"])
def test_a_result_at_the_limit_is_posted_whole_and_one_more_unit_is_not(unit):
    text = _sized(RESULT_LIMIT, unit)
    full = whole("e", "completed", text, 1, 0.5)
    assert RESULT_LIMIT - utf16_length(unit) < stringify_length(full) <= RESULT_LIMIT
    p = completion_payload("e", "completed", text, 1, 0.5)
    assert p == full and bounded(p, full) is None
    over = text + unit
    q = completion_payload("e", "completed", over, 1, 0.5)
    assert q == {"execution_id": "e", "status": "completed", "result_truncated": True}
    assert bounded(q, whole("e", "completed", over, 1, 0.5)) is None


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


def test_errors_are_cut_to_2000_characters():
    p = completion_payload("e", "failed", None, 0, 0, error="é" * 5000)
    assert len(p["error"]) == ERROR_LIMIT


# tool contracts ----------------------------------------------------------------------------
@pytest.mark.parametrize("args, needle", [
    ({"graph_session_id": SID, "idempotency_key": "short"}, "8 to 128"),
    ({"graph_session_id": SID, "idempotency_key": "k" * 129}, "8 to 128"),
    ({"graph_session_id": SID}, "required"),
    ({"graph_session_id": "gs_123", "idempotency_key": "k" * 8}, "32 hex"),
    ({"graph_session_id": SID, "idempotency_key": "k" * 8, "user_id": 1}, "unknown field"),
    ({"graph_session_id": SID, "idempotency_key": "k" * 8, "arguments": [1]}, "object"),
])
def test_run_graph_session_validates_its_input(args, needle):
    with pytest.raises(ToolError, match=needle):
        GraphServer().run_graph_session(0, args)


def test_retry_with_the_same_key_gets_the_first_ticket_and_ids_are_uuids():
    import uuid
    s = GraphServer()
    a = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "k" * 8})
    b = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "k" * 8})
    assert a == b and uuid.UUID(a["command_id"]).version == 4 and len(s.runs) == 1
    assert set(a) == {"command_id", "status"}  # the tool's description names the reader
    c = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "other-key"})
    assert c["command_id"] != a["command_id"]  # a fresh key is a second run, by design


def test_unknown_empty_and_foreign_ids_answer_the_same():
    s = GraphServer()
    cid = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "k" * 8})[
        "command_id"]
    answers = set()
    for agent, x in ((1, cid), (0, ""), (0, "00000000-0000-4000-8000-000000000000"), (0, None)):
        for call in (s.get_graph_run, s.cancel_graph_run):
            with pytest.raises(ToolError) as e:
                call(agent, x)
            answers.add(str(e.value))
    assert answers == {NOT_FOUND}
    assert s.runs[0].status == "queued"  # the foreign cancel changed nothing


def test_tools_carry_000s_contract_scopes_and_annotations():
    from relay.graph.server import TOOLS
    tools = {t["name"]: t for t in GraphServer.tools_list()}
    assert set(tools) == {"run_graph_session", "get_graph_run", "cancel_graph_run",
                          "list_graph_sessions"}
    assert "Retrieve progress and result with get_graph_run" in \
        tools["run_graph_session"]["description"]
    assert tools["run_graph_session"]["annotations"] == {"readOnlyHint": False,
                                                         "destructiveHint": True}
    assert tools["get_graph_run"]["annotations"]["readOnlyHint"] is True
    scopes = {n: t["securitySchemes"][0]["scopes"] for n, t in tools.items()}
    assert scopes == {"run_graph_session": ["osfoundry:run"], "cancel_graph_run": ["osfoundry:run"],
                      "get_graph_run": ["osfoundry:read"], "list_graph_sessions": ["osfoundry:read"]}
    assert TOOLS["run_graph_session"]["inputSchema"]["additionalProperties"] is False


def test_a_call_without_the_tools_scope_is_refused_and_changes_nothing():
    s = GraphServer()
    args = {"graph_session_id": SID, "idempotency_key": "k" * 8}
    with pytest.raises(ToolError, match="osfoundry:run"):
        s.call_tool(0, "run_graph_session", args, {"osfoundry:read"})
    assert not s.runs
    cid = s.call_tool(0, "run_graph_session", args, {"osfoundry:run"})["command_id"]
    with pytest.raises(ToolError, match="osfoundry:read"):
        s.call_tool(0, "get_graph_run", {"command_id": cid}, {"osfoundry:run"})
    assert s.call_tool(0, "get_graph_run", {"command_id": cid}, {"osfoundry:read"})["status"] == \
        "queued"
    with pytest.raises(ToolError, match="osfoundry:run"):
        s.call_tool(0, "cancel_graph_run", {"command_id": cid}, {"osfoundry:read"})
    assert s.runs[0].status == "queued"


def test_projects_are_kept_apart_by_sync_and_list():
    s = GraphServer()
    other = "gs_" + "cd" * 16
    assert s.list_graph_sessions("p1") == {"project_id": "p1", "sessions": []}  # the default
    s.sync("p1", [{"graph_session_id": SID, "name": "a", "description": "d", "slug": "x",
                   "version": 1, "status": "ready"}])
    s.sync("p2", [{"graph_session_id": other, "name": "b", "description": "e", "slug": "y",
                   "version": 1, "status": "ready"}])
    assert [x["graph_session_id"] for x in s.list_graph_sessions("p1")["sessions"]] == [SID]
    assert [x["graph_session_id"] for x in s.list_graph_sessions("p2")["sessions"]] == [other]
    a = s.run_graph_session(0, {"graph_session_id": SID, "idempotency_key": "k" * 8})
    b = s.run_graph_session(0, {"graph_session_id": other, "idempotency_key": "j" * 8})
    assert [r.project_id for r in s.runs] == ["p1", "p2"]  # filed under their projects
    assert [c["command_id"] for c in s.sync("p2", [])] == [b["command_id"]]
    assert s.list_graph_sessions("p2")["sessions"] == []  # p2's last sync uploaded nothing
    assert [x["graph_session_id"] for x in s.list_graph_sessions("p1")["sessions"]] == [SID]
    assert [c["command_id"] for c in s.sync("p1", [])] == [a["command_id"]]


def test_the_desktop_syncs_each_enabled_project_with_its_own_sessions(tmp_path):
    other = "gs_" + "cd" * 16
    d = DesktopRelay(str(tmp_path / "o.sqlite"), projects={"p1": SID, "p2": other})
    assert [(r["project_id"], [x["graph_session_id"] for x in r["sessions"]])
            for r in d.sync_requests()] == [("p1", [SID]), ("p2", [other])]
    d.enabled["p1"] = False
    assert [r["project_id"] for r in d.sync_requests()] == ["p2"]


def test_the_project_binding_refuses_an_id_that_is_not_a_uuid():
    with pytest.raises(ValueError, match="not a UUID"):
        GraphServer._bind("cmd-1")
    assert GraphServer._bind("00000000-0000-4000-8000-000000000000")


def test_a_sharing_change_starts_a_round_at_once_unless_busy(tmp_path):
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.sharing_changed()
    assert d.phase == "sync"
    assert d.sharing_changed() == [] and d.phase == "sync"  # busy: skipped


# crashes between steps --------------------------------------------------------------------
def test_reopening_the_database_loses_no_completion(tmp_path):
    path = str(tmp_path / "outbox.sqlite")
    d = DesktopRelay(path, session_id=SID)
    d.sync_reply([{"command_id": "c1", "graph_session_id": SID, "slug": d.slug}])
    c = d.next_command()
    assert d.start_or_refuse(c) is None
    d.finish(c, "completed", "日本語の結果")
    d.outbox.close()  # the process dies before the POST is acknowledged
    d2 = DesktopRelay(path, session_id=SID)
    resent = d2.tick()
    assert [p["execution_id"] for p in resent] == ["c1"]
    assert resent[0]["result"] == "日本語の結果"


CHILD = r"""
import sys, os
from relay.graph.desktop import DesktopRelay
d = DesktopRelay(sys.argv[1], session_id="gs_" + "ab" * 16)
d.sync_reply([{"command_id": "c1", "graph_session_id": d.session_id, "slug": d.slug}])
c = d.next_command(); d.start_or_refuse(c); d.finish(c, "failed", "x", error="boom")
print("written", flush=True)
import time; time.sleep(60)
"""


def test_a_killed_process_loses_no_completion(tmp_path):
    path = str(tmp_path / "outbox.sqlite")
    run_then_kill(CHILD, path)
    d = DesktopRelay(path, session_id=SID)
    assert [(e, x["status"]) for e, x in d.outbox.entries()] == [("c1", "failed")]


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


# coverage is what the implementation was seen to do ------------------------------------------
def test_tour_coverage_drops_when_the_harness_skips_transitions():
    from fuzz.driver import make_harness

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


def test_the_full_record_stays_in_the_desktops_history(tmp_path):
    d = DesktopRelay(str(tmp_path / "o.sqlite"), session_id=SID)
    d.commands["c1"] = c = __import__("relay.graph.desktop", fromlist=["Command"]).Command(
        "c1", SID, d.slug, state="running")
    big = "x" * (RESULT_LIMIT + 1)
    posted = d.finish(c, "completed", big, 7, 0.5)
    assert posted.get("result_truncated") is True and "result" not in posted
    assert d.history["c1"]["result"] == big and d.history["c1"]["total_tokens"] == 7
