"""The desktop relay loop as a sans-I/O core.

It owns the sharing settings and the outbox, and it talks to the server only
through what its methods are given and return: the harness (a simulator, the
fuzzer, a real shell) carries requests and answers, and may lose them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import constants
from ..clock import ManualClock
from .outbox import Outbox
from .payload import completion_payload, whole

POLL_INTERVAL = float(constants.RELAY_ROUND)
CONTROL_POLL = float(constants.CONTROL_POLL)
NOT_SHARED = "Graph session is no longer shared with this project"
#: a UUID's text form, 8-4-4-4-12 hex digits (either case: RFC 9562 reads them so)
UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
#: the channel a connected command runs on (000: run_graph_now "sul canale graph:external:")
CHANNEL = "graph:external:"


@dataclass
class Command:
    command_id: str
    session_id: str
    slug: str
    state: str = "fetched"  # fetched, running, stopping, done
    #: completed, failed, cancelled, or refused (the project binding would not file it)
    outcome: str | None = None
    stop_sent: int = 0
    polled_at: float | None = None  # when the server was last asked about a stop
    #: what the agent passed to run_graph_session: the shell runs the Graph with them
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class DesktopRelay:
    outbox_path: str
    project_id: str = "proj_1"
    session_id: str = "gs_" + "0" * 32
    clock: ManualClock = field(default_factory=ManualClock)
    online: bool = True
    phase: str = "idle"  # idle, sync, work
    shared: bool = True
    slug: str = "s0"
    #: the connected projects, each with the Graph session shared with it (default: one,
    #: ``project_id`` with ``session_id``); ``enabled`` says which the owner enabled
    projects: dict[str, str] = field(default_factory=dict)
    enabled: dict[str, bool] = field(default_factory=dict)
    commands: dict[str, Command] = field(default_factory=dict)
    #: the desktop's run history: the full record of each run under its execution_id,
    #: whatever the posted completion had to leave out (000)
    history: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: when the relay timer last fired (a round ran or was skipped)
    ticked_at: float = 0.0
    #: the channel-project rows the project binding wrote: a run's channel -> its project
    bindings: dict[str, str] = field(default_factory=dict)
    #: the rounds started so far: each sync names its round, so that a reply arriving
    #: after the desktop gave up on its call (a later round may run by then) is told apart
    rounds: int = 0

    def __post_init__(self) -> None:
        self.outbox = Outbox(self.outbox_path)
        self.projects = self.projects or {self.project_id: self.session_id}
        self.enabled = {p: self.enabled.get(p, True) for p in self.projects}

    # the round -------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.phase != "idle"

    def tick(self) -> list[dict[str, Any]]:
        """The timer fires: skipped while busy; otherwise the round starts by re-sending
        every completion still in the outbox (returned: the POSTs to send)."""
        self.ticked_at = self.clock.now()
        if self.busy or not self.online:
            return []
        self.phase = "sync"
        self.rounds += 1
        return [p for _, p in self.outbox.entries()]

    def sharing_changed(self) -> list[dict[str, Any]]:
        """The owner changed sharing: a round starts right away, as the 20 s timer would
        (000: "e subito dopo una modifica alla condivisione"); skipped while busy."""
        return self.tick()

    # what the owner and the network tell the desktop ---------------------------------------
    def set_online(self, online: bool) -> None:
        """The network came up or went down."""
        self.online = online

    def set_enabled(self, project: str, enabled: bool) -> None:
        """The owner enabled or disabled a connected project."""
        self.enabled[project] = enabled

    def set_shared(self, shared: bool) -> None:
        """The owner shared the Graph session, or stopped sharing it; the round it starts
        is :meth:`sharing_changed`'s."""
        self.shared = shared

    def rename(self, slug: str) -> None:
        """The owner renamed the session: the next sync uploads the new slug."""
        self.slug = slug

    def sync_requests(self) -> list[dict[str, Any]]:
        """One sync per enabled project, each uploading the sessions shared with that
        project only (at most 100: name, description, slug, version, status)."""
        out = []
        for project, session in self.projects.items():
            if not self.enabled[project]:
                continue
            meta = [{"graph_session_id": session, "name": "graph",
                     "description": "a shared Graph", "slug": self.slug, "version": 1,
                     "status": "ready"}] if self.shared else []
            out.append({"project_id": project, "sessions": meta, "round": self.rounds})  # one session: under 100
        return out

    def sync_reply(self, commands: list[dict[str, Any]], round: int | None = None) -> None:
        """The syncs' replies: a command the desktop holds already (the server sends a
        running one again, in case a reply was lost) is ignored, never run twice.  A reply
        to another round's sync (``round``), or one that comes after the call failed, is
        ignored whole: the server re-sends its running commands at the next sync."""
        if self.phase != "sync" or round not in (None, self.rounds):
            return
        for c in commands:
            if c["command_id"] in self.commands or c["command_id"] in self.history:
                continue
            self.commands[c["command_id"]] = Command(c["command_id"], c["graph_session_id"],
                                                     c["slug"], arguments=c.get("arguments", {}))
        self.phase = "work"

    def sync_failed(self) -> None:
        self.phase = "idle"

    def executing(self) -> list[Command]:
        return [c for c in self.commands.values() if c.state in ("running", "stopping")]

    def next_command(self) -> Command | None:
        """The next fetched command, in order; None while the worker is busy."""
        if self.phase != "work":
            return None
        if self.executing():  # one Graph at a time
            return None
        return next((c for c in self.commands.values() if c.state == "fetched"), None)

    def consent(self, c: Command) -> bool:
        """Re-checked right before executing: enabled, shared, same slug."""
        project = next((p for p, sid in self.projects.items() if sid == c.session_id), None)
        return project is not None and self.enabled[project] and self.shared and \
            c.slug == self.slug

    def start_or_refuse(self, c: Command) -> dict[str, Any] | None:
        """Run the command, or close it as cancelled (returned: that completion's POST).
        A command whose id the project binding refuses never runs and posts nothing:
        000 names no completion for it."""
        if not self.consent(c):
            c.state, c.outcome = "done", "cancelled"
            return self._complete(c, "cancelled", None, error=NOT_SHARED)
        if not self.bind(c):
            c.state, c.outcome = "done", "refused"
            return None
        c.state, c.polled_at = "running", self.clock.now()
        return None

    def bind(self, c: Command) -> bool:
        """ConnectedGraphProjectBinding: file the run under its connected project, only
        for a UUID command id (000: "rifiuta qualsiasi altra cosa prima di scrivere la
        riga canale-progetto").  The server mints the ids, so this guards against a
        server that sends something else."""
        if not isinstance(c.command_id, str) or not UUID_TEXT.fullmatch(c.command_id):
            return False
        project = next(p for p, sid in self.projects.items() if sid == c.session_id)
        self.bindings[CHANNEL + c.command_id] = project
        return True

    def control_poll(self, c: Command, cancelled: bool) -> bool:
        """The server said whether the run was cancelled: the stop is sent once."""
        c.polled_at = self.clock.now()
        if c.state == "running" and cancelled:
            c.state, c.outcome, c.stop_sent = "stopping", "cancelled", c.stop_sent + 1
            return True
        return False

    def finish(self, c: Command, status: str, result: Any = "", tokens: int = 0,
               cost: float = 0.0, error: str | None = None) -> dict[str, Any]:
        """The Graph ended; after a stop the outcome stays cancelled."""
        if c.state == "stopping":
            status = "cancelled"
        c.state, c.outcome = "done", status
        return self._complete(c, status, result, tokens, cost, error)

    def _complete(self, c: Command, status: str, result: Any, tokens: int = 0,
                  cost: float = 0.0, error: str | None = None) -> dict[str, Any]:
        payload = self.payload(c.command_id, status, result, tokens, cost, error)
        self.history[c.command_id] = whole(c.command_id, status, result, tokens, cost, error)
        self.outbox.put(c.command_id, payload)  # written first, then posted
        return payload

    payload = staticmethod(completion_payload)

    def acked(self, execution_id: str) -> None:
        """The server answered 2xx: the completion leaves the outbox."""
        self.outbox.remove(execution_id)

    def round_end(self) -> bool:
        if self.phase == "work" and not self.executing() and not any(
                c.state == "fetched" for c in self.commands.values()):
            self.phase = "idle"
            return True
        return False

    def timers(self) -> list[tuple[float, str, str | None]]:
        """When the desktop wants to act next: the relay timer every 20 s, and a control
        poll every 3 s for each Graph that runs (000)."""
        out: list[tuple[float, str, str | None]] = [(self.ticked_at + POLL_INTERVAL, "round",
                                                     None)]
        out += [(c.polled_at + CONTROL_POLL, "control_poll", c.command_id)
                for c in self.executing() if c.state == "running" and c.polled_at is not None]
        return sorted(out, key=lambda t: (t[0], t[1], t[2] or ""))

    def due_now(self) -> list[tuple[str, str | None]]:
        """The timers that fire now, each as (kind, command id): the shell answers a
        "round" with :meth:`tick` and a "control_poll" by asking the server and passing
        its answer to :meth:`control_poll`."""
        now = self.clock.now()
        return [(kind, ref) for t, kind, ref in self.timers() if t <= now]

    def reopen(self) -> None:
        """A crash of the storage between two steps: reopen the database file."""
        self.outbox.reopen()
