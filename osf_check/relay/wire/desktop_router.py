"""The desktop router as a sans-I/O core: slots, the three stages, two-layer idempotency.

A forwarded request becomes a :class:`Call` waiting for a slot (8 light, 2 heavy).
With a free slot (every call takes one, 004), its claim decides
(:meth:`DesktopRouter.start`): run the handler, join the running copy of the same scope
key (keeping the slot while it waits, within its own dispatch limit), or answer (a
replay, a conflict, busy, ambiguous, capacity).  The shell runs the handler and reports its
result (:meth:`DesktopRouter.finish`); the answer is then enqueued and sent
(:meth:`DesktopRouter.take_answer`).  Deadlines are timers the shell fires:
8 s for a slot (-32603 ``Desktop is busy; retry the request shortly.``), 45 s of
dispatch, 95 s for the two timeline loads (-32603 ``Desktop request timed out.``), and
inside those 95 s, 90 s for a Codex session's load (its record's agent, given by
``agent_of``),
5 s to enqueue the answer (then no answer at all), and the durable rows' lease and
retention.

>>> import osf_check.relay.wire.envelope as env
>>> d = DesktopRouter(":memory:", "user-1")
>>> fwd = env.request("r-1", "system.activateCodexAuthProfile", {"sessionId": "s", "name": "n"}, key="k-12345678")
>>> fwd["payload"].update(clientId="phone-1::desk-1", userId="user-1")
>>> call = d.receive(fwd, now=0.0)
>>> d.start(call, now=0.0)
'run'
>>> d.finish(call, {"result": {"renamed": True}}, now=1.0)
>>> d.take_answer(call)["payload"]["result"]
{'renamed': True}
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import constants
from . import limits
from .envelope import params_problem, snake_keys
from .errors import answer_class, busy, codex_load_timed_out, desktop_error, timed_out
from .idempotency import MAX_COMPLETED, MAX_ROWS, MAX_RUNNING, MAX_WAITERS, DurableClaims, \
    MemoryClaims, Scope
from .manifest import HEAVY, LOADS, MANIFEST
from .text import unreadable

LIGHT_SLOTS = 8
HEAVY_SLOTS = 2
SLOT_WAIT = float(constants.SLOT)
DISPATCH = float(constants.DISPATCH)
DISPATCH_LOADS = float(constants.DISPATCH_LOAD)
CODEX_LOAD = float(constants.CODEX_LOAD)
ENQUEUE = float(constants.ENQUEUE)
#: the stages in which a call holds its slot
HOLDING = frozenset({"dispatch", "joined"})
#: mutations whose completed claim is let go at once (their own ledger makes reruns harmless)
RELEASED_AFTER = frozenset({"files.appendChatAttachmentUploadChunk"})

@dataclass
class Call:
    cid: int
    client_id: str
    rid: str | None  # None: a frame no Rust reader takes
    method: str
    params: dict[str, Any]
    key: str | None
    traceparent: str | None
    heavy: bool
    stage: str  # slot_wait, dispatch, joined, enqueue, sent
    deadline: float | None
    scope: Scope | None = None
    answer: dict[str, Any] | None = None
    #: the handler's refusal (another user, an unknown method, params that do not decode)
    refusal: dict[str, Any] | None = None
    #: a Codex session's timeline load: its own deadline inside the dispatch limit
    codex_deadline: float | None = None


class DesktopRouter:
    #: the two claim layers (the durable one survives a restart in its SQLite file)
    memory_claims = MemoryClaims
    durable_claims = DurableClaims

    def __init__(self, claims_path: str | Path, user: str, *, light: int = LIGHT_SLOTS,
                 heavy: int = HEAVY_SLOTS, waiters: int = MAX_WAITERS,
                 completed: int = MAX_COMPLETED, running: int = MAX_RUNNING,
                 max_rows: int = MAX_ROWS,
                 agent_of: Callable[[Any], str | None] | None = None):
        self._init = dict(claims_path=claims_path, user=user, light=light, heavy=heavy,
                          waiters=waiters, completed=completed, running=running,
                          max_rows=max_rows, agent_of=agent_of)
        self.user = user
        #: the agent in a session's record (the app's); without it no load is a Codex one
        self.agent_of = agent_of
        self.slots = {False: light, True: heavy}
        self.memory = self.memory_claims(waiters, completed, running)
        self._claims_args = (claims_path, max_rows)
        self.claims = self.durable_claims(*self._claims_args)
        self.calls: dict[int, Call] = {}
        self._next_id = 0

    def close(self) -> None:
        self.claims.close()

    def _close_claims(self) -> bytes | None:
        """Close the claims database; an in-memory one is kept as bytes, as a file would
        keep it."""
        data = self.claims.db.serialize() if self._claims_args[0] == ":memory:" else None
        self.claims.close()
        return data

    def _carry(self, claims: DurableClaims, data: bytes | None) -> DurableClaims:
        if data is not None:
            claims.db.deserialize(data)
        return claims

    def reopen_claims(self) -> None:
        """Close the claims database and open it again (a storage crash between two steps)."""
        data = self._close_claims()
        self.claims = self._carry(self.durable_claims(*self._claims_args), data)

    def restarted(self) -> DesktopRouter:
        """The process restarts: a new router on the same claims file; in-memory claims
        and running calls are gone."""
        data = self._close_claims()
        new = type(self)(**self._init)  # type: ignore[arg-type]
        new._carry(new.claims, data)
        return new

    # requests in -----------------------------------------------------------------------
    def receive(self, frame: dict[str, Any], now: float) -> Call:
        """A forwarded request arrives and waits for a slot, like every relay RPC (004), even
        one whose user, method or params its handler will refuse."""
        p = frame["payload"]
        method, params, key = p["method"], p.get("params", {}), p.get("idempotencyKey")
        heavy = method in HEAVY
        self._next_id += 1
        # a frame no Rust reader takes (.text), id and all; the relay forwards none
        readable = not unreadable(frame)
        call = Call(self._next_id, p["clientId"], p["id"] if readable else None, method,
                    params, key, p.get("traceparent"), heavy, "slot_wait", now + SLOT_WAIT)
        self.calls[call.cid] = call
        if not readable:
            call.refusal = desktop_error("parse_error", "text holding half a surrogate pair")
        elif limits.frame_over(frame):
            # 004 limits every frame and names no answer: refused whole before any claim,
            # and answered, so that the relay's pending entry ends now, not at its expiry
            call.refusal = desktop_error("validation", "request frame over 32 MiB")
        elif p.get("userId") != self.user:
            call.refusal = desktop_error("forbidden", "signed in as another user")
        elif method not in MANIFEST:
            call.refusal = desktop_error("method_not_found")
        else:
            why = params_problem(method, params, key) or limits.params_problem(method, params)
            if why:
                call.refusal = desktop_error("invalid_params", why)
            elif MANIFEST[method].mutation:
                call.scope = self._scope(call)
        return call

    def _scope(self, call: Call) -> Scope:
        """A mutation's claim key: (user, device = clientId, method, idempotency key)."""
        return Scope(self.user, call.client_id, call.method, call.key)  # type: ignore[arg-type]

    def _enqueue(self, call: Call, answer: dict[str, Any], now: float) -> None:
        call.stage, call.answer, call.deadline = "enqueue", answer, now + ENQUEUE

    # the claim ---------------------------------------------------------------------------
    def _decide(self, call: Call, now: float, keep: bool) -> tuple[str, dict | None]:
        """What the claim decides; the durable claim it takes is kept only if ``keep`` (it
        runs in an SQLite savepoint, rolled back otherwise)."""
        s = call.scope
        if call.refusal is not None:
            return "answer", call.refusal
        if s is None:
            return "run", None
        if self.claims.conflicts(s, call.params):
            return "answer", desktop_error("conflict", "idempotency key reused with other params")
        mem = self.memory.state(s)
        if mem == "running":
            if self.memory.full(s):
                return "answer", desktop_error("busy", "too many retries are waiting")
            return "join", None
        if mem == "done" and self._replays(self.memory.get(s).answer):
            return "answer", self.memory.get(s).answer
        db = self.claims.db
        db.execute("SAVEPOINT claim")
        try:
            d = self.claims.claim(s, call.params, now)
            kind = "run" if d.kind == "run" else "answer"
        finally:
            if not keep:
                db.execute("ROLLBACK TO claim")
            db.execute("RELEASE claim")
        return kind, d.answer

    @staticmethod
    def _replays(answer: dict[str, Any] | None) -> bool:
        """A completed claim's answer is replayed, unless it is a retryable error: then the
        claim is taken again and the request runs (a retryable row is reclaimed)."""
        return answer is not None and answer_class(answer) != "retryable"

    def _slot_free(self, call: Call) -> bool:
        """004: every relay RPC waits on one of the two semaphores; a handler keeps its
        permit while it runs, and a joined copy's handler while it waits."""
        taken = sum(1 for c in self.calls.values()
                    if c.stage in HOLDING and c.heavy == call.heavy)
        return taken < self.slots[call.heavy]

    def can_start(self, call: Call) -> bool:
        """Whether the claim step can be taken now: it needs a free slot, and a claim that
        runs needs room among the running claims."""
        if call.stage != "slot_wait" or not self._slot_free(call):
            return False
        # what the claim would decide does not depend on the time: it is rolled back
        kind, _ = self._decide(call, 0.0, keep=False)
        return kind != "run" or self.memory.running() < self.memory.max_running

    def start(self, call: Call, now: float) -> str:
        """With a slot, take the claim: ``run`` (the shell runs the handler, then calls
        :meth:`finish`), ``join`` (wait for the running copy: :meth:`resume`) or
        ``answer``."""
        if not self.can_start(call):
            raise RuntimeError(f"call {call.cid} cannot take a slot now")
        kind, answer = self._decide(call, now, keep=True)
        limit = DISPATCH_LOADS if call.method in LOADS else DISPATCH
        if kind == "run":
            if call.scope is not None:
                self.memory.start(call.scope)
            call.stage, call.deadline = "dispatch", now + limit
            if self._codex_load(call):
                call.codex_deadline = now + CODEX_LOAD
        elif kind == "join":
            self.memory.join(call.scope)  # type: ignore[arg-type]
            call.stage, call.deadline = "joined", now + limit
        else:
            self._enqueue(call, answer, now)  # type: ignore[arg-type]  (an answer has one)
        return kind

    def _codex_load(self, call: Call) -> bool:
        """004: a timeline load of a Codex session (its record's agent) has its own 90 s."""
        return call.method in LOADS and self.agent_of is not None and \
            self.agent_of(call.params.get("sessionId")) == "codex"

    def finish(self, call: Call, result: dict[str, Any], now: float) -> None:
        """The handler returned ``result``: stored for replay, then enqueued."""
        if call.stage != "dispatch":
            raise RuntimeError(f"call {call.cid} is not running")
        sent = result
        if call.scope is not None:
            sent = self._stored(call.scope, result, now)
            self.memory.complete(call.scope, sent)
            if call.method in RELEASED_AFTER and "result" in sent:
                # 004: chunk-append releases its completed claim; the upload ledger
                # reconciles what a second run appends
                self.memory.forget(call.scope)
                self.claims.release(call.scope)
        self._enqueue(call, sent, now)

    def _stored(self, scope: Scope, result: dict[str, Any], now: float) -> dict[str, Any]:
        """Store the answer for replay; what may be sent is what was stored (ambiguous if
        the store failed: never a success that hides a missing replay entry)."""
        sent, _ = self.claims.store(scope, result, now)
        return sent

    def resume(self, call: Call, now: float) -> bool:
        """A joined copy wakes: the claim completed (its answer) or was dropped (timed out)."""
        if call.stage != "joined" or call.scope is None:
            return False
        if self.memory.state(call.scope) == "running":
            return False
        # done: its answer; dropped (the owner was cut, the claim has no answer): timed out
        answer = self.memory.get(call.scope).answer or timed_out()
        self.memory.leave(call.scope)
        self._enqueue(call, answer, now)
        return True

    def can_resume(self, call: Call) -> bool:
        return call.stage == "joined" and call.scope is not None and \
            self.memory.state(call.scope) != "running"

    # answers out ---------------------------------------------------------------------------
    def take_answer(self, call: Call) -> dict[str, Any]:
        """The response frame to send on the current socket; the call is done."""
        if call.stage != "enqueue" or call.answer is None:
            raise RuntimeError(f"call {call.cid} has no answer to send")
        del self.calls[call.cid]
        call.stage, call.deadline = "sent", None
        answer = call.answer
        if "result" in answer and snake_keys(answer["result"]):
            answer = desktop_error("validation", f"snake_case key in result: "
                                   f"{snake_keys(answer['result'])[0]}")
        elif "result" in answer and limits.result_problem(call.method, answer["result"]):
            answer = desktop_error("validation", limits.result_problem(call.method,
                                                                       answer["result"]))
        payload = {"clientId": call.client_id, "id": call.rid, **answer, "isFinal": True}
        if call.traceparent:
            payload["traceparent"] = call.traceparent
        frame = {"type": "rpc.response", "payload": payload}
        if limits.frame_over(frame):  # no frame over 32 MiB leaves the desktop
            frame["payload"] = {"clientId": call.client_id, "id": call.rid, "isFinal": True,
                                **desktop_error("validation", "response frame over 32 MiB")}
        return frame

    # time ------------------------------------------------------------------------------------
    def timers(self) -> list[tuple[float, str, Any]]:
        """Every pending deadline: (time, kind, call id or scope), earliest first."""
        out: list[tuple[float, str, Any]] = [(c.deadline, c.stage, c.cid)
                                            for c in self.calls.values() if c.deadline is not None]
        out += [(c.codex_deadline, "codex_load", c.cid) for c in self.calls.values()
                if c.stage == "dispatch" and c.codex_deadline is not None]
        for t, kind, s in self.claims.timers():
            if kind == "lease" and self.memory.state(s) == "running":
                continue  # a live handler: the lease outlives it (B10)
            out.append((t, kind, s))
        return sorted(out, key=lambda x: (x[0], x[1], str(x[2])))

    def fire(self, kind: str, ref: Any, now: float) -> bool:
        """One timer: a call's stage deadline, or a durable row's lease or retention."""
        if kind == "lease":
            return self.memory.state(ref) != "running" and self.claims.end_lease(ref, now)
        if kind == "retention":
            return self.claims.forget(ref, now)
        call = self.calls.get(ref)
        if kind == "codex_load":
            return self._codex_load_ends(call, now)
        if call is None or call.stage != kind or call.deadline is None or now < call.deadline:
            return False
        if kind == "slot_wait":
            self._enqueue(call, busy(), now)
        elif kind == "dispatch":
            # the handler's future is dropped; its durable claim stays `running`
            if call.scope is not None:
                self.memory.drop(call.scope)
            self._enqueue(call, timed_out(), now)
        elif kind == "joined":  # a joined copy's own limit: it stops waiting, the claim runs on
            self.memory.leave(call.scope)  # type: ignore[arg-type]
            self._enqueue(call, timed_out(), now)
        else:  # enqueue: no answer; the relay's pending entry decides
            del self.calls[call.cid]
        return True

    def _codex_load_ends(self, call: Call | None, now: float) -> bool:
        """The Codex load's own deadline ends the handler before the dispatch limit does."""
        if call is None or call.stage != "dispatch" or call.codex_deadline is None or \
                now < call.codex_deadline:
            return False
        self._enqueue(call, codex_load_timed_out(), now)
        return True

    def tick(self, now: float) -> list[tuple[str, Any]]:
        """Fire every due timer, earliest first; returns the ones that fired."""
        fired = []
        for t, kind, ref in self.timers():
            if t <= now and self.fire(kind, ref, now):
                fired.append((kind, ref))
        return fired
