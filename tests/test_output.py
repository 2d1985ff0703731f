"""Writing the user's files: whole, through links, in place on devices and pipes, and a
full disk said as such (exit 152), never as a bug."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.output import OutputFailed, atomic_write


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out")
    res = CliRunner().invoke(main, ["explore", "--mutant", "leaky-not-found", "--out", str(out)])
    assert res.exit_code == 12, res.output
    return out / "graph-relay-leaky-not-found-A7-trans.trace.json"


def _drain(fifo: Path, got: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())
    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def test_a_pipe_is_written_in_place_not_replaced_by_a_file(tmp_path, trace):
    """``-o /dev/stdout`` or a named pipe: the rename put a regular file where the pipe
    was (as root, ``-o /dev/null`` replaced the machine's /dev/null)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _drain(fifo, got)
    res = CliRunner().invoke(main, ["render", str(trace), "--format", "mermaid", "-o", str(fifo)])
    reader.join(timeout=30)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the pipe became a regular file"
    assert got and got[0].startswith(b"sequenceDiagram"), got
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"], "a temporary file was left"


def test_a_link_keeps_pointing_at_the_file_it_names(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    dangling = tmp_path / "later.txt"
    dangling.symlink_to(tmp_path / "made.txt")
    atomic_write(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "made.txt").read_text() == "made"


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
def test_a_full_device_is_exit_152_in_one_line_and_stays_a_device(trace):
    with pytest.raises(OutputFailed) as e:
        atomic_write("/dev/full", "x" * 100_000)
    assert e.value.errno == errno.ENOSPC and "cannot write /dev/full" in e.value.strerror
    res = CliRunner().invoke(main, ["render", str(trace), "--format", "itf", "-o", "/dev/full"])
    assert res.exit_code == 152, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines == ["osf-check: cannot write /dev/full: No space left on device; the run's "
                     "results were not all saved"], res.stderr
    assert Path("/dev/full").is_char_device()


def test_a_full_disk_while_writing_is_152_and_leaves_no_file(tmp_path, monkeypatch):
    """ENOSPC mid-write (an internal error, 153, before): no temporary file left, the
    old file whole."""
    import osf_check.output as output
    old = tmp_path / "a.json"
    old.write_text("whole")
    real_fsync = os.fsync

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(output.os, "fsync", full)
    with pytest.raises(OutputFailed, match="No space left on device"):
        atomic_write(old, "new")
    monkeypatch.setattr(output.os, "fsync", real_fsync)
    assert old.read_text() == "whole" and [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_checkpoint_that_cannot_be_written_is_152_and_keeps_the_last_one(tmp_path,
                                                                             monkeypatch):
    cp = tmp_path / "cp"
    args = ["explore", "--model", "two-phase", "--param", "rms=3",
            "--checkpoint", str(cp), "--checkpoint-every", "0"]
    assert CliRunner().invoke(main, args + ["--depth", "3"]).exit_code == 0
    before = (cp / "state.npz").read_bytes()

    def full(*a: object, **k: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(np, "savez", full)
    res = CliRunner().invoke(main, args + ["--depth", "unbounded", "--resume", str(cp)])
    assert res.exit_code == 152, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip() and "depth" not in ln]
    assert len(lines) == 1 and f"cannot write the checkpoint {cp / 'state.npz'}: No space" \
        in lines[0], res.stderr
    assert (cp / "state.npz").read_bytes() == before
    assert sorted(p.name for p in cp.iterdir()) == ["state.npz"]


def test_a_picture_of_a_piped_trace_needs_a_name_first(tmp_path, trace):
    """``render <(cat t.json) --format svg``: the picture's default place, next to the
    trace, is /dev/fd/…; said before drawing (150), where the write failed after."""
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    res = CliRunner().invoke(main, ["render", str(fifo), "--format", "svg"])
    assert res.exit_code == 150, res.output
    assert "is not a file (stdin, a pipe), so a picture cannot go next to it: name one " \
        "with -o" in res.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_an_output_refused_for_another_reason_than_room_is_the_paths_150(tmp_path, trace,
                                                                       monkeypatch):
    import osf_check.output as output

    def refused(*a: object) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    monkeypatch.setattr(output.os, "replace", refused)
    res = CliRunner().invoke(main, ["render", str(trace), "-o", str(tmp_path / "t.txt")])
    assert res.exit_code == 150, res.output
    assert res.stderr.strip() == (f"osf-check: cannot write {tmp_path / 't.txt'}: Permission "
                                  "denied; the run's results were not all saved")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_rerun_removes_its_earlier_runs_files_and_nothing_else(tmp_path):
    """A counterexample of an earlier run lay next to a result that no longer had it
    (``explore --mutant ... --out d`` then ``explore --out d``)."""
    out = tmp_path / "out"
    cli = CliRunner()
    assert cli.invoke(main, ["explore", "--mutant", "leaky-not-found", "--out", str(out)]
                      ).exit_code == 12
    stale = sorted(p.name for p in out.glob("graph-relay-leaky-not-found-*"))
    assert len(stale) >= 8
    assert cli.invoke(main, ["timing", "--out", str(out)]).exit_code == 0
    (out / "notes.txt").write_text("mine")
    assert cli.invoke(main, ["explore", "--out", str(out)]).exit_code == 0
    assert list(out.glob("graph-relay-leaky-not-found-*")) == []
    assert (out / "notes.txt").read_text() == "mine" and (out / "timing.json").is_file()
    assert {"result.json", "report.html"} <= set(
        (out / ".osf-check-explore.files").read_text().split())


def test_a_manifest_removes_only_plain_files_named_in_its_directory(tmp_path):
    from osf_check import output
    d = tmp_path / "d"
    d.mkdir()
    (tmp_path / "outside.txt").write_text("x")
    (d / "sub").mkdir()
    (d / "real.txt").write_text("x")
    (d / "link.txt").symlink_to(d / "real.txt")
    (d / "old.json").write_text("x")
    (d / ".osf-check-explore.files").write_text(
        "../outside.txt\n" + str(tmp_path / "outside.txt") + "\nsub\nlink.txt\n..\n\nold.json\n")
    output.forget()
    atomic_write(d / "new.json", "{}")
    assert output.sweep(d, "explore") == ["old.json"]
    assert (tmp_path / "outside.txt").exists() and (d / "sub").is_dir()
    assert (d / "link.txt").is_symlink() and (d / "real.txt").exists()
    assert (d / ".osf-check-explore.files").read_text() == "new.json\n"


def test_a_trace_on_stdin_is_read_as_from_a_file(trace):
    """``osf-check render -`` (and replay): it was "-: no such file"."""
    data = b"\xef\xbb\xbf" + trace.read_bytes()
    got = CliRunner().invoke(main, ["render", "-", "--format", "mermaid"], input=data)
    want = CliRunner().invoke(main, ["render", str(trace), "--format", "mermaid"])
    assert got.exit_code == 0 and got.output == want.output, got.output
    res = CliRunner().invoke(main, ["render", "-", "--format", "svg"], input=data)
    assert res.exit_code == 150 and "- is not a file (stdin, a pipe)" in res.stderr
    res = CliRunner().invoke(main, ["replay", "-"], input=data)
    assert res.exit_code == 12 and "does not follow the model at step 2" in res.output
