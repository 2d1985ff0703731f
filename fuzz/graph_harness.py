"""Drive the Graph-run relay implementation (``relay.graph``) by the model's actions.

The harness plays the agent, the owner and the network around the sans-I/O
cores; :meth:`GraphHarness.apply` performs one model action instance on the
implementation, and :meth:`GraphHarness.abstract` is the abstraction function:
the implementation's state as a state of the model.  The fuzzer checks, step by
step, that the implementation moved to exactly the model's successor.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any, Callable

from osf_check.models.dsl import ActionInstance, Model
from osf_check.models.graph_relay.vocab import CALL, EXEC, OUTCOME, PHASE, POST, STATUS
from osf_check.relay.graph.agent import AgentRuns
from osf_check.relay.graph.desktop import DesktopRelay
from osf_check.relay.graph.payload import whole
from osf_check.relay.graph.server import NOT_SHARED, GraphServer, ToolError

from . import graph_inputs, mutants
from .deadlines import CONTROL_POLL, RELAY_ROUND, GraphBook, Late
from .harness import Divergence, HarnessBase, crash_site, probed_once
from .late import LATE, arrives, named, poll_arrives, sync_arrives, went_back
from .oracles import bounded, handed_over

__all__ = ["Divergence", "GraphHarness", "IMPL_MUTANTS"]

SESSION = "gs_" + "ab" * 16


def session_of(p: int) -> str:
    """The Graph session shared with project ``p`` (project 0's is :data:`SESSION`)."""
    return SESSION if p == 0 else f"gs_{p:02x}" + "cd" * 15


def project_of(p: int) -> str:
    return f"proj_{p + 1}"
#: the answer graph-relay.md gives for an unknown, empty or foreign run id
NOT_FOUND = "Graph run not found or access removed"
IMPL_MUTANTS = mutants.names("graph-relay")
#: the tokens and cost of every Graph the harness finishes
FINISH = {"tokens": 123, "cost": 0.01}
#: the implementation's agent id of each of the model's agents: the model's agent 0
#: (which starts every run) is not the implementation's 0, and one that only probes is,
#: so that no id is special (a falsy 0, the first connection)
AGENTS = (1, 0, 2)


#: the key probes' outcome per model object and server class (see probe_data)
_PROBED: dict[tuple, tuple[Any, Any]] = {}


def made_up_id(r: int) -> str:
    """A well-formed command id no run has: what another agent asks for about run ``r``
    before it exists (the server must answer not found, never access denied)."""
    return str(uuid.UUID(int=r + 1))


def arguments(i: int) -> dict[str, Any]:
    """What intent ``i``'s agent passes to its Graph (its own, nested, not ASCII)."""
    return {"intent": i, "brief": {"lang": "日本語", "items": [i, "😀"]}}


def read_answer(accepted: dict[str, Any] | None, got: dict[str, Any]) -> tuple[str, str | None]:
    """What get_graph_run answered the agent that started the run, as the model names
    it (``read``), and A11 on it, broken or None: once the server accepted a completion
    (``accepted``), that completion's result (or result_truncated), error, tokens and
    cost, exactly; before it, the status and no result."""
    fields = {k: v for k, v in got.items() if k not in ("command_id", "status")}
    if accepted is None:
        return "status", (f"property A11 violated by the implementation: get_graph_run "
                          f"answered {sorted(fields)} before any completion was accepted"
                          if fields else None)
    want = {k: v for k, v in accepted.items() if k not in ("execution_id", "status")}
    why = None
    if fields != want or got.get("status") != accepted["status"]:
        why = (f"property A11 violated by the implementation: get_graph_run answered "
               f"{sorted(fields) or 'the status only'} where the accepted completion has "
               f"{sorted(want)}")
    return ("result" if fields else "status"), why


class GraphHarness(HarnessBase):
    STORE = "outbox"
    #: whether the key probes (fuzz.graph_inputs) run at the first start call; a walk
    #: that records a deployment's log turns them off (no deployment logs them)
    probes = True
    #: the model actions that are the desktop's own decisions (checked against offers())
    DECIDES = ("start_graph", "refuse", "tick")
    #: the steps an implementation may take by itself within another, unannounced
    #: (driver capability steps): the desktop's decisions but the timer's round
    OWN = ("start_graph", "refuse", "round_end")

    def __init__(self, model: Model, outbox_path: str, mutant: str | None = None, seed: int = 0,
                 result_for: Callable[[int, str], Any] | None = None):
        self.model = model
        self.c = model.constants["ctx"]
        self.mutant = mutant
        mu = mutants.lookup("graph-relay", mutant)
        self.agent = mutants.build(mu, "agent", mutants.GraphAgent)
        self.server = mutants.build(mu, "server", GraphServer, seed=seed)
        self.desktop = mutants.build(
            mu, "desktop", DesktopRelay, outbox_path, session_id=SESSION,
            projects={project_of(p): session_of(p) for p in range(self.c.projects)})
        if mu is not None and mu.wire is not None:
            mu.wire(self)
        self.slugs = [f"slug-{k}" for k in range(self.c.slugs)]
        self.desktop.rename(self.slugs[0])
        n = self.c.intents
        self.call = ["idle"] * n
        self.attempts = [0] * n
        self.ticket = [0] * n
        self.net: dict[str, tuple[str, dict[str, Any]]] = {}  # command id -> (sent|acked, payload)
        self.passed: dict[str, dict[str, Any]] = {}  # command id -> the arguments it was given
        # history the properties read, kept from what the harness saw (A6: cancelled
        # while its status was queued)
        self.qcancel = [0] * self.c.runs
        self.accepted: dict[str, dict[str, Any]] = {}  # command id -> the completion it took
        self.book = GraphBook()
        self.result_for = result_for or (lambda r, status: "done")
        #: the result each run's Graph finished with (what a log records)
        self.finished_with: dict[int, Any] = {}
        #: and the error a failed one reported (None: none)
        self.failed_with: dict[int, str | None] = {}
        self.violations: list[str] = []  # A8 failures seen on posted payloads
        #: the owner changed sharing in the last step: the desktop's next round (or its
        #: skipping one) is the change's (000: "e subito dopo una modifica alla
        #: condivisione"), not the timer's
        self.shared_just_now = False
        #: a sync reply the desktop never got (its round, the commands): it arrives late,
        #: after every later step, and must change nothing
        self.late_reply: tuple[int | None, list[dict[str, Any]]] | None = None
        #: the key classes the probes tried on the implementation (coverage)
        self.classes: set[str] = set()
        #: what the agent knows of its runs, from the answers it got (on time or late)
        self.view = AgentRuns()
        #: the answers the network lost, by (kind of LATE, command id), the first of each (the
        #: oldest): each arrives late, after every later step and after a restart, and must
        #: change nothing its receiver knows
        self.held: dict[tuple[str, str], Any] = {}
        #: the runs whose completion left the outbox on a 2xx (a late 2xx may come now)
        self.acked: set[str] = set()
        #: the late deliveries tried, each named by its answer and what it came after
        self.late: set[str] = set()

    # helpers -------------------------------------------------------------------
    def cid(self, r: int) -> str | None:
        runs = self.server.runs
        return runs[r].command_id if r < len(runs) else None

    def unknown_id(self, r: int) -> str:
        """The command id another agent asks for when run ``r`` does not exist."""
        return made_up_id(r)

    def key(self, i: int) -> str:
        return self.agent.key(i, self.attempts[i])

    def arguments(self, i: int) -> dict[str, Any]:
        return arguments(i)

    def _key_index(self, r: int, key: str) -> int:
        k = self.agent.key_index(key, self.c.retries)
        if k is None:
            raise Divergence(f"run {r} holds the key {key[:40]!r} ({graph_inputs.measure(key)}),"
                             f" which the agent never sent: the server changed the key")
        return k

    def _post(self, payload: dict[str, Any] | None, full: dict[str, Any] | None = None) -> None:
        if payload is None:
            return
        cid = payload["execution_id"]
        if full is not None:
            why = bounded(payload, full)
            if why:
                self.violations.append(f"property A8 violated by the implementation: {why}")
        self.net[cid] = ("sent", payload)

    def _read(self, cid: str, got: dict[str, Any]) -> str:
        read, why = read_answer(self.accepted.get(cid), got)
        if why:
            self.violations.append(why)
        return read

    def _sync(self) -> tuple[int | None, list[dict[str, Any]]]:
        """The desktop's syncs, each carried to the server; after each, A12 on what the
        server now lists for that project: exactly the sessions this sync uploaded (000:
        list_graph_sessions shows what the last sync uploaded; an unshared session is
        gone).  Returns the round the syncs name and the commands the replies carry."""
        cmds, rid = [], None
        for req in self.desktop.sync_requests():
            rid = req.get("round")
            cmds += self.server.sync(req["project_id"], req["sessions"])
            listed = self.server.list_graph_sessions(req["project_id"])["sessions"]
            got = sorted((x.get("graph_session_id"), x.get("slug")) for x in listed)
            sent = sorted((x["graph_session_id"], x["slug"]) for x in req["sessions"])
            if got != sent:
                self.violations.append(
                    f"property A12 violated by the implementation: after a sync of "
                    f"{req['project_id']} that uploaded {sent or 'no session'}, "
                    f"list_graph_sessions lists {got or 'none'}")
        return rid, cmds

    def _late_sync_reply(self, label: str) -> None:
        """The sync reply that was lost arrives now, after ``label``: the desktop gave up
        on that call, so it must change nothing (the server re-sends its running commands
        at the next sync)."""
        if self.late_reply is None or not sync_arrives(label):
            return
        self.late.add(named("sync", label.split("(")[0]))
        d = self.desktop
        before = (d.phase, {k: c.state for k, c in d.commands.items()})
        d.sync_reply(self.late_reply[1], round=self.late_reply[0])
        after = (d.phase, {k: c.state for k, c in d.commands.items()})
        if after != before:
            self.violations.append(
                f"a sync reply lost earlier, delivered late after {label}, changed the "
                f"desktop from {before} to {after}")

    def _late_poll(self, c: Any, what: str) -> None:
        """A control poll sent while the Graph ran, answered "cancelled" after it ``what``
        (stopped, or ended), is delivered: it must change nothing (000: the stop is sent
        once, and a terminal outcome stays)."""
        before = (c.state, c.outcome, c.stop_sent)
        self.late.add(named("poll", f"the Graph {what}"))
        stopped = self.desktop.control_poll(c, True)
        if stopped or (c.state, c.outcome, c.stop_sent) != before:
            pid = "property A3 violated by the implementation: " if what == "ended" else ""
            self.violations.append(
                f"{pid}a control poll's late answer (cancelled), delivered after the Graph "
                f"of {c.command_id} {what}, " + ("sent the stop again" if stopped else
                f"changed it from {before} to {(c.state, c.outcome, c.stop_sent)}"))

    def _late_answers(self, after: str) -> None:
        """Each answer the network lost arrives now, late, after ``after`` (a step's name, or
        a restart).  The model has it lost, so it must change nothing: the agent knew as
        much or more, and the server and the desktop already took what it says.  A POST
        arrives once the server holds the run's outcome, and a 2xx once the outbox let its
        completion go (before, each is the model's own step: late_post, late_ack)."""
        for (kind, cid), answer in self.held.items():
            if not self._arrives(kind, cid):
                continue
            self.late.add(named(kind, after))
            try:
                why = getattr(self, f"_late_{kind}")(cid, answer)
            except Exception as e:  # noqa: BLE001 (only the implementation's: see crash_site)
                if crash_site(e) is None:
                    raise
                why = f"made the implementation raise {type(e).__name__}: {e} ({crash_site(e)})"
            if why:
                self.violations.append(f"{LATE[kind]} for {cid}, lost earlier and delivered "
                                       f"late after {after}, {why}")

    def _arrives(self, kind: str, cid: str) -> bool:
        return arrives(kind, self._run(cid).status, cid in self.acked)

    def _run(self, cid: str) -> Any:
        return next(r for r in self.server.runs if r.command_id == cid)

    def _late_view(self, take: Callable[[dict[str, Any]], None], cid: str,
                   answer: dict[str, Any]) -> str | None:
        """A late answer to the agent: what it knew of another run stays, and of this run
        its status never goes back, nor, once terminal, the completion it read."""
        before = copy.deepcopy(self.view.known)
        take(answer)
        now = self.view.known
        others = sorted(k for k in set(before) | set(now) if k != cid and before.get(k) != now.get(k))
        if others:
            return f"changed what the agent knows of another run ({', '.join(others)})"
        return went_back(before.get(cid), now.get(cid))

    def _late_get(self, cid: str, answer: dict[str, Any]) -> str | None:
        return self._late_view(self.view.read, cid, answer)

    def _late_cancel(self, cid: str, answer: dict[str, Any]) -> str | None:
        return self._late_view(self.view.cancelled, cid, answer)

    def _late_post(self, cid: str, payload: dict[str, Any]) -> str | None:
        """A POST at the server, which holds the run's outcome: the run stays as it is (the
        2xx it answers is lost: the desktop's own re-send was answered)."""
        run = self._run(cid)
        before = (run.status, copy.deepcopy(run.completion))
        self.server.complete(payload)
        after = (run.status, run.completion)
        return None if after == before else f"changed the run from {before} to {after}"

    def _late_ack(self, cid: str, _completion: Any) -> str | None:
        """A 2xx at the desktop, whose outbox let the completion go: the outbox stays."""
        before = [e for e, _ in self.desktop.outbox.entries()]
        self.desktop.acked(cid)
        after = [e for e, _ in self.desktop.outbox.entries()]
        return None if after == before else f"changed the outbox from {before} to {after}"

    def _held_copy(self, label: str, kind: str, cid: str) -> Any:
        """The copy the network lost and now delivers by a model step: no longer held, so
        that the late rule never delivers it a second time."""
        if (kind, cid) not in self.held:
            raise Divergence(f"{label}: the model delivers {LATE[kind]} for {cid} that the "
                             f"network never lost")
        return self.held.pop((kind, cid))

    def _late_post_step(self, label: str, cid: str) -> None:
        """A lost POST reaches the server before the run is terminal there: the server
        takes it as any completion, and its 2xx goes to a desktop that gave the request
        up (held: it may arrive late in turn)."""
        payload = self._held_copy(label, "post", cid)
        self.accepted[cid] = payload
        self.server.complete(payload)
        self.held.setdefault(("ack", cid), payload)

    def _late_ack_step(self, label: str, cid: str) -> None:
        """A lost 2xx reaches the desktop while the completion is still in its outbox: the
        entry leaves (a re-sent copy may still be on its way, and stays so)."""
        self._held_copy(label, "ack", cid)
        self._ack(cid)

    def _ack(self, cid: str) -> None:
        """A 2xx reaches the desktop, on time or late: the outbox lets the entry go."""
        self.desktop.acked(cid)
        self.acked.add(cid)

    def _same_key_elsewhere(self, call: dict[str, Any]) -> None:
        """Another agent sends the same idempotency key (000: the key deduplicates one
        agent's retries; a run is readable only by the agent that started it): it must be
        given a run of its own, which it can read.  Tried on a copy of the server, since
        the model's other agents start no runs: the story goes on as the model has it."""
        # the copy is the server's alone: whatever else it holds (a planted bug's desktop,
        # with its database) is shared, not copied
        srv = copy.deepcopy(self.server, {id(self.desktop): self.desktop})
        other = AGENTS[-1]
        try:
            theirs = self._start(call, srv, other)["command_id"]
        except ToolError as e:
            if self._unlisted(e):
                return  # a retry found the agent's run, the session is no longer listed
            raise
        why = None
        if theirs in {r.command_id for r in self.server.runs}:
            why = f"answered with the run {theirs} another agent started"
        else:
            try:
                srv.get_graph_run(other, theirs)
            except ToolError as e:
                why = f"gave it a ticket its own get_graph_run answers {str(e)!r}"
        if why:
            self.violations.append(
                f"property A1 violated by the implementation: agent {other}'s "
                f"run_graph_session with the idempotency key agent {AGENTS[0]} used {why}")

    def _unlisted(self, e: ToolError) -> bool:
        """Whether the server refused a start because no sync listed its session: an
        answer the model has at ``listing=1`` only."""
        return bool(self.c.listing) and str(e) == NOT_SHARED

    def _start(self, call: dict[str, Any], srv: Any = None,
               agent: int = AGENTS[0]) -> dict[str, Any]:
        """The agent's start call on ``srv`` (the server): as it is at ``listing=1``, where
        the model keeps the server's session list; through :meth:`_filed` at 0."""
        srv = self.server if srv is None else srv
        if self.c.listing:
            return srv.run_graph_session(agent, dict(call))
        return self._filed(call, srv, agent)

    def _filed(self, call: dict[str, Any], srv: Any = None,
               agent: int = AGENTS[0]) -> dict[str, Any]:
        """The agent's start call at ``listing=0``, filed as that model files it.

        The model at ``listing=0`` has no variable for what the last sync uploaded: it
        assumes that the server lists every project's session, under the session's
        current slug, at every start call (as if a sync had uploaded it just before), so
        that a new run is filed under the current slug and never refused.  The server is
        shown that list for this call only and gets its own back, untouched: what a sync
        leaves there is the server's, judged by A12 and never overwritten, so a stale list
        stays visible.  Under that assumption a server that files a run under a slug of
        its own making, or accepts a session no sync listed, goes unseen; ``listing=1``
        models the list and calls the server as it is (:meth:`_start`), which sees both.
        """
        srv = self.server if srv is None else srv
        own = srv.sessions
        srv.sessions = {session_of(p): {"slug": self.desktop.slug, "project_id": project_of(p)}
                        for p in range(self.c.projects)}
        try:
            return srv.run_graph_session(agent, dict(call))
        finally:
            srv.sessions = own

    def _command(self, r: int):
        return self.desktop.commands[self.cid(r)]  # type: ignore[index]

    def probe_data(self) -> None:
        """The key probes, once per run and server class: they build fresh servers and
        depend on nothing else, so every later walk or restored snapshot of the run gets
        the first outcome again, failure and all (as the wire harness's data probes)."""
        who = (id(self.model), type(self.server), self.mutant)
        self.classes = probed_once(_PROBED, who, self.model,
                                   lambda: graph_inputs.start_keys(lambda: type(self.server)()))

    # one model action on the implementation -------------------------------------------
    def apply(self, inst: ActionInstance) -> dict[str, Any]:
        """Perform ``inst``; returns its outputs (answers), as the model names them.  Then
        every timer the desktop now has is checked against 000's 20 s and 3 s."""
        if inst.name == "run_graph_session" and self.probes and not self.classes:
            self.probe_data()
        out = self._apply(inst)
        self._late_sync_reply(inst.label)
        self._late_answers(inst.name)
        self.shared_just_now = inst.name == "toggle_share"
        try:
            self.book.check(self.desktop)
        except Late as e:
            raise Divergence(f"{inst.label}: {e}") from None
        return out

    def _at(self, t: float) -> float:
        """Move the clock to ``t`` (the harness's own idea of when a timer is due)."""
        now = self.desktop.clock.now()
        if t > now:
            self.desktop.clock.advance(t - now)
        return self.desktop.clock.now()

    def _apply(self, inst: ActionInstance) -> dict[str, Any]:
        name, a = inst.name, inst.args
        out: dict[str, Any] = {}
        if name == "run_graph_session":
            i = a["i"]
            key = self.key(i)  # minted before the attempt is counted
            self.attempts[i] += 1
            call = {"graph_session_id": session_of(i % self.c.projects),
                    "idempotency_key": key, "arguments": self.arguments(i)}
            try:
                ticket = self._start(call)
            except ToolError as e:
                if self._unlisted(e):
                    self.call[i] = "refused"  # the model decides whether it should be
                    return out
                raise Divergence(f"{inst.label}: the server refused the idempotency key "
                                 f"{key[:40]!r} ({graph_inputs.measure(key)}): {e} (000: 8 "
                                 f"to 128 characters)") from None
            self._same_key_elsewhere(call)
            self.ticket[i] = [r.command_id for r in self.server.runs].index(ticket["command_id"])
            self.passed.setdefault(ticket["command_id"], call["arguments"])
            self.call[i] = "waiting"
        elif name == "lose_request":  # never reached the server: no implementation code
            self.attempts[a["i"]] += 1
            self.call[a["i"]] = "lost"
        elif name == "lose_response":
            self.call[a["i"]] = "lost"
        elif name == "answer_ticket":
            self.call[a["i"]] = "done"
        elif name == "lose_call_request":
            pass  # the call never reached the server
        elif name == "lose_get_reply":  # the server answered; the answer is held
            cid = self.server.runs[a["r"]].command_id
            self.held.setdefault(("get", cid), self.server.get_graph_run(AGENTS[0], cid))
        elif name in ("cancel_graph_run", "lose_cancel_reply") and "i" in a:
            run = self.server.runs[a["r"]]
            was_queued = run.status == "queued"
            got = self.server.cancel_graph_run(AGENTS[0], run.command_id)
            if name == "cancel_graph_run":
                self.view.cancelled(got)
            else:
                self.held.setdefault(("cancel", run.command_id), got)
            if was_queued:
                self.qcancel[a["r"]] = 1
        elif name == "get_graph_run" and "i" in a:
            run = self.server.runs[a["r"]]
            got = self.server.get_graph_run(AGENTS[0], run.command_id)
            out["read"] = self._read(run.command_id, got)
            self.view.read(got)
        elif name in ("get_graph_run", "cancel_graph_run"):
            target = self.cid(a["r"]) or self.unknown_id(a["r"])
            call = self.server.get_graph_run if name == "get_graph_run" else \
                self.server.cancel_graph_run
            try:
                call(AGENTS[a["a"] + 1], target)
                out["answer"] = "answered"
            except ToolError as e:
                out["answer"] = "not_found" if str(e) == NOT_FOUND else "access_denied"
        elif name == "tick":
            for payload in self._round():
                if payload["execution_id"] not in self.net:
                    self.net[payload["execution_id"]] = ("sent", payload)
        elif name == "sync":
            rid, cmds = self._sync()
            self.desktop.sync_reply(cmds, round=rid)
        elif name in ("sync_failed", "lose_sync_request"):
            self.desktop.sync_failed()
        elif name == "lose_sync_reply":  # the server acted; the desktop's call fails
            rid, cmds = self._sync()
            # no enabled project: no call was made, so no reply can come late
            self.late_reply = (rid, cmds) if rid is not None else None
            self.desktop.sync_failed()
        elif name == "lose_poll_request":
            pass  # the poll never reached the server: the Graph keeps running
        elif name == "lose_poll_reply":  # the server answered; the answer is dropped
            self.server.control(self._command(a["r"]).command_id)
        elif name in ("start_graph", "refuse"):
            c = self.desktop.next_command()
            if c is None or c.command_id != self.cid(a["r"]):
                raise Divergence(f"{inst.label}: the desktop's next command is "
                                 f"{c.command_id if c else None}")
            self._post(self.desktop.start_or_refuse(c))
            want = self.passed[c.command_id]
            if c.state == "running" and c.arguments != want:
                raise Divergence(f"{inst.label}: the desktop would run the Graph with the "
                                 f"arguments {c.arguments!r}, the agent passed {want!r}")
            if c.state == "running":
                self.classes.add("arguments: nested, non-ASCII, each intent its own")
            if c.state == "running":
                self.book.polled_now(c.command_id, self.desktop.clock.now())
        elif name in ("control_poll", "control_poll_clear"):  # every 3 s while it runs
            c = self._command(a["r"])
            now = self._at(self.book.polled.get(c.command_id, 0.0) + CONTROL_POLL)
            self._fires("control_poll", c.command_id, f"control poll for {c.command_id}")
            self.book.polled_now(c.command_id, now)
            self.desktop.control_poll(c, self.server.control(c.command_id))
            what = poll_arrives(name, c.state)
            if what:
                self._late_poll(c, what)
        elif name == "graph_finish":
            c = self._command(a["r"])
            status = OUTCOME.names[a["o"]]
            # the Graph's result, for the status its completion will carry (a stopped
            # Graph's is cancelled): a result may fill the completion to the limit exactly
            result, error = handed_over(self.result_for(
                a["r"], "cancelled" if c.state == "stopping" else status))
            self.finished_with[a["r"]], self.failed_with[a["r"]] = result, error
            payload = self.desktop.finish(c, status, result, FINISH["tokens"], FINISH["cost"],
                                          error)
            full = whole(c.command_id, payload["status"], result, FINISH["tokens"],
                         FINISH["cost"], error)
            self._post(payload, full)
            what = poll_arrives(name, c.state)
            if what:
                self._late_poll(c, what)
        elif name == "round_end":
            self.desktop.round_end()
        elif name in ("go_offline", "go_online"):
            self.desktop.set_online(name == "go_online")
        elif name == "deliver_post":
            cid = self.cid(a["r"])
            if self.server.runs[a["r"]].status not in ("completed", "failed", "cancelled"):
                self.accepted[cid] = self.net[cid][1]  # type: ignore[index]
            self.server.complete(self.net[cid][1])  # type: ignore[index]
            self.net[cid] = ("acked", self.net[cid][1])  # type: ignore[index]
        elif name in ("lose_post", "lose_ack"):
            cid = self.cid(a["r"])
            payload = self.net.pop(cid)[1]  # type: ignore[arg-type]
            self.held.setdefault(("post" if name == "lose_post" else "ack", cid),  # type: ignore[arg-type]
                                 payload)
        elif name == "late_post":
            self._late_post_step(inst.label, self.cid(a["r"]))  # type: ignore[arg-type]
        elif name == "late_ack":
            self._late_ack_step(inst.label, self.cid(a["r"]))  # type: ignore[arg-type]
        elif name == "receive_ack":
            cid = self.cid(a["r"])
            self._ack(cid)  # type: ignore[arg-type]
            self.net.pop(cid)  # type: ignore[arg-type]
        elif name == "toggle_project":
            p = project_of(a.get("p", 0))
            self.desktop.set_enabled(p, not self.desktop.enabled[p])
        elif name == "toggle_share":
            self.desktop.set_shared(not self.desktop.shared)
        elif name == "change_slug":
            k = self.slugs.index(self.desktop.slug)
            self.desktop.rename(self.slugs[(k + 1) % len(self.slugs)])
        else:
            raise Divergence(f"the harness does not know action {name}")
        return out

    def offers(self) -> set[str]:
        """What the desktop itself would do next (its own decisions, not the environment's):
        the labels of the model actions it would take now."""
        d = self.desktop
        out: set[str] = set()
        nxt = d.next_command()
        if nxt is not None:
            r = [x.command_id for x in self.server.runs].index(nxt.command_id)
            out.add(f"start_graph(r={r})" if d.consent(nxt) else f"refuse(r={r})")
        if d.online and not d.busy:
            out.add("tick")
        return out

    #: the 20 s timer fires whether or not a round may start (000: it skips the round
    #: while the last one is busy), and the loop asks whether its round is over after
    #: every step
    IDLE = ("tick", "round_end")

    def _round(self) -> list[dict[str, Any]]:
        """What starts a round, as the model's tick: right after the owner changed sharing,
        the change (now); otherwise the 20 s timer, when 000 says it is due.  Returns the
        completions the desktop re-sends."""
        if self.shared_just_now:
            # the implementation counts its next round from this one (not from the timer's
            # last): the book does too, 000 says nothing either way
            self.book.ticked_now(self.desktop.clock.now())
            return self.desktop.sharing_changed()
        self.book.ticked_now(self._at(self.book.ticked + RELAY_ROUND))
        self._fires("round", None, "relay round")
        return self.desktop.tick()

    def _fires(self, kind: str, ref: str | None, what: str) -> None:
        """The clock reached 000's instant for ``what``: the desktop's own timer must fire
        now (the harness only carries what the desktop asks for), else it never would."""
        if (kind, ref) in self.desktop.due_now():
            return
        armed = any((k, r) == (kind, ref) for _, k, r in self.desktop.timers())
        raise Divergence(f"{what} is due at {self.desktop.clock.now():g} s (000) and the "
                         + ("desktop's timer for it does not fire" if armed else
                            f"desktop armed no {what} timer") + ": it would never happen")

    def idle(self, event: str) -> str | None:
        d = self.desktop
        phase = d.phase
        if event == "tick":
            what = "the owner changed sharing" if self.shared_just_now else \
                "the 20 s timer fired"
            posts = self._round()
            # the next event comes a moment later: at the timer's own instant a count
            # restarted elsewhere (at the round's end, say) would look right
            self._at(d.clock.now() + 1.0)
            if posts or d.phase != phase:
                why = f"the round was busy ({phase})" if phase != "idle" else \
                    "the desktop was offline"
                sent = f", re-sending {len(posts)} completion(s)" if posts else ""
                return (f"{what} while {why} and the desktop started a round "
                        f"({phase} -> {d.phase}{sent}) where the model skips it")
        elif event == "round_end":
            if d.round_end() or d.phase != phase:
                running = [c.command_id for c in d.executing()]
                return (f"the desktop ended its round ({phase} -> {d.phase}) where the model "
                        f"does not" + (f": a Graph still runs ({running[0]})" if running else ""))
        else:
            raise ValueError(f"graph-relay has no idle event {event!r} (it has "
                             f"{', '.join(self.IDLE)})")
        return None

    # the abstraction function ------------------------------------------------------
    def abstract(self) -> tuple:
        c = self.c
        runs = self.server.runs
        st: dict[str, Any] = {
            "call": [CALL.names.index(x) for x in self.call],
            "attempts": list(self.attempts),
            "ticket": list(self.ticket),
            "status": [], "key": [], "slug": [], "flag": [], "result": [], "qcancel": [],
            "online": int(self.desktop.online),
            "phase": PHASE.names.index(self.desktop.phase),
            "exec": [], "outcome": [], "outbox": [], "post": [],
            "enabled": [int(self.desktop.enabled[project_of(p)]) for p in range(c.projects)],
            "shared": int(self.desktop.shared), "proj": [],
            "cur_slug": self.slugs.index(self.desktop.slug),
        }
        if c.listing:
            st["listed"], st["up_slug"] = self._listing()
        if len(runs) > c.runs:
            raise Divergence(f"the implementation holds {len(runs)} runs where the model allows "
                             f"{c.runs}: more than one run for an idempotency key (A1)")
        for r in range(c.runs):
            run = runs[r] if r < len(runs) else None
            st["status"].append(STATUS.names.index(run.status) if run else STATUS.none)
            k = self._key_index(r, run.key) if run else c.no_key
            if run is not None and k >= c.keys:
                raise Divergence(f"run {r} was started with key {run.key!r}, which the model's "
                                 f"client never sends: a fresh key on a retry (A1)")
            st["key"].append(k)
            st["slug"].append(self.slugs.index(run.slug) if run and run.slug in self.slugs else 0)
            st["flag"].append(int(run.cancel_flag) if run else 0)
            st["proj"].append([project_of(p) for p in range(c.projects)].index(run.project_id)
                              if run else 0)
            # the server's own record of the accepted completion (what get_graph_run reads)
            st["result"].append(int(run is not None and run.command_id in self.accepted and
                                    run.completion is not None))
            st["qcancel"].append(self.qcancel[r])
            cmd = self.desktop.commands.get(run.command_id) if run else None
            st["exec"].append(EXEC.names.index(cmd.state) if cmd else EXEC.none)
            st["outcome"].append(OUTCOME.names.index(cmd.outcome) if cmd and cmd.outcome
                                 else OUTCOME.none)
            st["outbox"].append(int(run is not None and run.command_id in self.desktop.outbox))
            net = self.net.get(run.command_id) if run else None
            st["post"].append(POST.names.index(net[0]) if net else POST.none)
        return self.flatten(st)

    def _listing(self) -> tuple[list[int], list[int]]:
        """The server's session list as the model's ``listed`` and ``up_slug``, read as an
        agent reads it (list_graph_sessions): per project, its own session listed or not,
        and the slug listed with it (0 while unlisted)."""
        listed, slugs = [], []
        for p in range(self.c.projects):
            got = self.server.list_graph_sessions(project_of(p))["sessions"]
            mine = [x for x in got if x.get("graph_session_id") == session_of(p)]
            if len(got) > len(mine):
                raise Divergence(f"list_graph_sessions({project_of(p)}) lists "
                                 f"{[x.get('graph_session_id') for x in got]}: a session no "
                                 f"sync of that project uploaded")
            slug = mine[0].get("slug") if mine else None
            if mine and slug not in self.slugs:
                raise Divergence(f"list_graph_sessions({project_of(p)}) lists the session "
                                 f"with the slug {slug!r}, which it never had")
            listed.append(int(bool(mine)))
            slugs.append(self.slugs.index(slug) if mine else 0)
        return listed, slugs

    def restore(self, snap: Any) -> None:
        late = self.late  # what was tried stays tried, whatever state the tour goes back to
        super().restore(snap)
        self.late = late

    def reopen(self) -> None:
        """Close the outbox database and open it again (a crash of the storage, the
        desktop's restart); the answers lost before it arrive late, after it."""
        self.desktop.reopen()
        self._late_answers("a restart")

    def close(self) -> None:
        self.desktop.outbox.close()

    def advance(self, seconds: float) -> None:
        self.desktop.clock.advance(seconds)
        self.shared_just_now = False  # what fires now is the timer

    def due(self) -> list[str]:
        """The desktop's timers are model actions it decides itself (tick, control poll)."""
        return []
