"""The desktop's handlers for the mutations the harness drives, with their domain state:
the Codex auth profile, the chat outbox with its (sessionId, operationId) ledger, and the
sessions' active runs.

The outbox adapter checks that the session exists before it submits (004); the
stop-and-send-now method stops only the run the phone saw (its three expected ids) and
then sends, as one task of its own that finishes even when the relay stopped waiting.

A handler runs as a :class:`Task` that stops at each await point.  The dispatch limit
drops the handler's future (:meth:`Task.drop`): it ends at the await point it is at.
Work that must finish is spawned (:meth:`DesktopApp.spawn`) and only awaited, so
dropping the handler leaves it running; :meth:`DesktopApp.tick` drives the spawned
tasks as the desktop's runtime does.  :meth:`DesktopApp.handle` runs a handler whole.

>>> app = DesktopApp(sessions={"s-1": None})
>>> from osf_check.relay.wire.envelope import outbox_params
>>> p = outbox_params("s-1", "op-1")
>>> _ = app.handle("run.chatOutboxSubmit", p); r = app.handle("run.chatOutboxSubmit", p)
>>> len(r["result"]["entries"])  # the ledger makes the second run harmless
1
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from .errors import desktop_error

Steps = Generator[None, None, dict[str, Any]]  # yields at each await point, returns the answer


@dataclass
class Task:
    """A handler's future, or work spawned as a task of its own."""

    steps: Steps
    answer: dict[str, Any] | None = None
    dropped: bool = False

    @property
    def done(self) -> bool:
        return self.answer is not None or self.dropped

    def advance(self) -> None:
        """Run to the next await point, or to the end."""
        if self.done:
            return
        try:
            next(self.steps)
        except StopIteration as end:
            self.answer = end.value

    def drop(self) -> None:
        """The dispatch limit drops this future: it ends where it awaits, with no answer."""
        self.steps.close()
        self.dropped = self.answer is None


@dataclass
class DesktopApp:
    #: the sessions that exist, each with its active run (run, thread, turn) or None
    sessions: dict[str, tuple[str, str, str] | None] = field(default_factory=dict)
    stopped: list[tuple[str, str, str]] = field(default_factory=list)
    active_profile: str | None = None
    #: the upload ledger: upload id -> its session, chunks by index and its end
    uploads: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)  # desktop events sent
    outbox: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: spawned tasks not yet finished: they run on whatever becomes of their handler
    tasks: list[Task] = field(default_factory=list)

    def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run a handler whole: its answer."""
        h = self.start(method, params)
        while h.answer is None:  # never dropped: it runs to its answer
            self.tick()
            h.advance()
        return h.answer

    def start(self, method: str, params: dict[str, Any]) -> Task:
        """Start a handler: it runs to its first await point."""
        h = Task(self._steps(method, params))
        h.advance()
        return h

    def spawn(self, steps: Steps) -> Task:
        """Start work as a task of its own: it runs to its first await point now."""
        t = Task(steps)
        t.advance()
        if not t.done:
            self.tasks.append(t)
        return t

    def tick(self) -> None:
        """The runtime drives every spawned task to its next await point."""
        for t in self.tasks:
            t.advance()
        self.tasks = [t for t in self.tasks if not t.done]

    def _steps(self, method: str, params: dict[str, Any]) -> Steps:
        if method == "run.chatOutboxStopAndSendNow" and params.get("sessionId") in self.sessions:
            # 004: its work must finish, so it is spawned, and the handler only awaits it
            task = self.spawn(self._stop_and_send(params))
            while task.answer is None:  # a spawned task is never dropped
                yield
            return task.answer
        return self._answer(method, params)

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The handlers with no await point: they end where they start."""
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
        if method == "run.chatOutboxSubmit":
            q = self.outbox.setdefault(params["sessionId"], [])
            if not self._seen(q, params["operationId"]):
                q.append({"queueId": params["queueId"], "operationId": params["operationId"],
                          "text": params["userText"]})
            return {"result": {"entries": list(q), "receipt": {
                "queueId": params["queueId"], "operationId": params["operationId"]}}}
        if method.startswith("files.") and "ChatAttachmentUpload" in method:
            return self._upload(method, params)
        return desktop_error("not_implemented")

    def _upload(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The chunked upload, each step with its own entry in the ledger, so that a
        second run of a replay-safe step (append, finish, cancel) changes nothing more."""
        uid = params.get("uploadId")
        if method == "files.beginChatAttachmentUpload":
            if params.get("sessionId") not in self.sessions or not isinstance(uid, str):
                return desktop_error("not_found", "session not found")
            self.uploads.setdefault(uid, {"session": params["sessionId"], "chunks": {},
                                          "end": None})
            return {"result": {"uploadId": uid}}
        up = self.uploads.get(uid) if isinstance(uid, str) else None
        if up is None:
            return desktop_error("not_found", "no such upload")
        if method == "files.appendChatAttachmentUploadChunk":
            if up["end"] is not None:
                return desktop_error("conflict", f"the upload is {up['end']}")
            up["chunks"].setdefault(int(params.get("index", 0)), params.get("data", ""))
            return {"result": {"uploadId": uid, "chunks": len(up["chunks"])}}
        end = "finished" if method == "files.finishChatAttachmentUpload" else "cancelled"
        if up["end"] not in (None, end):
            return desktop_error("conflict", f"the upload is {up['end']}")
        up["end"] = end
        return {"result": {"uploadId": uid, "state": end, "chunks": len(up["chunks"])}}

    def _stop_and_send(self, params: dict[str, Any]) -> Steps:
        """Stop the run the phone saw, never another one, await its end, then send the
        queued message."""
        session = params["sessionId"]
        seen = (params["expectedRunId"], params["expectedThreadId"], params["expectedTurnId"])
        active = self.sessions[session]
        if active is not None and active != seen:
            return desktop_error("conflict", "the session's active run is not the one expected")
        if active is not None:
            self.stopped.append(active)
            self.sessions[session] = None
            yield  # the run stops
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
