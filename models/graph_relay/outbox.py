"""The outbox: completions are written before they are posted and leave only on a 2xx.

Also the network between desktop and server for completion POSTs: a POST can be
lost, and so can the 2xx answer (the desktop then re-sends; the server ignores a
completion for a run that is already terminal).

A lost copy may also arrive late (the desktop gave the request up, the network did
not): ``late_post`` is a lost POST that reaches the server while the run is still not
terminal there and the outbox still holds the completion, ``late_ack`` a lost 2xx that reaches the desktop while the completion
is still in its outbox.  Bounds: one late POST per run (the first that arrives makes
the run terminal; one arriving later changes nothing, and the fuzzer delivers it after
every step instead); a lost POST that would arrive while a re-sent one is in flight is
that re-sent copy's arrival (the same completion, from the same outbox entry); a lost
2xx arrives only while no copy is in flight: one that would arrive while the re-sent
copy is on its way commutes with that copy's fate (answered, or lost), since the
server, which takes or ignores the copy, and the desktop, which takes the 2xx, share
nothing but the network; the same deliveries in the other order are the model's
(the copy's own 2xx first, then the old one late, or the copy lost, then ``late_ack``).
The 2xx a late POST earns is lost (its request was given up), and may itself arrive
late.  Neither is fair: a lost copy may never arrive.
"""

from __future__ import annotations

from ..dsl import Bool, ModelBuilder
from ..expr import And, Exists, If, Not, Or
from .vocab import EXEC, OUTCOME, POST, STATUS, TERMINAL, Ctx


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


def terminal(s, r: int):
    """Run ``r`` is terminal on the server."""
    return Exists(TERMINAL, lambda t: s.status[r] == t)


def accept(s, c: Ctx, r: int) -> dict:
    """The server's side of a completion POST: a run not yet terminal takes the outcome."""
    keep = False if c.on("complete-overwrites-cancel") else terminal(s, r)
    # an accepted completion is kept whole for get_graph_run (the bug: status only)
    stored = s.result[r] if c.on("status-only") else Or(s.result[r], Not(keep))
    return {s.status[r]: If(keep, s.status[r], s.outcome[r] + (STATUS.completed - OUTCOME.completed)),
            s.result[r]: stored}


def actions(b: ModelBuilder, c: Ctx) -> None:
    R = range(c.runs)

    @b.action("network", target="server", params={"r": R}, fair="strong")
    def deliver_post(s, r):
        """The POST reaches the server: a run not yet terminal takes the outcome."""
        return And(s.online, s.post[r] == POST.sent), {**accept(s, c, r), s.post[r]: POST.acked}

    @b.action("network", target="server", params={"r": R})
    def late_post(s, r):
        """A POST the desktop gave up reaches the server late, the run not yet terminal
        there: it takes the outcome, and the 2xx it answers is lost."""
        # the completion was posted (exec done: a control poll sets the outcome before)
        # and no copy is in flight, so the last one was lost; no completion accepted yet
        # (a run re-queued by a buggy server is not terminal, yet took its POST already).
        # The copy races the outbox's re-send: without an entry (outbox-off,
        # outbox-drop-before-ack) a lost POST stays lost, so that "the run can still
        # end" (A2) is never met by a copy the network may as well never deliver
        return (And(s.exec[r] == EXEC.done, s.post[r] == POST.none, Not(terminal(s, r)),
                    Not(s.result[r]), s.outbox[r]),
                accept(s, c, r))

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

    @b.action("network", target="desktop", params={"r": R})
    def late_ack(s, r):
        """A 2xx the desktop gave up reaches it late, the completion still in its outbox
        and no copy of it on its way: the entry leaves."""
        # the server took a completion (result: a run cancelled while queued never ran,
        # and holds none) and answered it, and no 2xx is on its way: one was lost
        # (lose_ack, or late_post's)
        return (And(s.outbox[r], s.post[r] == POST.none, terminal(s, r), s.result[r]),
                {s.outbox[r]: False})
