"""The desktop router: light slots, the three stages (slot wait, dispatch, enqueue),
handlers dropped at the dispatch limit, answers sent on the current socket.

Each attempt of an operation is its own copy (a retry may arrive while the first
copy still runs and join it), so the router's variables are per copy.
"""

from __future__ import annotations

from ..dsl import Bool, Enum, Int, ModelBuilder
from ..expr import And, Count, If, Not, Or
from . import idempotency
from .vocab import ANS, MEM, ROW, STAGE, Ctx

#: how a handler ends, and the answer and row it leaves
OUT = Enum("success", "final_error", "retryable_error")
OUTCOME = {OUT.success: (ANS.success, ROW.success),
           OUT.final_error: (ANS.final_error, ROW.final_error),
           OUT.retryable_error: (ANS.retryable_error, ROW.retryable_error)}


def declare(b: ModelBuilder, c: Ctx) -> None:
    # per copy: [operation][attempt]
    n = (len(c.ops), len(c.copies))
    b.array("stage", STAGE, n, actor="desktop", doc="where each copy is in the router")
    b.array("resp", ANS, n, actor="desktop", doc="the answer prepared (or in flight)")
    b.array("inflight", Bool(), n, actor="network", doc="the response is on its way to the relay")
    b.array("rgen", Int(0, c.gens - 1), n, actor="network",
            doc="generation of the socket the response was sent on")


def actions(b: ModelBuilder, c: Ctx) -> None:
    O = range(len(c.ops))
    OA = {"o": O, "a": c.copies}
    SF = "strong"

    def sc(o, a):
        return c.impl_scope(o, c.key_of(a))

    def at(s, o, a, st):
        return s.stage[o][a] == st

    @b.action("desktop", params=OA, fair=SF)
    def claim(s, o, a):
        """With a free light slot (004: every relay RPC waits on a semaphore), the idempotency
        claim decides: run, join the running copy (the slot stays taken while it waits),
        replay the stored answer, or refuse."""
        upd, (run, join) = idempotency.claim(s, c, o, a)
        upd[s.stage[o][a]] = If(run, STAGE.dispatch, If(join, STAGE.joined, STAGE.enqueue))
        taken = Count(Or(s.stage[p][b] == STAGE.dispatch, s.stage[p][b] == STAGE.joined)
                      for p, b in c.each_copy())
        free = taken < c.light_slots
        if c.on("claim-without-slot"):
            free = Or(free, Not(run))
        return And(at(s, o, a, STAGE.slot_wait), free), upd

    @b.action("clock", params=OA)
    def slot_timeout(s, o, a):
        """8 s without a free slot: -32603 'Desktop is busy; retry the request shortly.'"""
        return at(s, o, a, STAGE.slot_wait), {s.stage[o][a]: STAGE.enqueue, s.resp[o][a]: ANS.busy}

    @b.action("desktop", params={**OA, "out": tuple(OUTCOME), "stored": (1, 0)}, fair=SF,
              labels={"out": OUT})
    def execute(s, o, a, out, stored):
        """The handler ends; its answer is stored for replay (or the store fails)."""
        if out != OUT.success and not stored:
            return None  # a failed store matters for a success (B7); errors are stored
        k = sc(o, a)
        ans, row = OUTCOME[out]
        # success only if stored: otherwise the answer is ambiguous, never a hidden miss
        reported = ans if (stored or c.on("success-without-store")) else ANS.ambiguous
        upd = {s.stage[o][a]: STAGE.enqueue, s.mem[k]: MEM.done, s.resp[o][a]: reported,
               s.memres[k]: reported}
        if stored and not c.on("memory-only-claims"):
            upd[s.row[k]] = row
        if out == OUT.success:
            upd.update(idempotency.effect(s, c, o))
        return at(s, o, a, STAGE.dispatch), upd

    @b.action("clock", params={**OA, "ran": (0, 1)})
    def dispatch_timeout(s, o, a, ran):
        """45 s (95 s for loads): the handler's future is dropped at its next await point;
        its durable claim stays `running`.  It may or may not have done its effect."""
        k = sc(o, a)
        upd = {s.stage[o][a]: STAGE.enqueue, s.resp[o][a]: ANS.timed_out, s.mem[k]: MEM.none}
        if ran:
            upd.update(idempotency.effect(s, c, o))
        return at(s, o, a, STAGE.dispatch), upd

    @b.action("desktop", params=OA, fair=SF)
    def join_answer(s, o, a):
        """The claim this copy joined completes: the copy gets the same answer."""
        k = sc(o, a)
        return (And(at(s, o, a, STAGE.joined), s.mem[k] == MEM.done),
                {s.stage[o][a]: STAGE.enqueue, s.resp[o][a]: s.memres[k],
                 s.waiters[k]: If(s.waiters[k] > 0, s.waiters[k] - 1, 0)})

    @b.action("desktop", params=OA, fair=SF)
    def join_orphaned(s, o, a):
        """The claim this copy joined was dropped: the copy times out too.  (A joined copy's
        own dispatch limit is later than its running copy's, which ends first: no separate
        action.)"""
        k = sc(o, a)
        return (And(at(s, o, a, STAGE.joined), s.mem[k] == MEM.none),
                {s.stage[o][a]: STAGE.enqueue, s.resp[o][a]: ANS.timed_out,
                 s.waiters[k]: If(s.waiters[k] > 0, s.waiters[k] - 1, 0)})

    @b.action("desktop", target="relay", params=OA, fair=SF)
    def send_answer(s, o, a):
        """rpc.response on the current socket (lost if there is none)."""
        return (at(s, o, a, STAGE.enqueue),
                {s.stage[o][a]: STAGE.none, s.inflight[o][a]: s.online,
                 s.rgen[o][a]: If(s.online, s.gen, s.rgen[o][a])})

    @b.action("clock", params=OA)
    def enqueue_timeout(s, o, a):
        """5 s to enqueue the answer pass: no answer (the relay's entry decides)."""
        return at(s, o, a, STAGE.enqueue), {s.stage[o][a]: STAGE.none}

    if c.losses:
        @b.action("network", params=OA)
        def response_lost(s, o, a):
            """The rpc.response is lost on its way to the relay (the handler acted, its answer
            was stored): the relay's entry waits for its deadline."""
            return c.lose(s, s.inflight[o][a], {s.inflight[o][a]: False})
