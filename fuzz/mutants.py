"""The implementation mutants: known bugs applied to ``relay/`` from outside.

``relay/`` holds only the protocol.  Each mutant here is a small subclass of one of its
classes (or of the harness's agent), registered by name with the role it replaces;
the harness builds that role from the mutant's class.  A name that is not in the
catalogue is refused with the known names: a misspelt mutant must never run the
correct code and report success.

>>> lookup("wire-relay", "no-generation-check").roles
('relay',)
>>> lookup("wire-relay", "disconect-leaves-pending")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
osf_check.models.errors.UnknownName: the wire-relay implementation has no mutant 'disconect-leaves-pending' (known: ...)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from osf_check.models.errors import UnknownName
from osf_check.relay.graph.desktop import Command, DesktopRelay
from osf_check.relay.graph.payload import completion_payload
from osf_check.relay.graph.server import GraphServer, ToolError
from osf_check.relay.wire.app import DesktopApp
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.idempotency import Decision, DurableClaims, MemoryClaims, Row, Scope
from osf_check.relay.wire.phone import Phone
from osf_check.relay.wire.relay_router import RelayRouter

from .graph_inputs import AGENT_KEYS

__all__ = ["ImplMutant", "lookup", "names", "MUTANTS", "GraphAgent"]


class GraphAgent:
    """The agent the graph harness plays: one idempotency key per intent, kept across
    retries (graph-relay.md: the agent mints a key and reuses it), drawn from 000's
    domain (:data:`~.graph_inputs.AGENT_KEYS`)."""

    def key(self, intent: int, attempt: int) -> str:
        return AGENT_KEYS[intent]

    def key_index(self, key: str, retries: int) -> int | None:
        """Which of the model's keys a key the server saw is (None: none the agent sent)."""
        return AGENT_KEYS.index(key) if key in AGENT_KEYS else None


@dataclass(frozen=True)
class ImplMutant:
    name: str
    system: str
    doc: str
    classes: dict[str, type] = field(default_factory=dict)  # role -> class
    #: cross-object wiring after the harness built its roles
    wire: Callable[[Any], None] | None = None

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(self.classes)


# graph-relay: the agent -------------------------------------------------------------------
class FreshKeyOnRetry(GraphAgent):
    def key(self, intent: int, attempt: int) -> str:
        return f"intent-{intent}-attempt-{attempt}"

    def key_index(self, key: str, retries: int) -> int:
        parts = key.split("-")
        return int(parts[1]) * (retries + 1) + int(parts[3])


# graph-relay: the server ------------------------------------------------------------------
class ServerIgnoresKey(GraphServer):
    def _existing(self, agent, key):
        return None


class RequeueOnRetry(GraphServer):
    def _existing(self, agent, key):
        run = super()._existing(agent, key)
        if run is not None:
            run.status, run.cancel_flag = "queued", False
        return run


class LeakyNotFound(GraphServer):
    def _own(self, agent, command_id):
        run = self._find(command_id) if isinstance(command_id, str) and command_id else None
        if run is not None and run.agent != agent:
            raise ToolError("Access denied: this run belongs to another connection")
        return super()._own(agent, command_id)


class QueuedCancelIgnored(GraphServer):
    def cancel_graph_run(self, agent, command_id):
        run = self._own(agent, command_id)
        if run.status == "queued":  # only flagged: the desktop will start it all the same
            run.cancel_flag = True
            return {"command_id": run.command_id, "status": run.status}
        return super().cancel_graph_run(agent, command_id)


class CompletionOverwrites(GraphServer):
    def complete(self, payload):
        run = self._find(payload.get("execution_id"))
        if run is not None:
            run.status = payload["status"]


class StatusOnly(GraphServer):
    @staticmethod
    def _kept(payload):
        return None


class LosesOfflineRuns(GraphServer):
    """The queue lives on the desktop: a run started while it is offline is never synced."""

    desktop: Any = None
    lost: frozenset = frozenset()

    def run_graph_session(self, agent, args):
        n = len(self.runs)
        ticket = super().run_graph_session(agent, args)
        if len(self.runs) > n and self.desktop is not None and not self.desktop.online:
            self.lost = self.lost | {ticket["command_id"]}
        return ticket

    def sync(self, project_id, sessions):
        hidden = [r for r in self.runs if r.command_id in self.lost and r.status == "queued"]
        for r in hidden:
            r.status = "lost"
        try:
            return super().sync(project_id, sessions)
        finally:
            for r in hidden:
                r.status = "queued"


# graph-relay: the desktop -----------------------------------------------------------------
class NoOutbox(DesktopRelay):
    def _complete(self, c, status, result, tokens=0, cost=0.0, error=None):
        return self.payload(c.command_id, status, result, tokens, cost, error)


class FinishOverwritesCancel(DesktopRelay):
    def finish(self, c: Command, status, result="", tokens=0, cost=0.0, error=None):
        c.state, c.outcome = "done", status  # the stop is forgotten
        return self._complete(c, status, result, tokens, cost, error)


class OneProjectSync(GraphServer):
    @staticmethod
    def _carries(run, project_id):
        return True


class NoConsentRecheck(DesktopRelay):
    def consent(self, c):
        return True


class RecheckIgnoresSlug(DesktopRelay):
    def consent(self, c):
        project = next((p for p, sid in self.projects.items() if sid == c.session_id), None)
        return project is not None and self.enabled[project] and self.shared


class ParallelRelay(DesktopRelay):
    def next_command(self):
        if self.phase != "work":
            return None
        return next((c for c in self.commands.values() if c.state == "fetched"), None)


def _utf8_bytes(value: Any) -> int:
    """Buffer.byteLength(JSON.stringify(value)): a lone half is its 6-byte escape."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "backslashreplace"))


def _code_points_spaced(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


class TruncateByBytes(DesktopRelay):
    @staticmethod
    def payload(*args, **kw):
        return completion_payload(*args, measure=_utf8_bytes, **kw)


class MeasureCodePoints(DesktopRelay):
    @staticmethod
    def payload(*args, **kw):
        return completion_payload(*args, measure=_code_points_spaced, **kw)


class HalfResult(DesktopRelay):
    @staticmethod
    def payload(execution_id, status, result, *args, **kw):
        p = completion_payload(execution_id, status, result, *args, **kw)
        if p.get("result_truncated") and isinstance(result, str):
            p["result"] = result[: len(result) // 2]
        return p


# wire-relay: the relay --------------------------------------------------------------------
class NoGenerationCheck(RelayRouter):
    def on_response(self, user, desktop, gen, frame):
        p = frame.get("payload") if isinstance(frame, dict) else None
        rid = p.get("id") if isinstance(p, dict) else None
        e = self.pending.get((user, desktop, rid.strip())) if isinstance(rid, str) else None
        return super().on_response(user, desktop, e.gen if e is not None else gen, frame)


class PendingKeptAfterFinal(RelayRouter):
    def on_response(self, user, desktop, gen, frame):
        before = dict(self.pending)
        out = super().on_response(user, desktop, gen, frame)
        for key, e in before.items():
            if key not in self.pending:
                self._add(key, e)
        return out


class DisconnectLeavesPending(RelayRouter):
    def disconnect_desktop(self, user, desktop, gen=None):
        conn = self.desktops.get((user, desktop))
        if conn is not None and gen in (None, conn.gen):
            conn.online = False
        return []


class DropMalformed(RelayRouter):
    def on_request(self, c, frame, now):
        from osf_check.relay.wire.envelope import FrameError, validate_request
        try:
            validate_request(frame)
        except FrameError:
            return []
        return super().on_request(c, frame, now)


class RelayLimitOffByOne(RelayRouter):
    @staticmethod
    def _over(current, limit):
        return current > limit


# wire-relay: the desktop ------------------------------------------------------------------
class MemoryLimitOffByOne(MemoryClaims):
    def full(self, s: Scope) -> bool:
        return self.get(s).waiters > self.max_waiters


class RowsOffByOne(DurableClaims):
    def _full(self, rows: int) -> bool:
        return rows > self.max_rows


class DesktopLimitOffByOne(DesktopRouter):
    memory_claims = MemoryLimitOffByOne
    durable_claims = RowsOffByOne


class ForgetfulClaims(DurableClaims):
    """Durable claims that keep nothing: every claim runs, nothing is stored."""

    def conflicts(self, s, params):
        return False

    def claim(self, s, params, now, owner_alive=False):
        return Decision("run")

    def store(self, s, answer, now):
        return answer, True


class MemoryOnlyClaims(DesktopRouter):
    durable_claims = ForgetfulClaims


class ScopeKeyWithoutMethod(DesktopRouter):
    def _scope(self, call):
        return Scope(self.user, call.client_id, "", call.key)


class RerunClaims(DurableClaims):
    @staticmethod
    def _may_rerun(s: Scope, row: Row) -> bool:
        return DurableClaims._may_rerun(s, row) or row.lease_over


class RerunAfterLease(DesktopRouter):
    durable_claims = RerunClaims


class ParamsBlindClaims(DurableClaims):
    def conflicts(self, s, params):
        return False


class FingerprintIgnoresParams(DesktopRouter):
    durable_claims = ParamsBlindClaims


class SuccessWithoutStore(DesktopRouter):
    def _stored(self, scope, result, now):
        sent, stored = self.claims.store(scope, result, now)
        return sent if stored else result


class ClaimWithoutSlot(DesktopRouter):
    def can_start(self, call):
        # only a handler that runs waits for a slot (and only running copies hold one)
        if call.stage != "slot_wait":
            return False
        if self._decide(call, 0.0, keep=False)[0] != "run":
            return True
        running = sum(1 for c in self.calls.values()
                      if c.stage == "dispatch" and c.heavy == call.heavy)
        return running < self.slots[call.heavy] and \
            self.memory.running() < self.memory.max_running


class RetryableReplayed(DesktopRouter):
    @staticmethod
    def _replays(answer):
        return answer is not None


class OutboxWithoutLedger(DesktopApp):
    @staticmethod
    def _seen(queue, operation):
        return False


class RetryMintsNewKey(Phone):
    def key(self, operation_key, attempt=None):
        n = self.attempts.get(operation_key, 0) if attempt is None else attempt
        return f"{operation_key}-try-{n}"


def _tell_server_about_desktop(h: Any) -> None:
    h.server.desktop = h.desktop


_G, _W = "graph-relay", "wire-relay"
MUTANTS: dict[tuple[str, str], ImplMutant] = {(m.system, m.name): m for m in (
    ImplMutant("fresh-key-on-retry", _G, "the agent mints a new key for each retry",
               {"agent": FreshKeyOnRetry}),
    ImplMutant("server-ignores-key", _G, "the server starts a new run for a known key",
               {"server": ServerIgnoresKey}),
    ImplMutant("requeue-on-retry", _G, "a retry puts its run back in the queue",
               {"server": RequeueOnRetry}),
    ImplMutant("leaky-not-found", _G, "another agent's run answers 'access denied'",
               {"server": LeakyNotFound}),
    ImplMutant("queued-cancel-ignored", _G, "a cancel of a queued run only sets the flag",
               {"server": QueuedCancelIgnored}),
    ImplMutant("one-project-sync", _G, "a project's sync carries every project's commands",
               {"server": OneProjectSync}),
    ImplMutant("status-only", _G, "the server keeps only the status of a completion",
               {"server": StatusOnly}),
    ImplMutant("queue-on-desktop", _G, "runs started while the desktop is offline are lost",
               {"server": LosesOfflineRuns}, wire=_tell_server_about_desktop),
    ImplMutant("complete-overwrites-cancel", _G, "a Graph that ends after the stop overwrites "
               "'cancelled', and the server takes it", {"server": CompletionOverwrites,
                                                       "desktop": FinishOverwritesCancel}),
    ImplMutant("outbox-off", _G, "completions are posted without an outbox",
               {"desktop": NoOutbox}),
    ImplMutant("outbox-drop-before-ack", _G, "the outbox entry is gone before the 2xx",
               {"desktop": NoOutbox}),
    ImplMutant("no-consent-recheck", _G, "no consent check right before executing",
               {"desktop": NoConsentRecheck}),
    ImplMutant("recheck-ignores-slug", _G, "the re-check forgets the slug",
               {"desktop": RecheckIgnoresSlug}),
    ImplMutant("parallel-relay", _G, "a second Graph starts while one runs",
               {"desktop": ParallelRelay}),
    ImplMutant("truncate-by-bytes", _G, "the limit counts UTF-8 bytes",
               {"desktop": TruncateByBytes}),
    ImplMutant("measure-code-points", _G, "the limit counts code points of spaced JSON",
               {"desktop": MeasureCodePoints}),
    ImplMutant("half-result", _G, "an oversized result is posted cut in half",
               {"desktop": HalfResult}),
    ImplMutant("no-generation-check", _W, "a late answer from an old socket is delivered",
               {"relay": NoGenerationCheck}),
    ImplMutant("pending-kept-after-final", _W, "a final answer leaves its entry pending",
               {"relay": PendingKeptAfterFinal}),
    ImplMutant("disconnect-leaves-pending", _W, "a disconnect answers nothing",
               {"relay": DisconnectLeavesPending}),
    ImplMutant("drop-malformed", _W, "a malformed frame is dropped, not answered",
               {"relay": DropMalformed}),
    ImplMutant("limit-off-by-one", _W, "every limit admits one more",
               {"relay": RelayLimitOffByOne, "desktop": DesktopLimitOffByOne}),
    ImplMutant("memory-only-claims", _W, "no durable claims: a restart forgets them",
               {"desktop": MemoryOnlyClaims}),
    ImplMutant("scope-key-without-method", _W, "the claim key leaves the method out",
               {"desktop": ScopeKeyWithoutMethod}),
    ImplMutant("rerun-after-lease", _W, "an orphaned claim runs again after its lease",
               {"desktop": RerunAfterLease}),
    ImplMutant("fingerprint-ignores-params", _W, "the same key with other params runs",
               {"desktop": FingerprintIgnoresParams}),
    ImplMutant("success-without-store", _W, "a success is sent although it was not stored",
               {"desktop": SuccessWithoutStore}),
    ImplMutant("claim-without-slot", _W, "a replay, refusal or join takes no slot",
               {"desktop": ClaimWithoutSlot}),
    ImplMutant("retryable-replayed", _W, "a stored retryable error is replayed, not rerun",
               {"desktop": RetryableReplayed}),
    ImplMutant("outbox-without-operation-ledger", _W, "the outbox has no operation ledger",
               {"app": OutboxWithoutLedger}),
    ImplMutant("retry-mints-new-key", _W, "the phone mints a new key for a retry",
               {"phone": RetryMintsNewKey}),
)}


def names(system: str) -> tuple[str, ...]:
    """The implementation mutants of ``system``, in catalogue order."""
    return tuple(n for s, n in MUTANTS if s == system)


def lookup(system: str, name: str | None) -> ImplMutant | None:
    """The mutant ``name`` of ``system`` (None for None); an unknown name raises
    :class:`~osf_check.models.errors.UnknownName` with the known ones."""
    if name is None:
        return None
    m = MUTANTS.get((system, name))
    if m is None:
        raise UnknownName(f"the {system} implementation has no mutant {name!r} "
                          f"(known: {', '.join(names(system))})")
    return m


def build(mutant: ImplMutant | None, role: str, default: type, *args: Any, **kw: Any) -> Any:
    """An instance of ``role``: the mutant's class for it if it has one, else ``default``."""
    cls = mutant.classes.get(role, default) if mutant is not None else default
    return cls(*args, **kw)
