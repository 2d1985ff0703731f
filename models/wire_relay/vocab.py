"""Value sets, the workload and the parameters of the wire-relay model."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dsl import Enum

#: the phone's view of one operation
PH = Enum("idle", "waiting", "retry", "done")
#: what reached the phone (or what the desktop prepared): desktop answers, then relay codes
ANS = Enum(
    "none", "success", "final_error", "conflict", "retryable_error", "ambiguous", "capacity",
    "busy",          # -32603 Desktop is busy; retry the request shortly.
    "timed_out",     # -32603 Desktop request timed out.
    "offline",       # -32010
    "reconnecting",  # -32011
    "relay_timeout", # -32012
    "limit",         # -32020
    "duplicate",     # -32021 same request id already pending, identical request
    "id_conflict",   # -32022 same request id, different request
    "gen_changed",   # -32023
    "switching",     # -32024
)
#: answers after which the phone may send the operation again (same key, same operation)
RETRY_OK = (ANS.retryable_error, ANS.busy, ANS.timed_out, ANS.offline, ANS.reconnecting,
            ANS.relay_timeout, ANS.limit, ANS.duplicate, ANS.gen_changed, ANS.switching)
CODES = {ANS.offline: -32010, ANS.reconnecting: -32011, ANS.relay_timeout: -32012,
         ANS.limit: -32020, ANS.duplicate: -32021, ANS.id_conflict: -32022,
         ANS.gen_changed: -32023, ANS.switching: -32024, ANS.busy: -32603,
         ANS.timed_out: -32603}
#: a pending entry at the relay
PST = Enum("admitted", "forwarded")
#: a request inside the desktop router
STAGE = Enum("none", "slot_wait", "dispatch", "joined", "enqueue")
#: the in-memory claim of a scope key
MEM = Enum("none", "running", "done")
#: the durable SQLite row of a scope key
ROW = Enum("none", "running", "success", "final_error", "retryable_error", "ambiguous")

PLAIN = "system.activateCodexAuthProfile"           # a mutation with no domain ledger
OUTBOX = "run.chatOutboxSubmit"    # replay-safe: the outbox dedups by (sessionId, operationId)
REPLAY_SAFE = {OUTBOX, "files.appendChatAttachmentUploadChunk",
               "files.finishChatAttachmentUpload", "files.cancelChatAttachmentUpload"}


@dataclass(frozen=True)
class Op:
    """One operation a phone means to perform once (it may send it several times)."""

    phone: int
    method: str
    key: int
    params: int
    rid: int  # request id (unique per user and desktop: two phones may collide)
    note: str = ""


RENAME = Op(0, PLAIN, 0, 0, 0, "phone 0 renames a session (a plain mutation)")
#: workloads (``workload`` picks one, ``ops`` takes its first N operations)
WORKLOADS = {
    0: ("conflict", (
        RENAME,
        Op(0, PLAIN, 0, 1, 1, "phone 0 reuses the key with other params: a conflict"),
    )),
    1: ("two phones, one request id", (
        RENAME,
        Op(1, OUTBOX, 0, 0, 0, "phone 1 submits to the outbox reusing request id 0"),
    )),
    2: ("one key, two methods", (
        RENAME,
        Op(0, OUTBOX, 0, 0, 1, "phone 0 reuses the key for another method: another scope key"),
    )),
    3: ("outbox submit", (
        Op(0, OUTBOX, 0, 0, 0, "phone 0 submits to the outbox (replay-safe)"),
        Op(1, PLAIN, 0, 0, 1, "phone 1 renames a session"),
    )),
}


@dataclass(frozen=True)
class Ctx:
    ops: tuple[Op, ...]
    phones: int
    retries: int
    gens: int
    restarts: int
    light_slots: int
    lim_client: int
    lim_desktop: int
    lim_user: int
    lim_process: int
    row_cap: int
    waiters: int
    switches: int
    mutant: str | None
    losses: int = 0
    dropped: frozenset[str] = field(default_factory=frozenset)

    def lose(self, s, guard, upd: dict):
        """A frame lost on the network: one of the run's ``losses`` (``None`` when the run
        loses none, so that the action is not declared at all)."""
        upd[s.lost] = s.lost + 1
        from ..expr import And
        return And(guard, s.lost < self.losses), upd

    def on(self, name: str) -> bool:
        return self.mutant == name

    @property
    def rids(self) -> list[int]:
        return sorted({o.rid for o in self.ops})

    def ops_with_rid(self, rid: int) -> list[int]:
        return [i for i, o in enumerate(self.ops) if o.rid == rid]

    # scope keys ---------------------------------------------------------------
    def _true_key(self, o: int) -> tuple:
        op = self.ops[o]
        return (op.phone, op.method, op.key)

    @property
    def true_scopes(self) -> list[tuple]:
        """(user, device, method, key): what B2 counts effects by."""
        return list(dict.fromkeys(self._true_key(o) for o in range(len(self.ops))))

    def true_scope(self, o: int) -> int:
        return self.true_scopes.index(self._true_key(o))

    def _impl_key(self, o: int, k: int) -> tuple:
        op = self.ops[o]
        key = (op.key, k)  # k > 0 only when a retry mints a fresh key (a mutant)
        if self.on("scope-key-without-method"):
            return (op.phone, key)
        return (op.phone, op.method, key)

    @property
    def impl_scopes(self) -> list[tuple]:
        """The scope keys the desktop's claims are actually filed under."""
        return list(dict.fromkeys(self._impl_key(o, k) for o in range(len(self.ops))
                                  for k in self.keys_of()))

    def impl_scope(self, o: int, k: int) -> int:
        return self.impl_scopes.index(self._impl_key(o, k))

    def keys_of(self) -> range:
        """Key variants a request can carry (fresh keys per attempt only in the mutant)."""
        return range(self.retries + 1) if self.on("retry-mints-new-key") else range(1)

    @property
    def copies(self) -> range:
        """Attempts of one operation (each a copy that may be inside the desktop at once)."""
        return range(self.retries + 1)

    def q(self, o: int, a: int) -> int:
        """Index of copy ``a`` of operation ``o`` in the per-copy arrays' slots (row by
        row: the implementation's harness numbers copies so)."""
        return o * (self.retries + 1) + a

    def each_copy(self) -> list[tuple[int, int]]:
        """Every copy, as (operation, attempt): the indices of the per-copy arrays."""
        return [(o, a) for o in range(len(self.ops)) for a in self.copies]

    def key_of(self, a: int) -> int:
        """The key variant attempt ``a`` carries (a fresh one per attempt only in the mutant)."""
        return a if self.on("retry-mints-new-key") else 0

    def replay_safe(self, o: int) -> bool:
        return self.ops[o].method in REPLAY_SAFE
