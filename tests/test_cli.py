"""The command line: bad input of every kind, exit codes, JSON schema, rendering."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.report import result_schema
from osf_check.traces.format import load_trace, to_itf


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def one_line_error(res, code=150, needle=""):
    assert res.exit_code == code, (res.exit_code, res.output)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("osf-check: error:"), res.stderr
    assert "Traceback" not in res.output
    assert needle in lines[0], lines[0]


@pytest.mark.parametrize("args, needle", [
    (["explore", "--model", "nope"], "unknown model 'nope'"),
    (["explore", "--model", "graph-relay", "--property", "Z9"], "no property 'Z9'"),
    (["explore", "--model", "graph-relay", "--mutant", "nope"], "no mutant 'nope'"),
    (["explore", "--model", "two-phase", "--mutant", "outbox-off"], "add --model graph-relay"),
    (["explore", "--model", "graph-relay", "--param", "intents=abc"], "takes an integer"),
    (["explore", "--model", "graph-relay", "--param", "intents=9"], "outside 1..3"),
    (["explore", "--model", "graph-relay", "--param", "colour=3"], "no parameter 'colour'"),
    (["explore", "--model", "graph-relay", "--param", "intents"], "name=value"),
    (["explore", "--depth", "-3"], "--depth must be 0 or more"),
    (["explore", "--depth", "deep"], "--depth takes"),
    (["explore", "--max-states", "0"], "--max-states must be at least 1"),
    # a checkpoint that could not be written is found before the search, not at its
    # first checkpoint (five minutes in, as an internal error)
    (["explore", "--model", "two-phase", "--checkpoint", __file__ + "/cp"],
     "is a file, not a directory"),
    # /proc lets root past access(2) but makes no directory: the run went on and its
    # files were lost at the end
    (["explore", "--model", "two-phase", "--out", "/proc/osf-check-nope/out"],
     "--out /proc/osf-check-nope/out: cannot write in /proc"),
    # nan passes every comparison of a range, inf every lower bound
    (["explore", "--model", "two-phase", "--checkpoint-every", "nan"], "not a finite number"),
    (["explore", "--model", "two-phase", "--checkpoint-every", "inf"], "not a finite number"),
    (["explore", "--model", "two-phase", "--checkpoint-every", "-1"], "not in the range"),
    (["prove", "--model", "two-phase", "--timeout", "nan"], "not a finite number"),
    (["simulate", "--poll", "nan"], "not a finite number"),
    (["simulate", "--loss", "nan"], "not a finite number"),
    (["timing", "--set", "slot=inf"], "finite number of seconds"),
    # seeds: z3 takes an unsigned 32-bit one (timing printed z3's warning on stdout and
    # ran unseeded; simulate failed inside numpy on -1, an internal error)
    (["simulate", "--seed", "-1"], "-1 is not in the range 0<=x<=4294967295"),
    (["timing", "--seed", "-1"], "-1 is not in the range 0<=x<=4294967295"),
    (["prove", "--seed", "4294967296"], "4294967296 is not in the range"),
    (["explore", "--seed", "-5"], "-5 is not in the range"),
    (["fuzz", "--seed", str(2**70)], "is not in the range"),
    # a name given twice: the last one was taken without a word
    (["explore", "--model", "two-phase", "--param", "rms=3", "--param", "rms=4"],
     "--param rms is given twice ('3' and '4'): give it once"),
    (["timing", "--set", "slot=1", "--set", "slot=2"], "--set slot is given twice"),
    (["timing", "--set", "=2"], "--set takes name=seconds, got '=2'"),
    # a single-valued option given twice: click kept the last without a word, so that
    # two mutants checked the second alone and prove's two models proved the second
    (["explore", "--model", "graph-relay", "--mutant", "leaky-not-found", "--mutant",
      "fresh-key-on-retry"],
     "--mutant is given twice ('leaky-not-found' and 'fresh-key-on-retry'): give it once"),
    (["prove", "--model", "two-phase", "--model=graph-relay"], "--model is given twice"),
    (["explore", "--depth", "3", "--depth", "4"], "--depth is given twice ('3' and '4')"),
    (["replay", "--mutant", "none", "--mutant", "slot-leak", "t.json"], "--mutant is given"),
    # a fuzz run that drove the implementation through nothing passed (exit 0)
    (["fuzz", "--model", "graph-relay", "--examples", "0", "--tour-depth", "0"],
     "--examples 0 and --tour-depth 0 leave only the goals' shortest paths to run"),
])
def test_bad_input_is_one_line_and_exit_150(args, needle):
    one_line_error(run(*args), needle=needle)


def test_checking_an_output_directory_leaves_nothing_behind(tmp_path):
    """The check writes a file in --out (making the directories it needs) and takes
    them away: a run refused afterwards leaves no empty directory; a run that goes on
    writes there."""
    out = tmp_path / "a" / "b" / "out"
    r = CliRunner().invoke(main, ["explore", "--model", "nope", "--out", str(out)])
    assert r.exit_code == 150 and not (tmp_path / "a").exists()
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--depth", "2",
                                  "--out", str(out)])
    assert r.exit_code == 0 and (out / "result.json").exists()
    assert not list(out.glob(".osf-check-probe-*"))


def test_every_seed_is_one_z3_takes_in_the_library_and_every_schema_too():
    from osf_check.api import MAX_SEED, Checker
    from osf_check.models.errors import BadValue
    assert Checker("two-phase").seed(MAX_SEED)._seed == MAX_SEED
    for bad in (-1, MAX_SEED + 1, 1.5, True, "3"):
        with pytest.raises(BadValue, match="seed is an integer from 0 to 4294967295"):
            Checker("two-phase").seed(bad)
    root = Path(__file__).parent.parent
    for name in ("osf_check/schema/result.schema.json", "osf_check/schema/driver.schema.json",
                 "traces/trace.schema.json"):
        text = (root / name).read_text(encoding="utf-8")
        seeds = [v for k, v in _walk(json.loads(text)) if k == "seed"]
        assert seeds and all((v.get("minimum"), v.get("maximum")) == (0, MAX_SEED)
                             for v in seeds), (name, seeds)


def _walk(node):
    """Every (key, value) pair of a JSON document, at any depth."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_an_option_given_twice_alike_is_taken_once():
    """The same value twice is harmless, flags too, and so is a model named twice (it
    ran twice, and --param then took the two names for two models), and help still
    answers."""
    r = run("explore", "--model", "two-phase", "--model", "two-phase", "--param", "rms=2",
            "--mutant", "commit-without-all-prepared", "--mutant=commit-without-all-prepared",
            "--depth", "6", "--json", "--json")
    assert r.exit_code == 12, r.output
    [m] = json.loads(r.stdout)["models"]
    assert (m["model"], m["mutant"], m["params"]) == \
        ("two-phase", "commit-without-all-prepared", {"rms": 2})
    assert run("explore", "--depth", "1", "--depth", "2", "--help").exit_code == 0


def test_unknown_option_is_click_usage_error():
    assert run("explore", "--frobnicate").exit_code == 2


def test_every_exit_code_is_named_in_the_help_and_the_docs():
    """154 (a failing adapter) was missing from ``osf-check --help``."""
    import re
    from osf_check import cli
    from osf_check.explorer.check import EXIT
    codes = set(EXIT.values()) | {2, cli.INTERNAL, 130, cli.READER_GONE}
    helped = run("--help").output
    readme = (Path(__file__).parent.parent / "docs" / "checking.md").read_text(encoding="utf-8")
    for where, text in [("--help", helped), ("cli.py", cli.__doc__)]:
        said = {int(c) for c in re.findall(r"\b(\d{1,3})\b", text)}
        assert codes - {0} <= said, (where, sorted(codes - said))
    bold = {int(c) for c in re.findall(r"\*\*(\d{1,3})\*\*", readme)}  # its paragraph
    assert codes == bold, sorted(codes ^ bold)


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out")
    res = run("explore", "--mutant", "leaky-not-found", "--out", str(out))
    assert res.exit_code == 12
    return out / "graph-relay-leaky-not-found-A7-trans.trace.json"


def test_trace_loads_and_itf_export(trace_file):
    tr = load_trace(trace_file)
    assert tr["steps"][0]["label"] == "initial state"
    last = tr["steps"][-1]
    assert last["action"] == "get_graph_run" and last["outputs"] == {"answer": "access_denied"}
    itf = to_itf(tr)
    assert itf["vars"] == [v["name"] for v in tr["variables"]]
    assert len(itf["states"]) == len(tr["steps"])
    assert itf["states"][0]["#meta"]["index"] == 0


@pytest.mark.parametrize("mangle, needle", [
    (lambda t: t[: len(t) // 2], "truncated"),
    (lambda t: '{"format": nope}', "not valid JSON"),
    (lambda t: t[:-40], "truncated"),
    (lambda t: json.dumps({"format": "something-else"}), "not an osf-check trace"),
    (lambda t: t.replace('"version": 1', '"version": 7'), "not an osf-check trace"),
    (lambda t: t.replace('"loop_start": null', '"loop_start": 99'), "past the last step"),
    # states the pictures could not read (a KeyError, a TypeError: internal errors)
    (lambda t: _second_state(t, lambda st: {"nope": 1}), "missing call"),
    (lambda t: _second_state(t, lambda st: {**st, "call": {"x": None}}),
     "call holds {\"x\": null}, not a value of a state"),
])
@pytest.mark.parametrize("fmt", ["text", "itf"])
def test_malformed_trace_files(trace_file, tmp_path, mangle, needle, fmt):
    bad = tmp_path / "bad.json"
    bad.write_text(mangle(trace_file.read_text()))
    one_line_error(run("render", str(bad), "--format", fmt), needle=needle)


def _second_state(text: str, change) -> str:
    tr = json.loads(text)
    tr["steps"][1]["state"] = change(tr["steps"][1]["state"])
    return json.dumps(tr)


def test_a_byte_order_mark_is_no_content(trace_file, tmp_path):
    """A trace or a mapping saved by an editor that starts it with a BOM: read as
    without one (both were "not JSON"/"not valid TOML")."""
    from osf_check.tracelog.mapping import read_document
    bom = tmp_path / "bom.trace.json"
    bom.write_bytes(b"\xef\xbb\xbf" + trace_file.read_bytes())
    assert load_trace(bom) == load_trace(trace_file)
    mapping = Path(__file__).parent.parent / "examples" / "graph-relay.logmap.toml"
    toml = tmp_path / "map.toml"
    toml.write_bytes(b"\xef\xbb\xbf" + mapping.read_bytes())
    assert read_document(toml) == read_document(mapping)


def test_missing_trace_file(tmp_path):
    one_line_error(run("render", str(tmp_path / "none.json")), needle="no such file")


@pytest.mark.parametrize("fmt, view, needle", [
    ("text", "sequence", "access_denied"),
    ("mermaid", "sequence", "sequenceDiagram"),
    ("mermaid", "graph", "flowchart TD"),
    ("dot", "sequence", "digraph"),
    ("dot", "graph", "digraph"),
    ("itf", "sequence", '"#meta"'),
])
def test_render_text_formats(trace_file, fmt, view, needle):
    res = run("render", str(trace_file), "--format", fmt, "--view", view)
    assert res.exit_code == 0 and needle in res.stdout


@pytest.mark.parametrize("fmt", ["text", "itf", "json", "html"])
def test_render_refuses_a_graph_view_it_cannot_draw(trace_file, fmt):
    """--view graph with a format of one form was ignored without a word."""
    one_line_error(run("render", str(trace_file), "--format", fmt, "--view", "graph"),
                   needle=f"--view graph is a picture (dot, mermaid, svg, png); --format {fmt}")


@pytest.mark.parametrize("action,needle", [
    ("get_graph_rum", "(did you mean 'get_graph_run'?)"),
    ("fly", "(its actions: answer_ticket, ")])
def test_render_refuses_a_step_its_model_has_no_action_for(trace_file, tmp_path, action, needle):
    """A trace naming an action the model does not have was drawn (exit 0)."""
    tr = json.loads(trace_file.read_text())
    tr["steps"][1]["action"] = action
    f = tmp_path / "edited.trace.json"
    f.write_text(json.dumps(tr))
    res = run("render", str(f), "--format", "text")
    one_line_error(res, needle=f"step 1 takes action {action!r}, which model graph-relay "
                               "does not have")
    assert needle in res.stderr
    assert run("render", str(trace_file), "--format", "text").exit_code == 0


def test_render_svg_with_the_bundled_renderer(trace_file, tmp_path):
    from osf_check.traces.render import find_renderer
    if find_renderer() is None:  # pragma: no cover - the graphviz-pure wheel is a dependency
        pytest.fail("no renderer: graphviz-pure should be installed with osf-check")
    out = tmp_path / "x.svg"
    res = run("render", str(trace_file), "--format", "svg", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert out.read_text().lstrip().startswith("<?xml") and "get_graph_run" in out.read_text()


def test_no_renderer_is_a_note_not_a_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("OSF_DOT", str(tmp_path / "no-such-dot"))
    res = run("explore", "--mutant", "leaky-not-found", "--out", str(tmp_path))
    assert res.exit_code == 12
    assert "no Graphviz renderer found" in res.stderr
    assert not list(tmp_path.glob("*.sequence.svg")) and list(tmp_path.glob("*.dot"))
    assert (tmp_path / "report.html").exists()  # the report tells the story without one


def test_json_result_validates_against_its_schema():
    res = run("explore", "--mutant", "fresh-key-on-retry", "--json")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, result_schema())
    assert doc["seed"] == 0 and doc["bound"] == 12 and doc["exit_code"] == 12
    ok = run("explore", "--model", "two-phase", "--depth", "unbounded", "--json")
    doc = json.loads(ok.stdout)
    jsonschema.validate(doc, result_schema())
    assert ok.exit_code == 0 and doc["complete"] and doc["states"] == 288


@pytest.mark.parametrize("args", [
    ["prove", "--model", "two-phase", "--param", "rms=2", "--k", "2"],
    ["prove", "--model", "two-phase", "--param", "rms=2", "--mutant",
     "commit-without-all-prepared"],
    # D2 refuted, so D1 "not checked" (which the schema did not allow)
    ["prove", "--model-file", "examples/diehard.py"],
    ["timing"], ["timing", "--set", "relay_other=50"],
    ["fuzz", "--model", "graph-relay", "--examples", "3", "--steps", "5", "--tour-depth", "2"],
    # a failing run too: its failure is a sentence, its trace a trace
    ["fuzz", "--mutant", "outbox-off", "--examples", "0", "--tour-depth", "5"],
    ["check-log", "examples/no-such-log-is-needed", "--mapping",
     "examples/graph-relay.logmap.toml"],
    ["simulate", "--runs", "10"],
    ["list"],  # (it had no schema_version, nor a schema)
])
@pytest.mark.slow
def test_every_commands_json_validates_against_the_shipped_schema(args, tmp_path):
    if args[0] == "check-log":  # a log of the reference implementation, refused at line 20
        from osf_check.fuzz.driver import model_for
        from osf_check.tracelog.record import walk
        log = tmp_path / "events.jsonl"
        log.write_text(walk(model_for("graph-relay", "outbox-off"), "outbox-off", seed=1,
                            steps=60).log)
        mapping = Path(__file__).parent.parent / "examples" / "graph-relay.logmap.toml"
        args = ["check-log", str(log), "--mapping", str(mapping)]
    args = [str(Path(__file__).parent.parent / a) if a.startswith("examples/") else a
            for a in args]  # (wherever the tests run from)
    res = run(*args, "--json")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, result_schema())
    assert doc["command"] == args[0]
    broken = {**doc, "command": args[0], "unexpected": 1}  # the schema can say no
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, result_schema())


def test_max_states_exits_152_and_says_incomplete():
    res = run("explore", "--max-states", "500")
    assert res.exit_code == 152
    assert "INCOMPLETE" in res.stdout and "result: incomplete" in res.stdout


def test_strict_turns_vacuity_into_a_failure():
    # one intent: no command ever waits while another runs, so A5 is vacuous
    res = run("explore", "--model", "graph-relay", "--param", "intents=1", "--strict",
              "--property", "A5")
    assert res.exit_code == 14
    assert "A5 single-worker: its premise never holds" in res.stdout


def test_list_names_models_properties_mutants():
    res = run("list")
    assert res.exit_code == 0
    for word in ("graph-relay", "two-phase", "A10 ", "queue-on-desktop", "intents=2"):
        assert word in res.stdout
    doc = json.loads(run("list", "--json").stdout)
    assert {m["name"] for m in doc["models"]} >= {"graph-relay", "two-phase"}


def test_console_script_runs_as_a_subprocess(tmp_path):
    # the real entry point, as a user types it: no traceback on bad input
    exe = Path(sys.executable).with_name("osf-check")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "osf_check.cli"]
    p = subprocess.run(cmd + ["explore", "--model", "nope"], capture_output=True, text=True,
                       env={**os.environ}, timeout=120)
    assert p.returncode == 150 and "Traceback" not in p.stderr
    assert p.stderr.strip() == ("osf-check: error: unknown model 'nope' "
                                "(known: graph-relay, wire-relay, two-phase)")


@pytest.mark.parametrize("args, needle", [
    (["explore", "--model", "graph-rely"], "unknown model 'graph-rely' (did you mean "
                                           "'graph-relay'? known: "),
    (["explore", "--mutant", "outbox-of"], "unknown mutant 'outbox-of' (did you mean "
                                           "'outbox-off'? known: "),
    (["explore", "--model", "graph-relay", "--mutant", "outbox-of"],
     "has no mutant 'outbox-of' (did you mean 'outbox-off'? it has: "),
    (["explore", "--model", "graph-relay", "--property", "no-stuck"],
     "has no property 'no-stuck' (did you mean 'no-stuck-running'? it has: "),
    (["explore", "--model", "graph-relay", "--param", "agent=2"],
     "has no parameter 'agent' (did you mean 'agents'? it has: "),
    (["fuzz", "--model", "graph-relay", "--mutant", "outbox-of"],
     "graph-relay has no mutant 'outbox-of' (did you mean 'outbox-off'? known: "),
    (["explore", "--model", "graph-relay", "--mutant", "zzzz"],
     "has no mutant 'zzzz' (it has: ")])  # nothing close: no guess
def test_an_unknown_name_gets_the_closest_known_one(args, needle):
    one_line_error(run(*args), needle=needle)


def _to_a_closed_pipe(*args: str) -> subprocess.CompletedProcess:
    """``osf-check ARGS | head -1``, the reader gone before a byte is written (so that the
    command cannot have written all it had before the reader left)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([sys.executable, "-m", "osf_check.cli", *args], stdout=w,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(w)


@pytest.mark.parametrize("args", [["list"], ["list", "--json"],
                                  ["describe", "--model", "two-phase"]])
def test_a_reader_that_goes_away_ends_a_listing_quietly_and_well(args):
    """``osf-check list | head -1``: a listing has no verdict to lose, its reader took
    what it wanted; it exited 141, which a script under ``set -o pipefail`` took for a
    failure."""
    p = _to_a_closed_pipe(*args)
    assert p.returncode == 0 and p.stderr == "", (p.returncode, p.stderr)


def test_a_reader_that_goes_away_leaves_a_check_without_success():
    """``osf-check explore | head -1``: the verdict went unread, so the run is no
    success: 141, as a shell reports SIGPIPE, and no traceback (nothing went wrong in
    osf-check)."""
    p = _to_a_closed_pipe("explore", "--model", "two-phase", "--depth", "3")
    assert p.returncode == 141, (p.returncode, p.stderr)
    assert p.stderr == "osf-check: exploring two-phase to depth 3\n", p.stderr


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["explore", "--help"]])
def test_a_reader_gone_while_help_is_written_is_no_failure(args):
    """``--help`` and ``--version`` only describe: as a listing, they end 0 (click's own
    exit 1 and a traceback, before)."""
    p = _to_a_closed_pipe(*args)
    assert p.returncode == 0 and p.stderr == "", (p.returncode, p.stderr)


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
@pytest.mark.parametrize("args", [["list"], ["--version"], ["list", "--json"]])
def test_a_full_stdout_is_152_in_one_line(args):
    """``osf-check list > file`` on a full disk: the machine's doing, not a bug (it was
    an internal error, 153, or a traceback)."""
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "osf_check.cli", *args], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 152, (p.returncode, p.stderr)
    assert p.stderr == ("osf-check: cannot write the output: No space left on device; the "
                        "run's results were not all saved\n"), p.stderr


def test_only_a_closed_stdout_counts_as_the_reader_gone(monkeypatch):
    """A broken pipe elsewhere (an adapter's, a worker's) stays an internal error: the
    test is whether stdout's own pipe lost its reader."""
    import osf_check.cli as cli
    r, w = os.pipe()
    with os.fdopen(w, "w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        assert not cli._stdout_gone()  # its reader still there
        os.close(r)
        assert cli._stdout_gone()
        monkeypatch.undo()


@pytest.mark.parametrize("call, needle", [
    (lambda c: c.depth(True), "depth is an integer of 0 or more (or None), got True"),
    (lambda c: c.workers(True), "workers is an integer from 1 to 64, got True"),
    (lambda c: c.max_states(2.0), "max_states is an integer of 1 or more (or None), got 2.0"),
    (lambda c: c.prove(k=2.5), "k is an integer of 1 or more, got 2.5"),
    (lambda c: c.prove(sample_depth="3"), "sample_depth is an integer of 0 or more, got '3'"),
    (lambda c: c.prove(timeout="60"), "timeout is a finite number of seconds, above 0, got '60'"),
    (lambda c: c.explore(checkpoint_every=None), "checkpoint_every is a finite number"),
])
def test_the_library_refuses_what_is_not_a_count_or_a_time(call, needle):
    """depth(True) explored to depth 1; prove(k=2.5) said k must be at least 1; a string
    for sample_depth, timeout or checkpoint_every failed inside with a TypeError."""
    from osf_check.api import Checker
    from osf_check.models.errors import BadValue
    with pytest.raises(BadValue) as e:
        call(Checker("two-phase").params(rms=2))
    assert needle in str(e.value)
