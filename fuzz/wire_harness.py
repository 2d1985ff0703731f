"""Drive the wire implementation (``relay.wire``) by the wire-relay model's actions.

The harness plays the phones and the network around the two sans-I/O cores (the
relay router and the desktop router) and runs the desktop's handlers;
:meth:`WireHarness.apply` performs one model action instance, and
:meth:`WireHarness.abstract` is the abstraction function: the implementation's state
as a state of the model.  Clock actions fire the implementation's own timers, each
at its own deadline.
"""

from __future__ import annotations

import copy
import pickle
import sqlite3
from typing import Any

from osf_check.models.dsl import ActionInstance, Model
from osf_check.models.wire_relay.vocab import ANS, MEM, OUTBOX, PH, PST, ROW, STAGE
from osf_check.relay.clock import ManualClock
from osf_check.relay.wire.app import DesktopApp
from osf_check.relay.wire.desktop_router import DesktopRouter
from osf_check.relay.wire.envelope import outbox_params
from osf_check.relay.wire.errors import DESKTOP
from osf_check.relay.wire.idempotency import Scope
from osf_check.relay.wire.phone import Phone
from osf_check.relay.wire.relay_router import Client, RelayRouter, ToDesktop, ToPhone

from . import mutants, wire_expiry, wire_inputs, wire_traffic
from .deadlines import Late, WireBook
from .harness import Divergence, HarnessBase, probed_once
from .oracles import HEAVY_SAMPLE, HEAVY_SLOTS, LIGHT_SAMPLE, LIGHT_SLOTS, REGISTRATIONS, \
    FINAL_CLASSES, RELEASES_COMPLETED, REPLAY_SAFE, key_classes, shape_problem, wire_answer

USER, DESK, SESSION = "user-1", "desk-1", "s-1"
IMPL_MUTANTS = mutants.names("wire-relay")
#: wire-relay.md: the durable claim's lease (never extended) and the rows' retention
from osf_check.relay.constants import LEASE, RETENTION  # noqa: E402


def ans_of(answer: dict[str, Any] | None) -> str:
    """An answer as the model's ANS value (decoded from the spec, :mod:`osf_check.fuzz.oracles`)."""
    return wire_answer(answer)


#: the errors a handler may end with, per outcome of the model's ``execute``: every final
#: class 004 names but conflict (the model's own answer), and for one the phone may send
#: again, the retryable flag ("alles mit retryable-Kennzeichen sind wiederholbar") on a
#: retryable class and on classes that are otherwise ambiguous (internal, database,
#: foreign service).  (A parse error is retryable in the replay store, but the model's
#: phone sends a retryable answer's request again, which for an unreadable one cannot help.)
HANDLER_ERRORS = {
    "final_error": tuple((k, False) for k in sorted(FINAL_CLASSES - {"conflict"})),
    "retryable_error": (("unavailable", True), ("database", True), ("internal", True),
                        ("foreign_service", True)),
}
#: the handlers' messages: ASCII, German with umlauts, and one past the BMP
_MESSAGES = ("{k}", "Vorgang abgelehnt: {k} (Prüfung fehlgeschlagen)", "{k} 😀")


def handler_failure(outcome: str, n: int) -> dict[str, Any]:
    """The ``n``-th error a handler ends with for the model's ``outcome``
    (``final_error`` or ``retryable_error``): its class (004's name), message and
    retryable flag.  The class's number is the implementation's own.

    >>> handler_failure("retryable_error", 2)
    {'kind': 'internal', 'message': 'internal 😀', 'retryable': True}
    """
    choices = HANDLER_ERRORS[outcome]
    kind, retryable = choices[n % len(choices)]
    message = _MESSAGES[n % len(_MESSAGES)].format(k=kind.replace("_", " "))
    return {"kind": kind, "message": message, "retryable": retryable}


def _deny_writes(action: int, *args: Any) -> int:
    """An SQLite authorizer that refuses every write: the disk is full."""
    return sqlite3.SQLITE_DENY if action in (sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_INSERT,
                                             sqlite3.SQLITE_DELETE) else sqlite3.SQLITE_OK



def _named(prefix: str, n: int) -> str:
    """The key or text numbered ``n``; an even one ends in a character of four UTF-8
    bytes (two UTF-16 code units, one code point), so that every path the phone's text
    takes measures and stores one.  (Not half a surrogate pair: the relay and the desktop
    are Rust, which reads no frame holding one; the relay refuses such a frame, tested
    on the implementation alone.  Request ids stay plain: a log mapping names requests
    by id.)

    >>> _named("op-key-", 1), _named("op-key-", 0)
    ('op-key-1', 'op-key-0😀')
    """
    return f"{prefix}{n}" + ("" if n % 2 else "😀")

def op_params(op: Any) -> dict[str, Any]:
    """The params an operation of the workload sends (its text numbered by the model)."""
    if op.method == OUTBOX:
        return outbox_params(SESSION, f"op-{op.phone}-{op.key}",
                             text=_named("message ", op.params))
    return {"profileId": _named("profile-", op.params)}


def op_key(op: Any) -> str:
    """The operation key the phone makes an operation's idempotency key from."""
    return _named("op-key-", op.key)


#: the data probes' outcome per model object (one run: the tour, the goals at one set of
#: parameters, the walks) and implementation (see probe_data)
_PROBED: dict[tuple, tuple[Any, Any]] = {}


class WireHarness(HarnessBase):
    STORE = "claims"
    #: whether the data probes (fuzz.wire_inputs) run at the first forwarded request; a
    #: walk that records a deployment's log turns them off (no deployment logs them)
    probes = True
    #: the model actions that are the desktop's own decisions (checked against offers())
    DECIDES = ("claim", "join_answer", "join_orphaned")
    #: the steps an implementation may take by itself within another, unannounced
    OWN = DECIDES

    def __init__(self, model: Model, claims_path: str, mutant: str | None = None, seed: int = 0):
        self.model = model
        self.c = c = model.constants["ctx"]
        self.mutant = mutant
        self.mu = mu = mutants.lookup("wire-relay", mutant)
        self.relay = mutants.build(mu, "relay", RelayRouter, limits={
            "client": c.lim_client, "desktop": c.lim_desktop, "user": c.lim_user,
            "process": c.lim_process})
        self.path = claims_path
        self.desktop = self._open_desktop()
        self.app = mutants.build(mu, "app", DesktopApp, sessions={SESSION: None})
        self.clock = ManualClock()
        self.relay.connect_desktop(USER, DESK)
        self.phones = {p: mutants.build(mu, "phone", Phone, f"phone-{p}")
                       for p in sorted({op.phone for op in c.ops})}
        n = len(c.ops)
        self.ph, self.tries = ["idle"] * n, [0] * n
        self.ans, self.nfinal = ["none"] * n, [0] * n
        self.switches = self.restarts = 0
        self.lost = 0  # frames the network lost (the model's budget counts them)
        self.old_gen: int | None = None  # a replaced socket that has not closed yet
        self.copy_call: dict[int, int] = {}  # copy -> the desktop's call id
        self.net: dict[int, tuple[int, dict[str, Any]]] = {}  # copy -> (socket gen, response)
        self.cache: dict[str, dict[int, Any]] = {"pst": {}, "pgen": {}, "resp": {}, "rgen": {},
                                                 "memres": {}}
        self.eff = [0] * len(c.true_scopes)
        self.forgotten = [False] * len(c.true_scopes)
        self.violations: list[str] = []
        self.scopes = [self._scope(s) for s in c.impl_scopes]
        # a row's fingerprint is opaque: learnt from the claim that wrote it
        self.fp_index: dict[str, int] = {}
        self.book = WireBook()
        #: the concrete data classes the harness tried on the implementation (coverage)
        self.classes: set[str] = set()

    # the world around the cores --------------------------------------------------------
    def _open_desktop(self) -> DesktopRouter:
        c = self.c
        return mutants.build(self.mu, "desktop", DesktopRouter, self.path, USER,
                             light=c.light_slots, waiters=c.waiters, max_rows=c.row_cap)

    def snapshot(self) -> Any:
        """The harness and its implementation, pickled (the tour's time went to
        ``copy.deepcopy``: pickling the same objects is several times faster), with the
        claims database copied as :meth:`HarnessBase.snapshot` does.  Objects that do not
        pickle (a planted bug's class defined in a function) are deep-copied instead."""
        store = self.desktop.claims
        data = sqlite3.connect(":memory:")
        store.db.backup(data)
        self.desktop.claims = None  # a connection pickles no more than it deep-copies
        try:
            state = self.__dict__ | {"model": None}
            try:
                frozen: Any = pickle.dumps(state, pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, AttributeError, TypeError):
                frozen = copy.deepcopy(state)
        finally:
            self.desktop.claims = store
        return frozen, data

    def restore(self, snap: Any) -> None:
        frozen, data = snap
        store, model = self.desktop.claims, self.model
        state = pickle.loads(frozen) if isinstance(frozen, bytes) else copy.deepcopy(frozen)
        self.__dict__.update(state)
        self.model = model
        self.desktop.claims = store
        data.backup(store.db)

    def reopen(self) -> None:
        """Close the claims database and open it again (a crash of the storage)."""
        self.desktop.reopen_claims()

    def close(self) -> None:
        self.desktop.close()

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def client(self, o: int) -> Client:
        return Client(USER, f"phone-{self.c.ops[o].phone}", DESK)

    def rid(self, o: int) -> str:
        return f"req-{self.c.ops[o].rid}"

    def _scope(self, s: tuple) -> Scope:
        phone, *method, (key, k) = s
        return Scope(USER, f"phone-{phone}::{DESK}", method[0] if method else "",
                     self.phones[phone].key(_named("op-key-", key), attempt=k))

    def params(self, o: int) -> dict[str, Any]:
        return op_params(self.c.ops[o])

    def op_key(self, o: int) -> str:
        return op_key(self.c.ops[o])

    def failure(self, o: int, a: int, outcome: str) -> dict[str, Any]:
        """How copy ``a`` of operation ``o``'s handler fails (:func:`handler_failure`)."""
        return handler_failure(outcome, self.c.q(o, a))

    def handler_error(self, o: int, a: int, outcome: str) -> dict[str, Any]:
        """That failure as the reference desktop's handler returns it: 004's error shape,
        with the implementation's own number for the class (its table, not its helpers:
        the harness builds the answer itself)."""
        f = self.failure(o, a, outcome)
        return {"error": {"code": DESKTOP[f["kind"]], "message": f["message"],
                          "data": {"kind": f["kind"], "retryable": f["retryable"]}}}

    def op_of(self, client_id: str, rid: str) -> int:
        for o in range(len(self.c.ops)):
            if self.client(o).client_id == client_id and self.rid(o) == rid:
                return o
        raise Divergence(f"a message for {client_id} {rid} that no phone sent")

    def _to(self, t: float) -> float:
        now = self.clock.now()
        return self.clock.advance(t - now) if t > now else now

    def _conn(self) -> Any:
        """The relay's record of the desktop's connection.  The harness connected the
        desktop, and 004 keeps its generation across a disconnect (a late answer of the old
        socket must never match a new entry): a record gone is the relay's failure."""
        conn = self.relay.desktops.get((USER, DESK))
        if conn is None:
            raise Divergence("the relay keeps no record of the desktop's connection, so its "
                             "generation is lost (004: pending entries keep the connection "
                             "id, so that a late answer of an earlier socket is never taken "
                             "for the current request's)")
        return conn

    def _shape(self, where: str, answer: Any) -> None:
        """Every answer the harness sees is judged against 004's shapes
        (:func:`~osf_check.fuzz.oracles.shape_problem`)."""
        why = shape_problem(answer)
        if why:
            self.violations.append(f"{where}: {why}")

    def _phone_answer(self, msgs: list[Any]) -> None:
        for m in msgs:
            if not isinstance(m, ToPhone):
                raise Divergence(f"the relay sent {type(m).__name__} where a phone answer was due")
            self._shape("an answer to a phone", m.frame["payload"])
            o = self.op_of(m.client_id, m.frame["payload"]["id"])
            self.ans[o] = ans_of(m.frame["payload"])
            self.nfinal[o] = min(2, self.nfinal[o] + 1)
            self.ph[o] = "retry" if Phone.retries_after(m.frame["payload"]) else "done"

    def _call(self, o: int, a: int):
        cid = self.copy_call.get(self.c.q(o, a))
        call = self.desktop.calls.get(cid) if cid is not None else None
        if call is None:
            raise Divergence(f"copy {a} of operation {o} is not in the desktop router")
        return call

    def _effect(self, o: int) -> dict[str, Any]:
        t = self.c.true_scope(o)
        self.eff[t] = min(2, self.eff[t] + 1)
        return self.app.handle(self.c.ops[o].method, self.params(o))

    def _respond(self, q: int, o: int, lost: bool = False) -> None:
        gen, frame = self.net.pop(q)
        entry = self.relay.pending.get((USER, DESK, self.rid(o)))
        out = self.relay.on_response(USER, DESK, gen, frame)
        self.routed = bool(out)  # whether the relay sent it on to a phone (for the logs)
        if out and entry is not None and entry.gen != gen:
            self.violations.append(f"property B1 violated by the implementation: a response "
                                   f"sent on generation {gen} was delivered to an entry of "
                                   f"generation {entry.gen}")
        if lost:  # the answer is lost on its way to the phone
            if not out:
                raise Divergence(f"the relay did not route the response of operation {o}")
            self.lost += 1
            return
        self._phone_answer(out)

    # one model action on the implementation -------------------------------------------
    def apply(self, inst: ActionInstance) -> dict[str, Any]:
        """Perform ``inst``, then check every timer the implementation now has against the
        document's deadlines (:mod:`osf_check.fuzz.deadlines`)."""
        out = self._apply(inst)
        if inst.name == "forward" and self.probes and not self.classes:  # once, at the first
            self.probe_data()
        try:
            self.book.observe(self.clock.now(), self.relay, self.desktop, self.scopes)
        except Late as e:
            raise Divergence(f"{inst.label}: {e}") from None
        return out

    def _apply(self, inst: ActionInstance) -> dict[str, Any]:
        name, a = inst.name, inst.args
        o = a.get("o", 0)
        key = (USER, DESK, self.rid(o)) if "o" in a else None
        now = self.clock.now()
        if name == "send":
            op = self.c.ops[o]
            frame = self.phones[op.phone].request(self.rid(o), op.method, self.params(o),
                                                  self.op_key(o))
            self.tries[o] += 1
            out = self.relay.on_request(self.client(o), frame, now)
            if out:
                answer = out[0].frame["payload"]  # type: ignore[union-attr]
                self._shape("the relay's refusal", answer)
                self.ans[o] = ans_of(answer)
                self.ph[o] = "retry" if Phone.retries_after(answer) else "done"
            else:
                self.ph[o], self.nfinal[o] = "waiting", 0
        elif name == "send_malformed":
            op = self.c.ops[o]
            frame = self.phones[op.phone].request(self.rid(o), op.method, self.params(o),
                                                  self.op_key(o))
            frame["payload"]["traceparent"] = "00-not-a-trace-context"
            self.tries[o] += 1
            out = self.relay.on_request(self.client(o), frame, now)
            if out:
                answer = out[0].frame["payload"]  # type: ignore[union-attr]
                self._shape("the relay's refusal", answer)
                if answer.get("id") != self.rid(o):
                    raise Divergence(f"{inst.label}: the refusal names id {answer.get('id')!r}")
                self.ans[o] = ans_of(answer)
                self.ph[o] = "retry" if Phone.retries_after(answer) else "done"
            else:
                self.ph[o] = "waiting"
        elif name == "send_lost":
            # the frame is made (the phone keeps its key) and lost before the relay reads it
            op = self.c.ops[o]
            self.phones[op.phone].request(self.rid(o), op.method, self.params(o),
                                          self.op_key(o))
            self.tries[o] += 1
            self.ph[o] = "waiting"
            self.lost += 1
        elif name == "give_up":
            self.ph[o] = "retry"
        elif name == "forward_lost":
            out = self.relay.route(key)  # type: ignore[arg-type]
            if len(out) != 1 or not isinstance(out[0], ToDesktop):
                raise Divergence(f"{inst.label}: the relay did not forward the request")
            self.lost += 1  # the desktop never reads it
        elif name == "deliver_lost":
            self._respond(self.c.q(o, a["a"]), o, lost=True)
        elif name == "response_lost":
            self.net.pop(self.c.q(o, a["a"]))
            self.lost += 1
        elif name == "expire_lost":
            self._armed_relay(inst.label, key)
            e = self.relay.pending[key]  # type: ignore[index]
            if not self.relay.expire(key, self._to(e.deadline)):  # type: ignore[arg-type]
                raise Divergence(f"{inst.label}: the relay did not answer the expired entry")
            self.lost += 1
        elif name == "forward":
            out = self.relay.route(key)  # type: ignore[arg-type]
            if len(out) != 1 or not isinstance(out[0], ToDesktop):
                raise Divergence(f"{inst.label}: the relay did not forward the request")
            call = self.desktop.receive(out[0].frame, now)
            self.copy_call[self.c.q(o, a["a"])] = call.cid
        elif name == "refuse_gen_changed":
            self._phone_answer(self.relay.route(key))  # type: ignore[arg-type]
        elif name in ("deliver", "drop_response"):
            self._respond(self.c.q(o, a["a"]), o)
        elif name == "expire":
            self._armed_relay(inst.label, key)
            e = self.relay.pending[key]  # type: ignore[index]
            self._phone_answer(self.relay.expire(key, self._to(e.deadline)))  # type: ignore[arg-type]
        elif name == "disconnect":
            self._phone_answer(self.relay.disconnect_desktop(USER, DESK))
        elif name == "reconnect":
            self.relay.connect_desktop(USER, DESK)
        elif name == "reregister":
            # the relay's answer to the registration is lost: the desktop registers a new
            # socket while the relay still holds the old one
            self.old_gen = self._conn().gen
            self.relay.connect_desktop(USER, DESK)
            self.lost += 1
        elif name == "old_close":
            self._close_old()
        elif name == "restart":
            # the desktop process dies: memory and running handlers are gone, the file
            # stays; its sockets close, a replaced one too
            self._close_old()
            self._phone_answer(self.relay.disconnect_desktop(USER, DESK))
            self.desktop = self.desktop.restarted()
            self.copy_call.clear()  # the calls died with the process
            self.restarts += 1
        elif name == "claim":
            call = self._call(o, a["a"])
            if self.desktop.start(call, now) == "run" and call.scope is not None:
                self.book.claimed[call.scope] = now  # a claim (new, reclaimed or rerun)
            row = self.desktop.claims.row(call.scope) if call.scope is not None else None
            if row is not None and row.state == "running" and row.claimed_at == now:
                self.fp_index.setdefault(row.fp, self.c.ops[o].params)
        elif name == "slot_timeout":
            call = self._call(o, a["a"])
            self._armed(inst.label, "slot_wait", call.cid)
            self.desktop.fire("slot_wait", call.cid, self._to(call.deadline))
        elif name == "execute":
            call = self._call(o, a["a"])
            outcome = inst.arg_domains["out"].names[a["out"]]
            result = self._effect(o) if outcome == "success" else \
                self.handler_error(o, a["a"], outcome)
            db = self.desktop.claims.db
            if not a["stored"]:  # the disk refuses the store (fault injected from outside)
                db.set_authorizer(_deny_writes)
            try:
                self.desktop.finish(call, result, now)
            finally:
                db.set_authorizer(None)
        elif name == "dispatch_timeout":
            call = self._call(o, a["a"])
            self._armed(inst.label, "dispatch", call.cid)
            if a["ran"]:
                self._effect(o)
            self.desktop.fire("dispatch", call.cid, self._to(call.deadline))
        elif name in ("join_answer", "join_orphaned"):
            if not self.desktop.resume(self._call(o, a["a"]), now):
                raise Divergence(f"{inst.label}: the joined copy cannot resume")
        elif name == "send_answer":
            q = self.c.q(o, a["a"])
            frame = self.desktop.take_answer(self._call(o, a["a"]))
            self._shape("the desktop's answer", frame["payload"])
            conn = self._conn()
            if conn.online:
                self.net[q] = (conn.gen, frame)
        elif name == "enqueue_timeout":
            call = self._call(o, a["a"])
            self._armed(inst.label, "enqueue", call.cid)
            self.desktop.fire("enqueue", call.cid, self._to(call.deadline))
        elif name in ("lease_expires", "retention_expires"):
            s = self.scopes[a["k"]]
            row = self.desktop.claims.row(s)
            if row is None:
                raise Divergence(f"{inst.label}: no durable row for {s}")
            self._armed(inst.label, "lease" if name == "lease_expires" else "retention", s)
            if name == "lease_expires":
                self.desktop.fire("lease", s, self._to(row.claimed_at + LEASE))
            else:
                self.desktop.fire("retention", s, self._to((row.stored_at or 0) + RETENTION))
                for o2 in range(len(self.c.ops)):
                    if any(self.c.impl_scope(o2, self.c.key_of(x)) == a["k"]
                           for x in self.c.copies):
                        self.forgotten[self.c.true_scope(o2)] = True
        elif name == "switch_authority":
            # the model counts episodes: an even count is settled, so this one starts
            self.relay.switch_authority(self.switches % 2 == 0)
            self.switches += 1
        else:
            raise Divergence(f"the harness does not know action {name}")
        return {}

    # concrete data the model abstracts away ------------------------------------------------
    def _fresh_desktop(self) -> DesktopRouter:
        """A router of the implementation's own class on a database of its own: the data
        probes never touch the state the model follows."""
        d = self.desktop
        return type(d)(":memory:", USER, light=LIGHT_SLOTS, heavy=HEAVY_SLOTS)

    def _frame(self, rid: str, method: str, params: dict[str, Any],
               key: str | None) -> dict[str, Any]:
        """A forwarded rpc.request as 004 draws it (written here, not by the phone's code,
        which refuses to build some of these)."""
        p: dict[str, Any] = {"id": rid, "method": method, "params": params,
                             "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-"
                                            "00f067aa0ba902b7-01",
                             "clientId": self.client(0).client_id, "userId": USER}
        if key is not None:
            p["idempotencyKey"] = key
        return {"type": "rpc.request", "payload": p}

    def probe_data(self) -> None:
        """The data probes, once per run and implementation (its classes and mutant): they
        build fresh cores of their own and depend on nothing else, so every later walk or
        restored snapshot of the run gets the first outcome again, failure and all.  A
        new run (a new model object) probes again: code patched between two runs in one
        process is probed as it is then."""
        who = (id(self.model), type(self.relay), type(self.desktop), type(self.app),
               self.mutant)
        self.classes = probed_once(_PROBED, who, self.model, self._probed_classes)

    def _probed_classes(self) -> set:
        self._probe_data()
        return self.classes

    def _fresh_relay(self) -> RelayRouter:
        """A relay of the implementation's own class at 004's limits, the desktop on."""
        r = type(self.relay)()
        r.connect_desktop(USER, DESK)
        return r

    def _probe_data(self) -> None:
        """What 004 says of data the model abstracts: each idempotency key class of a
        mutation is admitted or refused with invalid params (-32602) before any claim,
        and the heavy calls have their own slots, so eight running light calls never keep
        a heavy one waiting.  Each class tried is noted in :attr:`classes`."""
        mutation = "system.activateCodexAuthProfile"
        for name, (key, ok) in key_classes().items():
            d = self._fresh_desktop()
            call = d.receive(self._frame("probe-key", mutation, {"profileId": "p"}, key), 0.0)
            kind = d.start(call, 0.0)
            refused = kind == "answer" and ans_of(call.answer) == "final_error" and \
                (call.answer or {}).get("error", {}).get("code") == -32602
            if ok and kind != "run":
                raise Divergence(f"a key of class {name!r} ({len(key.encode())} bytes) was "
                                 f"not taken: {call.answer}")
            if not ok and (not refused or d.claims.row(d._scope(call)) is not None):
                raise Divergence(f"a key of class {name!r} ({len(key.encode())} bytes) was "
                                 f"not refused with -32602 before any claim (004: a "
                                 f"non-empty key of at most 256 bytes)")
            self.classes.add(f"key {name}")
        d = self._fresh_desktop()
        for i in range(LIGHT_SLOTS):
            if d.start(d.receive(self._frame(f"probe-l{i}", LIGHT_SAMPLE, {}, None), 0.0),
                       0.0) != "run":
                raise Divergence(f"light call {i + 1} of {LIGHT_SLOTS} found no slot")
        for method in HEAVY_SAMPLE:
            call = d.receive(self._frame(f"probe-{method}", method, {}, None), 0.0)
            if not d.can_start(call):
                raise Divergence(f"{method} (heavy) waits while {LIGHT_SLOTS} light calls "
                                 f"run: 004 gives heavy calls their own {HEAVY_SLOTS} slots")
            self.classes.add(f"heavy {method} beside full light slots")
        self._probe_replay()
        self._probe_registration()
        # requests from 004's domains (fuzz.wire_inputs)
        self.classes |= wire_inputs.relay_admission(self._fresh_relay, self.client(0))
        self.classes |= wire_inputs.rate_limits(type(self.relay), self.client(0))
        self.classes |= wire_inputs.params_not_objects(self._fresh_relay, self._fresh_desktop,
                                                       self.client(0))
        self.classes |= wire_inputs.desktop_inputs(self._fresh_desktop)
        self.classes |= wire_inputs.timeout_shapes(self._fresh_desktop)
        self.classes |= wire_inputs.dispatch_deadlines(self._fresh_desktop)
        self._probe_expiries()
        self.classes |= wire_traffic.mixed_traffic(type(self.relay), self.client(0))

    def _probe_expiries(self) -> None:
        """Each duration of 004 at its edge (fuzz.wire_expiry), on cores of the
        implementation's own classes."""
        from osf_check.relay.wire.registration import Device, RegistrationError, VersionGate
        desk = "6f1c2a7e-0000-4000-8000-000000000001"
        devices = {desk: Device(desk, "desktop")}

        def register(gate: Any, now: float) -> str | None:
            relay = type(self.relay)(limits=self.relay.limits)
            try:
                relay.register(USER, {"deviceId": desk, "relayProtocolVersion": "1.7"},
                               "desktop", devices, gate, now)
            except RegistrationError as e:
                return e.reason
            return None
        self.classes |= wire_expiry.rules_cache(register, VersionGate)
        self.classes |= wire_expiry.pending_expiry(self._fresh_relay, self.client(0))
        self.classes |= wire_expiry.desktop_expiries(self._fresh_desktop)

    def _probe_replay(self) -> None:
        """A completed claim is replayed to a retry with its key; of the four replay-safe
        methods only chunk-append releases it and runs again (004)."""
        for method in (*REPLAY_SAFE, "system.activateCodexAuthProfile"):
            d = self._fresh_desktop()
            params = outbox_params(SESSION, "op-probe") if method == OUTBOX else {"x": "ü"}
            first = d.receive(self._frame("probe-1", method, params, "probe-key"), 0.0)
            if d.start(first, 0.0) != "run":
                raise Divergence(f"{method}: a first request was not run: {first.answer}")
            d.finish(first, {"result": {"ok": True}}, 0.0)
            again = d.receive(self._frame("probe-2", method, params, "probe-key"), 1.0)
            kind = d.start(again, 1.0)
            want = "run" if method in RELEASES_COMPLETED else "answer"
            if kind != want:
                raise Divergence(f"{method}: a retry after its completed first copy was "
                                 f"{'run again' if kind == 'run' else 'not run'}; 004 "
                                 f"{'releases' if want == 'run' else 'keeps'} the claim")
            self.classes.add(f"completed claim of {method}")

    def _probe_registration(self) -> None:
        """Each registration class 004 names is admitted or refused with its code, on a
        relay of the implementation's own class."""
        from osf_check.relay.wire.registration import Device, RegistrationError, VersionGate
        desk, phone = "6f1c2a7e-0000-4000-8000-000000000001", "6f1c2a7e-0000-4000-8000-000000000002"
        devices = {desk: Device(desk, "desktop"), phone: Device(phone, "mobile")}
        for name, (change, rules, code) in REGISTRATIONS.items():
            payload = {"deviceId": desk, "relayProtocolVersion": "1.7"}
            payload.update({k: phone if v == "phone" else v for k, v in change.items()})
            payload = {k: v for k, v in payload.items() if v is not ...}

            def load(rules=rules):
                if rules is None:
                    raise OSError("the compatibility rules cannot be read")
                return rules
            relay = type(self.relay)(limits=self.relay.limits)
            try:
                relay.register(USER, payload, "desktop", devices, VersionGate(load), 0.0)
                got = None
            except RegistrationError as e:
                got = e.reason
            if got != code and not (code == "any" and got is not None):
                raise Divergence(f"registration ({name}) was "
                                 f"{'admitted' if got is None else 'refused ' + got}; 004: "
                                 f"{'admitted' if code is None else 'refused ' + code}")
            self.classes.add(f"registration {name}")

    def _armed(self, label: str, kind: str, ref: Any) -> None:
        """The clock reaches a deadline 004 requires: the implementation must have armed
        that timer itself (the harness only moves the clock), else the step fails."""
        if not any(k == kind and r == ref for _, k, r in self.desktop.timers()):
            raise Divergence(f"{label}: the desktop armed no {kind} timer for {ref} (004 "
                             f"requires one here)")

    def _armed_relay(self, label: str, key: Any) -> None:
        if not any(k == key for _, k in self.relay.timers()):
            raise Divergence(f"{label}: the relay armed no expiry timer for its pending "
                             f"entry {key[2]} (004 requires one)")

    def _close_old(self) -> None:
        """The replaced socket's close reaches the relay."""
        if self.old_gen is not None:
            self._phone_answer(self.relay.disconnect_desktop(USER, DESK, gen=self.old_gen))
            self.old_gen = None

    def offers(self) -> set[str]:
        """The desktop's own decisions now: claims it can take, joined copies it can wake."""
        out: set[str] = set()
        by_cid = {cid: q for q, cid in self.copy_call.items()}
        n = len(self.c.copies)
        for cid, call in self.desktop.calls.items():
            q = by_cid.get(cid)
            if q is None:
                continue
            o, a = divmod(q, n)
            if self.desktop.can_start(call):
                out.add(f"claim(o={o}, a={a})")
            if self.desktop.can_resume(call):
                done = self.desktop.memory.state(call.scope) == "done"  # type: ignore[arg-type]
                out.add(f"{'join_answer' if done else 'join_orphaned'}(o={o}, a={a})")
        return out

    def due(self) -> list[str]:
        """Labels of the model actions for the implementation's timers due now, earliest
        first (what a real event loop fires after the clock moved)."""
        now = self.clock.now()
        by_cid = {cid: q for q, cid in self.copy_call.items()}
        n = len(self.c.copies)
        timers: list[tuple[float, str]] = []
        for t, key in self.relay.timers():
            timers.append((t, f"expire(o={self.op_of(self.relay.pending[key].client.client_id, key[2])})"))
        names = {"slot_wait": "slot_timeout", "dispatch": "dispatch_timeout",
                 "enqueue": "enqueue_timeout"}
        for t, kind, ref in self.desktop.timers():
            if kind in names:
                q = by_cid.get(ref)
                if q is None:
                    continue
                o, a = divmod(q, n)
                extra = ", ran=0" if kind == "dispatch" else ""
                timers.append((t, f"{names[kind]}(o={o}, a={a}{extra})"))
            elif ref in self.scopes:
                timers.append((t, f"{'lease' if kind == 'lease' else 'retention'}_expires"
                                  f"(k={self.scopes.index(ref)})"))
        return [label for t, label in sorted(timers) if t <= now]

    # the abstraction function ------------------------------------------------------------
    def abstract(self) -> tuple:
        c, cache = self.c, self.cache
        st: dict[str, Any] = {
            "ph": [PH.names.index(x) for x in self.ph], "tries": list(self.tries),
            "ans": [ANS.names.index(x) for x in self.ans], "nfinal": list(self.nfinal),
            "pend": [], "pst": [], "pgen": [], "switching": self.switches,
        }
        for i, rid in enumerate(c.rids):
            e = self.relay.pending.get((USER, DESK, f"req-{rid}"))
            if e is not None:
                st["pend"].append(self.op_of(e.client.client_id, e.rid) + 1)
                cache["pst"][i], cache["pgen"][i] = PST.names.index(e.state), e.gen
            else:
                st["pend"].append(0)
            st["pst"].append(cache["pst"].get(i, PST.admitted))
            st["pgen"].append(cache["pgen"].get(i, 0))
        if bool(self.relay.switching) != (self.switches % 2 == 1):
            raise Divergence(f"the relay is {'' if self.relay.switching else 'not '}switching "
                             f"routing authority after {self.switches} switch event(s)")
        conn = self._conn()
        st.update(online=int(conn.online), gen=conn.gen, restarts=self.restarts,
                  oldopen=int(self.old_gen is not None), lost=self.lost)
        if conn.gen >= c.gens:
            raise Divergence(f"the relay is at desktop generation {conn.gen}")
        for name in ("stage", "resp", "inflight", "rgen"):
            st[name] = []
        for q in range(len(c.ops) * len(c.copies)):
            cid = self.copy_call.get(q)
            call = self.desktop.calls.get(cid) if cid is not None else None
            st["stage"].append(STAGE.names.index(call.stage) if call else STAGE.none)
            if call is not None:
                cache["resp"][q] = ANS.names.index(ans_of(call.answer))
            st["resp"].append(cache["resp"].get(q, ANS.none))
            st["inflight"].append(int(q in self.net))
            if q in self.net:
                cache["rgen"][q] = self.net[q][0]
            st["rgen"].append(cache["rgen"].get(q, 0))
        for name in ("mem", "memres", "waiters", "row", "rowfp", "expired"):
            st[name] = []
        for k, s in enumerate(self.scopes):
            mc = self.desktop.memory.get(s)
            st["mem"].append(MEM.names.index(mc.state))
            if mc.state == "done":
                cache["memres"][k] = ANS.names.index(ans_of(mc.answer))
            st["memres"].append(cache["memres"].get(k, ANS.none))
            st["waiters"].append(mc.waiters)
            row = self.desktop.claims.row(s)
            if row is None:
                st["row"].append(ROW.none)
            elif row.state == "running":
                st["row"].append(ROW.running)
            else:
                st["row"].append(ROW.names.index(ans_of(row.answer)) if ans_of(row.answer) in
                                 ("success", "final_error", "retryable_error") else ROW.ambiguous)
            st["rowfp"].append(self.fp_index.get(row.fp, -1) if row else 0)
            st["expired"].append(int(bool(row and row.lease_over)))
        st["eff"] = list(self.eff)
        st["msgs"] = []
        for t, (phone, method, key) in enumerate(c.true_scopes):
            st["msgs"].append(min(2, self.app.messages(SESSION, f"op-{phone}-{key}"))
                              if method == OUTBOX else 0)
        st["forgotten"] = [int(x) for x in self.forgotten]
        return self.flatten(st)
