"""Properties B1–B8 and B11 of the wire protocol (properties.md), as DSL expressions.

B9 and B10 are claims over real-valued deadlines: they belong to the z3 timing
analysis.  B11 is the assumption ``retention-window`` that B2 is checked under.
"""

from __future__ import annotations

from osf_check.models.dsl import ActionInstance, Model
from osf_check.models.expr import And, Count, If, Implies, Not, Or
from osf_check.models.wire_relay import ASSUMPTIONS as MODEL_ASSUMPTIONS
from osf_check.models.wire_relay import MUTANTS as MODEL_MUTANTS
from osf_check.models.wire_relay import relay
from osf_check.models.wire_relay.vocab import ANS, MEM, PH, PST, ROW, STAGE

from .base import Assumption, Check, Property, mutant_catalogue

MODEL = "wire-relay"


def _c(m: Model):
    return m.constants["ctx"]


def _ops(m: Model) -> range:
    return range(len(_c(m).ops))


# B1 -------------------------------------------------------------------------
def b1(s, t, inst: ActionInstance, m):
    if inst.name != "deliver":
        return None
    c = _c(m)
    o, a = inst.args["o"], inst.args["a"]
    return s.rgen[o][a] == s.pgen[relay.slot(c, o)]


# B2 -------------------------------------------------------------------------
def b2(s, m):
    c = _c(m)
    once = []
    for t in range(len(c.true_scopes)):
        ops = [o for o in _ops(m) if c.true_scope(o) == t]
        if any(c.replay_safe(o) for o in ops):
            once.append(s.msgs[t] <= 1)  # may run twice; its domain effect happens once
        else:
            once.append(s.eff[t] <= 1)
    # a success reaching a phone is the answer of that operation's own scope key
    own = [Implies(s.ans[o] == ANS.success, s.eff[c.true_scope(o)] >= 1) for o in _ops(m)]
    return And(*once, *own)


def b2_lemmas(s, m):
    """Why B2 is inductive, per plain (not replay-safe) scope key: a running claim is the
    first run; a retryable row means no effect yet; an effect leaves a row (or the row's
    deletion); and once deleted, no request of the key is on its way."""
    c = _c(m)
    out = []
    for t in range(len(c.true_scopes)):
        ops = [o for o in _ops(m) if c.true_scope(o) == t]
        if any(c.replay_safe(o) for o in ops):
            continue
        ks = sorted({c.impl_scope(o, c.key_of(a)) for o in ops for a in c.copies})
        for k in ks:
            out += [Implies(s.mem[k] == MEM.running, s.eff[t] == 0),
                    Implies(s.row[k] == ROW.retryable_error, s.eff[t] == 0),
                    Implies(s.eff[t] >= 1, Or(s.row[k] != ROW.none, s.forgotten[t]))]
        out.append(Implies(s.forgotten[t], And(
            *(s.stage[o][a] != STAGE.slot_wait for o in ops for a in c.copies),
            *(Not(And(s.pend[relay.slot(c, o)] == o + 1, s.pst[relay.slot(c, o)] == PST.admitted))
              for o in ops))))
    return out


# B3 / B4: on the claim step -----------------------------------------------------
def _claim_scope(inst, m):
    c = _c(m)
    o, a = inst.args["o"], inst.args["a"]
    return c, o, a, c.impl_scope(o, c.key_of(a))


def b3(s, t, inst: ActionInstance, m):
    if inst.name != "claim":
        return None
    c, o, a, k = _claim_scope(inst, m)
    if c.replay_safe(o) or c.on("memory-only-claims"):
        return None
    orphan = And(s.row[k] == ROW.running, s.mem[k] == MEM.none,
                 s.rowfp[k] == c.ops[o].params)
    return Implies(orphan, And(t.stage[o][a] == STAGE.enqueue,
                               t.resp[o][a] == If(s.expired[k], ANS.ambiguous, ANS.busy)))


def b4(s, t, inst: ActionInstance, m):
    if inst.name != "claim":
        return None
    c, o, a, k = _claim_scope(inst, m)
    if c.on("memory-only-claims"):
        return None
    other = And(s.row[k] != ROW.none, s.rowfp[k] != c.ops[o].params)
    return Implies(other, And(t.resp[o][a] == ANS.conflict, t.stage[o][a] == STAGE.enqueue))


def b12(s, t, inst: ActionInstance, m):
    """A retry meeting a stored retryable error of its own fingerprint runs again."""
    if inst.name != "claim":
        return None
    c, o, a, k = _claim_scope(inst, m)
    same = s.rowfp[k] == c.ops[o].params
    stored = Or(And(s.row[k] == ROW.retryable_error, same),
                And(s.mem[k] == MEM.done, s.memres[k] == ANS.retryable_error,
                    Or(s.row[k] == ROW.none, same)))
    return Implies(stored, t.resp[o][a] != ANS.retryable_error)


def b13(s, t, inst: ActionInstance, m):
    """A frame refused before forwarding is answered in the same step."""
    if inst.name != "send_malformed":
        return None
    o = inst.args["o"]
    return And(t.ph[o] != PH.waiting, t.ans[o] == ANS.final_error)


# B5 -------------------------------------------------------------------------
def b5(s, m):
    return And(*(s.nfinal[o] <= 1 for o in _ops(m)))


# B6 -------------------------------------------------------------------------
def b6(s, t, inst: ActionInstance, m):
    """The sockets that close in this step: the current one (disconnect), the one a
    re-registration replaced (old_close), or both (restart)."""
    if inst.name not in ("disconnect", "restart", "old_close"):
        return None
    c = _c(m)
    out = []
    for i, rid in enumerate(c.rids):
        for o in c.ops_with_rid(rid):
            closed = {"disconnect": s.pgen[i] == s.gen, "old_close": s.pgen[i] != s.gen,
                      "restart": Or(s.pgen[i] == s.gen, s.oldopen)}[inst.name]
            hit = And(s.pend[i] == o + 1, closed)
            out.append(Implies(hit, And(t.pend[i] == 0, t.ans[o] == ANS.reconnecting)))
    return And(*out)


# B7 -------------------------------------------------------------------------
def b7(s, t, inst: ActionInstance, m):
    if inst.name != "execute" or inst.args["stored"]:
        return None
    return t.resp[inst.args["o"]][inst.args["a"]] != ANS.success


# B8 -------------------------------------------------------------------------
def b8(s, m):
    c = _c(m)
    every = list(_ops(m))
    per_client = [relay.pending_of(s, c, [o for o in every if c.ops[o].phone == p])
                  <= c.lim_client for p in sorted({op.phone for op in c.ops})]
    total = relay.pending_of(s, c, every)
    rows = Count(s.row[k] != ROW.none for k in range(len(c.impl_scopes)))
    holding = _holding(s, c)
    return And(*per_client, total <= c.lim_desktop, total <= c.lim_user, total <= c.lim_process,
               rows <= c.row_cap, *(s.waiters[k] <= c.waiters for k in range(len(c.impl_scopes))),
               holding <= c.light_slots)


def _holding(s, c):
    return Count(Or(s.stage[o][a] == STAGE.dispatch, s.stage[o][a] == STAGE.joined)
                 for o, a in c.each_copy())


def _enabled(m, name: str, pick) -> object:
    """Some instance of action ``name`` that ``pick(args)`` selects is enabled."""
    return Or(*(i.guard for i in m.instances if i.name == name and pick(i.args)))


def _to_limits(s, m, ops):
    """A request of one of ``ops`` is about to be sent and would meet the pending limits
    (the relay refuses it for nothing before them: online, no routing switch, its id not
    pending)."""
    c = _c(m)
    return Or(*(And(s.online, s.switching % 2 == 0, s.pend[relay.slot(c, o)] == 0,
                    _enabled(m, "send", lambda a: a["o"] == o)) for o in ops))


def _client_pressed(s, m):
    """A phone holds its cap of pending entries while one more of its requests comes."""
    c = _c(m)
    out = []
    for p in sorted({op.phone for op in c.ops}):
        mine = [o for o in _ops(m) if c.ops[o].phone == p]
        out.append(And(relay.pending_of(s, c, mine) >= c.lim_client, _to_limits(s, m, mine)))
    return Or(*out)


def _total_pressed(limit: str):
    """The pending entries of every phone meet ``limit`` while one more request comes."""
    def cond(s, m):
        return And(relay.pending_of(s, _c(m), list(_ops(m))) >= getattr(_c(m), limit),
                   _to_limits(s, m, list(_ops(m))))
    return cond


def _alone(limit: str):
    """Only the pending limit ``limit`` is met when one more request comes to the limits:
    a relay that holds that scope to another scope's limit admits it (or refused before)."""
    def cond(s, m):
        c = _c(m)
        every = list(_ops(m))
        out = []
        for o in every:
            mine = [q for q in every if c.ops[q].phone == c.ops[o].phone]
            total = relay.pending_of(s, c, every)
            counts = {"lim_client": relay.pending_of(s, c, mine), "lim_desktop": total,
                      "lim_user": total, "lim_process": total}
            met = [n >= getattr(c, k) if k == limit else n < getattr(c, k)
                   for k, n in counts.items()]
            out.append(And(*met, _to_limits(s, m, [o])))
        return Or(*out)
    return cond


_PENDING = (("client", "lim_client"), ("desktop", "lim_desktop"), ("user", "lim_user"),
            ("process", "lim_process"))
#: one pending limit met alone, for fuzz's goals, each with the parameters (over the
#: defaults) that make it the only one of 1: at the defaults all four are 1, so a relay
#: that holds one scope to another scope's limit cannot be told apart
B8_ALONE = tuple((f"pending per {n} alone ({k})", _alone(k),
                  {o: 2 for _, o in _PENDING if o != k}) for n, k in _PENDING)


def _rows_pressed(s, m):
    """The durable rows meet their cap while a claim of a key without a row is about to
    be taken."""
    c = _c(m)
    rows = Count(s.row[k] != ROW.none for k in range(len(c.impl_scopes)))
    fresh = Or(*(And(i.guard, s.row[c.impl_scope(i.args["o"], c.key_of(i.args["a"]))] == ROW.none)
                 for i in m.instances if i.name == "claim"))
    return And(rows >= c.row_cap, fresh)


def _waiters_pressed(s, c):
    """A key holds its cap of joined copies while one more copy of it, with a free slot,
    is about to claim: only then is the cap enforced (a key at its cap with no further
    copy tests nothing; at the defaults, one retry and two slots, no third copy comes)."""
    free = _holding(s, c) < c.light_slots
    return Or(*(And(s.waiters[k] >= c.waiters, s.mem[k] == MEM.running,
                    s.stage[o][a] == STAGE.slot_wait, free)
                for o in range(len(c.ops)) for a in c.copies
                for k in [c.impl_scope(o, c.key_of(a))]))


def _slots_pressed(s, c):
    """Every light slot is held while one more call waits for one: only then is the
    count enforced (two calls holding the two slots, with none waiting, test nothing)."""
    return And(_holding(s, c) >= c.light_slots,
               Or(*(s.stage[o][a] == STAGE.slot_wait for o, a in c.each_copy())))


#: each scaled-down limit of B8, and the condition that it is pressed against (reached,
#: with one more of its kind on the way: a limit met by the last of its kind tests nothing)
B8_REACHES = (
    ("pending per client (lim_client)", _client_pressed),
    ("pending per desktop (lim_desktop)", _total_pressed("lim_desktop")),
    ("pending per user (lim_user)", _total_pressed("lim_user")),
    ("pending per process (lim_process)", _total_pressed("lim_process")),
    ("durable rows (row_cap)", _rows_pressed),
    ("waiters per key (waiters)", lambda s, m: _waiters_pressed(s, _c(m))),
    ("light slots (light_slots)", lambda s, m: _slots_pressed(s, _c(m))),
)

#: the two limits no depth presses at the default parameters, and what does (the default
#: workload's operations share one scope key; one retry brings no third copy of a key)
B8_PRESS = (("durable rows (row_cap)", "--param workload=2 --depth 6"),
            ("waiters per key (waiters)", "--param retries=2 --param light_slots=3 --depth 10"))


def _any_op(m, f):
    return Or(*(f(o) for o in _ops(m)))


PROPERTIES = (
    Property("B1", "no-cross-generation-delivery", MODEL,
             "A response sent by desktop connection generation g is delivered to a phone only for "
             "a pending entry created for generation g.",
             (Check("trans", b1),), ("no-generation-check",),
             witness=lambda s, m: And(s.gen > 0, Or(*(s.inflight[o][a] for o, a in
                                                     _c(m).each_copy()))),
             witness_doc="a response in flight after the desktop reconnected"),
    Property("B2", "single-effect-per-key", MODEL,
             "A mutation's effect happens at most once per scope key (user, device, method, key) "
             "while its row is retained; replay-safe methods may run twice but their domain effect "
             "(one outbox message per (sessionId, operationId)) happens once; a success answer is "
             "the answer of the request's own scope key.",
             (Check("inv", b2),),
             ("memory-only-claims", "scope-key-without-method", "outbox-without-operation-ledger",
              "retry-mints-new-key"),
             witness=lambda s, m: Or(*(s.eff[t] >= 1 for t in range(len(_c(m).true_scopes)))),
             witness_doc="a mutation took effect", assumptions=("retention-window",),
             lemmas=b2_lemmas),
    Property("B3", "orphan-claim-never-reruns", MODEL,
             "A claim left running by a dropped handler answers busy until its lease ends, then "
             "ambiguous; it never runs the mutation again (replay-safe methods excepted).",
             (Check("trans", b3),), ("rerun-after-lease",),
             witness=lambda s, m: Or(*(And(s.row[k] == ROW.running, s.mem[k] == MEM.none,
                                           s.expired[k])
                                       for k in range(len(_c(m).impl_scopes)))),
             witness_doc="an orphaned claim whose lease ended"),
    Property("B4", "conflict-never-runs", MODEL,
             "The same key with different params answers conflict and runs nothing.",
             (Check("trans", b4),), ("fingerprint-ignores-params",),
             witness=lambda s, m: Or(*(
                 And(s.stage[o][a] == STAGE.slot_wait,
                     s.row[_c(m).impl_scope(o, _c(m).key_of(a))] != ROW.none,
                     s.rowfp[_c(m).impl_scope(o, _c(m).key_of(a))] != _c(m).ops[o].params)
                 for o in _ops(m) for a in _c(m).copies)),
             witness_doc="a request whose key has a row with other params (workload 0)"),
    Property("B5", "one-final-answer", MODEL,
             "Each request gets at most one final answer; a final answer removes its pending entry "
             "before the phone sees it; no answer reaches a phone for a request whose entry is gone.",
             (Check("inv", b5),), ("pending-kept-after-final",),
             witness=lambda s, m: _any_op(m, lambda o: s.ans[o] == ANS.success),
             witness_doc="a success reached a phone"),
    Property("B6", "disconnect-answers-pending", MODEL,
             "A desktop socket's close answers every pending request of its generation (forwarded "
             "or still waiting for the routing lock) with -32011 in the same step, and no other: "
             "a replaced socket's late close leaves the current generation's requests pending.",
             (Check("trans", b6),), ("disconnect-leaves-pending",),
             witness=lambda s, m: _any_op(m, lambda o: s.ans[o] == ANS.reconnecting),
             witness_doc="a pending request answered -32011"),
    Property("B12", "retryable-reruns", MODEL,
             "A retry with the same fingerprint after a stored retryable error reclaims the row "
             "and runs the request again; it is never answered with the stored error.",
             (Check("trans", b12),), ("retryable-replayed",),
             witness=lambda s, m: Or(*(And(s.mem[k] == MEM.done,
                                           s.memres[k] == ANS.retryable_error)
                                       for k in range(len(_c(m).impl_scopes)))),
             witness_doc="a retryable error held by the in-memory layer"),
    Property("B13", "malformed-answered", MODEL,
             "A frame refused before forwarding (a malformed trace context, bad "
             "session.syncHistoryState params, …) is answered with its error at once; only "
             "frames over the connection's rate limit may go unanswered.",
             (Check("trans", b13),), ("drop-malformed",),
             witness=lambda s, m: _any_op(m, lambda o: And(s.ans[o] == ANS.final_error,
                                                           s.ph[o] == PH.done)),
             witness_doc="a final error reached a phone"),
    Property("B7", "no-hidden-missing-replay", MODEL,
             "A success is returned only if its answer was stored for replay; otherwise the answer "
             "is ambiguous.",
             (Check("trans", b7),), ("success-without-store",),
             witness=lambda s, m: _any_op(m, lambda o: s.ans[o] == ANS.ambiguous),
             witness_doc="an ambiguous answer reached a phone"),
    Property("B8", "limits-hold", MODEL,
             "Pending entries never exceed the process / user / desktop / client limits; durable "
             "rows never exceed their capacity; waiters per key stay within their limit; copies "
             "holding a light slot (running, or joined to a running copy) never exceed the "
             "slots (scaled-down limits: see the model's parameters).",
             (Check("inv", b8),), ("limit-off-by-one", "claim-without-slot"),
             reaches=B8_REACHES, press=B8_PRESS,
             witness=lambda s, m: _any_op(m, lambda o: s.ans[o] == ANS.limit),
             witness_doc="a request refused by a pending limit (-32020)"),
)

_WHERE = {"retry-mints-new-key": "phone", "no-generation-check": "relay",
          "pending-kept-after-final": "relay", "disconnect-leaves-pending": "relay",
          "limit-off-by-one": "relay", "drop-malformed": "relay"}
#: the workload (and sizes) each mutant needs to show its bug
_PARAMS: dict[str, dict[str, int]] = {
    "scope-key-without-method": {"workload": 2},
    "outbox-without-operation-ledger": {"workload": 3, "ops": 1},
    "memory-only-claims": {"ops": 1},
    "rerun-after-lease": {"ops": 1},
    "retry-mints-new-key": {"ops": 1, "row_cap": 2},  # the fresh key's row needs room
    "claim-without-slot": {"light_slots": 1},  # a join beside the running copy overfills 1 slot
}
MUTANTS = mutant_catalogue(MODEL, PROPERTIES, MODEL_MUTANTS, where=_WHERE, default_where="desktop",
                           params=_PARAMS)
ASSUMPTIONS = tuple(
    Assumption(name, MODEL, text, tuple(p.id for p in PROPERTIES if name in p.assumptions))
    for name, text in MODEL_ASSUMPTIONS.items()
)
