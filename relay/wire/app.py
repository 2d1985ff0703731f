"""The desktop's handlers for the two mutations the harness drives, with their domain
state: session names, and the chat outbox with its (sessionId, operationId) ledger.

>>> app = DesktopApp()
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
        if method == "run.chatOutboxSubmit":
            q = self.outbox.setdefault(params["sessionId"], [])
            if not self._seen(q, params["operationId"]):
                q.append({"queueId": params["queueId"], "operationId": params["operationId"],
                          "text": params["userText"]})
            return {"result": {"entries": list(q), "receipt": {
                "queueId": params["queueId"], "operationId": params["operationId"]}}}
        return desktop_error("not_implemented")

    @staticmethod
    def _seen(queue: list[dict[str, Any]], operation: str) -> bool:
        """The (sessionId, operationId) ledger: this operation is already in the outbox."""
        return any(e["operationId"] == operation for e in queue)

    def messages(self, session: str, operation: str) -> int:
        """Outbox entries for (sessionId, operationId): the ledger keeps this at most 1."""
        return sum(1 for e in self.outbox.get(session, []) if e["operationId"] == operation)
