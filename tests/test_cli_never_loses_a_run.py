"""A CLI that never loses a run: output paths checked before any work, files written
whole with ordinary permissions, Ctrl-C reported with what was done."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.cli import main

EXE = str(Path(sys.executable).with_name("osf-check"))


@pytest.mark.parametrize("args", [
    ["explore", "--model", "two-phase", "--out", "{f}/sub"],
    ["prove", "--model", "two-phase", "--out", "{f}/sub"],
    ["timing", "--out", "{f}/sub"],
    ["simulate", "--out", "{f}/sub"],
    ["fuzz", "--model", "graph-relay", "--out", "{f}/sub"],
    ["render", "docs/img/a3-complete-overwrites-cancel.trace.json", "--format", "dot",
     "-o", "{f}/x.dot"],
    ["replay", "docs/img/a3-complete-overwrites-cancel.trace.json", "--emit-pytest",
     "{f}/t.py"],
])
def test_an_output_path_under_a_regular_file_is_refused_before_any_work(tmp_path, args):
    f = tmp_path / "file"
    f.write_text("x")
    root = Path(__file__).resolve().parents[1]
    r = CliRunner().invoke(main, [a.format(f=f) for a in args], catch_exceptions=False)
    assert r.exit_code == 150, r.output
    assert r.stderr.count("\n") == 1 and str(f) in r.stderr, r.stderr
    assert "exploring" not in r.stderr and not r.stdout  # nothing was done
    assert root.exists()


def test_written_files_are_0644(tmp_path):
    r = CliRunner().invoke(main, ["explore", "--model", "two-phase", "--depth", "2",
                                  "--out", str(tmp_path / "out")])
    assert r.exit_code == 0
    mode = stat.S_IMODE((tmp_path / "out" / "result.json").stat().st_mode)
    assert mode == 0o644


def test_a_file_that_is_not_json_is_said_to_be_not_json(tmp_path):
    t = tmp_path / "t.json"
    t.write_text("hello")
    r = CliRunner().invoke(main, ["render", str(t)])
    assert r.exit_code == 150 and "not JSON" in r.stderr and "truncated" not in r.stderr
    t.write_text('{"model": "graph-relay", "steps": [')
    r = CliRunner().invoke(main, ["render", str(t)])
    assert r.exit_code == 150 and "truncated" in r.stderr


def test_ctrl_c_says_what_was_done_and_where_to_resume(tmp_path):
    cp = tmp_path / "cp"
    p = subprocess.Popen([EXE, "explore", "--model", "two-phase", "--param", "rms=9",
                          "--depth", "unbounded", "--checkpoint", str(cp),
                          "--checkpoint-every", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (cp / "state.npz").exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert "osf-check: interrupted after depth" in err and f"--resume {cp}" in err
    assert not [x for x in os.listdir(cp) if x.startswith(".")]  # no half-written file


def test_error_messages_say_what_is_wrong(tmp_path):
    r = CliRunner().invoke(main, ["fuzz", "--mutant", "no-such-bug"])
    assert r.exit_code == 150 and "neither implementation has a mutant 'no-such-bug'" in r.stderr
    # a corrupted step label is bad input, not "the implementation does not follow"
    import json
    root = Path(__file__).resolve().parents[1]
    tr = json.loads((root / "docs/img/a3-complete-overwrites-cancel.trace.json").read_text())
    tr["steps"][3]["label"] = "teleport(r=0)"
    f = tmp_path / "t.json"
    f.write_text(json.dumps(tr))
    r = CliRunner().invoke(main, ["replay", str(f)])
    assert r.exit_code == 150 and "'teleport(r=0)' is no action" in r.stderr, r.output


@pytest.mark.parametrize("args", [["simulate", "--runs", "5"], ["render", "x.json", "--format", "pdf"],
                                  ["explore", "--depth", "abc"], ["fuzz", "--steps", "0"],
                                  ["explore", "--workers", "0"]])
def test_a_bad_option_value_is_bad_input_everywhere(args):
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 150, res.output
    [line] = res.stderr.strip().splitlines()
    assert line.startswith("osf-check: error: ")


def test_an_unknown_option_is_a_usage_error():
    assert CliRunner().invoke(main, ["explore", "--frobnicate"]).exit_code == 2


def test_render_and_replay_read_the_itf_files_the_tool_writes(tmp_path):
    from osf_check.traces.format import load_trace
    r = CliRunner().invoke(main, ["explore", "--mutant", "complete-overwrites-cancel",
                                  "--out", str(tmp_path)])
    assert r.exit_code == 12
    [itf] = tmp_path.glob("*.itf.json")
    [trace] = tmp_path.glob("*.trace.json")
    assert load_trace(itf) == load_trace(trace)  # nothing lost on the way through ITF
    r = CliRunner().invoke(main, ["render", str(itf), "--format", "svg", "-o",
                                  str(tmp_path / "x.svg")])
    assert r.exit_code == 0 and (tmp_path / "x.svg").read_text().startswith("<?xml")
    r = CliRunner().invoke(main, ["replay", str(itf)])
    assert r.exit_code == 12 and "breaks a property at step 8" in r.stdout


def test_another_tool_s_itf_renders_too(tmp_path):
    f = tmp_path / "apalache.itf.json"
    f.write_text(json.dumps({
        "#meta": {"format": "ITF", "description": "Counter"},
        "vars": ["x", "s"],
        "states": [{"#meta": {"index": 0}, "x": {"#bigint": "0"}, "s": {"#set": []}},
                   {"#meta": {"index": 1}, "x": {"#bigint": "1"}, "s": {"#set": [{"#tup": [1, "a"]}]}}],
    }))
    r = CliRunner().invoke(main, ["render", str(f)])
    assert r.exit_code == 0, r.output
    assert "* x  0 → 1" in r.stdout and "{<<1, a>>}" in r.stdout  # a set of tuples, as such
    f.write_text(json.dumps({"vars": ["x"], "states": [{"x": 0}, 5]}))
    r = CliRunner().invoke(main, ["render", str(f)])
    assert r.exit_code == 150 and "not a usable ITF trace" in r.stderr


def test_unknown_mutant_alone_is_named_with_the_known_ones_in_prove_too():
    r = CliRunner().invoke(main, ["prove", "--mutant", "no-such-bug"])
    assert r.exit_code == 150
    assert "unknown mutant 'no-such-bug' (known: " in r.stderr and "outbox-off" in r.stderr


def test_every_option_of_every_command_says_what_it_does():
    import click
    missing = [f"{name} {p.opts[0]}" for name, cmd in main.commands.items()
               for p in cmd.params if isinstance(p, click.Option) and not p.help]
    assert missing == []
    r = CliRunner().invoke(main, ["--help"])
    assert "150" in r.output and "153" in r.output  # the exit codes


@pytest.mark.slow
@pytest.mark.parametrize("json_out", [False, True])
def test_an_output_that_cannot_be_written_loses_no_verdict(tmp_path, json_out):
    """A full disk during --out exited with nothing on stdout: the verdict and the
    counterexample were to be printed after the files.  They are printed first, and the
    error names the file (here report.html, a directory where the page should go)."""
    import subprocess
    import sys
    out = tmp_path / "out"
    (out / "report.html").mkdir(parents=True)
    p = subprocess.run([sys.executable, "-m", "osf_check.cli", "explore", "--mutant",
                        "complete-overwrites-cancel", "--out", str(out),
                        *(["--json"] if json_out else [])],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 150, (p.returncode, p.stderr)
    assert f"cannot write {out / 'report.html'}" in p.stderr
    if json_out:
        assert json.loads(p.stdout)["exit_code"] == 12
    else:
        assert "VIOLATION of A3" in p.stdout and "× A3 terminal-is-final fails here" in p.stdout
