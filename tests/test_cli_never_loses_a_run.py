"""A CLI that never loses a run: output paths checked before any work, files written
whole with ordinary permissions, Ctrl-C reported with what was done."""

from __future__ import annotations

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
