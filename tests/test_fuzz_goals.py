"""fuzz's goals: the implementation driven to each property's premise and to each limit
pressed, and given every step the model enables there."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.fuzz import goals
from osf_check.fuzz.driver import model_for, path_trace, replay
from osf_check.models.expr import And
from osf_check.relay.wire.idempotency import MemoryClaims

WAITERS = "waiters per key (waiters)"
ROWS = "durable rows (row_cap)"
SLOTS = "light slots (light_slots)"


@pytest.fixture
def uncapped(monkeypatch):
    """The desktop's check of the waiter cap removed (a bug planted from the test: relay/
    keeps only the protocol).  At the wire defaults the model never presses that cap, so
    the tour and the walks passed this relay."""
    monkeypatch.setattr(MemoryClaims, "full", lambda self, s: False)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["graph-relay", "wire-relay"])
def test_every_goal_is_reached_on_the_correct_implementation(name):
    reached, failed = goals.reach(name)
    assert failed is None, failed[0]
    depths = {r.goal.label: (r.depth, r.wider) for r in reached}
    assert all(d is not None for d, _ in depths.values()), goals.summary(
        [r.json() for r in reached])
    # regression pins: the shortest path to each goal (explicit search, these parameters)
    if name == "wire-relay":
        assert depths[WAITERS] == (10, {"retries": 2, "light_slots": 3})
        assert depths[ROWS] == (6, {"workload": 2})
        assert depths[SLOTS] == (10, {})
        for limit in ("lim_client", "lim_desktop", "lim_user", "lim_process"):
            [alone] = [k for k in depths if k.endswith(f"alone ({limit})")]
            others = {k: 2 for k in ("lim_client", "lim_desktop", "lim_user", "lim_process")
                      if k != limit}
            assert depths[alone] == (1, others)
        assert [w for _, w in depths.values()].count({}) == len(depths) - 6
    else:
        assert max(d for d, _ in depths.values()) == 7
        assert depths["a running Graph stopped after its cancel flag was seen"] == (7, {})
    assert all(r.tried > 0 for r in reached)  # every goal state has a step to try


@pytest.mark.slow
def test_without_the_wider_parameters_the_waiter_cap_is_not_reached_and_its_bug_passes(
        uncapped):
    """What the fuzzer did before its goals: the defaults cannot press the cap, so a relay
    that ignores it passes; the count of goals reached says so (15 of 21: the row cap is
    not pressed at the defaults either, nor is any pending limit met alone)."""
    reached, failed = goals.reach("wire-relay", wider={})
    assert failed is None
    line = goals.summary([r.json() for r in reached])
    assert line.startswith("goals: 15 of 21 reached")
    assert f"B8 {WAITERS}: not within the first " in line
    assert f"not reached: B8 {ROWS}: not within the first " in line


@pytest.mark.slow
def test_a_relay_that_ignores_the_waiter_cap_is_caught_at_the_wider_parameters(uncapped):
    reached, failed = goals.reach("wire-relay")
    assert failed is not None
    why, path, at = failed
    assert why.startswith("property B8 violated by the implementation after claim(")
    assert why.endswith(f"(driven to the goal B8 {WAITERS}, at --param retries=2 "
                        "--param light_slots=3)")
    assert at == {"retries": 2, "light_slots": 3}
    m = model_for("wire-relay", None, at)
    tr = path_trace(m, path, message=why, mutant=None, seed=0)
    steps = replay(tr)
    assert [s.ok for s in steps] == [True] * (len(path) - 1) + [False], steps[-1].note


@pytest.mark.slow
def test_the_correct_relay_follows_the_waiter_cap_story():
    reached, _ = goals.reach("wire-relay")
    [r] = [r for r in reached if r.goal.label == WAITERS]
    m = model_for("wire-relay", None, r.wider)
    tr = path_trace(m, r.path, message="", mutant=None, seed=0)
    assert all(s.ok for s in replay(tr))


@pytest.mark.slow
def test_fuzz_reports_its_goals_and_traces_a_goals_failure_at_its_parameters(uncapped,
                                                                              tmp_path):
    res = CliRunner().invoke(main, ["fuzz", "--model", "wire-relay", "--tour-depth", "2",
                                    "--examples", "0", "--json", "--out", str(tmp_path)])
    assert res.exit_code == 12, res.output
    [run] = json.loads(res.stdout)["runs"]
    # the row cap's parameters come before the waiter cap's, the limits alone after them
    assert run["goals"]["total"] == 21 and run["goals"]["reached"] == 17
    [r] = [g for g in run["goals"]["each"] if g["goal"] == "pending per user alone (lim_user)"]
    assert r["not_reached"].endswith("; the run stopped at its first failure before "
                                     "looking further"), r
    [w] = [g for g in run["goals"]["each"] if g["goal"] == WAITERS]
    assert w["parameters"] == {"retries": 2, "light_slots": 3} and w["depth"] == 10
    tr = run["trace"]
    assert (tr["params"]["retries"], tr["params"]["light_slots"]) == (2, 3)
    assert tr["steps"][-1]["label"].startswith("claim(")
    text = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--tour-depth", "1",
                                     "--examples", "0"])
    assert text.exit_code == 0, text.output
    assert "  goals: 11 of 11 reached in " in text.stdout


def test_a_goal_no_state_meets_is_unreachable_on_a_complete_search_else_beyond_the_bound():
    """What "not reached" says must be true: unreachable only when every state was
    searched (TwoPhase rms=2: 2 resource managers), else the bound that stopped it."""
    from osf_check.explorer.check import prepare
    m, _, _ = prepare("two-phase", params={"rms": 2})
    never = goals.Goal("T1", "committed and aborted", lambda s, m: And(s.msgCommit, s.msgAbort))
    both = goals.Goal("T1", "one committed", lambda s, m: s.msgCommit)
    found, why = goals.shortest(m, [never, both])
    assert list(found) == [1] and why == "unreachable (every state searched)"
    found, why = goals.shortest(m, [never, both], max_states=10)
    assert why.startswith("not within the first ") and why.endswith(")")


@pytest.mark.parametrize("bug, goal, at", [
    ("rows", ROWS, {"workload": 2}),
    ("slots", SLOTS, {}),
])
@pytest.mark.slow
def test_a_limit_one_too_high_is_caught_where_the_limit_is_pressed(monkeypatch, bug, goal, at):
    """Two limits counted as reached where they refused nothing: the row cap, met by the
    default workload's only scope key (its two operations share one); the light slots,
    both held with no third call waiting.  A durable-row cap one too high and a slot too
    many each passed every default fuzz run (bugs planted from the test: relay/ keeps
    only the protocol).  Pressed (one more of its kind on the way), each is caught."""
    from osf_check.relay.wire.desktop_router import DesktopRouter
    from osf_check.relay.wire.idempotency import DurableClaims
    if bug == "rows":
        monkeypatch.setattr(DurableClaims, "_full", lambda self, rows: rows > self.max_rows)
    else:
        def one_more(self, call):
            taken = sum(1 for c in self.calls.values()
                        if c.stage in ("dispatch", "joined") and c.heavy == call.heavy)
            return taken <= self.slots[call.heavy]
        monkeypatch.setattr(DesktopRouter, "_slot_free", one_more)
    reached, failed = goals.reach("wire-relay")
    assert failed is not None
    why, path, params = failed
    if "a light call found a slot beyond 004's 8 light and 2 heavy ones" in why:
        return  # the wire inputs' slot probe, at the first forwarded call, caught it first
    assert f"(driven to the goal B8 {goal}" in why, why
    assert params == at
    m = model_for("wire-relay", None, at)
    steps = replay(path_trace(m, path, message=why, mutant=None, seed=0))
    assert [s.ok for s in steps] == [True] * (len(path) - 1) + [False], steps[-1].note


@pytest.mark.slow
def test_a_relay_that_holds_every_scope_to_one_limit_is_caught_where_a_limit_is_met_alone(
        monkeypatch):
    """At the defaults the four pending limits are all 1, so a relay that held every scope
    to the client's limit passed every default fuzz run (planted from the test).  Where
    one limit alone is 1 and the others 2, it admits what the desktop's limit refuses."""
    from osf_check.relay.wire.relay_router import RelayRouter
    admit = RelayRouter.on_request

    def client_limit_everywhere(self, c, frame, now):
        own, self.limits = self.limits, dict.fromkeys(self.limits, self.limits["client"])
        try:
            return admit(self, c, frame, now)
        finally:
            self.limits = own
    monkeypatch.setattr(RelayRouter, "on_request", client_limit_everywhere)
    reached, failed = goals.reach("wire-relay", wider={})
    assert failed is None  # the defaults cannot tell
    _, failed = goals.reach("wire-relay")
    why, path, at = failed
    assert why == ("property B8 violated by the implementation after send(o=1) (driven to "
                   "the goal B8 pending per desktop alone (lim_desktop), at --param "
                   "lim_client=2 --param lim_user=2 --param lim_process=2)")
    assert at == {"lim_client": 2, "lim_user": 2, "lim_process": 2}
