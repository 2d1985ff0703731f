"""``osf-check describe``: each model's reference, read off the model (actions with
their arguments, guards, effects and actors, who takes them, variables, fairness,
properties); the shipped references kept fresh; and adapters that crash say why."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.models.describe import action_forms
from osf_check.models.dsl import Enum, Int, ModelBuilder

ROOT = Path(__file__).resolve().parent.parent
MUTEX = str(ROOT / "examples" / "mutex.py")


def describe(*args: str, code: int = 0):
    res = CliRunner().invoke(main, ["describe", *args])
    assert res.exit_code == code, (res.exit_code, res.output)
    return res


def action(doc, signature):
    return next(a for a in doc["actions"] if a["signature"] == signature)


def one_form(a):
    assert len(a["forms"]) == 1 and a["forms"][0]["instances"] is None, a["forms"]
    return a["forms"][0]


# the shipped models ----------------------------------------------------------------------

def test_graph_relay_in_markdown_names_guards_effects_actors_and_who_takes_each_action():
    md = describe("--model", "graph-relay").output
    assert md.startswith("# graph-relay: the model's reference")
    start = md[md.index("### `run_graph_session(i)`"):md.index("### `lose_request(i)`")]
    assert "Actor: agent, towards server; initiative: **environment**." in start
    assert "Arguments: `i` ∈ {0, 1}." in start
    assert '  - `call[i] ∈ {"idle", "lost"}`' in start
    assert "  - `call'[i] = \"waiting\"`" in start
    assert "  - `attempts'[i] = attempts[i] + 1`" in start
    tick = md[md.index("### `tick`"):md.index("### `sync`")]
    assert "initiative: **implementation**; *idle event*; strong fairness" in tick
    assert '  - `phase = "idle"`' in tick
    assert '  - `post\'[0] = "sent" if outbox[0] ∧ post[0] = "none" (else unchanged)`' in tick
    # every variable, with its JSON values and what it means
    assert ('| `phase` | "idle" \\| "sync" \\| "work" | desktop | the relay round '
            '(idle: not busy) |') in md
    assert "| `flag` | array of 2: true \\| false | server | cancel requested while running |" in md
    assert "| A1 |" in md and "- infinitely often on a fair behaviour (desktop online): `online`" in md


def test_graph_relay_in_json_gives_each_arguments_domain_and_the_answers():
    doc = json.loads(describe("--model", "graph-relay", "--format", "json").output)
    assert doc["actors"][:3] == ["agent", "another agent", "owner"]
    finish = action(doc, "graph_finish(r, o)")
    assert finish["actor"] == "desktop" and finish["initiative"] == "environment"
    assert finish["arguments"] == [{"name": "r", "values": [0, 1]},
                                   {"name": "o", "values": [1, 2],
                                    "names": ["completed", "failed"]}]
    assert finish["fairness"] == "strong"
    form = one_form(finish)
    assert "exec'[r] = \"done\"" in form["effect"]
    assert any(e.startswith("outcome'[r] = IF exec[r] = \"stopping\" THEN \"cancelled\" ELSE o")
               for e in form["effect"]), form["effect"]
    # one name, two variants: the agent that started the run and another one
    own = one_form(action(doc, "get_graph_run(i, r)"))
    assert own["guard"] == ['call[i] = "done"', "ticket[i] = r"]
    assert own["outputs"] == ['read = IF result[r] THEN "result" ELSE "status"']
    assert action(doc, "get_graph_run(a, r)")["actor"] == "another agent"
    assert doc["harness"] == {"offers": ["tick", "start_graph", "refuse"],
                              "idle_events": ["tick", "round_end"], "fuzzable": True}
    assert {a["name"] for a in doc["actions"] if a["initiative"] == "implementation"} == \
        {"tick", "start_graph", "refuse"}
    var = {v["name"]: v for v in doc["variables"]}
    assert var["exec"]["domain"]["values"][:2] == ["none", "fetched"]
    assert var["exec"]["doc"] == "the desktop's view of each command"
    assert all(v["doc"] for v in doc["variables"]), "a shipped variable without a meaning"


def test_wire_relay_writes_a_copys_index_as_the_arguments_it_is_made_of():
    doc = json.loads(describe("--model", "wire-relay", "--format", "json").output)
    claim = action(doc, "claim(o, a)")
    assert claim["initiative"] == "implementation" and claim["actor"] == "desktop"
    assert 'stage[o][a] = "slot_wait"' in one_form(claim)["guard"]
    forward = one_form(action(doc, "forward(o, a)"))
    assert forward["guard"][:2] == ["pend[o] = o + 1", "tries[o] = a + 1"]
    # instances of another shape are forms of their own, labelled by what they fix
    applies = [f["applies"] for f in action(doc, "execute(o, a, out, stored)")["forms"]]
    assert "execute(o, a, out=success, stored=0)" in applies, applies
    md = describe("--model", "wire-relay", "--param", "ops=1").output
    assert "Arguments: `o` ∈ {0}; `a` ∈ {0, 1}." in md


# a model of the user's --------------------------------------------------------------------

def test_a_model_file_is_described_in_markdown_and_json():
    md = describe("--model-file", MUTEX).output
    acquire = md[md.index("### `acquire(c)`"):md.index("### `release(c)`")]
    assert "Actor: lock, towards client; strong fairness." in acquire
    assert '  - `pc[c] = "waiting"`' in acquire and "  - `holder = -1`" in acquire
    assert "  - `holder' = c`" in acquire
    assert "| `holder` | integer -1..1 | lock | who holds the lock, or -1 |" in md
    assert "initiative" not in md  # no fuzz harness: nobody offers anything
    doc = json.loads(describe("--model-file", MUTEX, "--param", "clients=3",
                              "--format", "json").output)
    assert action(doc, "request(c)")["arguments"] == [{"name": "c", "values": [0, 1, 2]}]
    assert doc["actors"] == ["client", "lock"]
    assert [p["id"] for p in doc["properties"]] == ["M1", "M2", "M3", "M4", "M5"]
    assert {"kind": "weak", "of": "each instance of release",
            "actions": ["release(c=0)", "release(c=1)", "release(c=2)"]} in doc["fairness"]


def test_an_index_that_does_not_follow_the_argument_stays_a_number():
    """A leaf is written as an argument only where it is that argument in every
    instance: x[0], read by every instance, stays x[0]; a guard whose shape differs by
    instance is shown instance by instance."""
    b = ModelBuilder("m", actors=("w",))
    x = b.array("x", Enum("off", "on"), 3, actor="w", doc="switches")
    b.var("n", Int(0, 3), actor="w")

    @b.action("w", params={"r": range(3)})
    def flip(s, r):
        return s.x[0] == 0, {s.x[r]: 1}

    @b.action("w", params={"r": range(2)})
    def first(s, r):
        return (s.x[1] == 1) if r else True, {s.n: r}
    b.init(x=0, n=0)
    m = b.build()
    assert action_forms(m, "flip")[0]["guard"] == ['x[0] = "off"']
    assert action_forms(m, "flip")[0]["effect"] == ['x\'[r] = "on"']
    forms = action_forms(m, "first")
    assert [f["applies"] for f in forms] == ["first(r=0)", "first(r=1)"]
    assert forms[1]["guard"] == ['x[1] = "on"'] and forms[1]["effect"] == ["n' = 1"]
    assert x is not None


@pytest.mark.parametrize("args, needle", [
    (["--model", "nope"], "unknown model 'nope'"),
    (["--model", "graph-relay", "--param", "agents=9"], "outside 2..3"),
    (["--model", "graph-relay", "--param", "colour=1"], "no parameter 'colour'"),
    (["--model-file", "/nonexistent/model.py"], "no such file"),
    (["--model", "graph-relay", "--format", "xml"], "'xml' is not one of"),
    ([], "name the model with --model"),
])
def test_bad_input_is_one_line_and_150(args, needle):
    res = describe(*args, code=150)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in res.output, lines


def test_an_unloadable_model_file_is_one_line_and_150(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def broken(:\n")
    res = describe("--model-file", str(bad), code=150)
    assert "SyntaxError" in res.stderr and len(res.stderr.strip().splitlines()) == 1


# the shipped references ------------------------------------------------------------------

def test_the_shipped_references_are_what_describe_prints(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_reference
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    want = gen_reference.pages()
    assert gen_reference.stale(want) == [], "run python scripts/gen_reference.py --write"
    # and a page that is not is caught
    path = next(iter(want))
    stale = tmp_path / path.name
    stale.write_text(path.read_text().replace('`phase = "idle"`', '`phase = "sync"`', 1))
    monkeypatch.setattr(gen_reference, "ROOT", tmp_path)
    diffs = gen_reference.stale({stale: want[path]})
    assert len(diffs) == 1 and '+  - `phase = "idle"`' in diffs[0]
    doc = (ROOT / "docs" / "driver-protocol.md").read_text()
    assert "(reference/graph-relay.md)" in doc and "(reference/wire-relay.md)" in doc


# adapters that fail say why --------------------------------------------------------------

CRASHING = """\
import sys
print("adapter: starting", file=sys.stderr)
for i in range(12):
    print(f"adapter: loaded module {i}", file=sys.stderr)
print("Error: cannot open the outbox database", file=sys.stderr)
print("    at open (store.mjs:12:9)", file=sys.stderr)
print("Node.js v20.20.2", file=sys.stderr)
sys.exit(1)
"""


def test_an_adapter_that_crashes_at_start_up_shows_the_end_of_its_stderr(tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(CRASHING)
    res = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--impl",
                                    f"{sys.executable} {script}"])
    assert res.exit_code == 154, res.output
    err = [ln for ln in res.stderr.splitlines() if "adapter failed" in ln]
    assert len(err) == 1, res.stderr
    line = err[0]
    assert "(exit status 1)" in line and "at hello" in line
    assert "Error: cannot open the outbox database ⏎ at open (store.mjs:12:9) ⏎ " \
           "Node.js v20.20.2" in line, line
    assert "adapter: starting" not in line  # the end, not the beginning


def test_an_idle_event_that_changed_the_state_reads_as_a_sentence():
    from osf_check.driver.external import ExternalHarness
    from osf_check.explorer.check import prepare
    m, _, _ = prepare("graph-relay")
    s0 = m.initial_states[0]
    phase = m.slot_names.index("phase")
    s1 = s0[:phase] + (1,) + s0[phase + 1:]

    class Changed(ExternalHarness):
        def __init__(self, states, sent):
            self.model, self.violations, self.shared_just_now = m, [], False
            self.states, self.sent = list(states), sent

        def abstract(self):
            return self.states.pop(0)

        def _step(self, msg, kind="step"):
            return {"sent": self.sent}

    why = Changed([s0, s1], []).idle("tick")
    assert why.endswith("and it changed phase, where it must change nothing"), why
    both = Changed([s0, s1], [{"post": {}}]).idle("tick")
    assert "it changed phase and sent 1 message(s), where" in both, both
    only_sent = Changed([s0, s0], [{"post": {}}]).idle("tick")
    assert "and it sent 1 message(s), where" in only_sent, only_sent


def test_every_variable_of_a_shipped_model_says_what_it_means():
    from osf_check.properties import catalogue
    bare = [f"{name}.{v.name}" for name, source in catalogue.SOURCES.items()
            if source == "built-in" for v in catalogue.spec(name).build().variables
            if not v.doc.strip()]
    assert bare == []
