"""The server: run records, the command queue and the cancellation flag.

The server's code is not public; it is modelled from the tool contracts: a run
record per command id, the idempotency key it was started with, the slug of the
session it was queued for, and the flag that a cancel of a running run sets.
Its reactions to calls happen inside the agent's and the desktop's actions.
"""

from __future__ import annotations

from ..dsl import Bool, Int, ModelBuilder
from .vocab import STATUS, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    b.array("status", STATUS, c.runs, actor="server", doc="run record status per command id")
    b.array("key", Int(0, c.keys - 1), c.runs, actor="server",
            doc="idempotency key the run was started with")
    b.array("slug", Int(0, c.slugs - 1), c.runs, actor="server",
            doc="the session slug the command was queued for")
    b.array("flag", Bool(), c.runs, actor="server", doc="cancel requested while running")
    b.array("proj", Int(0, c.projects - 1), c.runs, actor="server",
            doc="the project the run is filed under (its session's)")
    b.array("result", Bool(), c.runs, actor="server",
            doc="the server holds the accepted completion's result, error, tokens and cost")
    b.array("qcancel", Bool(), c.runs, actor="server", ghost=True,
            doc="history: the run was cancelled while queued")
    if c.on("queue-on-desktop"):
        b.array("lost", Bool(), c.runs, actor="desktop",
                doc="the command was sent to an offline desktop's own queue and lost")


def actions(b: ModelBuilder, c: Ctx) -> None:
    """The server acts only in answer to calls (see agent, desktop, outbox)."""
