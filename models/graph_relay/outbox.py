"""The outbox: completions are written before they are posted and leave only on a 2xx.

Also the network between desktop and server for completion POSTs: a POST can be
lost, and so can the 2xx answer (the desktop then re-sends; the server ignores a
completion for a run that is already terminal).
"""

from __future__ import annotations

from ..dsl import Bool, ModelBuilder
from ..expr import And, Exists, If, Not, Or
from .vocab import OUTCOME, POST, STATUS, TERMINAL, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    b.array("outcome", OUTCOME, c.runs, actor="desktop",
            doc="the outcome in the desktop's history (and in its outbox entry)")
    b.array("outbox", Bool(), c.runs, actor="desktop", doc="completion kept in the outbox")
    b.array("post", POST, c.runs, actor="network", doc="the completion POST in flight")


def complete(s, c: Ctx, r: int, result) -> dict:
    """The Graph's completion: written to the outbox first, then posted."""
    upd = {s.outcome[r]: result, s.post[r]: POST.sent}
    if c.on("outbox-off"):
        pass  # kept only in memory: a lost POST is gone
    elif c.on("outbox-drop-before-ack"):
        upd[s.outbox[r]] = False  # dropped when sent, not when acknowledged
    else:
        upd[s.outbox[r]] = True
    return upd


def resend(s, c: Ctx) -> dict:
    """The round's first step: re-send every completion still in the outbox."""
    return {s.post[r]: If(And(s.outbox[r], s.post[r] == POST.none), POST.sent, s.post[r])
            for r in range(c.runs)}


def actions(b: ModelBuilder, c: Ctx) -> None:
    R = range(c.runs)

    @b.action("network", target="server", params={"r": R}, fair="strong")
    def deliver_post(s, r):
        """The POST reaches the server: a run not yet terminal takes the outcome."""
        final = Exists(TERMINAL, lambda t: s.status[r] == t)
        keep = False if c.on("complete-overwrites-cancel") else final
        # an accepted completion is kept whole for get_graph_run (the bug: status only)
        stored = s.result[r] if c.on("status-only") else Or(s.result[r], Not(keep))
        return (And(s.online, s.post[r] == POST.sent),
                {s.status[r]: If(keep, s.status[r], s.outcome[r] + (STATUS.completed - OUTCOME.completed)),
                 s.post[r]: POST.acked, s.result[r]: stored})

    @b.action("network", params={"r": R})
    def lose_post(s, r):
        """The completion POST is lost."""
        return s.post[r] == POST.sent, {s.post[r]: POST.none}

    @b.action("network", params={"r": R})
    def lose_ack(s, r):
        """The server's 2xx is lost: the desktop will re-send."""
        return s.post[r] == POST.acked, {s.post[r]: POST.none}

    @b.action("server", target="desktop", params={"r": R}, fair="strong")
    def receive_ack(s, r):
        """The 2xx reaches the desktop: the completion leaves the outbox."""
        return s.post[r] == POST.acked, {s.post[r]: POST.none, s.outbox[r]: False}
