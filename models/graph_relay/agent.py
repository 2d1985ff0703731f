"""The agent: starts runs with an idempotency key, retries after a lost response,
cancels its own runs; another agent probes runs it did not start.

The server's handling of each tool call happens in the same step as the call
(the request is processed atomically).  Every call can be lost on its way to the
server (nothing happens) and, separately, its answer can be lost after the server
acted (the server changed what the call asked; the agent never learns it).
"""

from __future__ import annotations

from ..dsl import Int, ModelBuilder
from ..expr import And, If, Not, Or, Sum
from .vocab import ANSWER, CALL, READ, STATUS, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    b.array("call", CALL, c.intents, actor="agent", doc="the start call of each intent")
    b.array("attempts", Int(0, c.retries + 1), c.intents, actor="agent",
            doc="start calls sent for the intent so far")
    b.array("ticket", Int(0, c.runs - 1), c.intents, actor="agent",
            doc="the command id in the (last) answer to the start call")


def key_of(s, c: Ctx, i: int):
    """The idempotency key the client sends for intent ``i`` on this attempt."""
    if c.on("fresh-key-on-retry"):
        # the client bug: every retry mints a fresh key
        return s.attempts[i] + i * (c.retries + 1)
    return i


def intent_of(key, c: Ctx):
    """Which intent (the agent's "start this once") a key was minted for."""
    return key // (c.retries + 1) if c.on("fresh-key-on-retry") else key


def may_send(s, c: Ctx, i: int):
    """Intent ``i``'s agent may send a start call: it has no ticket yet (never asked, or
    the answer was lost, or the server refused an unlisted session: the owner may share
    it, the desktop upload it, by the next try), and a retry is left."""
    waits = [s.call[i] == CALL.idle, s.call[i] == CALL.lost]
    if c.listing:
        waits.append(s.call[i] == CALL.refused)
    return And(Or(*waits), s.attempts[i] <= c.retries)


def actions(b: ModelBuilder, c: Ctx) -> None:
    R, I = range(c.runs), range(c.intents)

    @b.action("agent", target="server", params={"i": I})
    def run_graph_session(s, i):
        """run_graph_session(idempotency_key): queue a run, answer a ticket at once (the
        same run's for a key seen before).  At ``listing=1`` a new run is refused while
        the server lists no session for it; the refusal reaches the agent in the same
        step (lost, it is a lost request: the server changed nothing)."""
        key = key_of(s, c, i)
        if c.on("server-ignores-key"):
            same = [False for _ in R]
        else:
            same = [And(s.status[r] != STATUS.none, s.key[r] == key) for r in R]
        found = Or(*same)
        p = i % c.projects
        # listing=1: a new run needs its session listed, and is filed under the listed slug
        listed = [s.listed[p]] if c.listing else []
        filed_slug = s.up_slug[p] if c.listing else s.cur_slug
        new = [And(Not(found), *listed, s.status[r] == STATUS.none,
                   *(s.status[q] != STATUS.none for q in range(r))) for r in R]
        refused = And(Not(found), Not(s.listed[p])) if c.listing else False
        upd = {
            s.call[i]: If(refused, CALL.refused, CALL.waiting) if c.listing else CALL.waiting,
            s.attempts[i]: s.attempts[i] + 1,
            s.ticket[i]: Sum(If(Or(same[r], new[r]), r, 0) for r in R),
        }
        for r in R:
            requeue = And(same[r], True) if c.on("requeue-on-retry") else False
            upd[s.status[r]] = If(Or(new[r], requeue), STATUS.queued, s.status[r])
            upd[s.key[r]] = If(new[r], key, s.key[r])
            upd[s.slug[r]] = If(new[r], filed_slug, s.slug[r])
            upd[s.proj[r]] = If(new[r], p, s.proj[r])
            upd[s.flag[r]] = If(Or(new[r], requeue), False, s.flag[r])
            if c.on("queue-on-desktop"):
                # the queue lives on the desktop: a command sent while it is offline is lost
                upd[s.lost[r]] = If(new[r], Not(s.online), s.lost[r])
        guard = And(may_send(s, c, i), Or(found, *new, refused))
        return guard, upd

    @b.action("network", params={"i": I})
    def lose_request(s, i):
        """A start call never reaches the server; the agent will time out and retry with
        the same key."""
        return may_send(s, c, i), {s.call[i]: CALL.lost, s.attempts[i]: s.attempts[i] + 1}

    @b.action("network", params={"i": I})
    def lose_response(s, i):
        """The answer to a start call is lost; the agent will time out and retry."""
        return s.call[i] == CALL.waiting, {s.call[i]: CALL.lost}

    @b.action("server", target="agent", params={"i": I})
    def answer_ticket(s, i):
        """The ticket (command id) reaches the agent."""
        return s.call[i] == CALL.waiting, {s.call[i]: CALL.done}

    def cancel(s, i, r):
        queued, running = s.status[r] == STATUS.queued, s.status[r] == STATUS.running
        ignore = c.on("queued-cancel-ignored")
        # the agent may cancel again, whatever it learnt: a terminal run stays as it is
        guard = And(s.call[i] == CALL.done, s.ticket[i] == r, s.status[r] != STATUS.none)
        return guard, {
            # a queued run becomes terminal at once; a running one gets the flag
            s.status[r]: If(And(queued, not ignore), STATUS.cancelled, s.status[r]),
            s.flag[r]: If(queued, ignore, Or(running, s.flag[r])),
            s.qcancel[r]: Or(s.qcancel[r], queued),
        }

    @b.action("agent", target="server", params={"i": I, "r": R})
    def cancel_graph_run(s, i, r):
        """cancel_graph_run(command_id) on the agent's own run (again, if it likes)."""
        return cancel(s, i, r)

    @b.action("network", params={"i": I, "r": R})
    def lose_cancel_reply(s, i, r):
        """The server cancelled the agent's run, and its answer is lost."""
        return cancel(s, i, r)

    @b.action("network", params={"i": I, "r": R})
    def lose_call_request(s, i, r):
        """A get_graph_run or cancel_graph_run of the agent's own run never reaches the
        server: nothing changes."""
        return And(s.call[i] == CALL.done, s.ticket[i] == r), {}

    @b.action("network", params={"i": I, "r": R})
    def lose_get_reply(s, i, r):
        """The server answered get_graph_run and the answer is lost (a read: nothing
        changes)."""
        return And(s.call[i] == CALL.done, s.ticket[i] == r), {}

    @b.action("agent", target="server", params={"i": I, "r": R}, name="get_graph_run")
    def get_own_run(s, i, r):
        """get_graph_run(command_id) by the agent that started the run: its status, and
        once a completion was accepted, the result with it.  Changes nothing."""
        return (And(s.call[i] == CALL.done, s.ticket[i] == r), {},
                {"read": (READ, If(s.result[r], READ.result, READ.status))})

    def foreign_answer(s, a, r):
        exists = s.status[r] != STATUS.none
        if c.on("leaky-not-found"):
            return If(exists, ANSWER.access_denied, ANSWER.not_found)
        return ANSWER.not_found

    # agents 1.. never start runs: every command id is foreign to them, issued or not
    A = range(c.agents - 1)

    @b.action("another agent", target="server", params={"a": A, "r": R})
    def get_graph_run(s, a, r):
        """get_graph_run(command_id) by agent a+1, for a run it did not start (or no run)."""
        return True, {}, {"answer": (ANSWER, foreign_answer(s, a, r))}

    @b.action("another agent", target="server", params={"a": A, "r": R}, name="cancel_graph_run")
    def cancel_foreign(s, a, r):
        """cancel_graph_run(command_id) by agent a+1, for a run it did not start."""
        return True, {}, {"answer": (ANSWER, foreign_answer(s, a, r))}


__all__ = ["declare", "actions", "key_of", "intent_of"]
