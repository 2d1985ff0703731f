"""Drive an implementation that runs in another process, through its adapter.

:class:`Adapter` owns the process and speaks the protocol (one request, one reply,
each checked against the schema, a timeout on every reply); :class:`ExternalHarness`
is a harness like the in-process ones of ``osf_check.fuzz``, so the tour, the
Hypothesis walks, shrinking and replay drive an adapter exactly as they drive the
Python reference implementation; :class:`External` builds those harnesses on one
adapter process, reset between runs.

An adapter that cannot snapshot is brought back to a state by ``reset`` and the steps
that led there (the tour's snapshots are taken at the end of shortest paths, so this
is slower, never less complete).
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import subprocess
import tempfile
import threading
from typing import Any, Callable, Sequence

from osf_check.models.dsl import ActionInstance, Model
from osf_check.fuzz.graph_harness import FINISH, read_answer
from osf_check.fuzz.harness import Divergence, IdleEvents
from osf_check.fuzz.late import (FIRST_KINDS, LATE, LOST_BY, MODELS, RESTART, STEPS, TAKES,
                                 arrives, named, poll_arrives, sync_arrives, went_back)
from osf_check.fuzz.oracles import posted_bounded
from osf_check.fuzz.payloads import chosen, step_data
from osf_check.models.graph_relay.vocab import OUTCOME
from osf_check.models.errors import BadValue
from osf_check.scratch import memory_dir

from .protocol import VERSION, AdapterError, problem, quote


def decides(model: str) -> tuple[str, ...]:
    """The model actions that are the implementation's own decisions, checked against the
    adapter's offers (the in-process harnesses' own list)."""
    return getattr(_harness_of(model), "DECIDES", ())


def own_steps(model: str) -> tuple[str, ...]:
    """The model actions an implementation of ``model`` may take by itself inside
    another step, unannounced (the in-process harnesses' own list)."""
    return getattr(_harness_of(model), "OWN", ())


def idle_events(model: str) -> tuple[str, ...]:
    """The environment's idle events of ``model`` (the in-process harnesses' own list)."""
    return getattr(_harness_of(model), "IDLE", ())


def late_kinds(model: str) -> tuple[str, ...]:
    """The answers ``model``'s network may lose and deliver late (``fuzz.late.LATE``'s
    kinds)."""
    return MODELS.get(model, ())


#: the steps that bring a completion POST to the server (on time, or a copy given up)
_POSTS = ("deliver_post", "late_post")


def late_steps(model: str) -> tuple[str, ...]:
    """The model steps of ``model`` that deliver a lost copy where it changes something
    (``fuzz.late.TAKES``): offered only to an adapter with the ``late_steps`` capability."""
    return STEPS.get(model, ())


def skipped_steps(model: str, capabilities: frozenset[str]) -> tuple[str, ...]:
    """The model steps of ``model`` an adapter with ``capabilities`` is never asked to
    take: the late steps, unless it announces ``late_steps``.

    >>> skipped_steps("graph-relay", frozenset({"late"}))
    ('late_post', 'late_ack')
    >>> skipped_steps("graph-relay", frozenset({"late_steps"})), skipped_steps("wire-relay", frozenset())
    ((), ())
    """
    return () if "late_steps" in capabilities else late_steps(model)


def _harness_of(model: str) -> type | None:
    from osf_check.fuzz.graph_harness import GraphHarness
    from osf_check.fuzz.wire_harness import WireHarness
    return {"graph-relay": GraphHarness, "wire-relay": WireHarness}.get(model)


#: how much of the end of an adapter's stderr a crash report shows: a runtime's crash
#: ends with the error and its stack, then a banner (Node prints "Node.js v20"), so the
#: last line alone says nothing; a few lines, within a budget of characters
TAIL_LINES, TAIL_CHARS = 8, 800


def stderr_tail(text: str) -> str:
    """The end of what an adapter wrote on stderr, as a crash report closes: its last
    non-blank lines (up to :data:`TAIL_LINES`, each cut at 160 characters, the lot
    within :data:`TAIL_CHARS`, the last line always), on one line, ``⏎`` between
    them; empty when it wrote nothing.

    >>> print("crashed" + stderr_tail("starting\\nError: boom\\n    at main (a.mjs:3)\\n\\nNode.js v20"))
    crashed; the end of its stderr (4 lines): starting ⏎ Error: boom ⏎ at main (a.mjs:3) ⏎ Node.js v20
    >>> stderr_tail("") == stderr_tail("\\n  \\n")  == ""
    True
    """
    kept = [quote(x.strip()) for x in text.splitlines() if x.strip()]
    tail: list[str] = []
    for line in reversed(kept[-TAIL_LINES:]):
        if tail and sum(len(x) + 3 for x in tail) + len(line) > TAIL_CHARS:
            break
        tail.insert(0, line)
    if not tail:
        return ""
    n = f"last {len(tail)} of {len(kept)} lines" if len(kept) > len(tail) else \
        f"{len(tail)} line{'s' if len(tail) > 1 else ''}"
    return f"; the end of its stderr ({n}): " + " ⏎ ".join(tail)


class Adapter:
    """An adapter process: ``request`` sends one message and returns its checked reply."""

    def __init__(self, command: str | Sequence[str], *, timeout: float = 10.0):
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise BadValue("--impl is empty: give the command that starts the adapter")
        self.command = " ".join(argv)
        self.timeout = timeout
        self._err = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        # the adapter's scratch room, removed here when it ends: an adapter killed for
        # hanging cannot remove its own files; our pid in its name says whose room it is
        self.scratch = tempfile.mkdtemp(prefix=f"osf-adapter-{os.getpid()}-", dir=memory_dir())
        env = {**os.environ, "OSF_CHECK_SCRATCH": self.scratch}
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._err, text=True, encoding="utf-8",
                                         bufsize=1, env=env)
        except OSError as e:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise BadValue(f"cannot start the adapter {self.command!r}: {e.strerror or e}") \
                from None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next = 0
        self.capabilities: frozenset[str] = frozenset()
        #: the kinds of late answers it delivers (capability late)
        self.late_kinds: frozenset[str] = frozenset()
        self.implementation = ""
        self.requests: dict[str, int] = {}  # how many of each type were sent
        self.broken = False  # it failed once: no more requests, not even bye

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                self._lines.put(line)
        except (OSError, ValueError):  # closed by close() while it read: the end too
            pass                       # (an adapter killed mid-flood, say)
        self._lines.put(None)

    def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        try:
            return self._request(kind, **fields)
        except AdapterError:
            self.broken = True
            raise

    def _request(self, kind: str, **fields: Any) -> dict[str, Any]:
        from .protocol import parse_reply
        msg = {"type": kind, "id": self._next, **fields}
        self._next += 1
        what = f"{kind} {fields['label']}" if "label" in fields else kind
        why = problem(msg, kind)
        if why is not None:  # ours to get right: a bug in osf-check, not in the adapter
            raise RuntimeError(f"osf-check built an invalid {kind} request: {why}")
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(msg) + "\n")  # ASCII: a lone half of a pair too
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            # what it wrote before it went says more than its exit status ('echo garbage')
            line = self._left_behind()
            if line is not None:
                parse_reply(line, msg)  # raises, quoting the line, unless it reads as a reply
            raise self._crashed(what) from None
        self.requests[kind] = self.requests.get(kind, 0) + 1
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise AdapterError("hung", f"the adapter did not answer {what} within "
                                       f"{self.timeout:g} s") from None
        if line is None:
            raise self._crashed(what)
        return parse_reply(line, msg)

    def _left_behind(self) -> str | None:
        """The first line a gone adapter wrote that nobody read, if any."""
        self._reader.join(timeout=2)
        try:
            return self._lines.get_nowait()
        except queue.Empty:
            return None

    def _crashed(self, what: str) -> AdapterError:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self._err.seek(0)
        status = f"exit status {code}" if code is not None else "closed its stdout"
        return AdapterError("crashed", f"the adapter stopped answering at {what} "
                                       f"({status}){stderr_tail(self._err.read())}")

    def greet(self, model: Model, seed: int) -> None:
        reply = self.request("hello", protocol=VERSION, model=model.name,
                             params=dict(model.params), seed=seed)
        self.capabilities = frozenset(reply["capabilities"])
        self.implementation = reply["implementation"]
        if "late" in self.capabilities:  # an adapter that lists none has the first ones
            self.late_kinds = frozenset(reply.get("late_kinds", FIRST_KINDS))

    def close(self) -> None:
        if self.proc.poll() is None and not self.broken:
            try:
                self.request("bye")
            except (AdapterError, RuntimeError):
                pass
        if self.broken and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                try:
                    f.close()
                except OSError:  # pragma: no cover
                    pass
        self._reader.join(timeout=5)
        try:  # after bye it exits; its room goes once it has
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.scratch, ignore_errors=True)
        self._err.close()


class ExternalHarness(IdleEvents):
    """A harness whose implementation is an adapter process (see ``fuzz.harness``)."""

    def __init__(self, adapter: Adapter, model: Model,
                 result_for: Callable[[int, str], Any] | None = None):
        self.adapter = adapter
        self.model = model
        self.DECIDES = decides(model.name)
        # sent only to an adapter that says it can take them
        self.IDLE = idle_events(model.name) if "idle" in adapter.capabilities else ()
        #: the steps the implementation may take unannounced within another (capability
        #: steps): the checker looks for them between two observations
        self.hides = own_steps(model.name) if "steps" in adapter.capabilities else ()
        #: the model steps it is never asked to take (the fuzzer's model leaves them out)
        self.skips = skipped_steps(model.name, adapter.capabilities)
        self.result_for = result_for or (lambda r, status: "done")
        self.violations: list[str] = []
        self.path: list[tuple[str, dict[str, Any]]] = []  # the requests since reset
        #: the owner changed sharing in the last step (as the in-process harness keeps it)
        self.shared_just_now = False
        #: graph-relay: per run, the completion last posted and the one the server took
        self.posted: dict[int, Any] = {}
        self.accepted: dict[int, Any] = {}
        #: capability late: the answers the model's network lost, (kind, run), the first of
        #: each kept by the adapter; and the runs whose outbox let the completion go on a 2xx
        self.held: list[tuple[str, int]] = []
        self.acked: set[int] = set()
        #: a sync reply was lost: the adapter delivers the last one late after every step
        self.sync_lost = False
        #: the kinds of late answers asked for: the model's that the adapter delivers
        self.kinds = frozenset(getattr(adapter, "late_kinds", FIRST_KINDS)) & \
            frozenset(late_kinds(model.name)) if "late" in adapter.capabilities else frozenset()
        #: the late deliveries the adapter made, each named by its answer and what it came
        #: after (the report's "late answers tried")
        self.late: set[str] = set()
        self._take(adapter.request("reset"))

    def _take(self, reply: dict[str, Any]) -> dict[str, Any]:
        self.reply = reply
        self._took: list[str] | None = None
        self._state: tuple | None = None
        self.violations.extend(reply.get("violations", ()))
        return reply

    def _step(self, msg: dict[str, Any], kind: str = "step") -> dict[str, Any]:
        reply = self._take(self.adapter.request(kind, **msg))
        self.path.append((kind, msg))
        return reply

    def apply(self, inst: ActionInstance) -> dict[str, Any]:
        if inst.name in self.skips:  # a trace replayed from elsewhere, say
            raise BadValue(f"the adapter cannot be asked to take {inst.label}: its welcome "
                           "does not announce the late_steps capability")
        msg: dict[str, Any] = {"action": inst.name, "args": dict(inst.args), "label": inst.label}
        data = chosen(self.model, inst.name, dict(inst.args))
        if inst.name == "tick" and self.shared_just_now:
            data["cause"] = "sharing"  # the round the owner's change starts
        if inst.name == "graph_finish":  # what the Graph produced is the harness's choice
            # (the status the Graph ends with: the adapter's relay may post it cancelled)
            data.update(step_data(self.result_for(inst.args["r"],
                                                  OUTCOME.names[inst.args["o"]])))
        if data:
            msg["data"] = data
        status = self._status(inst)
        reply = self._step(msg)
        self._took = reply.get("took")
        self.shared_just_now = inst.name == "toggle_share"
        outputs = dict(reply.get("outputs", {}))
        if self.model.name == "graph-relay":
            self._completions(inst, status, reply, outputs)
        self._lost(inst)
        if inst.name == "graph_finish":  # A8, judged here on the payload the adapter sent
            sent = [{"post": p} for r, p in self._posts(inst, reply) if r == inst.args["r"]]
            if "state" in reply and not sent:
                # the model posts the completion in this step: without its payload A8
                # would hold unjudged, for any adapter that leaves `sent` out
                raise AdapterError("malformed", f"the adapter's answer to {inst.label} reports "
                                   "no completion in sent (a {\"post\": payload}), so A8 "
                                   "cannot be judged on what the implementation posted")
            self.violations.extend(posted_bounded(sent, msg["data"]["result"],
                                                  FINISH["tokens"], FINISH["cost"],
                                                  msg["data"].get("error")))
        self._deliver_late(inst.name, inst)
        return outputs

    def _lost(self, inst: ActionInstance) -> None:
        """Note the answer ``inst`` lost (kept by the adapter), or the 2xx it delivered."""
        kind = LOST_BY.get(inst.name)
        if kind == "sync":
            self.sync_lost = True
        elif kind is not None and (kind, inst.args["r"]) not in self.held:
            self.held.append((kind, inst.args["r"]))
        elif inst.name in ("receive_ack", "late_ack"):
            self.acked.add(inst.args["r"])
        if inst.name in TAKES:
            self._taken(inst.name, inst.args["r"])

    def _taken(self, step: str, r: int) -> None:
        """A copy the step ``step`` delivered is no longer held (the adapter delivered it,
        and never delivers it again); the 2xx a late POST earns is lost in turn."""
        self.held = [x for x in self.held if x != (TAKES[step], r)]
        if step == "late_post" and ("ack", r) not in self.held:
            self.held.append(("ack", r))

    def _deliver_late(self, after: str, inst: ActionInstance | None = None) -> None:
        """Capability late: the adapter delivers each answer that may arrive now after
        ``after`` (the step ``inst``'s name, or a restart), by the rules of ``fuzz.late``
        and in the in-process harness's order: a control poll's answer "cancelled" once
        the step stopped or ended the run's Graph, the last lost sync reply, then each held
        answer of a run.  The model has them lost, so the implementation must change
        nothing: its state and offers as before, and the agent's view of no run taken
        back.  One answer a request, so that a change is named by the answer that made it.
        Only the kinds the adapter delivers are asked for."""
        if not self.kinds or "state" not in self.reply:
            return
        shown = self.model.show_state(self.abstract())
        if inst is not None and "poll" in self.kinds and "r" in inst.args:
            what = poll_arrives(inst.name, shown["exec"][inst.args["r"]])
            if what:
                self._late_one("poll", inst.args["r"], f"the Graph {what}")
        if self.sync_lost and "sync" in self.kinds and sync_arrives(after):
            self._late_one("sync", None, after)
        status = shown.get("status", [])
        for kind, r in self.held:
            if kind in self.kinds and r < len(status) and \
                    arrives(kind, status[r], r in self.acked):
                self._late_one(kind, r, after)

    def _late_one(self, kind: str, r: int | None, after: str) -> None:
        msg = {"after": after, "answers": [{"kind": kind} if r is None else {"kind": kind, "r": r}]}
        reply = self.adapter.request("late", **msg)
        self.path.append(("late", msg))
        odd = [x for x in reply.get("delivered", ()) if x != named(kind, after)]
        if odd:
            raise AdapterError("malformed", f"the adapter's answer to late lists a delivery "
                                            f"it was not asked for: {quote(odd[0])}")
        self.late.update(reply.get("delivered", ()))
        self.violations.extend(reply.get("violations", ()))  # the adapter's own checks
        self.violations += [f"{_came(kind, r, after)}, {why}" for why in self._late_changes(reply)]

    def _late_changes(self, late: dict[str, Any]) -> list[str]:
        """What a late delivery changed that it must not: the state, the offers, and the
        agent's view of each run (``known``, where the adapter reports it)."""
        out = []
        if "state" not in late:
            return out
        try:
            after = self.model.parse_state(late["state"])
        except BadValue as e:
            raise AdapterError("malformed", f"the adapter's state after late is not a state of "
                                            f"{self.model.name} ({e})") from None
        if after != self.abstract():
            out.append("changed " + "; ".join(
                f"{n} from {self.model.slot_domains[i].show(x)} to "
                f"{self.model.slot_domains[i].show(y)}"
                for i, (n, x, y) in enumerate(zip(self.model.slot_names, self.abstract(), after))
                if x != y) + " where the model has it lost: it must change nothing")
        if sorted(late["offers"]) != sorted(self.reply["offers"]):
            out.append(f"changed what the implementation would do next from "
                       f"{sorted(self.reply['offers'])} to {sorted(late['offers'])}")
        was, now = self.reply.get("known", {}), late.get("known", {})
        out += [why for cid in sorted(set(was) | set(now))
                if (why := went_back(was.get(cid), now.get(cid)))]
        return out

    def _posts(self, inst: ActionInstance, reply: dict[str, Any]) -> list[tuple[int, Any]]:
        """The completions the step posted, each with its run: ``sent`` lists them in the
        order of the model steps taken (the one asked for, then ``took``'s), and each step
        that posts (a Graph's end, a refusal) posted one."""
        by_label = {i.label: i for i in self.model.instances}
        steps = [inst, *(by_label[x] for x in (reply.get("took") or [])[1:] if x in by_label)]
        runs = [i.args["r"] for i in steps if i.name in ("graph_finish", "refuse")]
        posts = [m["post"] for m in reply.get("sent", []) if "post" in m]
        if "r" in inst.args and len(runs) < len(posts):  # a step that posted more: its run's
            runs += [inst.args["r"]] * (len(posts) - len(runs))
        return list(zip(runs, posts))

    def _status(self, inst: ActionInstance) -> str | None:
        """Run r's status on the server before a deliver_post(r) or a late_post(r): whether
        it accepts."""
        if inst.name not in _POSTS:
            return None
        return self.model.show_state(self.abstract())["status"][inst.args["r"]]

    def _completions(self, inst: ActionInstance, status: str | None, reply: dict[str, Any],
                     outputs: dict[str, Any]) -> None:
        """A11, judged here: the completion posted for each run, the one the server
        accepted, and what get_graph_run answered the run's agent (``{"answer": …}`` in
        ``sent``; its ``read`` output follows from it)."""
        r = inst.args.get("r")
        sent = reply.get("sent", [])
        for run, payload in self._posts(inst, reply):
            self.posted[run] = payload
        if inst.name in _POSTS and \
                status not in ("completed", "failed", "cancelled"):
            self.accepted[r] = self.posted.get(r)
        answers = [m["answer"] for m in sent if isinstance(m.get("answer"), dict)]
        if inst.name == "get_graph_run" and "i" in inst.args and answers:
            read, why = read_answer(self.accepted.get(r), answers[0])
            outputs.setdefault("read", read)
            if why:
                self.violations.append(why)

    def took(self) -> list[str] | None:
        """The model steps the adapter says the last step took, if it said."""
        return self._took

    def abstract(self) -> tuple:
        if "state" not in self.reply:  # the adapter says why there is none
            raise Divergence(self.reply["violations"][0])
        if self._state is None:
            try:
                self._state = self.model.parse_state(self.reply["state"])
            except BadValue as e:
                raise AdapterError("malformed", f"the adapter's state is not a state of "
                                                f"{self.model.name} ({e}): "
                                                f"{quote(json.dumps(self.reply['state']))}") \
                    from None
        return self._state

    def offers(self) -> set[str]:
        return set(self.reply["offers"])

    def idle(self, event: str) -> str | None:
        """Through the adapter (capability ``idle``): the implementation must change
        nothing, its observed state the same and nothing sent."""
        before, seen = self.abstract(), len(self.violations)
        cause = {"cause": "sharing"} if event == "tick" and self.shared_just_now else {}
        reply = self._step({"event": event, **cause}, "idle")
        if len(self.violations) > seen:
            return self.violations[seen]
        sent = reply.get("sent", [])
        after = self.abstract()
        if after == before and not sent:
            return None
        differ = [n for n, x, y in zip(self.model.slot_names, before, after) if x != y]
        did = " and ".join(([f"changed {', '.join(differ)}"] if differ else []) +
                           ([f"sent {len(sent)} message(s)"] if sent else []))
        return (f"the idle event {event} (where the model does not take {event}) reached the "
                f"implementation and it {did}, where it must change nothing")

    def due(self) -> list[str]:
        return list(self.reply.get("due", ()))

    def snapshot(self) -> Any:
        token = self.adapter.request("snapshot")["snapshot"] \
            if "snapshot" in self.adapter.capabilities else None
        return (token, list(self.path), list(self.violations), self.reply,
                self.shared_just_now, dict(self.posted), dict(self.accepted),
                list(self.held), set(self.acked), self.sync_lost)

    def restore(self, snap: Any) -> None:
        (token, path, violations, reply, self.shared_just_now, posted, accepted, held, acked,
         self.sync_lost) = snap
        if token is not None:
            self._take(self.adapter.request("restore", snapshot=token))
        else:  # no snapshots: back to the state by its path from reset
            self._take(self.adapter.request("reset"))
            self.path = []
            for kind, msg in path:
                self._step(msg, kind)
        self.path, self.violations = list(path), list(violations)
        self.posted, self.accepted = dict(posted), dict(accepted)
        self.held, self.acked = list(held), set(acked)

    def forget(self, snap: Any) -> None:
        if snap[0] is not None:
            self.adapter.request("drop", snapshot=snap[0])

    def reopen(self) -> None:
        """A storage crash, where the adapter can have one (otherwise nothing happens)."""
        if "reopen" in self.adapter.capabilities:
            self._take(self.adapter.request("reopen"))
            self._deliver_late(RESTART)

    def advance(self, seconds: float) -> None:
        self.shared_just_now = False  # what fires now is the timer
        if "clock" in self.adapter.capabilities:
            self._take(self.adapter.request("advance", seconds=seconds))

    def close(self) -> None:
        """The adapter stays up for the next run (it is reset then)."""


def _came(kind: str, r: int | None, after: str) -> str:
    """A late delivery as a finding names it (as the in-process harness does: a change a
    control poll's answer makes once the Graph ended breaks A3)."""
    if kind == "sync":
        return f"a sync reply, lost earlier and delivered late after {after}"
    if kind == "poll":
        a3 = "property A3 violated by the implementation: " if after.endswith("ended") else ""
        return f"{a3}a control poll's late answer (cancelled) for run {r}, delivered after {after}"
    return f"{LATE[kind]} for run {r}, lost earlier and delivered late after {after}"


class External:
    """Harnesses on one adapter process: a callable with :func:`fuzz.driver.make_harness`'s
    signature (the mutant is the adapter's business, not the harness's)."""

    def __init__(self, command: str | Sequence[str], *, timeout: float = 10.0):
        self.command = command
        self.timeout = timeout
        self.adapter: Adapter | None = None
        self._for: tuple | None = None
        #: what the adapter called itself and what it can do (kept once it is stopped)
        self.implementation: str | None = None
        self.capabilities: frozenset[str] = frozenset()
        self.late_kinds: frozenset[str] = frozenset()

    def __call__(self, model: Model, mutant: str | None, tmpdir: str | None, seed: int = 0,
                 result_for: Callable[[int, str], Any] | None = None) -> ExternalHarness:
        return ExternalHarness(self._greeted(model, seed), model, result_for)

    def skips(self, model: Model, seed: int = 0) -> tuple[str, ...]:
        """The steps of ``model`` this adapter is never asked to take (see
        :func:`skipped_steps`): the fuzzer drives it through the model without them."""
        return skipped_steps(model.name, self._greeted(model, seed).capabilities)

    def _greeted(self, model: Model, seed: int) -> Adapter:
        """The adapter process for ``model`` at its parameters and ``seed``: the one
        running, or a new one once it said hello (what it can do is known from then)."""
        key = (model.name, tuple(sorted(model.params.items())), seed)
        if self.adapter is None or self._for != key:
            self.close()
            self.adapter = Adapter(self.command, timeout=self.timeout)
            self.adapter.greet(model, seed)
            self._for = key
            self.implementation = self.adapter.implementation
            self.capabilities = self.adapter.capabilities
            self.late_kinds = self.adapter.late_kinds
        return self.adapter

    def close(self) -> None:
        if self.adapter is not None:
            self.adapter.close()
            self.adapter = None

    def __enter__(self) -> "External":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def python_command(module: str, *args: str) -> list[str]:
    """The command that runs a Python adapter module with this interpreter."""
    import sys
    return [sys.executable, "-m", module, *args]


__all__ = ["Adapter", "AdapterError", "External", "ExternalHarness", "python_command",
           "decides", "idle_events", "late_kinds", "late_steps",
           "own_steps", "skipped_steps"]
