"""Phones: send an operation's rpc.request, give up waiting, retry with the same key."""

from __future__ import annotations

from ..dsl import Int, ModelBuilder
from ..expr import And, If, Or
from . import relay
from .vocab import ANS, PH, RETRY_OK, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    n = len(c.ops)
    b.array("ph", PH, n, actor="phone", doc="the phone's view of each operation")
    b.array("tries", Int(0, c.retries + 1), n, actor="phone", doc="requests sent per operation")
    b.array("ans", ANS, n, actor="phone", doc="the last answer that reached the phone")
    b.array("nfinal", Int(0, 2), n, actor="phone", ghost=True,
            doc="final answers received for the operation's current pending entry")


def actions(b: ModelBuilder, c: Ctx) -> None:
    O = range(len(c.ops))

    @b.action("phone", target="relay", params={"o": O})
    def send(s, o):
        """rpc.request for the operation (a retry keeps the key and the operation)."""
        ready = And(Or(s.ph[o] == PH.idle, s.ph[o] == PH.retry), s.tries[o] <= c.retries)
        if "retention-window" not in c.dropped:
            # assumption B11: nobody retries more than 48 h after the answer was stored
            ready = And(ready, s.forgotten[c.true_scope(o)] == False)  # noqa: E712
        # attempt a carries key variant c.key_of(a): the operation's own key, or (the bug)
        # a fresh one per attempt
        upd = {s.tries[o]: s.tries[o] + 1}
        refusal = relay.admission(s, c, o)
        upd.update(relay.admit(s, c, o, refusal))
        # a refusal is the request's final answer
        ret = Or(*(refusal == a for a in RETRY_OK))
        upd[s.ans[o]] = If(refusal == ANS.none, s.ans[o], refusal)
        # final answers are counted per pending entry (B5); an admitted request opens one
        upd[s.nfinal[o]] = If(refusal == ANS.none, 0, s.nfinal[o])
        upd[s.ph[o]] = If(refusal == ANS.none, PH.waiting, If(ret, PH.retry, PH.done))
        return ready, upd

    @b.action("phone", target="relay", params={"o": O})
    def send_malformed(s, o):
        """The operation's first frame is malformed (a bad trace context, say): the relay
        refuses it before forwarding and answers at once, -32600, final (004)."""
        upd = {s.tries[o]: s.tries[o] + 1}
        if c.on("drop-malformed"):
            upd[s.ph[o]] = PH.waiting  # the bug: dropped, the phone waits for its deadline
        else:
            upd[s.ans[o]] = ANS.final_error
            upd[s.ph[o]] = PH.done
        return And(s.ph[o] == PH.idle, s.tries[o] <= c.retries), upd

    @b.action("phone", params={"o": O})
    def give_up(s, o):
        """The phone's own deadline passes (60 s; iOS outbox submit 20 s): it stops waiting."""
        return s.ph[o] == PH.waiting, {s.ph[o]: PH.retry}

    if c.losses:
        lost_actions(b, c)


def lost_actions(b: ModelBuilder, c: Ctx) -> None:
    @b.action("network", params={"o": range(len(c.ops))})
    def send_lost(s, o):
        """The operation's rpc.request is lost on its way to the relay, or the relay's
        refusal of it is lost on its way back (a refusal changes nothing at the relay): the
        phone waits for its deadline."""
        ready = And(Or(s.ph[o] == PH.idle, s.ph[o] == PH.retry), s.tries[o] <= c.retries)
        if "retention-window" not in c.dropped:
            ready = And(ready, s.forgotten[c.true_scope(o)] == False)  # noqa: E712
        return c.lose(s, ready, {s.tries[o]: s.tries[o] + 1, s.ph[o]: PH.waiting})

