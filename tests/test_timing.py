"""Deadline analysis: B9 and B10 at the spec's numbers, and violating schedules when changed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from osf_check.explorer.symbolic.timing import DEADLINES, analyse
from osf_check.cli import main


def test_spec_numbers_hold_and_ios_outbox_gives_up_first():
    rep = analyse()
    assert rep.ok
    by = {c.name: c for c in rep.classes}
    assert by["first timeline load"].desktop_last == 8 + 95 + 5
    ios = by["outbox submit (iOS)"]
    assert ios.gives_up_first and (ios.phone, ios.desktop_last) == (20, 58)
    # the retry meets the running claim or the stored answer, never a race
    assert set(ios.retry_meets) == {"joins the running claim (in-memory) and gets its answer",
                                    "gets the stored answer"}
    for s in ios.retry_meets.values():
        assert s.retry_at == 20 and s.answer_at > 20
    assert [c.name for c in rep.classes if c.gives_up_first] == ["outbox submit (iOS)"]


def test_z3_unknown_is_never_read_as_holds(monkeypatch):
    """Each B9/B10 query asks z3 for a violating schedule; ``unknown`` was read as "no
    schedule", so as "holds"."""
    import z3
    monkeypatch.setattr(z3.Optimize, "check", lambda self, *a: z3.unknown)
    with pytest.raises(RuntimeError, match="z3 could not decide"):
        analyse()
    r = CliRunner().invoke(main, ["timing"])
    assert r.exit_code == 153 and "holds" not in r.stdout, r.output


def test_a_relay_timeout_below_the_desktop_bound_breaks_b9_with_a_schedule():
    rep = analyse({"relay_other": 50})
    c = next(c for c in rep.classes if c.name == "anything else")
    assert not c.b9 and not rep.ok
    s = c.b9_schedule
    assert s.answer_at >= 50 and s.slot_wait <= 8 and s.dispatch <= 45 and s.enqueue <= 5


def test_a_short_lease_breaks_b10_and_allows_a_race():
    rep = analyse({"lease": 30})
    assert not all(c.b10 for c in rep.classes)
    ios = next(c for c in rep.classes if c.name == "outbox submit (iOS)")
    s = ios.b10_schedule
    assert s.dispatch >= 30
    rep2 = analyse({"lease": 10})
    ios2 = next(c for c in rep2.classes if c.name == "outbox submit (iOS)")
    assert "races a live first copy whose lease ended: can run twice" in ios2.retry_meets


@pytest.mark.parametrize("args, code, needle", [
    (["timing"], 0, "B9 and B10 hold for every method class"),
    (["timing", "--set", "relay_first_load=100"], 12, "B9 fails for first timeline load"),
    (["timing", "--set", "nonsense=1"], 150, "unknown deadline 'nonsense'"),
    (["timing", "--set", "lease=soon"], 150, "not a number of seconds"),
    (["timing", "--set", "lease"], 150, "name=seconds"),
])
def test_timing_cli(args, code, needle):
    res = CliRunner().invoke(main, args)
    assert res.exit_code == code, res.output
    assert needle in (res.stdout + res.stderr)


def test_timing_json_and_timeline_picture(tmp_path):
    res = CliRunner().invoke(main, ["timing", "--set", "relay_other=50", "--json",
                                    "--out", str(tmp_path)])
    doc = json.loads(res.stdout)
    assert doc["exit_code"] == 12 and doc["deadlines"]["relay_other"] == 50
    other = next(c for c in doc["classes"] if c["name"] == "anything else")
    assert other["B9"] == "fails" and other["B9_schedule"]["answer_at"] >= 50
    assert (tmp_path / "timing-B9-anything-else.svg").exists()
    assert set(DEADLINES) >= {"slot", "lease", "retention"}
