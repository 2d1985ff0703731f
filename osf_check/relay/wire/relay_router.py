"""The relay router as a sans-I/O core: admission, pending entries, generations, delivery.

The relay reads phones' ``rpc.request`` frames, admits them (rate limit, validation,
allow-list, key, pending limits, duplicates), forwards each to the desktop connection
it was admitted for, and delivers a desktop's ``rpc.response`` only to a pending entry
of the *same* desktop connection (generation).  Every method returns the messages to
send (:class:`ToPhone`, :class:`ToDesktop`); the shell carries them.  Time is given,
never read: deadlines are timers the shell fires (:meth:`RelayRouter.timers`,
:meth:`RelayRouter.expire`, :meth:`RelayRouter.tick`).

>>> r = RelayRouter()
>>> phone = Client("user-1", "phone-1", "desk-1")
>>> gen = r.connect_desktop("user-1", "desk-1")
>>> r.on_request(phone, request("r-1", "system.ping", {}), now=0.0)
[]
>>> [type(m).__name__ for m in r.route(("user-1", "desk-1", "r-1"))]
['ToDesktop']
>>> out = r.on_response("user-1", "desk-1", gen, {"type": "rpc.response", "payload": {
...     "clientId": "phone-1::desk-1", "id": "r-1", "result": {"pong": True}, "isFinal": True}})
>>> out[0].frame["payload"]["result"]
{'pong': True}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from .envelope import FrameError, Unreadable, id_ok, request, trace_ok, \
    validate_request
from .. import constants
from .errors import relay_error
from .manifest import LOADS, MANIFEST
from .ratelimit import BURST, CONN_BURST, CONN_RATE, RATE, TokenBucket
from .registration import Device, VersionGate, register
from .text import trim, unreadable

__all__ = ["Client", "Entry", "RelayRouter", "ToDesktop", "ToPhone", "request"]

LIMITS = {"process": 4_096, "user": 512, "desktop": 128, "client": 64}
KEEP_PENDING = float(constants.RELAY_OTHER)  # an older page's is the same
KEEP_LOADS = float(constants.RELAY_FIRST_LOAD)
KEEP_OUTBOX = float(constants.RELAY_OUTBOX)

def keep_pending(method: str) -> float:
    """How long the relay keeps a request pending (wire-relay.md, deadlines)."""
    if method in MANIFEST and MANIFEST[method].deadline == "outbox":
        return KEEP_OUTBOX
    return KEEP_LOADS if method in LOADS else KEEP_PENDING


@dataclass(frozen=True)
class Client:
    """An authenticated phone socket: its user, device and registered target desktop."""

    user: str
    device: str
    desktop: str
    api_key_scopes: tuple[str, ...] | None = None  # None: a JWT, which always carries rpc
    registration: int = 0  # which registration of this device the socket holds

    @property
    def client_id(self) -> str:
        return f"{self.device}::{self.desktop}"


@dataclass(frozen=True)
class ToPhone:
    client_id: str
    frame: dict[str, Any]


@dataclass(frozen=True)
class ToDesktop:
    user: str
    desktop: str
    gen: int
    frame: dict[str, Any]


Out = Union[ToPhone, ToDesktop]
Key = tuple[str, str, str]  # (user, desktop, request id)


@dataclass
class Entry:
    client: Client
    rid: str
    method: str
    fingerprint: str
    gen: int
    deadline: float
    state: str = "admitted"  # admitted -> forwarded
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class DesktopConn:
    gen: int
    online: bool


def response(rid: str | None, answer: dict[str, Any]) -> dict[str, Any]:
    return {"type": "rpc.response", "payload": {"id": rid, **answer, "isFinal": True}}


class RelayRouter:
    def __init__(self, *, limits: dict[str, int] | None = None, burst: int = CONN_BURST,
                 rate: float = CONN_RATE, answer_burst: int = BURST, answer_rate: float = RATE):
        self.limits = {**LIMITS, **(limits or {})}
        self.burst, self.rate = burst, rate  # the connection's own limit
        self.answer_burst, self.answer_rate = answer_burst, answer_rate  # its -32028 answers
        self.desktops: dict[tuple[str, str], DesktopConn] = {}
        self.pending: dict[Key, Entry] = {}
        self.counts: dict[tuple[str, tuple], int] = {}  # pending entries per limit's scope
        self.buckets: dict[str, TokenBucket] = {}
        self.answer_buckets: dict[str, TokenBucket] = {}
        self.switching = False
        self.draining = False
        self.registrations: dict[tuple[str, str], int] = {}  # the current one per phone device

    def switch_authority(self, switching: bool) -> None:
        """Routing authority starts (True) or finishes (False) moving to another relay
        process: meanwhile every request is refused with the retryable -32024 (004)."""
        self.switching = switching

    # desktop connections --------------------------------------------------------------
    def connect_desktop(self, user: str, desktop: str) -> int:
        """A desktop registers a socket: a new generation (connection id)."""
        old = self.desktops.get((user, desktop))
        gen = old.gen + 1 if old else 0
        self.desktops[(user, desktop)] = DesktopConn(gen, True)
        return gen

    def disconnect_desktop(self, user: str, desktop: str, gen: int | None = None) -> list[Out]:
        """The desktop's socket of generation ``gen`` (the current one by default) closed:
        every pending request of that generation, forwarded or still waiting for the
        routing lock, is answered -32011 at once.  A socket that a newer registration
        replaced closes late: only its own entries are answered, and the current socket
        stays online."""
        conn = self.desktops.get((user, desktop))
        if conn is None:
            return []
        closed = conn.gen if gen is None else gen
        if closed == conn.gen:
            if not conn.online:
                return []
            conn.online = False
        out: list[Out] = []
        for key, e in list(self.pending.items()):
            if key[:2] == (user, desktop) and e.gen == closed:
                self._remove(key)
                out.append(ToPhone(e.client.client_id, response(e.rid, relay_error(-32011))))
        return out

    def register(self, user: str, payload: Any, role: str, devices: dict[str, Device],
                 gate: VersionGate, now: float) -> Client | int:
        """A socket registers: a desktop gets a new generation, a phone a :class:`Client`
        routed to the desktop its registration names (never one a request names).  Raises
        :class:`RegistrationError`."""
        r = register(payload, role, devices, gate, now)
        if role == "desktop":
            return self.connect_desktop(user, r.device)
        # targetDesktopDeviceId is optional (004): a phone that names none reaches no
        # desktop, and its requests are answered -32010 (offline)
        n = self.registrations.get((user, r.device), -1) + 1
        self.registrations[(user, r.device)] = n  # an older socket's registration is stale
        return Client(user, r.device, r.target or "", registration=n)

    def stale(self, c: Client) -> bool:
        """The device has registered again since this socket did (004: admission refuses a
        stale source registration)."""
        return self.registrations.get((c.user, c.device), c.registration) != c.registration

    # phones' requests --------------------------------------------------------------------
    @staticmethod
    def _scopes(c: Client) -> dict[str, tuple]:
        """The counter of each pending limit that an entry of this client counts in."""
        return {"process": (), "user": (c.user,), "desktop": (c.user, c.desktop),
                "client": (c.user, c.client_id)}

    def _add(self, key: Key, e: Entry) -> None:
        self.pending[key] = e
        for scope, k in self._scopes(e.client).items():
            self.counts[scope, k] = self.counts.get((scope, k), 0) + 1

    def _remove(self, key: Key) -> Entry:
        e = self.pending.pop(key)
        for scope, k in self._scopes(e.client).items():
            self.counts[scope, k] -= 1
        return e

    @staticmethod
    def _over(current: int, limit: int) -> bool:
        """One more entry would pass the limit."""
        return current >= limit

    def on_request(self, c: Client, frame: Any, now: float) -> list[Out]:
        """Read one frame from a phone.  Returns the refusal to send back, or nothing (the
        request is pending: :meth:`route` forwards it; or the frame was dropped silently)."""
        payload = frame.get("payload") if isinstance(frame, dict) else None
        raw = payload.get("id") if isinstance(payload, dict) else None
        rid = trim(raw) if isinstance(raw, str) else None

        def refuse(code: int, **data: Any) -> list[Out]:
            return [ToPhone(c.client_id, response(rid, relay_error(code, **data)))]

        bucket = self.buckets.setdefault(c.client_id, TokenBucket(self.burst, self.rate))
        if not bucket.take(now):  # before any validation; nothing is forwarded
            answers = self.answer_buckets.setdefault(
                c.client_id, TokenBucket(self.answer_burst, self.answer_rate))
            # a frame holding half a surrogate pair is none a Rust reader takes (.text)
            answerable = isinstance(frame, dict) and frame.get("type") == "rpc.request" and \
                id_ok(payload) and trace_ok(payload) and not unreadable(frame)
            return refuse(-32028) if answerable and answers.take(now) else []
        try:
            p = validate_request(frame)
        except Unreadable:  # its id cannot be read either; 004 names no answer: JSON-RPC's
            rid = None
            return refuse(-32700, reason="text holding half a surrogate pair")
        except FrameError as e:  # refused before forwarding, and answered at once
            return refuse(-32600, reason=str(e))
        method, params = p["method"], p["params"]
        if method not in MANIFEST:
            return refuse(-32601)
        if c.api_key_scopes is not None and "rpc" not in c.api_key_scopes:
            return refuse(-32027, requiredScopes=["rpc"])
        if MANIFEST[method][0] and "idempotencyKey" not in p:
            # missing: the relay's -32026; empty or too long: the desktop's -32602
            return refuse(-32026, reason="protocolUpdateRequired")
        if method == "session.syncHistoryState" and not isinstance(params.get("sessionId"), str):
            return refuse(-32600, reason="malformed session.syncHistoryState params")
        conn = self.desktops.get((c.user, c.desktop))
        if self.draining or conn is None or not conn.online:
            return refuse(-32010)
        if self.switching:
            return refuse(-32024)
        if self.stale(c):  # 004 names no code: the retryable -32024 of a routing change
            return refuse(-32024, reason="staleRegistration")
        key = (c.user, c.desktop, p["id"])
        fp = json.dumps([c.client_id, method, params, p.get("idempotencyKey")], sort_keys=True)
        old = self.pending.get(key)
        if old is not None:
            return refuse(-32021 if old.fingerprint == fp else -32022)
        for scope, k in self._scopes(c).items():
            current = self.counts.get((scope, k), 0)
            if self._over(current, self.limits[scope]):
                return refuse(-32020, scope=scope, limit=self.limits[scope], current=current)
        fwd = {**p, "clientId": c.client_id, "userId": c.user}
        self._add(key, Entry(c, p["id"], method, fp, conn.gen, now + keep_pending(method),
                             payload=fwd))
        return []

    def route(self, key: Key) -> list[Out]:
        """An admitted entry takes the routing lock: forwarded to the generation it was
        admitted for, or -32023 if that generation is gone; nothing while the desktop is
        offline and has not reconnected."""
        e = self.pending.get(key)
        if e is None or e.state != "admitted":
            return []
        conn = self.desktops[key[:2]]
        if conn.gen != e.gen:
            self._remove(key)
            return [ToPhone(e.client.client_id, response(e.rid, relay_error(-32023)))]
        if not conn.online:
            return []
        e.state = "forwarded"
        return [ToDesktop(key[0], key[1], e.gen, {"type": "rpc.request", "payload": e.payload})]

    # desktops' responses -------------------------------------------------------------------
    def on_response(self, user: str, desktop: str, gen: int, frame: Any) -> list[Out]:
        """A response read from the desktop socket of generation ``gen``: delivered only to a
        forwarded entry of that generation with the same id and clientId."""
        p = frame.get("payload") if isinstance(frame, dict) else None
        if not isinstance(p, dict) or not isinstance(p.get("id"), str) or unreadable(frame):
            return []
        key = (user, desktop, trim(p["id"]))
        e = self.pending.get(key)
        if e is None or e.state != "forwarded" or e.client.client_id != p.get("clientId"):
            return []
        if e.gen != gen:  # a late answer from an old socket
            return []
        final = p.get("isFinal", True)
        if final:
            self._remove(key)  # before the phone sees the answer
        answer = {k: p[k] for k in ("result", "error", "traceparent") if k in p}
        return [ToPhone(e.client.client_id, {"type": "rpc.response",
                                             "payload": {"id": e.rid, **answer, "isFinal": final}})]

    # time ------------------------------------------------------------------------------------
    def timers(self) -> list[tuple[float, Key]]:
        return sorted((e.deadline, k) for k, e in self.pending.items())

    def expire(self, key: Key, now: float) -> list[Out]:
        """The entry's deadline passed: -32012 to the phone."""
        e = self.pending.get(key)
        if e is None or now < e.deadline:
            return []
        self._remove(key)
        return [ToPhone(e.client.client_id, response(e.rid, relay_error(-32012)))]

    def tick(self, now: float) -> list[Out]:
        """Fire every timer due at ``now``, earliest first (what a real event loop does)."""
        out: list[Out] = []
        for deadline, key in self.timers():
            if deadline <= now:
                out.extend(self.expire(key, now))
        return out
