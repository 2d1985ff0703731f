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
    mutant: str | None = None
    names: dict[str, str] = field(default_factory=dict)
    renames: int = 0
    outbox: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "session.rename":
            self.names[params["sessionId"]] = params["name"]
            self.renames += 1
            return {"result": {"sessionId": params["sessionId"], "name": params["name"]}}
        if method == "run.chatOutboxSubmit":
            q = self.outbox.setdefault(params["sessionId"], [])
            seen = any(e["operationId"] == params["operationId"] for e in q)
            if not seen or self.mutant == "outbox-without-operation-ledger":
                q.append({"queueId": params["queueId"], "operationId": params["operationId"],
                          "text": params["userText"]})
            return {"result": {"entries": list(q), "receipt": {
                "queueId": params["queueId"], "operationId": params["operationId"]}}}
        return desktop_error("not_implemented")

    def messages(self, session: str, operation: str) -> int:
        """Outbox entries for (sessionId, operationId): the ledger keeps this at most 1."""
        return sum(1 for e in self.outbox.get(session, []) if e["operationId"] == operation)
