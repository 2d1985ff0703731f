"""System B, the phone ↔ relay ↔ desktop RPC wire protocol, as one model.

Split by component: :mod:`.phone` (requests, deadlines, retries with the same key),
:mod:`.relay` (admission, pending entries with generations, delivery, expiry),
:mod:`.connection` (desktop generations, disconnect, reconnect, restart),
:mod:`.desktop` (slots and the three stages), :mod:`.idempotency` (in-memory and
durable claims, lease and retention events, the outbox ledger).

Limits are scaled down so that each is reachable in a few steps; the real values
(64 / 128 / 512 / 4,096 pending, 4,096 rows, 32 waiters, 8 light slots) are the
reference implementation's defaults.

>>> m = SPEC.build()
>>> sorted(m.params.items())[:3]
[('gens', 2), ('light_slots', 2), ('lim_client', 1)]
"""

from __future__ import annotations

from ..dsl import Model, ModelBuilder, Param
from ..spec import ModelSpec
from . import connection, desktop, idempotency, phone, relay
from .vocab import ANS, MEM, PH, PST, ROW, STAGE, WORKLOADS, Ctx

COMPONENTS = (phone, relay, connection, desktop, idempotency)

MUTANTS = {
    "no-generation-check": "the relay delivers a response to an entry of another desktop generation",
    "memory-only-claims": "claims live only in memory: a restart forgets them",
    "scope-key-without-method": "the scope key leaves out the method: another method's answer is "
                                "replayed",
    "outbox-without-operation-ledger": "the outbox does not dedup by (sessionId, operationId)",
    "retry-mints-new-key": "the phone mints a new idempotency key when a request times out",
    "rerun-after-lease": "an orphaned claim whose lease ended runs the mutation again",
    "fingerprint-ignores-params": "the same key with other params is taken for a retry",
    "pending-kept-after-final": "a final answer leaves its pending entry in place",
    "disconnect-leaves-pending": "a desktop disconnect leaves that generation's entries pending",
    "success-without-store": "a success is reported although its answer could not be stored",
    "limit-off-by-one": "limits are checked with <= : one entry more than the limit gets in",
    "drop-malformed": "the relay drops a malformed frame silently instead of answering it",
    "claim-without-slot": "a claim that replays, refuses or joins takes no slot (only a "
                          "handler that runs waits for one)",
    "retryable-replayed": "the in-memory layer replays a stored retryable error instead of "
                          "running the request again",
}

ASSUMPTIONS = {
    "retention-window": "no retry arrives more than 48 h after the answer was stored "
                        "(the durable row's retention)",
}


def ctx(params: dict[str, int], mutant: str | None, dropped: frozenset[str] = frozenset()) -> Ctx:
    ops = WORKLOADS[params["workload"]][1][: params["ops"]]
    return Ctx(ops=ops, phones=len({o.phone for o in ops}), retries=params["retries"],
               gens=params["gens"], restarts=params["restarts"],
               light_slots=params["light_slots"], lim_client=params["lim_client"],
               lim_desktop=params["lim_desktop"], lim_user=params["lim_user"],
               lim_process=params["lim_process"], row_cap=params["row_cap"],
               waiters=params["waiters"], switches=params["switches"], mutant=mutant,
               dropped=frozenset(dropped), losses=params["losses"])


def build(params: dict[str, int], mutant: str | None, dropped: frozenset[str] = frozenset()) -> Model:
    c = ctx(params, mutant, dropped)
    b = ModelBuilder("wire-relay", params, mutant, actors=(
        "phone", "relay", "desktop", "network", "clock"))
    b.constants["ctx"] = c
    b.components(COMPONENTS, c)
    connection.declare_last(b, c)
    b.init(ph=PH.idle, tries=0, ans=ANS.none, nfinal=0,
           pend=0, pst=PST.admitted, pgen=0, switching=0,
           online=True, gen=0, restarts=0, oldopen=False, lost=0,
           stage=STAGE.none, resp=ANS.none, inflight=False, rgen=0,
           mem=MEM.none, memres=ANS.none, waiters=0, row=ROW.none, rowfp=0, expired=False,
           eff=0, msgs=0, forgotten=False)
    # a run ends legitimately when every operation is answered and nothing is in flight
    from ..expr import And, Not, Or
    b.quiescent(lambda s: And(*(s.stage[o][a] == STAGE.none for o, a in c.each_copy()),
                              *(Not(s.inflight[o][a]) for o, a in c.each_copy()),
                              *(Or(s.ph[o] == PH.done, s.ph[o] == PH.waiting,
                                   s.tries[o] > c.retries, s.forgotten[c.true_scope(o)])
                                for o in range(len(c.ops)))))
    b.fair_state("desktop online", lambda s: s.online)
    return b.build()


SPEC = ModelSpec(
    name="wire-relay",
    title="System B: phone → relay → desktop RPC with generations and two-layer idempotency "
          "(wire-relay.md)",
    params=(
        Param("workload", 0, 0, len(WORKLOADS) - 1, "which workload: " + "; ".join(
            f"{k} {name}" for k, (name, _) in WORKLOADS.items())),
        Param("ops", 2, 1, 2, "how many of the workload's operations",
              bound="size"),
        Param("retries", 1, 0, 2, "times a phone re-sends an operation",
              bound="count"),
        Param("gens", 2, 1, 3, "desktop connection generations (reconnects + 1)",
              bound="count"),
        Param("restarts", 1, 0, 2, "desktop process restarts",
              bound="count"),
        Param("light_slots", 2, 1, 8, "light-call slots (real: 8); a joined copy keeps its "
              "slot, so joins need 2"),
        Param("lim_client", 1, 1, 64, "pending entries per client (real: 64)"),
        Param("lim_desktop", 1, 1, 128, "pending entries per desktop (real: 128)"),
        Param("lim_user", 1, 1, 512, "pending entries per user (real: 512)"),
        Param("lim_process", 1, 1, 4096, "pending entries per relay process (real: 4,096)"),
        Param("row_cap", 1, 1, 4096, "unexpired durable rows (real: 4,096)"),
        Param("waiters", 1, 1, 32, "copies that may join one running claim (real: 32)"),
        Param("switches", 0, 0, 2, "routing-authority switch episodes (-32024); each doubles "
              "the state space, so the default has none",
              bound="count"),
        Param("losses", 0, 0, 3, "frames lost on the network: a request or its answer on any "
              "hop, or the relay's answer to a desktop's registration (each one multiplies "
              "the state space, so the default loses none)"),
    ),
    mutants=MUTANTS,
    build_fn=build,
    assumptions=ASSUMPTIONS,
)
