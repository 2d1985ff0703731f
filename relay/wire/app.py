"""The desktop's handlers for the mutations the harness drives, with their domain state:
the Codex auth profile, the chat outbox with its (sessionId, operationId) ledger, and the
sessions' active runs.

The outbox adapter checks that the session exists before it submits (004); the
stop-and-send-now method stops only the run the phone saw (its three expected ids) and
then sends, as one task of its own that finishes even when the relay stopped waiting.

>>> app = DesktopApp(sessions={"s-1": None})
>>> from relay.wire.envelope import outbox_params
>>> p = outbox_params("s-1", "op-1")
>>> _ = app.handle("run.chatOutboxSubmit", p); r = app.handle("run.chatOutboxSubmit", p)
>>> len(r["result"]["entries"])  # the ledger makes the second run harmless
1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import desktop_error


@dataclass
class DesktopApp:
    #: the sessions that exist, each with its active run (run, thread, turn) or None
    sessions: dict[str, tuple[str, str, str] | None] = field(default_factory=dict)
    stopped: list[tuple[str, str, str]] = field(default_factory=list)
    active_profile: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)  # desktop events sent
    outbox: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "system.activateCodexAuthProfile":
            # 004: switches the account, sends a desktop event naming the agent, and
            # answers with the fresh profile list
            self.active_profile = params.get("profileId")
            self.events.append({"agent": "codex", "profileId": self.active_profile})
            return {"result": {"profiles": [{"profileId": self.active_profile,
                                             "active": True}]}}
        if method in ("run.chatOutboxSubmit", "run.chatOutboxStopAndSendNow") and \
                params.get("sessionId") not in self.sessions:
            return desktop_error("not_found", "session not found")
        if method == "run.chatOutboxStopAndSendNow":
            return self._stop_and_send(params)
        if method == "run.chatOutboxSubmit":
            q = self.outbox.setdefault(params["sessionId"], [])
            if not self._seen(q, params["operationId"]):
                q.append({"queueId": params["queueId"], "operationId": params["operationId"],
                          "text": params["userText"]})
            return {"result": {"entries": list(q), "receipt": {
                "queueId": params["queueId"], "operationId": params["operationId"]}}}
        return desktop_error("not_implemented")

    def _stop_and_send(self, params: dict[str, Any]) -> dict[str, Any]:
        """Stop the run the phone saw, never another one, then send the queued message."""
        session = params["sessionId"]
        seen = (params["expectedRunId"], params["expectedThreadId"], params["expectedTurnId"])
        active = self.sessions[session]
        if active is not None and active != seen:
            return desktop_error("conflict", "the session's active run is not the one expected")
        if active is not None:
            self.stopped.append(active)
            self.sessions[session] = None
        q = self.outbox.setdefault(session, [])
        entry = next((e for e in q if e["queueId"] == params["queueId"]), None)
        sent = entry is not None and not entry.get("sent")
        if entry is not None:
            entry["sent"] = True
        return {"result": {"stopped": active is not None, "sent": sent,
                           "receipt": {"queueId": params["queueId"],
                                       "operationId": params["operationId"]}}}

    @staticmethod
    def _seen(queue: list[dict[str, Any]], operation: str) -> bool:
        """The (sessionId, operationId) ledger: this operation is already in the outbox."""
        return any(e["operationId"] == operation for e in queue)

    def messages(self, session: str, operation: str) -> int:
        """Outbox entries for (sessionId, operationId): the ledger keeps this at most 1."""
        return sum(1 for e in self.outbox.get(session, []) if e["operationId"] == operation)
