"""The server: run records, the command queue and the cancellation flag.

The server's code is not public; it is modelled from the tool contracts: a run
record per command id, the idempotency key it was started with, the slug of the
session it was queued for, and the flag that a cancel of a running run sets.
Its reactions to calls happen inside the agent's and the desktop's actions.

At ``listing=1`` it also keeps its session list: per project, whether the last sync
of that project uploaded the project's session, and under which slug.  A start call
for a session that list leaves out is refused, and a new run is filed under the
uploaded slug (at ``listing=0`` every start is filed under the session's current
slug, as if a sync had just uploaded it).
"""

from __future__ import annotations

from ..dsl import Bool, Int, ModelBuilder
from ..expr import If
from .vocab import STATUS, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    b.array("status", STATUS, c.runs, actor="server", doc="run record status per command id")
    b.array("key", Int(0, c.no_key), c.runs, actor="server",
            doc=f"idempotency key the run was started with ({c.no_key}: no run yet)")
    b.array("slug", Int(0, c.slugs - 1), c.runs, actor="server",
            doc="the session slug the command was queued for")
    b.array("flag", Bool(), c.runs, actor="server", doc="cancel requested while running")
    b.array("proj", Int(0, c.projects - 1), c.runs, actor="server",
            doc="the project the run is filed under (its session's)")
    b.array("result", Bool(), c.runs, actor="server",
            doc="the server holds the accepted completion's result, error, tokens and cost")
    b.array("qcancel", Bool(), c.runs, actor="server", ghost=True,
            doc="history: the run was cancelled while queued")
    if c.listing:
        b.array("listed", Bool(), c.projects, actor="server",
                doc="the last sync of each project uploaded its session (listed)")
        b.array("up_slug", Int(0, c.slugs - 1), c.projects, actor="server",
                doc="the slug that sync uploaded the session with (0 while unlisted)")
    if c.on("queue-on-desktop"):
        b.array("lost", Bool(), c.runs, actor="desktop",
                doc="the command was sent to an offline desktop's own queue and lost")


def uploaded(s, c: Ctx) -> dict:
    """The session list after the round's syncs reached the server: each enabled
    project's sync replaces that project's entry with its session if shared, under the
    current slug; a disabled project sends no sync, so its entry stays.

    Parameters
    ----------
    s : the state's variables
    c : the model's context

    Returns
    -------
    dict
        The updates (none at ``listing=0``, which keeps no list).
    """
    if not c.listing:
        return {}
    upd = {}
    for p in range(c.projects):
        on = s.enabled[p]
        upd[s.listed[p]] = If(on, s.shared, s.listed[p])
        # an unlisted session's slug is 0: no slug is remembered for it
        upd[s.up_slug[p]] = If(on, If(s.shared, s.cur_slug, 0), s.up_slug[p])
    return upd


def actions(b: ModelBuilder, c: Ctx) -> None:
    """The server acts only in answer to calls (see agent, desktop, outbox)."""
