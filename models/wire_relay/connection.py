"""The desktop's connection to the relay: generations, disconnect, reconnect, restart."""

from __future__ import annotations

from ..dsl import Bool, Int, ModelBuilder
from ..expr import And, If, Not, Or
from .reply import answer
from .vocab import ANS, MEM, STAGE, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    b.var("online", Bool(), actor="desktop", doc="the desktop's socket is registered")
    b.var("gen", Int(0, c.gens - 1), actor="relay", doc="current desktop connection generation")
    b.var("restarts", Int(0, c.restarts), actor="desktop", doc="desktop process restarts so far")


def declare_last(b: ModelBuilder, c: Ctx) -> None:
    """Declared after every component's own variables, so that a run that loses no frame
    keeps the state layout (and the search order) it had before losses were modelled."""
    b.var("oldopen", Bool(), actor="network",
          doc="the previous generation's socket has not closed yet (a re-registration "
              "replaced it first)")
    b.var("lost", Int(0, c.losses), actor="network", doc="frames lost so far")


def drop_generation(s, c: Ctx, which=None) -> dict:
    """Every pending request of the socket that closed (``which(pgen)``; the current
    generation by default) is answered -32011, in this step: forwarded or still waiting
    for the routing lock alike (004: "Eine Desktop-Trennung beantwortet jede ausstehende
    Anfrage dieser Generation sofort mit -32011")."""
    upd: dict = {}
    if c.on("disconnect-leaves-pending"):
        return upd
    for i, rid in enumerate(c.rids):
        pending = s.pgen[i] == s.gen if which is None else which(s.pgen[i])
        upd[s.pend[i]] = If(And(s.pend[i] != 0, pending), 0, s.pend[i])
        for o in c.ops_with_rid(rid):
            hit = And(s.pend[i] == o + 1, pending)
            for k, v in answer(s, o, ANS.reconnecting).items():
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

    if c.gens > 1 and c.losses:
        @b.action("desktop", target="relay")
        def reregister(s):
            """The relay's answer to the desktop's registration is lost: the desktop registers
            a new socket while the relay still holds the old one open.  The old generation's
            entries stay pending until that socket closes (its late answers still reach
            them, B1 keeps them from any other)."""
            return c.lose(s, And(s.online, s.gen < c.gens - 1, Not(s.oldopen)),
                          {s.gen: s.gen + 1, s.oldopen: True})

        @b.action("network", target="relay")
        def old_close(s):
            """The replaced socket's close reaches the relay, after any later step: its
            generation's entries are answered -32011; the current socket is untouched."""
            upd = {s.oldopen: False}
            upd.update(drop_generation(s, c, lambda g: g != s.gen))
            return s.oldopen, upd

    if c.restarts:
        @b.action("desktop", target="relay")
        def restart(s):
            """The desktop process restarts: in-memory claims and running handlers are lost,
            durable rows are kept, and its sockets close (a replaced one too)."""
            upd = {s.online: False, s.restarts: s.restarts + 1, s.oldopen: False}
            upd.update(drop_generation(s, c, lambda g: Or(g == s.gen, s.oldopen)))
            for o, a in c.each_copy():
                upd[s.stage[o][a]] = STAGE.none
            for k in range(len(c.impl_scopes)):
                upd[s.mem[k]] = MEM.none
                upd[s.waiters[k]] = 0
            return And(s.online, s.restarts < c.restarts), upd
