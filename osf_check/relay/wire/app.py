"""The desktop's handlers for the methods whose behaviour 004 describes, with their domain
state: the reply style, the agents' accounts, sessions and their context measures, the
chat outbox with its (sessionId, operationId) ledger, the upload ledger, and the
sessions' active runs.  Every other method 004 names answers its final "not implemented"
class (004 lists it among the final error classes and describes nothing more of them).

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
>>> app.handle("system.ping", {})["result"]["service"]
'desktop-relay'
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import desktop_error
from .manifest import STORAGE_FORMAT_BY_AGENT

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


AGENTS = ("codex", "claude")
#: the words of the reply-style setting: 004 has the desktop write them all, and the
#: phones show them unchanged
REPLY_STYLE = {"label": "Reply style", "description": "How every agent writes its answers."}
REPLY_STYLE_OPTIONS = (
    {"value": "default", "label": "Default", "description": "Each agent answers in its own way."},
    {"value": "ste", "label": "STE", "description": "Short plain sentences, by the reply "
                                                    "style's rewriting rules."},
)
#: 004's system.ping example: the capabilities the desktop announces
CAPABILITIES = ("run.cancel.exact-run.v1",)
IMPROVE_MODES = ("improve", "ste")


def routed_by_agent(method: str) -> bool:
    """004: the desktop sends every run.chat call to its session's agent, and run.cancel too
    ("Die Session-ID wählt den Agenten")."""
    return method.startswith("run.chat") or method == "run.cancel"


def _echo_turn(instructions: str, text: str) -> str:
    """The stand-in for the ephemeral Codex turn: the text back, unchanged."""
    return text


def params_problem(params: dict[str, Any], required: dict[str, tuple | type],
                   optional: dict[str, tuple | type] | None = None) -> dict[str, Any] | None:
    """The invalid-params answer for params that miss a field, hold an unknown one or a
    value outside its type or its allowed values; None if they are fine."""
    allowed = {**required, **(optional or {})}
    unknown = sorted(set(params) - set(allowed))
    missing = sorted(set(required) - set(params))
    if unknown or missing:
        return desktop_error("invalid_params", f"unknown param {unknown[0]}" if unknown
                             else f"missing param {missing[0]}")
    for name, want in allowed.items():
        value = params.get(name)
        ok = value in want if isinstance(want, tuple) else isinstance(value, want)
        if name in params and not ok:
            return desktop_error("invalid_params", f"invalid {name}")
    return None


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
    #: the shell's clock in milliseconds (time is given to the core, never read)
    now_ms: int = 0
    reply_style: str = "default"
    codex_profiles: list[str] = field(default_factory=list)
    claude_accounts: list[str] = field(default_factory=list)
    active_account: str | None = None
    #: each agent's usage entries, and each session's last context measure
    usage: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    context: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: what session.create recorded: session id -> agent, project and conversation
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the ephemeral Codex turn run.improveText runs: (instructions, text) -> text
    turn: Callable[[str, str], str] = _echo_turn
    improve_prompt: str = "Improve the wording of this text; keep its meaning."
    ste_rules: str = "Rewrite this text by the reply style's rules: short plain sentences."
    #: spawned tasks not yet finished: they run on whatever becomes of their handler
    tasks: list[Task] = field(default_factory=list)
    #: the agent of a session given at construction (session.create records its own)
    default_agent: str = "codex"
    #: each call routed to an agent: (method, session, agent)
    routed: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for sid in self.sessions:
            self.records.setdefault(sid, {"agent": self.default_agent, "projectId": "",
                                          "conversationId": None})

    def agent_of(self, session: Any) -> str | None:
        """The agent in the session's record (004: the desktop reads it there), or None for
        a session that does not exist."""
        if not isinstance(session, str) or session not in self.sessions:
            return None
        return self.records.get(session, {}).get("agent")

    def _route(self, method: str, session: Any) -> str | None:
        """Send a call to its session's agent: the agent, or None if there is no session."""
        agent = self.agent_of(session)
        if agent is not None and routed_by_agent(method):
            self.routed.append((method, session, agent))
        return agent

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
        if method == "run.chatOutboxStopAndSendNow" and \
                self._route(method, params.get("sessionId")) is not None:
            # 004: its work must finish, so it is spawned, and the handler only awaits it
            task = self.spawn(self._stop_and_send(params))
            while task.answer is None:  # a spawned task is never dropped
                yield
            return task.answer
        return self._answer(method, params)

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The handlers with no await point: a result, or an error of one of 004's classes."""
        if method.startswith("files.") and "ChatAttachmentUpload" in method:
            return self._upload(method, params)
        handler = self._handlers().get(method)
        if handler is None:
            return desktop_error("not_implemented")
        return handler(params)

    def _handlers(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {"system.ping": self._ping, "system.getReplyStyle": self._get_reply_style,
                "system.updateReplyStyle": self._update_reply_style,
                "system.codexAuthProfiles": self._profiles_answer,
                "system.claudeAccounts": self._accounts_answer,
                "system.activateCodexAuthProfile": self._activate_codex,
                "system.activateClaudeAccount": self._activate_claude,
                "system.agentUsageHistory": self._usage_history,
                "session.create": self._create_session,
                "run.improveText": self._improve_text,
                "run.chatContextUsage": self._context_usage,
                "run.chatLoad": self._load, "run.chatReconcileSessions": self._reconcile,
                "run.chatOutboxSubmit": self._submit,
                "run.chatOutboxStopAndSendNow": self._stop_and_send_checked}

    # system --------------------------------------------------------------------------------
    def _ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return params_problem(params, {}) or {"result": {
            "ok": True, "service": "desktop-relay", "timestampMs": self.now_ms,
            "capabilities": list(CAPABILITIES)}}

    def _get_reply_style(self, params: dict[str, Any]) -> dict[str, Any]:
        return params_problem(params, {}) or self._reply_style_answer()

    def _reply_style_answer(self) -> dict[str, Any]:
        return {"result": {**REPLY_STYLE, "style": self.reply_style,
                           "options": [dict(o) for o in REPLY_STYLE_OPTIONS]}}

    def _update_reply_style(self, params: dict[str, Any]) -> dict[str, Any]:
        """One style for every agent; the answer is the setting, as getReplyStyle gives it."""
        styles = tuple(o["value"] for o in REPLY_STYLE_OPTIONS)
        bad = params_problem(params, {"style": styles})
        if bad:
            return bad
        self.reply_style = params["style"]
        return self._reply_style_answer()

    def _profiles_answer(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return params_problem(params or {}, {}) or {"result": {"profiles": [
            {"profileId": p, "active": p == self.active_profile} for p in self.codex_profiles]}}

    def _accounts_answer(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return params_problem(params or {}, {}) or {"result": {"accounts": [
            {"accountId": a, "active": a == self.active_account} for a in self.claude_accounts]}}

    def _activate_codex(self, params: dict[str, Any]) -> dict[str, Any]:
        """004: switches the account, sends a desktop event naming the agent, and answers
        with the fresh profile list."""
        bad = params_problem(params, {"profileId": str})
        if bad:
            return bad
        self.active_profile = params["profileId"]
        if self.active_profile not in self.codex_profiles:
            self.codex_profiles.append(self.active_profile)
        self.events.append({"agent": "codex", "profileId": self.active_profile})
        return self._profiles_answer()

    def _activate_claude(self, params: dict[str, Any]) -> dict[str, Any]:
        bad = params_problem(params, {"accountId": str})
        if bad:
            return bad
        self.active_account = params["accountId"]
        if self.active_account not in self.claude_accounts:
            self.claude_accounts.append(self.active_account)
        self.events.append({"agent": "claude", "accountId": self.active_account})
        return self._accounts_answer()

    def _usage_history(self, params: dict[str, Any]) -> dict[str, Any]:
        """004: any agent but codex or claude is invalid params."""
        bad = params_problem(params, {"agent": AGENTS})
        return bad or {"result": {"agent": params["agent"],
                                  "history": list(self.usage.get(params["agent"], []))}}

    # session and run -------------------------------------------------------------------------
    def _create_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """A session of the project that already holds the conversation is returned and
        nothing is created (004)."""
        bad = params_problem(params, {"agent": AGENTS},
                             {"conversationId": str, "projectId": str})
        if bad:
            return bad
        record = {"agent": params["agent"], "projectId": params.get("projectId", ""),
                  "conversationId": params.get("conversationId")}
        sid = self._holding(record)
        if sid is None:
            sid = f"session-{len(self.records) + 1}"
            self.records[sid], self.sessions[sid] = record, None
        return {"result": {"sessionId": sid, **self.records[sid]}}

    def _holding(self, record: dict[str, Any]) -> str | None:
        """The session of this project that holds this agent's conversation, if any."""
        if record["conversationId"] is None:
            return None
        return next((sid for sid, r in self.records.items() if r == record), None)

    def _improve_text(self, params: dict[str, Any]) -> dict[str, Any]:
        """An ephemeral turn: improve takes the server's improvement prompt, ste the reply
        style's rewriting rules; no session keeps anything of it."""
        bad = params_problem(params, {"appSessionId": str, "text": str, "mode": IMPROVE_MODES})
        if bad:
            return bad
        rules = self.improve_prompt if params["mode"] == "improve" else self.ste_rules
        return {"result": {"text": self.turn(rules, params["text"])}}

    def _context_usage(self, params: dict[str, Any]) -> dict[str, Any]:
        """The last context measure the session's agent took, or null before the first."""
        bad = params_problem(params, {"appSessionId": str})
        if bad:
            return bad
        self._route("run.chatContextUsage", params["appSessionId"])
        return {"result": {"contextUsage": self.context.get(params["appSessionId"])}}

    def _load(self, params: dict[str, Any]) -> dict[str, Any]:
        """The first timeline load, by the session's agent, with its storageFormat (004:
        indexed for Codex, native for Claude).  This app keeps no timeline items."""
        bad = params_problem(params, {"sessionId": str})
        if bad:
            return bad
        agent = self._route("run.chatLoad", params["sessionId"])
        if agent is None:
            return desktop_error("not_found", "session not found")
        return {"result": {"sessionId": params["sessionId"],
                           "storageFormat": STORAGE_FORMAT_BY_AGENT[agent]}}

    def _reconcile(self, params: dict[str, Any]) -> dict[str, Any]:
        """Each session's outbox, each with the storageFormat of its own agent (a call may
        hold sessions of both agents); a session that does not exist fails the call."""
        bad = params_problem(params, {"sessionIds": list})
        if bad:
            return bad
        sessions = []
        for sid in params["sessionIds"]:
            agent = self._route("run.chatReconcileSessions", sid)
            if agent is None:
                return desktop_error("not_found", f"session not found: {sid}")
            sessions.append({"sessionId": sid, "storageFormat": STORAGE_FORMAT_BY_AGENT[agent],
                             "outbox": list(self.outbox.get(sid, []))})
        return {"result": {"sessions": sessions}}

    def measured(self, session: str, usage: dict[str, Any]) -> None:
        """A runtime event of chat:stream brought a new context measure for the session."""
        self.context[session] = dict(usage)

    def _submit(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._route("run.chatOutboxSubmit", params.get("sessionId")) is None:
            return desktop_error("not_found", "session not found")
        q = self.outbox.setdefault(params["sessionId"], [])
        if not self._seen(q, params["operationId"]):
            q.append({"queueId": params["queueId"], "operationId": params["operationId"],
                      "text": params["userText"]})
        return {"result": {"entries": list(q), "receipt": {
            "queueId": params["queueId"], "operationId": params["operationId"]}}}

    def _stop_and_send_checked(self, params: dict[str, Any]) -> dict[str, Any]:
        """Reached only for a session that does not exist: :meth:`_steps` spawns the rest."""
        return desktop_error("not_found", "session not found")

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
