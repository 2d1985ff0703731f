"""The server: tool contracts of the four agent tools, the command queue, run records.

Every answer to a run another agent started, to an unknown id and to an empty id is
the same error, so a leaked id confirms nothing.
"""

from __future__ import annotations

import random
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

NOT_FOUND = "Graph run not found or access removed"
#: a start for a session no sync has uploaded (or the last one left out): no desktop would
#: ever fetch its row, so it is refused instead of queued forever
NOT_SHARED = ("Graph session not shared with a connected project: the owner shares it "
              "from the desktop, which uploads it at its next sync")
TERMINAL = ("completed", "failed", "cancelled")
SESSION_ID = re.compile(r"^gs_[0-9a-f]{32}$")
RUN_FIELDS = {"graph_session_id", "arguments", "idempotency_key"}
MAX_SYNC_SESSIONS = 100
RUN, READ = "osfoundry:run", "osfoundry:read"

#: the four tools as the public MCP endpoint lists them (000): description, input schema,
#: annotations and the OAuth scope each needs.  The start call's description names the
#: tool that reads the result: the agent cannot infer a queue from a name.
TOOLS: dict[str, dict[str, Any]] = {
    "run_graph_session": {
        "description": "Queue a Graph run on the owner's online desktop in a connected project. "
                       "Retrieve progress and result with get_graph_run. The desktop can go "
                       "offline, and local tool approvals still apply.",
        "inputSchema": {"type": "object", "properties": {
            "graph_session_id": {"type": "string"}, "arguments": {"type": "object"},
            "idempotency_key": {"type": "string", "minLength": 8, "maxLength": 128}},
            "required": ["graph_session_id", "idempotency_key"], "additionalProperties": False},
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
        "scope": RUN},
    "get_graph_run": {
        "description": "Progress and result of a Graph run started by this Connected agent.",
        "inputSchema": {"type": "object", "properties": {"command_id": {"type": "string"}},
                        "required": ["command_id"]},
        "annotations": {"readOnlyHint": True}, "scope": READ},
    "cancel_graph_run": {
        "description": "Cancel a Graph run started by this Connected agent.",
        "inputSchema": {"type": "object", "properties": {"command_id": {"type": "string"}},
                        "required": ["command_id"]},
        "annotations": {"readOnlyHint": False}, "scope": RUN},
    "list_graph_sessions": {
        "description": "The Graph sessions the owner shared with a connected project.",
        "inputSchema": {"type": "object", "properties": {
            "project_id": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
            "required": ["project_id"]},
        "annotations": {"readOnlyHint": True}, "scope": READ},
}


class ToolError(Exception):
    """An error answer of a tool (its message is what the agent sees)."""


@dataclass
class Run:
    command_id: str
    agent: int
    key: str
    session_id: str
    slug: str
    arguments: dict[str, Any]
    status: str = "queued"
    cancel_flag: bool = False
    #: the accepted completion's result (or result_truncated), error, tokens and cost
    completion: dict[str, Any] | None = None
    project_id: str = ""  # the project the run is filed under: its session's


@dataclass
class GraphServer:
    """Runs in creation order; ``seed`` makes command ids reproducible."""

    seed: int = 0
    runs: list[Run] = field(default_factory=list)
    by_key: dict[tuple[int, str], str] = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)  # last synced metadata

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def _new_id(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def _find(self, command_id: Any) -> Run | None:
        return next((r for r in self.runs if r.command_id == command_id), None)

    # the agent's tools ---------------------------------------------------------
    def run_graph_session(self, agent: int, args: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(args, dict):
            raise ToolError("arguments must be an object")
        extra = set(args) - RUN_FIELDS
        if extra:
            raise ToolError(f"unknown field(s): {', '.join(sorted(extra))}")
        sid, key = args.get("graph_session_id"), args.get("idempotency_key")
        if not isinstance(sid, str) or not SESSION_ID.match(sid):
            raise ToolError("graph_session_id must be gs_ followed by 32 hex characters")
        if not isinstance(key, str) or not 8 <= len(key) <= 128:
            raise ToolError("idempotency_key is required: 8 to 128 characters")
        arguments = args.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ToolError("arguments must be an object")
        existing = self._existing(agent, key)
        if existing is not None:  # a retry: the same run, whatever its status now
            return self._ticket(existing)
        meta = self.sessions.get(sid)
        if meta is None:
            raise ToolError(NOT_SHARED)
        run = Run(self._new_id(), agent, key, sid, meta.get("slug", ""), arguments,
                  project_id=meta.get("project_id", ""))
        self.runs.append(run)
        self.by_key[(agent, key)] = run.command_id
        return self._ticket(run)

    def _existing(self, agent: int, key: str) -> Run | None:
        """The run this agent already started with this idempotency key."""
        return self._find(self.by_key.get((agent, key)))

    @staticmethod
    def _ticket(run: Run) -> dict[str, Any]:
        return {"command_id": run.command_id, "status": run.status}

    # the MCP surface: tools/list and tools/call with the caller's OAuth scopes ---------
    @staticmethod
    def tools_list() -> list[dict[str, Any]]:
        return [{"name": n, **{k: v for k, v in t.items() if k != "scope"},
                 "securitySchemes": [{"type": "oauth2", "scopes": [t["scope"]]}]}
                for n, t in TOOLS.items()]

    def call_tool(self, agent: int, name: str, args: Any, scopes: frozenset[str] | set[str]
                  ) -> dict[str, Any]:
        """One tool call: refused without the tool's OAuth scope (``osfoundry:run`` to start
        or cancel, ``osfoundry:read`` to read or list), then handled."""
        tool = TOOLS.get(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r}")
        if tool["scope"] not in scopes:
            raise ToolError(f"{name} needs the OAuth scope {tool['scope']}")
        if not isinstance(args, dict):
            raise ToolError("arguments must be an object")
        if name == "run_graph_session":
            return self.run_graph_session(agent, args)
        if name == "list_graph_sessions":
            return self.list_graph_sessions(args.get("project_id", ""), args.get("limit", 50))
        call = self.get_graph_run if name == "get_graph_run" else self.cancel_graph_run
        return call(agent, args.get("command_id"))

    def _own(self, agent: int, command_id: Any) -> Run:
        run = self._find(command_id)  # any other value (None, a number) finds no run
        if run is None:
            raise ToolError(NOT_FOUND)
        if run.agent != agent:
            raise ToolError(NOT_FOUND)  # the same answer as for an unknown id
        return run

    def get_graph_run(self, agent: int, command_id: Any) -> dict[str, Any]:
        """Progress and result: the status, and once the desktop's completion was
        accepted, its result (or ``result_truncated``), error, tokens and cost."""
        run = self._own(agent, command_id)
        return {"command_id": run.command_id, "status": run.status, **(run.completion or {})}

    def cancel_graph_run(self, agent: int, command_id: Any) -> dict[str, Any]:
        run = self._own(agent, command_id)
        if run.status == "queued":
            run.status = "cancelled"  # terminal at once: the desktop never sees it
        elif run.status == "running":
            run.cancel_flag = True  # read by the desktop's next control poll
        return {"command_id": run.command_id, "status": run.status}

    def list_graph_sessions(self, project_id: str, limit: int = 50) -> dict[str, Any]:
        if not isinstance(limit, int) or not 1 <= limit <= 50:
            raise ToolError("limit must be 1 to 50")
        listed = [dict({k: v for k, v in m.items() if k != "project_id"}, graph_session_id=k)
                  for k, m in self.sessions.items() if m.get("project_id") == project_id]
        return {"project_id": project_id, "sessions": listed[:limit]}

    # the desktop's endpoints ------------------------------------------------------
    def sync(self, project_id: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The desktop uploads the metadata of the sessions shared with one project; the
        reply carries that project's queued commands, which are running from now on, and
        its running ones again (a lost reply loses no command)."""
        if len(sessions) > MAX_SYNC_SESSIONS:
            raise ToolError(f"at most {MAX_SYNC_SESSIONS} sessions per sync")
        self.sessions = {k: m for k, m in self.sessions.items()
                         if m.get("project_id") != project_id}
        self.sessions.update({s["graph_session_id"]: {
            **{k: v for k, v in s.items() if k != "graph_session_id"}, "project_id": project_id}
            for s in sessions})
        out = []
        for run in self.runs:
            # a running run again too: the reply that carried it may have been lost, and
            # the desktop ignores a command it holds (else the run stays running forever)
            if run.status in ("queued", "running") and self._carries(run, project_id):
                run.status = "running"
                out.append({"command_id": run.command_id, "graph_session_id": run.session_id,
                            "slug": run.slug, "arguments": run.arguments})
        return out

    @staticmethod
    def _carries(run: Run, project_id: str) -> bool:
        """A project's sync carries only the runs filed under that project."""
        return run.project_id == project_id

    def control(self, command_id: str) -> bool:
        """The 3 s control poll: was the run cancelled?"""
        run = self._find(command_id)
        return bool(run and run.cancel_flag)

    def complete(self, payload: dict[str, Any]) -> None:
        """A completion POST; a run that is already terminal keeps its status."""
        run = self._find(payload.get("execution_id"))
        if run is None or run.status in TERMINAL:
            return
        run.status = payload["status"]
        run.completion = self._kept(payload)

    @staticmethod
    def _kept(payload: dict[str, Any]) -> dict[str, Any]:
        """What the agent reads back of a completion: everything but its routing fields."""
        return {k: v for k, v in payload.items() if k not in ("execution_id", "status")}
