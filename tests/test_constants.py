"""Each figure of the protocol documents is written once, in
:mod:`osf_check.relay.constants`. Here each one is read back from the documents' English
rendering, and every module that uses a figure is checked to take it from there.

The implementation and the fuzzer's deadline book both read the constants module, so a
wrong figure in it would pass the fuzzer. The documents are what catch it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from osf_check.relay import constants as c

SPEC = Path(__file__).resolve().parents[1] / "docs" / "spec"
GRAPH = (SPEC / "graph-relay.md").read_text()
WIRE = (SPEC / "wire-relay.md").read_text()


def _row(name: str) -> list[str]:
    """The cells of the wire protocol's deadline table row that starts with ``name``."""
    line = next(ln for ln in WIRE.splitlines() if ln.startswith(f"| {name}"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def _seconds(text: str) -> list[int]:
    """Every figure in ``text``, in seconds (``31 min`` is 1860)."""
    return [int(n) * (60 if unit == "min" else 1)
            for n, unit in re.findall(r"(\d+)\**\s*(s|min)\b", text)]


def test_the_graph_relay_figures_are_the_documents():
    assert re.search(rf"timer fires every \*\*{c.RELAY_ROUND} s\*\*", GRAPH)
    assert re.search(rf"control poll every {c.CONTROL_POLL} s", GRAPH)
    assert f"median {c.RUN_MEDIAN} s, never under {c.RUN_FLOOR} s" in GRAPH


@pytest.mark.parametrize("row, desktop, phone, relay", [
    ("older timeline page", (c.SLOT, c.DISPATCH, c.ENQUEUE), [c.PHONE_OLDER_PAGE],
     [c.RELAY_OLDER_PAGE]),
    ("first timeline load", (c.SLOT, c.DISPATCH_LOAD, c.ENQUEUE), [c.PHONE_FIRST_LOAD],
     [c.RELAY_FIRST_LOAD]),
    ("outbox submit", (c.SLOT, c.DISPATCH, c.ENQUEUE),
     [c.PHONE_OUTBOX_IOS, c.PHONE_OUTBOX_ANDROID], [c.RELAY_OUTBOX]),
    ("anything else", (c.SLOT, c.DISPATCH, c.ENQUEUE), [c.PHONE_OTHER], [c.RELAY_OTHER]),
])
def test_the_wire_deadlines_are_the_documents_table(row, desktop, phone, relay):
    _, d, p, r = _row(row)
    numbers = [int(n) for n in re.findall(r"\d+", d)]
    assert numbers[:2] == list(desktop[:2]) and desktop[2] in numbers
    assert _seconds(p) == phone and _seconds(r) == relay


def test_the_wire_stores_figures_are_the_documents():
    assert f"**{c.RETENTION // 3600} h** after its answer was stored" in WIRE
    assert f"**Running lease**: {c.LEASE // 60} min from the claim" in WIRE
    assert f"cached **{c.RULES_TTL} s**" in WIRE
    assert f"{c.PRECHECK_TIMEOUT} s timeout" in WIRE
    assert all(f"`{m}`" in _row("first timeline load")[0] for m in c.LOADS)
    assert f"Codex load has its own {c.CODEX_LOAD} s inside" in _row("first timeline load")[1]


def test_a_figure_that_moved_is_caught():
    """Each check above can fail: the table row read with a wrong figure does not match."""
    _, d, p, r = _row("outbox submit")
    assert _seconds(r) != [c.RELAY_OTHER] and _seconds(p) != [c.PHONE_OTHER]


def test_every_user_takes_the_figures_from_the_constants():
    from osf_check.explorer.symbolic.timing import DEADLINES
    from osf_check.fuzz import deadlines
    from osf_check.relay.graph import desktop
    from osf_check.relay.wire import desktop_router, idempotency, phone, relay_router
    from osf_check.simulate.experiments import Facts
    assert (desktop.POLL_INTERVAL, desktop.CONTROL_POLL) == (c.RELAY_ROUND, c.CONTROL_POLL)
    assert (deadlines.RELAY_ROUND, deadlines.CONTROL_POLL) == (c.RELAY_ROUND, c.CONTROL_POLL)
    f = Facts()
    assert (f.poll, f.control, f.median_run, f.floor) == (c.RELAY_ROUND, c.CONTROL_POLL,
                                                          c.RUN_MEDIAN, c.RUN_FLOOR)
    assert (idempotency.LEASE, idempotency.RETENTION) == (c.LEASE, c.RETENTION) == \
        (DEADLINES["lease"], DEADLINES["retention"])
    assert (desktop_router.SLOT_WAIT, desktop_router.DISPATCH, desktop_router.DISPATCH_LOADS,
            desktop_router.ENQUEUE) == (DEADLINES["slot"], DEADLINES["dispatch"],
                                        DEADLINES["dispatch_load"], DEADLINES["enqueue"])
    assert desktop_router.CODEX_LOAD == c.CODEX_LOAD
    from osf_check.relay.wire import precheck
    assert precheck.TIMEOUT == c.PRECHECK_TIMEOUT
    assert relay_router.keep_pending("run.chatLoad") == DEADLINES["relay_first_load"]
    assert relay_router.keep_pending("run.chatOutboxSubmit") == DEADLINES["relay_outbox"]
    assert phone.Phone("d", "ios").waits("run.chatOutboxSubmit") == c.PHONE_OUTBOX_IOS
    assert phone.Phone("d").waits("run.chatLoad") == c.PHONE_FIRST_LOAD
    assert deadlines.LOADS is relay_router.LOADS is desktop_router.LOADS is c.LOADS
