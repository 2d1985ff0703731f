"""Models written outside the tool: a model file anywhere, an entry point, the Python API,
and the errors a user's model gets.

The model file is ``examples/diehard.py`` (DieHard.tla), copied into a temporary
directory that is not importable.  Its counts are a hand count: after every step one
jug is empty or full, and every such state is reachable (gcd(3, 5) = 1), so 2 x 6 +
4 x 2 = 16 distinct states; all six actions are always enabled, so TLC's "generated"
is 1 initial + 16 x 6 successors = 97."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import osf_check
from osf_check.cli import main
from osf_check.properties import catalogue

ROOT = Path(__file__).resolve().parents[1]
DIEHARD = ROOT / "examples" / "diehard.py"


@pytest.fixture
def model_file(tmp_path):
    """DieHard copied where nothing imports it (conftest.py restores the catalogue after
    each test, so the models a test loads do not outlive it)."""
    p = tmp_path / "elsewhere" / "diehard.py"
    p.parent.mkdir()
    shutil.copy(DIEHARD, p)
    return p


def run(*args):
    r = CliRunner().invoke(main, list(map(str, args)))
    return r.exit_code, r.stdout, r.stderr


# the command line ---------------------------------------------------------------------------
def test_a_model_file_is_explored_with_its_hand_counted_state_space(model_file):
    code, out, _ = run("explore", "--model-file", model_file, "--depth", "unbounded",
                       "--continue", "--json")
    doc = json.loads(out)
    [m] = doc["models"]
    assert (m["model"], m["distinct_states"], m["generated_states"], m["complete"]) == \
        ("diehard", 16, 97, True)
    assert {p["id"]: p["status"] for p in m["properties"]} == {"D1": "holds", "D2": "violated"}
    [v] = m["violations"]
    assert v["length"] == 6  # TLC reports it as depth 7: it counts states, not steps
    assert [s["action"] for s in v["trace"]["steps"][1:]] == [
        "FillBig", "BigToSmall", "EmptySmall", "BigToSmall", "FillBig", "BigToSmall"]
    assert v["trace"]["actors"] == ["tap", "small jug", "big jug", "drain"]
    assert code == 12


def test_a_model_file_is_proved_and_its_mutant_refuted(model_file):
    code, out, _ = run("prove", "--model-file", model_file, "--property", "D1", "--json")
    assert code == 0 and json.loads(out)["properties"][0]["status"] == "proved"
    code, out, _ = run("prove", "--model-file", model_file, "--property", "D1", "--mutant",
                       "pour-one-gallon", "--json")
    [p] = json.loads(out)["properties"]
    assert code == 12 and p["status"] == "refuted" and p["k"] == 2


def test_a_model_files_counterexample_is_drawn(model_file, tmp_path):
    out = tmp_path / "out"
    code, text, _ = run("explore", "--model-file", model_file, "--depth", "unbounded",
                        "--out", out)
    assert code == 12 and "VIOLATION of D2" in text
    svg = (out / "diehard-D2-inv.sequence.svg").read_text()
    for lane in ("tap", "small jug", "big jug", "drain"):
        assert f">{lane}<" in svg
    assert svg.index(">tap<") < svg.index(">small jug<") < svg.index(">big jug<")


def test_list_says_where_each_model_comes_from(model_file):
    code, out, _ = run("list", "--model-file", model_file, "--json")
    src = {m["name"]: m["source"] for m in json.loads(out)["models"]}
    assert src["graph-relay"] == "built-in"
    assert src["diehard"] == f"file {model_file.resolve()}"
    code, out, _ = run("list", "--model-file", model_file)
    assert f"  from: file {model_file.resolve()}" in out


def test_a_bare_explore_checks_the_shipped_models_not_the_loaded_ones(model_file):
    osf_check.load_file(model_file)
    assert "diehard" not in catalogue.default_models()


# the Python API ------------------------------------------------------------------------------
def test_the_api_checks_a_model_file_and_renders_like_the_cli(model_file, tmp_path):
    r = osf_check.Checker(model_file).depth(None).keep_going().explore()
    assert (r.distinct, r.generated, r.histogram) == (16, 97, [1, 2, 3, 2, 2, 2, 2, 2])
    assert r.status == {"D1": "holds", "D2": "violated"} and r.exit_code == 12
    cli = json.loads(run("explore", "--model-file", model_file, "--depth", "unbounded",
                         "--continue", "--json")[1])
    doc = r.to_json()
    for d in (doc, cli):
        for k in ("seconds", "explore_seconds", "states_per_second"):
            d["models"][0].pop(k)
        for v in d["violations"] + d["models"][0]["violations"]:
            v["trace"].pop("seconds", None)
    assert doc == cli
    written = r.write(tmp_path / "api")
    assert (tmp_path / "api" / "diehard-D2-inv.sequence.svg") in written
    assert "VIOLATION of D2 (inv): shortest counterexample, 6 steps" in r.text()


def test_the_api_takes_a_spec_a_built_model_or_a_module(model_file):
    spec = osf_check.load_file(model_file)
    assert spec == ["diehard"]
    module = sys.modules[next(n for n in sys.modules if n.startswith("osf_check_user_model_"
                                                                      "diehard"))]
    built = module.SPEC.build({"goal": 2}, None)
    r = osf_check.Checker(built).depth(None).explore()
    assert r.model.params == {"goal": 2} and r.status["D2"] == "violated"
    assert osf_check.Checker(catalogue.MODELS["diehard"]).depth(None).keep_going().explore() \
        .distinct == 16


def _countdown(name, start):
    b = osf_check.ModelBuilder(name)
    b.var("n", osf_check.Int(-2, 3), actor="clock")

    @b.action("clock")
    def tick(s):
        return s.n > -2, {s.n: s.n - 1}
    b.init(n=start)
    return b.build()


def test_a_built_model_is_checked_as_itself_or_refused_never_swapped_for_another():
    """A built Model was looked up by its name: a second one of the same name was
    checked as the first (4 states where it has 6), and one named like a shipped model
    as that model (TwoPhase's 288 states, its property T1)."""
    first = osf_check.Checker(_countdown("countdown-twice", 1)).depth(None).explore()
    assert first.distinct == 4
    again = osf_check.Checker(_countdown("countdown-twice", 1)).depth(None).explore()
    assert again.distinct == 4  # the same model, built again: the same name is fine
    for other in (_countdown("countdown-twice", 3), _countdown("two-phase", 1)):
        with pytest.raises(osf_check.BadValue, match=f"a model named '{other.name}' is "
                           "registered already .* give it a name of its own"):
            osf_check.Checker(other)
    from osf_check.models.two_phase import SPEC  # the shipped model built: itself
    r = osf_check.Checker(SPEC.build({"rms": 3})).depth(None).explore()
    assert (r.distinct, r.model.params) == (288, {"rms": 3})


def test_a_model_file_edited_since_it_was_loaded_is_loaded_anew(model_file):
    """In one process (a notebook, a script checking twice), the file as it is now is
    checked: a second load of an edited file returned the first one's models."""
    text = model_file.read_text()
    before = osf_check.Checker(model_file).depth(None).keep_going().explore()
    model_file.write_text(text.replace("SMALL, BIG = 3, 5", "SMALL, BIG = 3, 6"))
    after = osf_check.Checker(model_file).depth(None).keep_going().explore()
    assert (before.distinct, before.status["D2"]) == (16, "violated")
    assert (after.distinct, after.status["D2"]) == (6, "holds")  # gcd(3, 6) = 3: never 4
    assert osf_check.load_file(model_file) == ["diehard"]  # unedited: nothing loaded
    assert len(catalogue.properties_of("diehard")) == 2  # the old ones are gone


def test_a_module_reloaded_since_it_was_checked_is_registered_anew(tmp_path, monkeypatch):
    import importlib
    text = DIEHARD.read_text().replace('"diehard"', '"diehard-module"')
    (tmp_path / "jugs_module.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    import jugs_module
    try:
        assert osf_check.Checker(jugs_module).depth(None).keep_going().explore().distinct == 16
        # the build function itself changed: the old one is not the module's any more
        (tmp_path / "jugs_module.py").write_text(text.replace(
            "    b.init(small=0, big=0)", "    b.init(small=0, big=BIG)"))
        importlib.invalidate_caches()
        importlib.reload(jugs_module)
        r = osf_check.Checker(jugs_module).depth(None).keep_going().explore()
        assert r.model.initial_states == [(0, 5)]
    finally:
        sys.modules.pop("jugs_module", None)


def test_never_enabled_says_where_it_looked():
    """A bounded run does not expand the states at its bound: depth 0 expanded none and
    warned that every action "was never enabled"."""
    b = osf_check.ModelBuilder("never-enabled")
    b.var("x", osf_check.Int(0, 3), actor="clock")

    @b.action("clock")
    def tick(s):
        return s.x < 3, {s.x: s.x + 1}

    @b.action("clock")
    def late(s):  # only from x = 2, two steps in
        return s.x == 2, {s.x: 0}
    b.init(x=0)
    b.quiescent(lambda s: s.x == 3)
    c = osf_check.Checker(b.build())
    assert c.depth(2).explore().warnings == [
        "action late was never enabled in the 2 states expanded (not those at the bound)"]
    assert c.depth(None).explore().warnings == []
    b.name = "never-enabled-ever"  # another model now:
    b.action("clock", name="over")(lambda s: (s.x > 3, {s.x: 0}))  # x never exceeds 3
    assert osf_check.Checker(b.build()).depth(None).explore().warnings == [
        "action over was never enabled"]


def test_a_model_built_by_hand_is_checked_for_deadlocks():
    b = osf_check.ModelBuilder("countdown-by-hand")
    b.var("n", osf_check.Int(-2, 1), actor="clock")

    @b.action("clock")
    def tick(s):
        return s.n > -2, {s.n: s.n - 1}
    b.init(n=1)
    r = osf_check.Checker(b.build()).depth(None).explore()
    assert (r.distinct, r.verdict) == (4, "deadlock")
    assert r.traces[0]["steps"][-1]["state"] == {"n": -2}


def test_the_checker_validates_its_arguments_at_the_boundary():
    c = osf_check.Checker("two-phase")
    for bad in (lambda: c.depth(-1), lambda: c.engine("gpu"), lambda: c.workers(0),
                lambda: c.max_states(0), lambda: osf_check.Checker(3.5),
                lambda: osf_check.Checker("no-such-model"),
                # nan passes every comparison: refused by name, as inf is
                lambda: c.explore(checkpoint_every=float("nan")),
                lambda: c.explore(checkpoint_every=-1.0),
                lambda: c.prove(timeout=float("nan")),
                lambda: c.prove(timeout=float("inf"))):
        with pytest.raises(osf_check.InputError):
            bad()
    assert c.params(rms=2).params(rms=3)._params == {"rms": 3}
    assert c._params == {}  # setters return new checkers


def test_the_librarys_defaults_are_the_clis():
    import inspect
    c = osf_check.Checker("two-phase")
    assert (c._depth, c._engine, c._seed, c._keep_going, c._deadlocks, c._strict) == \
        (12, "auto", 0, False, True, False)
    prove = inspect.signature(osf_check.Checker.prove).parameters
    assert (prove["k"].default, prove["timeout"].default, prove["mine"].default,
            prove["sample_depth"].default) == (4, 120.0, True, 12)
    opts = {p.name: p.default for p in main.commands["prove"].params}
    assert (opts["k"], opts["timeout"], opts["mine"], opts["sample_depth"]) == (4, 120.0, True, 12)
    opts = {p.name: p.default for p in main.commands["explore"].params}
    assert (opts["depth"], opts["engine"], opts["seed"]) == ("12", "auto", 0)


# a user's mistakes: what, where, what to do --------------------------------------------------
def _file(tmp_path, body: str) -> Path:
    p = tmp_path / "mine.py"
    p.write_text(textwrap.dedent(body), encoding="utf-8")
    return p


HEAD = """\
from osf_check import Bool, ModelBuilder, ModelSpec, Property, Check

def build(params, mutant):
    b = ModelBuilder("mine", params, mutant, actors=("client", "server"))
    b.var("x", Bool(), actor="server")
"""


@pytest.mark.parametrize("body, where, what", [
    (HEAD + "    b.var('y', Bool(), actor='clinet')\n", "line 6, in build",
     "actor 'clinet' is not one of the model's actors (client, server)"),
    (HEAD + "\n    @b.action('client')\n    def go(s):\n        return s.x and True, {s.x: True}\n",
     "line 9, in go", "use And/Or/Not/If instead"),
    ("def broken(:\n", "line 1", "SyntaxError"),
    ("import no_such_module_here\n", "line 1", "No module named 'no_such_module_here'"),
    ("X = 1\n", "mine.py", "defines no SPEC"),
    # else osf-check would end with the file's status, 3, said nowhere
    ("import sys\nsys.exit(3)\n", "line 2", "SystemExit while loading the file: 3"),
])
def test_a_mistake_in_a_model_file_names_its_line(tmp_path, body, where, what):
    if "def build" in body:
        body += ("    b.init(x=False)\n    return b.build()\n\n"
                 "SPEC = ModelSpec('mine', 'mine', (), {}, build)\n")
    p = _file(tmp_path, body)
    code, out, err = run("explore", "--model-file", p, "--depth", "2")
    assert code == 150, err
    [line] = err.strip().splitlines()[-1:]
    assert line.startswith("osf-check: error: ") and where in line and what in line, line
    assert "Traceback" not in err


def test_a_property_that_raises_names_its_line(tmp_path):
    p = _file(tmp_path, HEAD + """\
    b.init(x=False)
    return b.build()

SPEC = ModelSpec('mine', 'mine', (), {}, build)

def bad(s, m):
    return s.nope == 1

PROPERTIES = (Property("M1", "bad", "mine", "reads a variable that is not there",
                       (Check("inv", bad),), ()),)
""")
    code, _, err = run("explore", "--model-file", p, "--depth", "2")
    assert code == 150 and "mine.py, line 12, in bad" in err and "no variable 'nope'" in err
    exiting = p.read_text().replace("return s.nope == 1", "raise SystemExit(4)") \
        .replace("ModelSpec('mine', 'mine'", "ModelSpec('exiting', 'exiting'") \
        .replace('"bad", "mine"', '"bad", "exiting"')
    p2 = Path(p).with_name("exiting.py")
    p2.write_text(exiting)
    code, _, err = run("explore", "--model-file", str(p2), "--depth", "2")
    assert code == 150 and "exiting.py, line 12, in bad" in err and "SystemExit" in err, err


def test_a_model_file_that_does_not_exist_or_is_not_python(tmp_path):
    code, _, err = run("explore", "--model-file", tmp_path / "none.py")
    assert code == 150 and "no such file" in err
    (tmp_path / "m.txt").write_text("x")
    code, _, err = run("explore", "--model-file", tmp_path / "m.txt")
    assert code == 150 and "ending in .py" in err


def test_two_sources_may_not_define_the_same_model(tmp_path):
    p = _file(tmp_path, "from osf_check.models.two_phase import SPEC\n")
    code, _, err = run("list", "--model-file", p)
    assert code == 150 and "model 'two-phase'" in err and "already defined (built-in)" in err


@pytest.mark.parametrize("second, clash", [
    ('"D9", "never-the-goal"', "property name never-the-goal is used twice"),
    ('"D9", "d1"', "property name d1 is also the id of D1"),
])
def test_a_property_name_names_one_property(model_file, second, clash):
    """--property takes an id or a name: with D2's name given to another property too,
    `--property never-the-goal` checked one of the two and said nothing."""
    text = model_file.read_text()
    extra = text.replace('PROPERTIES = (', 'PROPERTIES = (\n    Property(' + second +
                         ', "diehard", "again", (Check("inv", not_solved),), ()),', 1)
    assert extra != text
    model_file.write_text(extra)
    code, _, err = run("list", "--model-file", model_file)
    assert code == 150 and clash in err, err


# entry points --------------------------------------------------------------------------------
def test_an_installed_package_registers_its_models_through_an_entry_point(tmp_path):
    site = tmp_path / "site"
    (site / "jugs").mkdir(parents=True)
    shutil.copy(DIEHARD, site / "jugs" / "__init__.py")
    info = site / "jugs-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jugs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[osf_check.models]\ndiehard = jugs\n")
    (site / "broken").mkdir()
    (site / "broken" / "__init__.py").write_text("raise RuntimeError('boom')\n")
    info = site / "broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[osf_check.models]\nbroken = broken\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    r = subprocess.run([sys.executable, "-m", "osf_check.cli", "list", "--json"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    src = {m["name"]: m["source"] for m in json.loads(r.stdout)["models"]}
    assert src["diehard"] == "entry point diehard = jugs (jugs 1.0)"
    assert "entry point broken = broken (broken 0.1) was not loaded: RuntimeError: boom" in \
        r.stderr
    r = subprocess.run([sys.executable, "-m", "osf_check.cli", "explore", "--model", "diehard",
                        "--depth", "unbounded", "--continue"], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert "16 distinct states, 97 generated" in r.stdout


# the DSL a TLA+ user expects ------------------------------------------------------------------
def _walk(mutant=None):
    """A walker on -3..3 that may not stand on 0 twice running: written with & | ~ Iff Max."""
    from osf_check import Bool, Iff, Int, Max, ModelBuilder
    b = ModelBuilder("walk", {}, mutant, actors=("walker",))
    b.var("x", Int(-3, 3), actor="walker")
    b.var("was0", Bool(), actor="walker")

    @b.action("walker")
    def left(s):
        return (s.x > -3) & ~(s.was0 & (s.x == 1)), {s.x: s.x - 1, s.was0: s.x == 1}

    @b.action("walker")
    def right(s):
        return (s.x < 3) | (mutant == "wrap"), {s.x: Max(s.x + 1, -3) if mutant is None else
                                                (s.x + 1) % 4, s.was0: Iff(s.x == -1, True)}
    b.init(x=-3, was0=False)
    return b.build()


def test_negative_domains_and_boolean_operators_agree_on_every_engine():
    from osf_check.explorer.explicit.bfs import bfs
    from osf_check.explorer.vector.search import vector_bfs
    from osf_check.properties.base import Check, Property
    m = _walk()
    counts = {(e.distinct, e.generated) for e in (bfs(m, [], depth=None),
                                                  vector_bfs(m, [], depth=None))}
    # hand count: x in -3..3 with was0 = (x == 0), both ways: 7 states; left is enabled
    # everywhere but x = -3 (6 states), right everywhere but x = 3 (6): 1 + 12 generated
    assert counts == {(7, 13)}
    spec = osf_check.ModelSpec("walk", "walk", (), {}, lambda p, mu: _walk(mu))
    prop = Property("W1", "zero-is-marked", "walk", "was0 exactly on 0",
                    (Check("inv", lambda s, mm: osf_check.Iff(s.was0, s.x == 0)),), ())
    catalogue.register(spec, [prop], source="test")
    r = osf_check.Checker("walk").prove(k=2)
    assert r.status == {"W1": "proved"}
    assert osf_check.Checker("walk").depth(None).explore().status == {"W1": "holds"}


def test_min_and_max_take_several_values_or_one_iterable():
    from osf_check.models.expr import Const, evaluate
    assert evaluate(osf_check.Min(Const(3), -2, 7), ()) == -2
    assert evaluate(osf_check.Max([Const(3), -2, 7]), ()) == 7
    with pytest.raises(TypeError, match="at least one"):
        osf_check.Max([])


def test_a_parameter_may_be_a_tuple_of_integers(tmp_path):
    p = _file(tmp_path, """\
        from osf_check import Int, ModelBuilder, ModelSpec, Param

        def build(params, mutant):
            caps = params["caps"]
            b = ModelBuilder("buckets", params, mutant)
            for i, cap in enumerate(caps):
                b.var(f"b{i}", Int(0, cap), actor="tap")

            for i, cap in enumerate(caps):
                @b.action("tap", name=f"fill{i}")
                def fill(s, i=i, cap=cap):
                    return getattr(s, f"b{i}") < cap, {getattr(s, f"b{i}"): cap}
            b.init(**{f"b{i}": 0 for i in range(len(caps))})
            return b.build()

        SPEC = ModelSpec("buckets", "buckets", (Param("caps", (2, 3), 1, 4, "sizes"),), {}, build)
        """)
    # each bucket empty or full: 2 ** len(caps) states
    code, out, _ = run("explore", "--model-file", p, "--param", "caps=1,2,4", "--json",
                       "--no-deadlock")
    m = json.loads(out)["models"][0]
    assert (code, m["params"], m["distinct_states"]) == (0, {"caps": [1, 2, 4]}, 8)
    assert osf_check.Checker("buckets").deadlocks(False).explore().distinct == 4
    code, _, err = run("explore", "--model-file", p, "--param", "caps=1,9")
    assert code == 150 and "parameter caps=(1, 9): 9 is outside 1..4" in err


def test_a_malformed_action_names_its_file_and_line(tmp_path):
    p = _file(tmp_path, HEAD + """\

    @b.action('client')
    def go(s):
        return True, {s.x: True, s.x: False}
    b.init(x=False)
    return b.build()

SPEC = ModelSpec('mine', 'mine', (), {}, build)
""")
    code, _, err = run("explore", "--model-file", p, "--depth", "2")
    assert code == 150, err
    assert "action go{} assigns slot 0 twice (action go at " in err
    assert f"{p}:7)" in err  # the decorator's line: where the action starts


COUNTER = """\
from osf_check import Check, Int, ModelBuilder, ModelSpec, Property

def build(params, mutant):
    b = ModelBuilder("NAME", params, mutant, actors=("a",))
    b.var("x", Int(0, HI), actor="a")

    @b.action("a")
    def ACTION(s):
        return GUARD, {s.x: UPDATE}
    b.init(x=0)
    b.quiescent(lambda s: s.x == HI)
    return b.build()

SPEC = ModelSpec("NAME", "NAME", (), {}, build)
PROPERTIES = (Property("P1", "the-invariant", "NAME", "the invariant",
                       (Check("inv", lambda s, m: INVARIANT),), ()),)
"""


def counter(tmp_path, **fill) -> Path:
    """A model file of one counter x in 0..HI, its one action and invariant filled in."""
    text = COUNTER
    for k, v in fill.items():
        text = text.replace(k, str(v))
    p = tmp_path / f"{fill['NAME']}.py"
    p.write_text(text)
    return p


@pytest.mark.parametrize("update, invariant, what", [
    # (x + 1) * 2**64 + x + 1 is out of x's domain; numpy wrapped it around to x + 1,
    # so the vector engine explored 4 states where the explicit engine stopped
    ("(s.x + 1) * 2**62 * 4 + s.x + 1", "s.x < 4", "its update of x: a product of "
     "values in 1..4 and 4611686018427387904..4611686018427387904 may reach "
     "18446744073709551616"),
    # and x * 2**64 == 0 held in every state, where it holds in one
    ("s.x + 1", "(s.x * 2**62 * 4 == 0)", "property P1's invariant: a product"),
    ("s.x + 1", "s.x < 2**64", "property P1's invariant: a constant may reach "
     "18446744073709551616"),
])
def test_arithmetic_past_64_bits_is_refused_not_wrapped(tmp_path, update, invariant, what):
    """numpy computes in 64 bits and wraps around without a word, Python and z3 do not:
    an expression that could leave 64 bits over its variables' domains is a mistake in
    the model (150, naming it), on every engine, not a silent difference between them."""
    p = counter(tmp_path, NAME="wide", HI=3, ACTION="jump", GUARD="s.x < 3", UPDATE=update,
                INVARIANT=invariant)
    for engine in ("vector", "explicit"):
        code, out, err = run("explore", "--model-file", p, "--depth", "unbounded",
                             "--engine", engine)
        assert code == 150, (engine, out, err)
        [line] = err.strip().splitlines()[-1:]
        assert what in line and "narrow the domains or the constants" in line, line
    code, _, err = run("prove", "--model-file", p)
    assert code == 150 and what in err, err
    if "jump" not in what:
        return
    assert "(action jump at " in err


@pytest.mark.parametrize("answer, what", [
    ("s.x - 1", "action ask's output answer is -1, outside its domain Enum('ok', 'busy')"),
    ("Select(s.x, [0, 1])", "action ask's output answer: Select index 2 outside 0..1"),
])
def test_an_output_outside_its_domain_is_the_models_mistake_not_another_name(tmp_path,
                                                                            answer, what):
    """An enum output of -1 was shown as the enum's last name (Python's negative index):
    the trace said "busy" where the model computed nothing it declares, and a log's
    "busy" would have matched it; a Select past its end was an internal error."""
    p = tmp_path / "outs.py"
    p.write_text(textwrap.dedent(f"""\
        from osf_check import Check, Enum, Int, ModelBuilder, ModelSpec, Property, Select

        def build(params, mutant):
            b = ModelBuilder("outs", params, mutant, actors=("a",))
            b.var("x", Int(0, 3), actor="a")

            @b.action("a")
            def ask(s):
                return s.x < 3, {{s.x: s.x + 1}}, {{"answer": (Enum("ok", "busy"), {answer})}}
            b.init(x=0)
            b.quiescent(lambda s: s.x == 3)
            return b.build()

        SPEC = ModelSpec("outs", "outs", (), {{}}, build)
        PROPERTIES = (Property("P1", "p", "outs", "x stays below 3",
                               (Check("inv", lambda s, m: s.x < 3),), ()),)
        """))
    code, out, err = run("explore", "--model-file", p, "--depth", "unbounded", "--json")
    assert code == 150 and out == "", (code, out, err)
    assert err.strip().splitlines()[-1] == f"osf-check: model error: {what}"


def test_the_shipped_models_fit_64_bits_at_each_parameters_largest():
    """The bounds refuse nothing the shipped models and properties compute, with any one
    parameter at its largest (building them checks every expression)."""
    from osf_check.properties.base import CheckList
    for name in ("two-phase", "graph-relay", "wire-relay"):
        spec, props = catalogue.MODELS[name], catalogue.properties_of(name)
        for p in spec.params:
            m = spec.build({p.name: p.hi})
            CheckList.of(m, props)
            for c in (c for q in props for c in q.checks if c.kind in ("reach", "fair")):
                c.goals(m)


ARRAY = """\
from osf_check import Bool, Check, Implies, Int, ModelBuilder, ModelSpec, Or, Property

def build(params, mutant):
    b = ModelBuilder("arr", params, mutant, actors=("a",))
    b.var("x", Int(-1, 2), actor="a")
    b.array("f", Bool(), 2, actor="a")

    @b.action("a")
    def step(s):
        return s.x < 2, {s.x: s.x + 1}

    @b.action("a")
    def mark(s):  # f[x] is read only where x is one of its indices
        return (s.x >= 0) & (s.x < 2) & ~s.f[s.x], {s.f[s.x]: True}
    b.init(x=-1, f=[False, False])
    b.quiescent(lambda s: s.x == 2)
    return b.build()

SPEC = ModelSpec("arr", "arr", (), {}, build)
PROPERTIES = (Property("R1", "read", "arr", "reads f at x",
                       (Check("inv", lambda s, m: READ),), ()),)
"""


def test_an_array_read_outside_the_array_is_a_model_error_on_every_engine(tmp_path):
    """f[x] with x = -1 read the last element in the explicit engine (Python's f[-1]),
    crashed the vector engine (numpy's choose) and read the last element in z3: a read
    that a state reaches outside the array is the model's mistake, 150 on both engines;
    one that an If, And, Or or Implies keeps from such states is fine."""
    p = _file(tmp_path, ARRAY.replace("READ", "s.f[s.x] == False"))
    for engine in ("vector", "explicit"):
        code, out, err = run("explore", "--model-file", p, "--depth", "unbounded",
                             "--engine", engine)
        assert code == 150, (engine, out, err)
        assert "an array read or Select at index -1, outside 0..1" in err, err
    guarded = ARRAY.replace("READ", "Implies((s.x >= 0) & (s.x < 2), Or(s.f[s.x], s.x < 2))")
    p = tmp_path / "guarded.py"  # (another file and name: the first stays loaded)
    p.write_text(guarded.replace('"arr"', '"guarded"'))
    got = []
    for engine in ("vector", "explicit"):
        code, out, err = run("explore", "--model-file", p, "--depth", "unbounded",
                             "--engine", engine, "--json")
        assert code == 0, (engine, err)
        [m] = json.loads(out)["models"]
        got.append((m["distinct_states"], m["generated_states"], m["verdict"]))
    # hand count: x = -1 and 0 with f unmarked, f[0] marked at 0 and on, f[1] at 1 and
    # on: 1 + 2 + 4 + 4 = 11
    assert got[0] == got[1] and got[0][0] == 11, got


def test_z3_does_not_judge_an_array_read_it_cannot_tell_is_inside(tmp_path):
    """z3 reads the last element outside an array: where the domains let an index leave
    it, prove says unknown (after the BFS sample, whose refutations stand, here of no
    step: one of 12 checks every reachable state, which proves it without z3); where
    they keep it inside, z3 proves as before."""
    read = "Implies((s.x >= 0) & (s.x < 2), Or(s.f[s.x], s.x < 2))"
    p = _file(tmp_path, ARRAY.replace("READ", read))
    code, out, err = run("prove", "--model-file", p, "--json", "--sample-depth", "0")
    assert code == 152, err  # unknown
    [r] = json.loads(out)["properties"]
    assert r["status"] == "unknown" and "array read or Select at index x, which may " \
        "range over -1..2, outside 0..1" in r["note"], r
    code, out, err = run("prove", "--model-file", p, "--json")
    [r] = json.loads(out)["properties"]
    assert code == 0 and (r["status"], r["method"]) == ("proved", "every reachable state")
    inside = ARRAY.replace("READ", read).replace("Int(-1, 2)", "Int(0, 1)") \
        .replace("s.x < 2, {s.x: s.x + 1}", "s.x < 1, {s.x: s.x + 1}").replace("x=-1", "x=0") \
        .replace("s.x == 2", "s.x == 1")
    p = tmp_path / "inside.py"
    p.write_text(inside.replace('"arr"', '"inside"'))
    code, out, err = run("prove", "--model-file", p, "--json")
    assert code == 0, err
    [r] = json.loads(out)["properties"]
    assert r["status"] == "proved", r


def test_prove_does_not_prove_what_a_step_out_of_a_domain_breaks(tmp_path):
    """z3 keeps every state in its domains, so an action that would leave one was an
    action not taken: x + 1 without a bound errs at 20 in explore (21 steps in, past
    prove's BFS sample) and prove said "proved (k=1)".  That every enabled action stays
    in the domains is proved along with each property: unknown here, naming the step;
    with the bound in the guard, proved as before."""
    fill = dict(HI=20, ACTION="inc", UPDATE="s.x + 1", INVARIANT="s.x >= 0")
    p = counter(tmp_path, NAME="loose", GUARD="True", **fill)
    code, _, err = run("explore", "--model-file", p, "--depth", "unbounded")
    assert code == 150 and "action inc sets x to 21, outside its domain" in err, err
    code, out, err = run("prove", "--model-file", p, "--json")
    [r] = json.loads(out)["properties"]
    assert code == 152 and r["status"] == "unknown", (code, r)
    assert "lets inc set x to 21, outside its domain" in r["note"], r["note"]
    p = counter(tmp_path, NAME="tight", GUARD="s.x < 20", **fill)
    code, out, err = run("prove", "--model-file", p, "--json")
    [r] = json.loads(out)["properties"]
    assert code == 0 and (r["status"], r["k"]) == ("proved", 1), r


def test_prove_says_how_deep_it_looked_and_why_it_cannot_prove(tmp_path):
    """A step out of the domain within BMC's depth said "the assumed an assumed
    property, or an action leaving a variable's domain, is violated"; an induction
    that failed after BMC to depth 2 said "no violation within depth 0" (the BFS
    sample's depth, not the deepest looked at)."""
    fill = dict(ACTION="inc", UPDATE="s.x + 1", INVARIANT="s.x >= 0", GUARD="True")
    p = counter(tmp_path, NAME="short", HI=2, **fill)  # inc leaves 0..2 at depth 2
    code, out, err = run("prove", "--model-file", p, "--json", "--sample-depth", "0")
    [r] = json.loads(out)["properties"]
    assert code == 152 and r["status"] == "unknown", (code, r)
    assert r["note"].startswith("within depth 2 an assumed property is violated or an "
                                "action leaves a variable's domain"), r["note"]
    # x counts up to 20 unguarded: induction fails, BMC to depth 2 sees nothing
    p = counter(tmp_path, NAME="long", HI=20, **fill)
    code, out, err = run("prove", "--model-file", p, "--json", "--sample-depth", "0",
                         "--k", "2", "--no-mine")
    [r] = json.loads(out)["properties"]
    assert code == 152 and r["status"] == "unknown", (code, r)
    assert r["note"].startswith("induction failed; no violation within depth 2 (every "
                                "state to depth 0 checked, BMC to depth 2)"), r["note"]


def test_a_domain_past_64_bits_is_refused_where_it_is_declared():
    """The vector engine holds values in 64-bit columns: Int(0, 2**64) crashed it (an
    internal error) where the explicit engine ran; now it is the model's mistake."""
    from osf_check.models.dsl import Int, ModelError
    assert Int(-2**63, 2**63 - 1).size == 2**64
    for lo, hi in ((0, 2**64), (-2**63 - 1, 0)):
        with pytest.raises(ModelError, match="past 64-bit integers"):
            Int(lo, hi)


PLAIN_VALUES = '''
from osf_check import Check, Goal, Int, ModelBuilder, ModelSpec, Property

def build(params, mutant):
    b = ModelBuilder("plain", params, mutant, actors=("c",))
    b.var("x", Int(0, 3), actor="c")

    @b.action("c", name="Inc")
    def inc(s):
        return s.x < 3, {s.x: s.x + 1}

    @b.action("c", name="Stay")
    def stay(s):
        return True, {}
    b.init(x=0)
    return b.build()

SPEC = ModelSpec(name="plain", title="plain values", params=(), mutants={}, build_fn=build)
PROPERTIES = (
    Property("P1", "python-true", "plain", "", (Check("inv", lambda s, m: True),), ()),
    Property("P2", "never-inc-past-two", "plain", "",
             (Check("trans", lambda s, t, inst, m: s.x < 2 if inst.name == "Inc" else True),),
             ()),
    Property("P3", "python-int", "plain", "", (Check("inv", lambda s, m: 1),), ()),
    Property("P4", "goal-of-a-list", "plain", "",
             (Check("reach", lambda s, m: [Goal("three", True, [s.x == 3])]),), ()),
    Property("P5", "no-goals", "plain", "", (Check("fair", lambda s, m: s.x == 3),), ()),
)
'''


@pytest.mark.parametrize("prop, code, needle", [
    ("P1", 0, "P1 python-true"),  # a Python bool is a constant, as in an action's guard
    ("P2", 12, "VIOLATION of P2 (trans)"),  # `else True`: the other actions' check holds
    ("P3", 150, "an inv check returned 1 (int), not an expression"),
    ("P4", 150, "a reach check's goal returned [eq(s[0], 3)] (list), not an expression"),
    ("P5", 150, "a fair check returned eq(s[0], 3) (Expr), not a list of Goal"),
])
def test_a_property_function_that_returns_a_plain_value(tmp_path, prop, code, needle):
    """A check returning a Python value (True, an int) stopped osf-check with an internal
    error ('bool' object has no attribute 'op'): a bool is now a constant, and anything
    else that is not an expression bad input naming the function's line."""
    f = tmp_path / "plain.py"
    f.write_text(PLAIN_VALUES)
    got, out, err = run("explore", "--model-file", f, "--depth", "unbounded",
                        "--property", prop)
    assert got == code, (out, err)
    assert needle in (out if code != 150 else err), (out, err)
    if code == 150:
        [line] = [x for x in err.splitlines() if "error" in x]  # (progress aside)
        assert line.startswith(f"osf-check: error: {f}, line "), err


def test_a_one_step_counterexample_is_said_in_the_singular(tmp_path):
    f = tmp_path / "plain.py"
    f.write_text(PLAIN_VALUES.replace('Check("inv", lambda s, m: True)',
                                      'Check("inv", lambda s, m: s.x < 1)'))
    code, out, _ = run("explore", "--model-file", f, "--depth", "unbounded", "--property", "P1")
    assert code == 12 and "VIOLATION of P1 (inv): shortest counterexample, 1 step\n" in out, out
    assert "; seed 0; 1 step\n" in out, out
