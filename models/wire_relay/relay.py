"""The relay router: admission, pending entries with their desktop generation, delivery."""

from __future__ import annotations

from ..dsl import Int, ModelBuilder
from ..expr import And, Count, If, Not, Or
from .reply import answer
from .vocab import ANS, PST, STAGE, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    """An entry is ``admitted`` from the moment the request is read (with the routing
    snapshot's generation) until it takes the routing lock and is forwarded."""
    r = len(c.rids)
    b.array("pend", Int(0, len(c.ops)), r, actor="relay",
            doc="pending entry per request id: 0 none, else the operation + 1")
    b.array("pst", PST, r, actor="relay", doc="admitted (not yet forwarded) or forwarded")
    b.array("pgen", Int(0, c.gens - 1), r, actor="relay",
            doc="desktop connection generation the entry was created for")
    b.var("switching", Int(0, 2 * c.switches), actor="relay",
          doc="authority switch episodes: odd while switching (bounded by the parameter)")


def slot(c: Ctx, o: int) -> int:
    return c.rids.index(c.ops[o].rid)


def pending_of(s, c: Ctx, ops) -> object:
    return Count(s.pend[slot(c, o)] == o + 1 for o in ops)


def _over(count, limit: int, c: Ctx):
    # the mutant compares with <= : one more entry than the limit gets in
    return count > limit if c.on("limit-off-by-one") else count >= limit


def admission(s, c: Ctx, o: int):
    """The refusal a request meets at the relay (``ANS.none``: admitted)."""
    i = slot(c, o)
    op = c.ops[o]
    same = c.ops_with_rid(op.rid)
    identical = [q for q in same if c.ops[q].method == op.method and c.ops[q].params == op.params
                 and c.ops[q].phone == op.phone]
    dup = Or(*(s.pend[i] == q + 1 for q in identical))
    everyone = range(len(c.ops))
    client = [q for q in everyone if c.ops[q].phone == op.phone]
    limits = Or(_over(pending_of(s, c, client), c.lim_client, c),
                _over(pending_of(s, c, everyone), c.lim_desktop, c),
                _over(pending_of(s, c, everyone), c.lim_user, c),
                _over(pending_of(s, c, everyone), c.lim_process, c))
    return If(Not(s.online), ANS.offline,
              If(s.switching % 2 == 1, ANS.switching,
                 If(s.pend[i] != 0, If(dup, ANS.duplicate, ANS.id_conflict),
                    If(limits, ANS.limit, ANS.none))))


def admit(s, c: Ctx, o: int, refusal) -> dict:
    i = slot(c, o)
    ok = refusal == ANS.none
    return {s.pend[i]: If(ok, o + 1, s.pend[i]), s.pst[i]: If(ok, PST.admitted, s.pst[i]),
            s.pgen[i]: If(ok, s.gen, s.pgen[i])}


def actions(b: ModelBuilder, c: Ctx) -> None:
    O = range(len(c.ops))

    def mine(s, o):
        return s.pend[slot(c, o)] == o + 1

    OA = {"o": O, "a": c.copies}

    @b.action("relay", target="desktop", params=OA, fair="strong")
    def forward(s, o, a):
        """The admitted request (attempt a) goes to the desktop connection it was admitted for."""
        i = slot(c, o)
        return (And(mine(s, o), s.tries[o] == a + 1, s.pst[i] == PST.admitted,
                    s.pgen[i] == s.gen, s.online, s.stage[o][a] == STAGE.none),
                {s.pst[i]: PST.forwarded, s.stage[o][a]: STAGE.slot_wait})

    def match(s, o, a):
        i = slot(c, o)
        m = And(mine(s, o), s.pst[i] == PST.forwarded)
        if not c.on("no-generation-check"):
            m = And(m, s.pgen[i] == s.rgen[o][a])
        return m

    @b.action("relay", target="phone", params=OA, fair="strong")
    def deliver(s, o, a):
        """A desktop response (id, clientId) matches a pending entry of its generation."""
        # a final answer removes the entry before the phone sees it
        upd = {s.inflight[o][a]: False}
        if not c.on("pending-kept-after-final"):
            upd[s.pend[slot(c, o)]] = 0
        upd.update(answer(s, o, s.resp[o][a]))
        return And(s.inflight[o][a], match(s, o, a)), upd

    @b.action("relay", params=OA)
    def drop_response(s, o, a):
        """A response with no matching entry of its generation finds no route."""
        return And(s.inflight[o][a], Not(match(s, o, a))), {s.inflight[o][a]: False}

    @b.action("clock", target="phone", params={"o": O})
    def expire(s, o):
        """The pending entry's deadline passes (90 s, 120 s, 31 min): -32012."""
        upd = {s.pend[slot(c, o)]: 0}
        upd.update(answer(s, o, ANS.relay_timeout))
        return mine(s, o), upd

    if c.switches:
        @b.action("relay")
        def switch_authority(s):
            """Routing authority starts (or finishes) switching to another relay process."""
            return s.switching < 2 * c.switches, {s.switching: s.switching + 1}

    if c.losses and c.gens > 1:
        # only a re-registration (a lost registration answer) leaves an admitted entry of
        # a replaced generation behind: a disconnect answers them all
        @b.action("relay", target="phone", params={"o": O})
        def refuse_gen_changed(s, o):
            """An admitted entry takes the routing lock after its generation was replaced (a
            re-registration): -32023, retryable."""
            i = slot(c, o)
            upd = {s.pend[i]: 0}
            upd.update(answer(s, o, ANS.gen_changed))
            return And(mine(s, o), s.pst[i] == PST.admitted, s.pgen[i] != s.gen), upd

    if c.losses:
        @b.action("network", params=OA)
        def forward_lost(s, o, a):
            """The forwarded request is lost on its way to the desktop: the relay's entry waits
            for its deadline (or the socket's close)."""
            i = slot(c, o)
            return c.lose(s, And(mine(s, o), s.tries[o] == a + 1, s.pst[i] == PST.admitted,
                                 s.pgen[i] == s.gen, s.online, s.stage[o][a] == STAGE.none),
                          {s.pst[i]: PST.forwarded})

        @b.action("network", params=OA)
        def deliver_lost(s, o, a):
            """The relay matches the response and removes its entry, but the answer is lost on
            its way to the phone: the phone waits for its deadline."""
            upd = {s.inflight[o][a]: False}
            if not c.on("pending-kept-after-final"):
                upd[s.pend[slot(c, o)]] = 0
            return c.lose(s, And(s.inflight[o][a], match(s, o, a)), upd)

        @b.action("network", params={"o": O})
        def expire_lost(s, o):
            """The pending entry expires, and its -32012 is lost on its way to the phone."""
            return c.lose(s, mine(s, o), {s.pend[slot(c, o)]: 0})
