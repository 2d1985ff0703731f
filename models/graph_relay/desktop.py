"""The desktop relay loop: timer, skip while busy, outbox re-send, sync, consent
re-check right before executing, serial execution, control poll, stop sent once.
"""

from __future__ import annotations

from ..dsl import Bool, ModelBuilder
from ..expr import And, Exists, ForAll, If, Not, Or
from . import outbox, server
from .owner import consent, project_enabled
from .vocab import EXEC, OUTCOME, PHASE, STATUS, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    b.var("online", Bool(), actor="desktop", doc="the desktop reaches the server")
    b.var("phase", PHASE, actor="desktop", doc="the relay round (idle: not busy)")
    b.array("exec", EXEC, c.runs, actor="desktop", doc="the desktop's view of each command")


def actions(b: ModelBuilder, c: Ctx) -> None:
    R = range(c.runs)
    SF = "strong"

    def busy(s, r):
        return Or(s.exec[r] == EXEC.running, s.exec[r] == EXEC.stopping)

    @b.action("desktop", target="server", fair=SF)
    def tick(s):
        """The 20 s timer fires on an idle worker: re-send every completion in the outbox."""
        upd = {s.phase: PHASE.sync}
        upd.update(outbox.resend(s, c))
        return And(s.online, s.phase == PHASE.idle), upd

    def handed_over(s):
        """Per run: the server hands it to this round's syncs, marked running as it
        answers: a queued command of an enabled project, and again a running one the
        desktop does not hold (a sync reply was lost; the desktop ignores a command it
        holds already, so the server may send it again)."""
        out = []
        for r in R:
            if c.on("one-project-sync"):  # the bug: any enabled project's reply carries all
                mine = Exists(range(c.projects), lambda p: s.enabled[p])
            else:
                mine = project_enabled(s, c, r)
            again = And(s.status[r] == STATUS.running, s.exec[r] == EXEC.none)
            take = And(mine, Or(s.status[r] == STATUS.queued, again))
            if c.on("queue-on-desktop"):
                take = And(take, Not(s.lost[r]))
            out.append(take)
        return out

    @b.action("desktop", target="server", fair=SF)
    def sync(s):
        """Sync each enabled project (the round's syncs, one step): each uploads the
        project's shared session, each reply carries that project's queued commands."""
        upd = {s.phase: PHASE.work}
        for r, take in zip(R, handed_over(s)):
            upd[s.status[r]] = If(take, STATUS.running, s.status[r])
            upd[s.exec[r]] = If(take, EXEC.fetched, s.exec[r])
        upd.update(server.uploaded(s, c))
        return And(s.online, s.phase == PHASE.sync), upd

    @b.action("network")
    def lose_sync_request(s):
        """The round's sync never reaches the server: the desktop's call fails, the
        round ends."""
        return And(s.online, s.phase == PHASE.sync), {s.phase: PHASE.idle}

    @b.action("network")
    def lose_sync_reply(s):
        """The server answered the sync (its commands marked running) and the reply is
        lost: the desktop's call fails, the round ends, it holds no new command."""
        upd = {s.phase: PHASE.idle}
        for r, take in zip(R, handed_over(s)):
            upd[s.status[r]] = If(take, STATUS.running, s.status[r])
        upd.update(server.uploaded(s, c))
        return And(s.online, s.phase == PHASE.sync), upd

    @b.action("desktop", fair=SF)
    def sync_failed(s):
        """The sync call fails while offline: the round ends."""
        return And(Not(s.online), s.phase == PHASE.sync), {s.phase: PHASE.idle}

    def next_in_order(s, r):
        free = ForAll(R, lambda q: Not(busy(s, q)))
        # in the order the syncs delivered them: project by project, then by creation
        def before(q):
            if c.projects == 1:
                return q < r
            return Or(s.proj[q] < s.proj[r], And(s.proj[q] == s.proj[r], q < r))
        turn = [s.phase == PHASE.work, s.exec[r] == EXEC.fetched,
                *(Not(And(s.exec[q] == EXEC.fetched, before(q))) for q in R if q != r)]
        if not c.on("parallel-relay"):
            turn.append(free)
        return And(*turn)

    @b.action("desktop", params={"r": R}, fair=SF)
    def start_graph(s, r):
        """Consent still holds right before executing: the Graph starts."""
        return And(next_in_order(s, r), consent(s, c, r)), {s.exec[r]: EXEC.running}

    @b.action("desktop", target="server", params={"r": R}, fair=SF)
    def refuse(s, r):
        """Consent no longer holds: closed as cancelled ('no longer shared'), never run."""
        upd = {s.exec[r]: EXEC.done}
        upd.update(outbox.complete(s, c, r, OUTCOME.cancelled))
        return And(next_in_order(s, r), Not(consent(s, c, r))), upd

    @b.action("desktop", target="server", params={"r": R}, fair=SF)
    def control_poll(s, r):
        """The 3 s control poll finds the cancel flag: the stop is sent, once."""
        return (And(s.online, s.exec[r] == EXEC.running, s.flag[r]),
                {s.exec[r]: EXEC.stopping, s.outcome[r]: OUTCOME.cancelled})

    @b.action("desktop", target="server", params={"r": R})
    def control_poll_clear(s, r):
        """The 3 s control poll finds no cancel: nothing changes (a step all the same: the
        implementation is checked to keep running)."""
        return And(s.online, s.exec[r] == EXEC.running, Not(s.flag[r])), {}

    @b.action("network", params={"r": R})
    def lose_poll_request(s, r):
        """A control poll never reaches the server: the Graph keeps running."""
        return And(s.online, s.exec[r] == EXEC.running), {}

    @b.action("network", params={"r": R})
    def lose_poll_reply(s, r):
        """The server answered a control poll (a read) and the answer is lost: the
        Graph keeps running, a cancel flag is seen at a later poll."""
        return And(s.online, s.exec[r] == EXEC.running), {}

    @b.action("desktop", target="server", params={"r": R, "o": (OUTCOME.completed, OUTCOME.failed)},
              fair=SF, labels={"o": OUTCOME})
    def graph_finish(s, r, o):
        """The Graph ends; its completion goes to the outbox, then is posted."""
        stopping = s.exec[r] == EXEC.stopping
        # after the stop the outcome stays cancelled, whatever the Graph did meanwhile
        result = o if c.on("complete-overwrites-cancel") else If(stopping, OUTCOME.cancelled, o)
        upd = {s.exec[r]: EXEC.done}
        upd.update(outbox.complete(s, c, r, result))
        return Or(s.exec[r] == EXEC.running, stopping), upd

    @b.action("desktop", fair=SF)
    def round_end(s):
        """Every fetched command is handled: the worker is idle again."""
        idle = ForAll(R, lambda r: And(s.exec[r] != EXEC.fetched, Not(busy(s, r))))
        return And(s.phase == PHASE.work, idle), {s.phase: PHASE.idle}

    @b.action("desktop")
    def go_offline(s):
        """The desktop loses its connection (the Graph keeps running locally)."""
        return s.online, {s.online: False}

    @b.action("desktop", fair="weak")
    def go_online(s):
        """The desktop is back."""
        return Not(s.online), {s.online: True}
