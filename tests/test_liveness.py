"""Liveness as TLA+ means it: stuttering and halting behaviours, fairness over sets of
actions, leads-to with a transient premise, and the forms [] <> []<> <>[].

Every model here is a small file written as a user would; every expected verdict and
counterexample is a hand count (the comment by each says how).  A path is the list of
states shown (the initial state included); ``loop`` is the index where the behaviour
cycles back to, or where it stutters forever."""

from __future__ import annotations

import json
import textwrap

from click.testing import CliRunner

from osf_check.cli import main

HEAD = """
from osf_check import (And, Bool, Check, Goal, Int, ModelBuilder, ModelSpec, Not,
                       Property)
"""


def model_file(tmp_path, name: str, body: str, goals: str, kind: str = "fair") -> str:
    """A model file: ``body`` builds the model (``b`` the builder, name ``m``), ``goals``
    is the body of ``fn(s, m) -> [Goal]`` of property L1's ``kind`` check."""
    inner = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    src = (HEAD + "\n\ndef build(params, mutant):\n"
           '    b = ModelBuilder("m", params, mutant, actors=("p",))\n'
           f"{inner}\n    return b.build()\n\n\n"
           'SPEC = ModelSpec(name="m", title="m", params=(), mutants={}, build_fn=build)\n\n\n'
           f"def goals(s, m):\n    return {goals}\n\n\n"
           'PROPERTIES = (Property("L1", "live", "m", "a liveness property", '
           f'(Check("{kind}", goals),), ()),)\n')
    p = tmp_path / f"{name}.py"
    p.write_text(src)
    return str(p)


def explore(path: str, *extra: str):
    r = CliRunner().invoke(main, ["explore", "--model-file", path, "--depth", "unbounded",
                                  "--json", *extra])
    assert r.exit_code in (0, 13, 150), (r.exit_code, r.stdout, r.stderr)
    if r.exit_code == 150:
        return 150, r.stderr, None
    [m] = json.loads(r.stdout)["models"]
    return r.exit_code, m["properties"][0]["status"], m["violations"]


def shape(violations) -> tuple[list, int | None, bool]:
    """A counterexample's states (as dicts), its loop index and whether it stutters."""
    [v] = violations
    tr = v["trace"]
    return [s["state"] for s in tr["steps"]], tr["loop_start"], tr["stutters"]


# a termination-detection model: a worker finishes, then a detector sees it ----------------
TERMINATION = """
b.var("active", Bool(), actor="p")
b.var("detected", Bool(), actor="p")

@b.action("p"{fair})
def finish(s):
    return s.active, {{s.active: False}}

@b.action("p"{fair})
def detect(s):
    return And(Not(s.active), Not(s.detected)), {{s.detected: True}}

b.quiescent(lambda s: s.detected)
b.init(active=True, detected=False)
"""


def test_without_fairness_a_behaviour_may_stutter_forever_before_termination(tmp_path):
    """EWD840 with its WF_vars(System) removed, in small: TLC reports the leads-to
    violated by stuttering.  Hand count: no action is fair, so stuttering in the
    initial state forever is a fair behaviour on which ``detected`` never holds:
    one state, then stuttering.  (osf-check said "holds": there is no cycle.)"""
    f = model_file(tmp_path, "term", TERMINATION.format(fair=""),
                   '[Goal("detects", True, s.detected)]')
    code, status, vs = explore(f)
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert states == [{"active": True, "detected": False}]
    assert (loop, stutters) == (0, True)
    assert "then stutters forever" in vs[0]["message"]


def test_weak_fairness_of_the_system_forbids_that_stuttering(tmp_path):
    """Hand count: with both actions weakly fair, each state but the last has a fair
    action enabled, and the last has detected: the property holds."""
    f = model_file(tmp_path, "term", TERMINATION.format(fair=', fair="weak"'),
                   '[Goal("detects", True, s.detected)]')
    assert explore(f)[:2] == (0, "holds")


def test_a_halting_behaviour_violates_eventually(tmp_path):
    """An end state under --no-deadlock is a state where the behaviour stutters forever.
    Hand count: n goes 0 -> 1 -> 2 (weakly fair) and stops; n = 3 never holds: three
    states, then stuttering in the third.  (osf-check said "holds": no cycle.)"""
    body = """
    b.var("n", Int(0, 3), actor="p")

    @b.action("p", fair="weak")
    def inc(s):
        return s.n < 2, {s.n: s.n + 1}

    b.init(n=0)
    """
    f = model_file(tmp_path, "halt", body, '[Goal("three", True, s.n == 3)]')
    code, status, vs = explore(f, "--no-deadlock")
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert [s["n"] for s in states] == [0, 1, 2]
    assert (loop, stutters) == (2, True)


def test_a_self_loop_is_a_stuttering_step_not_a_step_of_a_fair_action(tmp_path):
    """An action whose only step leaves the state as it is is not enabled in TLA+'s
    sense (<A>_vars): weak fairness of it does not forbid stuttering there.  Hand
    count: ``idle`` (weakly fair) is a self-loop in the only state; ``go`` is not fair:
    stuttering at the initial state is fair and done never holds."""
    body = """
    b.var("done", Bool(), actor="p")

    @b.action("p", fair="weak")
    def idle(s):
        return True, {s.done: s.done}

    @b.action("p")
    def go(s):
        return Not(s.done), {s.done: True}

    b.init(done=False)
    """
    f = model_file(tmp_path, "loop", body, '[Goal.eventually("done", s.done)]')
    code, status, vs = explore(f, "--no-deadlock")
    assert (code, status) == (13, "violated")
    assert shape(vs) == ([{"done": False}], 0, True)


# strong fairness over a set of actions -----------------------------------------------------
ALLOC = """
b.var("owner", Int(0, 2), actor="p", doc="2: free")

@b.action("p", params={{"c": (0, 1)}}{fair})
def alloc(s, c):
    return s.owner == 2, {{s.owner: c}}

@b.action("p", fair="weak")
def release(s):
    return s.owner != 2, {{s.owner: 2}}
{sets}
b.init(owner=2)
"""


def test_strong_fairness_of_each_instance_gives_every_client_the_resource(tmp_path):
    """Hand count: alloc(c=1) is enabled whenever the resource is free, which is
    infinitely often (release is weakly fair): SF of that instance makes it taken."""
    f = model_file(tmp_path, "alloc", ALLOC.format(fair=', fair="strong"', sets=""),
                   '[Goal.infinitely_often("client 1 served", s.owner == 1)]')
    assert explore(f)[:2] == (0, "holds")


def test_strong_fairness_of_the_set_lets_one_client_starve(tmp_path):
    """SF_vars(\\E c: alloc(c)) is met by serving client 0 forever.  Hand count: the
    cycle free -> owner 0 -> free is fair (the set is taken on it, release too) and
    client 1 is never served: the initial state, then a cycle of two steps."""
    f = model_file(tmp_path, "alloc", ALLOC.format(
        fair="", sets='b.fairness("strong", ["alloc"])'),
        '[Goal.infinitely_often("client 1 served", s.owner == 1)]')
    code, status, vs = explore(f)
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert ([s["owner"] for s in states], loop, stutters) == ([2, 0, 2], 0, False)


def test_a_fairness_set_naming_no_action_is_bad_input(tmp_path):
    f = model_file(tmp_path, "alloc", ALLOC.format(
        fair="", sets='b.fairness("strong", ["allocate"])'),
        '[Goal.infinitely_often("served", s.owner == 1)]')
    code, err, _ = explore(f)
    assert code == 150 and "no action or action instance named 'allocate'" in err
    assert "Traceback" not in err


# leads-to with a transient premise ---------------------------------------------------------
PHASES = """
b.var("phase", Int(0, 3), actor="p")

@b.action("p", fair="weak")
def start(s):
    return s.phase == 0, {s.phase: 1}

@b.action("p", fair="weak")
def flip(s):
    return And(s.phase >= 1, s.phase <= 2), {s.phase: 3 - s.phase}

b.init(phase=0)
"""


def test_leads_to_is_judged_when_its_premise_holds_only_once(tmp_path):
    """phase = 0 ~> phase = 3: the premise holds in the initial state only, then the
    phases cycle 1, 2, 1, ... and 3 never comes.  Hand count: the initial state, one
    step to phase 1, the cycle 1 -> 2 -> 1 (loop at index 1).  (osf-check said
    "holds": it looked for a cycle inside premise states only.)"""
    f = model_file(tmp_path, "phases", PHASES, '[Goal("ends", s.phase == 0, s.phase == 3)]')
    code, status, vs = explore(f)
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert ([s["phase"] for s in states], loop, stutters) == ([0, 1, 2, 1], 1, False)


def test_leads_to_holds_when_the_goal_follows(tmp_path):
    f = model_file(tmp_path, "phases", PHASES, '[Goal.leads_to("ends", s.phase == 0, '
                   's.phase == 2)]')
    assert explore(f)[:2] == (0, "holds")


# [] <> []<> <>[] on a counter 0 -> 1 -> 2 -> 0 (both actions weakly fair) ---------------
COUNTER = """
b.var("x", Int(0, 3), actor="p")

@b.action("p", fair="weak")
def inc(s):
    return s.x < 2, {s.x: s.x + 1}

@b.action("p", fair="weak")
def reset(s):
    return s.x == 2, {s.x: 0}

b.init(x=0)
"""


def _counter(tmp_path, goal: str):
    return explore(model_file(tmp_path, "counter", COUNTER, f"[{goal}]"))


def test_always(tmp_path):
    """Hand count: x = 2 after two steps, then the fair cycle 2 -> 0 -> 1 -> 2."""
    assert _counter(tmp_path, 'Goal.always("bounded", s.x <= 2)')[:2] == (0, "holds")
    code, status, vs = _counter(tmp_path, 'Goal.always("small", s.x < 2)')
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert ([s["x"] for s in states], loop, stutters) == ([0, 1, 2, 0, 1, 2], 2, False)


def test_eventually(tmp_path):
    """Hand count: the only behaviour cycles 0 1 2 from the start and x = 3 never
    holds: the cycle from the initial state (loop at 0)."""
    assert _counter(tmp_path, 'Goal.eventually("two", s.x == 2)')[:2] == (0, "holds")
    code, status, vs = _counter(tmp_path, 'Goal.eventually("three", s.x == 3)')
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert ([s["x"] for s in states], loop, stutters) == ([0, 1, 2, 0], 0, False)


def test_infinitely_often(tmp_path):
    assert _counter(tmp_path, 'Goal.infinitely_often("zero", s.x == 0)')[:2] == (0, "holds")
    code, status, vs = _counter(tmp_path, 'Goal.infinitely_often("three", s.x == 3)')
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert ([s["x"] for s in states], loop, stutters) == ([0, 1, 2, 0], 0, False)


def test_eventually_always(tmp_path):
    """Hand count: x > 0 fails at every visit to 0, which the cycle makes infinitely
    often."""
    assert _counter(tmp_path, 'Goal.eventually_always("bounded", s.x <= 2)')[:2] == \
        (0, "holds")
    code, status, vs = _counter(tmp_path, 'Goal.eventually_always("positive", s.x > 0)')
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert ([s["x"] for s in states], loop, stutters) == ([0, 1, 2, 0], 0, False)


def test_eventually_always_violated_by_stuttering(tmp_path):
    """Without fairness the behaviour may stutter in its initial state, where x > 0
    fails forever: one state, then stuttering."""
    body = COUNTER.replace(', fair="weak"', "")
    code, status, vs = explore(model_file(tmp_path, "c", body,
                                          '[Goal.eventually_always("positive", s.x > 0)]'))
    assert (code, status) == (13, "violated")
    assert shape(vs) == ([{"x": 0}], 0, True)


def test_a_form_outside_the_list_is_refused_in_one_line(tmp_path):
    code, err, _ = _counter(tmp_path, 'Goal("x", True, s.x == 0, "[]<>[]")')
    assert code == 150 and "temporal form '[]<>[]'" in err and "Traceback" not in err


def test_a_reach_check_reads_leads_to_only(tmp_path):
    code, err, _ = explore(model_file(tmp_path, "r", COUNTER,
                                      '[Goal.always("x", s.x < 3)]', kind="reach"))
    assert code == 150 and "a reach check does not read" in err


# what a stuttering counterexample looks like ------------------------------------------------
def test_the_text_and_json_of_a_stuttering_counterexample_say_so(tmp_path):
    f = model_file(tmp_path, "term", TERMINATION.format(fair=""),
                   '[Goal("detects", True, s.detected)]')
    r = CliRunner().invoke(main, ["explore", "--model-file", f, "--depth", "unbounded",
                                  "--out", str(tmp_path / "out")])
    assert r.exit_code == 13
    assert "then stutters forever in state 0" in r.stdout
    doc = json.loads((tmp_path / "out" / "result.json").read_text())
    [v] = doc["models"][0]["violations"]
    assert v["trace"]["stutters"] is True
    itf = [p for p in (tmp_path / "out").rglob("*.itf.json")]
    assert itf and json.loads(itf[0].read_text())["loop"] == 0


# a cross-check with TLC -------------------------------------------------------------------
HOUR_CLOCK = """
b.var("hr", Int(1, 12), actor="p")

@b.action("p"{fair})
def tick(s):
    return True, {{s.hr: If(s.hr == 12, 1, s.hr + 1)}}

for h in range(1, 13):
    b.init(hr=h)
"""


def test_the_hour_clock_agrees_with_tlc(tmp_path):
    """LiveHourClock.tla (Specifying Systems) translated, AllTimes == \\A n: []<>(hr = n).
    TLC 2.19 (a run on the published spec): with WF_hr(HCnxt) 12 distinct states, 24
    generated, AllTimes holds; with the fairness removed (next test), AllTimes violated,
    1 state then stuttering."""
    goals = '[Goal.infinitely_often(f"hour {n}", s.hr == n) for n in range(1, 13)]'
    head = 'from osf_check import If\n'
    f = model_file(tmp_path, "clock", head + HOUR_CLOCK.format(fair=', fair="weak"'), goals)
    r = CliRunner().invoke(main, ["explore", "--model-file", f, "--depth", "unbounded",
                                  "--json"])
    [m] = json.loads(r.stdout)["models"]
    assert (r.exit_code, m["distinct_states"], m["generated_states"]) == (0, 12, 24)


def test_the_hour_clock_without_fairness_stutters_as_tlc_says(tmp_path):
    goals = '[Goal.infinitely_often(f"hour {n}", s.hr == n) for n in range(1, 13)]'
    head = 'from osf_check import If\n'
    f = model_file(tmp_path, "clock2", head + HOUR_CLOCK.format(fair=""), goals)
    code, status, vs = explore(f)
    assert (code, status) == (13, "violated")
    states, loop, stutters = shape(vs)
    assert (len(states), loop, stutters) == (1, 0, True)
