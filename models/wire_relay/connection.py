"""The desktop's connection to the relay: generations, disconnect, reconnect, restart."""

from __future__ import annotations

from ..dsl import Bool, Int, ModelBuilder
from ..expr import And, If, Not
from . import phone
from .vocab import ANS, MEM, STAGE, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    b.var("online", Bool(), actor="desktop", doc="the desktop's socket is registered")
    b.var("gen", Int(0, c.gens - 1), actor="relay", doc="current desktop connection generation")
    b.var("restarts", Int(0, c.restarts), actor="desktop", doc="desktop process restarts so far")


def drop_generation(s, c: Ctx) -> dict:
    """Every pending request of the current generation is answered -32011, in this step:
    forwarded or still waiting for the routing lock alike (004: "Eine Desktop-Trennung
    beantwortet jede ausstehende Anfrage dieser Generation sofort mit -32011")."""
    upd: dict = {}
    if c.on("disconnect-leaves-pending"):
        return upd
    for i, rid in enumerate(c.rids):
        pending = s.pgen[i] == s.gen
        upd[s.pend[i]] = If(And(s.pend[i] != 0, pending), 0, s.pend[i])
        for o in c.ops_with_rid(rid):
            hit = And(s.pend[i] == o + 1, pending)
            for k, v in phone.answer(s, o, ANS.reconnecting).items():
                upd[k] = If(hit, v, k)
    return upd


def actions(b: ModelBuilder, c: Ctx) -> None:
    @b.action("desktop", target="relay")
    def disconnect(s):
        """The desktop's socket closes."""
        upd = {s.online: False}
        upd.update(drop_generation(s, c))
        return s.online, upd

    @b.action("desktop", target="relay", fair="weak")
    def reconnect(s):
        """The desktop registers a new socket: a new generation."""
        return And(Not(s.online), s.gen < c.gens - 1), {s.online: True, s.gen: s.gen + 1}

    if c.restarts:
        @b.action("desktop", target="relay")
        def restart(s):
            """The desktop process restarts: in-memory claims and running handlers are lost,
            durable rows are kept, and the socket closes."""
            upd = {s.online: False, s.restarts: s.restarts + 1}
            upd.update(drop_generation(s, c))
            for q in range(len(c.ops) * len(c.copies)):
                upd[s.stage[q]] = STAGE.none
            for k in range(len(c.impl_scopes)):
                upd[s.mem[k]] = MEM.none
                upd[s.waiters[k]] = 0
            return And(s.online, s.restarts < c.restarts), upd
