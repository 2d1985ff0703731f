"""The desktop's idempotency: in-memory claims and durable SQLite rows with a lease.

Claims are filed under a scope key (user, device = clientId, method, key).  Time
is modelled by events: the lease of an orphaned claim expires, a stored row's
48 h retention ends.  The 5-minute lease outlives every live handler (B10), so a
lease expires only while no handler of that scope is alive.
"""

from __future__ import annotations

from ..dsl import Bool, Int, ModelBuilder
from ..expr import And, Count, If, Not, Or
from .vocab import ANS, MEM, ROW, Ctx


def declare(b: ModelBuilder, c: Ctx) -> None:
    n = len(c.impl_scopes)
    nparams = max(op.params for op in c.ops) + 1
    b.array("mem", MEM, n, actor="desktop", doc="in-memory claim per scope key (lost on restart)")
    b.array("memres", ANS, n, actor="desktop", doc="the in-memory completed result")
    b.array("waiters", Int(0, c.waiters + 1), n, actor="desktop", doc="copies joined to a claim")
    b.array("row", ROW, n, actor="desktop", doc="durable claim row per scope key")
    b.array("rowfp", Int(0, nparams - 1), n, actor="desktop", doc="params fingerprint of the row")
    b.array("expired", Bool(), n, actor="clock", doc="the row's 5-minute lease has ended")
    t = len(c.true_scopes)
    b.array("eff", Int(0, 2), t, actor="desktop", ghost=True,
            doc="times the mutation's effect happened, per (user, device, method, key)")
    b.array("msgs", Int(0, 2), t, actor="desktop", ghost=True,
            doc="outbox messages enqueued per (sessionId, operationId)")
    b.array("forgotten", Bool(), t, actor="clock", ghost=True,
            doc="the row was deleted 48 h after its answer was stored")


def rows_in_use(s, c: Ctx):
    return Count(s.row[k] != ROW.none for k in range(len(c.impl_scopes)))


def claim(s, c: Ctx, o: int, a: int) -> tuple[dict, object]:
    """The claim step of attempt ``a`` of operation ``o``.

    Returns the updates and the expressions (the handler runs, the copy joins).
    """
    sc = c.impl_scope(o, c.key_of(a))
    op = c.ops[o]
    durable = not c.on("memory-only-claims")
    fp_differs = s.rowfp[sc] != op.params
    if c.on("fingerprint-ignores-params"):
        fp_differs = False
    has_row = s.row[sc] != ROW.none
    conflict = And(has_row, fp_differs) if durable else False
    over = (s.waiters[sc] > c.waiters) if c.on("limit-off-by-one") else (s.waiters[sc] >= c.waiters)
    join = And(Not(conflict), s.mem[sc] == MEM.running, Not(over))
    # beyond the waiter limit a copy is refused as busy
    full = And(Not(conflict), s.mem[sc] == MEM.running, over)
    # the in-memory layer answers a completed claim first (it holds the last 512 results),
    # but never a retryable error: that claim is taken again and the request runs (004)
    replayed = s.mem[sc] == MEM.done
    if not c.on("retryable-replayed"):
        replayed = And(replayed, s.memres[sc] != ANS.retryable_error)
    mem_done = And(Not(conflict), replayed)
    free = And(Not(conflict), Not(replayed), s.mem[sc] != MEM.running)
    cap = rows_in_use(s, c) > c.row_cap if c.on("limit-off-by-one") else rows_in_use(s, c) >= c.row_cap
    new = And(free, Not(has_row), Not(cap)) if durable else free
    capacity = And(free, Not(has_row), cap) if durable else False
    orphan = And(free, s.row[sc] == ROW.running)
    if c.replay_safe(o):
        rerun = orphan  # replay-safe: an interrupted first copy may run again
        busy, ambiguous_now = False, False
    else:
        rerun = And(orphan, s.expired[sc]) if c.on("rerun-after-lease") else False
        busy = And(orphan, Not(s.expired[sc]))
        ambiguous_now = And(orphan, s.expired[sc], Not(rerun))
    retry_row = And(free, s.row[sc] == ROW.retryable_error)
    run = Or(new, rerun, retry_row)
    row_answer = If(s.row[sc] == ROW.success, ANS.success,
                    If(s.row[sc] == ROW.final_error, ANS.final_error, ANS.ambiguous))
    resp = If(conflict, ANS.conflict,
              If(full, ANS.busy,
                 If(mem_done, s.memres[sc],
                    If(capacity, ANS.capacity,
                       If(busy, ANS.busy,
                          If(ambiguous_now, ANS.ambiguous,
                             If(run, ANS.none, row_answer)))))))
    upd = {
        s.mem[sc]: If(run, MEM.running, s.mem[sc]),
        s.waiters[sc]: If(join, s.waiters[sc] + 1, s.waiters[sc]),
        s.resp[o][a]: If(Or(run, join), ANS.none, resp),
    }
    if durable:
        upd[s.row[sc]] = If(run, ROW.running, If(ambiguous_now, ROW.ambiguous, s.row[sc]))
        upd[s.rowfp[sc]] = If(new, op.params, s.rowfp[sc])
        upd[s.expired[sc]] = If(run, False, s.expired[sc])
    return upd, (run, join)


def effect(s, c: Ctx, o: int) -> dict:
    """The mutation's effect happens once more; the outbox ledger dedups its message."""
    t = c.true_scope(o)
    upd = {s.eff[t]: If(s.eff[t] >= 2, 2, s.eff[t] + 1)}
    if c.replay_safe(o):
        if c.on("outbox-without-operation-ledger"):
            upd[s.msgs[t]] = If(s.msgs[t] >= 2, 2, s.msgs[t] + 1)
        else:
            upd[s.msgs[t]] = If(s.msgs[t] == 0, 1, s.msgs[t])
    return upd


def actions(b: ModelBuilder, c: Ctx) -> None:
    n = len(c.impl_scopes)
    if c.on("memory-only-claims"):
        return

    @b.action("clock", params={"k": range(n)})
    def lease_expires(s, k):
        """Five minutes pass on a `running` row whose handler is gone."""
        return (And(s.row[k] == ROW.running, Not(s.expired[k]), s.mem[k] != MEM.running),
                {s.expired[k]: True})

    @b.action("clock", params={"k": range(n)})
    def retention_expires(s, k):
        """48 h after its answer was stored, the row is deleted: the key is forgotten."""
        stored = Or(s.row[k] == ROW.success, s.row[k] == ROW.final_error,
                    s.row[k] == ROW.retryable_error, s.row[k] == ROW.ambiguous)
        upd = {s.row[k]: ROW.none, s.rowfp[k]: 0, s.expired[k]: False}
        ops = [o for o in range(len(c.ops)) if any(c.impl_scope(o, c.key_of(a)) == k
                                                     for a in c.copies)]
        for t in sorted({c.true_scope(o) for o in ops}):
            upd[s.forgotten[t]] = True
        guard = And(stored, s.mem[k] != MEM.running)
        if "retention-window" not in c.dropped:
            # assumption B11: a request of this key travels for seconds, not 48 h, so no
            # request of it is on its way to the claim when the row is deleted
            from . import relay
            from .vocab import PST, STAGE
            guard = And(guard, *(And(Not(And(s.pend[relay.slot(c, o)] == o + 1,
                                              s.pst[relay.slot(c, o)] == PST.admitted)),
                                     *(s.stage[o][a] != STAGE.slot_wait for a in c.copies))
                                 for o in ops))
        return guard, upd
