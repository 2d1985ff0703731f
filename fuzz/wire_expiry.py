"""Every duration 004 names that the relay or the desktop applies, judged at its edge: the
clock is driven to just before and just after it, and what it guards changes in between.

The book of deadlines (:mod:`.deadlines`) compares the timers an implementation reports
with the documents' figures; a duration that is no timer (the compatibility rules' cache)
or one whose effect is wrong while its timer is right passes it.  So each probe here looks
at behaviour only: what a request or a registration gets a moment before the figure and
a moment after it.  The figures come from :mod:`osf_check.relay.constants`.
"""

from __future__ import annotations

from typing import Any, Callable

from osf_check.relay import constants

from .deadlines import keep_pending
from .harness import Divergence
from .oracles import LIGHT_SAMPLE, LIGHT_SLOTS, wire_answer
from .wire_inputs import DESK, USER, forwarded, frame

#: how far either side of an edge the clock is set: small enough that a duration off by
#: a fraction of a second shows
EPS = 1e-3
#: a start that is no round number, so a duration counted from zero or from the wrong
#: event shows
T0 = 13.25
MUTATION = "system.activateCodexAuthProfile"


def _edges(start: float, duration: float) -> tuple[float, float]:
    return start + duration - EPS, start + duration + EPS


# the relay's version gate ------------------------------------------------------------------
def rules_cache(register: Callable[[Any, float], str | None],
                gate_cls: type) -> set[str]:
    """004, "Die Versionsschranke sitzt bei der Registrierung": "Es hält die Regeln 60
    Sekunden im Cache. Eine Verbindung unterhalb der erforderlichen Version wird
    abgewiesen, bevor sie eine Anfrage senden kann."  The rules change right after each
    read: a 1.7 client is judged by the old rules until 60 s after that read, by the
    new ones from then on.  ``register(gate, now)`` returns the refusal's reason or None."""
    rules: dict[str, Any] = {"now": []}

    def load() -> list[Any]:
        if rules["now"] is None:
            raise OSError("the compatibility rules cannot be read")
        return list(rules["now"])

    gate = gate_cls(load)
    steps = (("a rule of 1.8 added", ["1.8"], None, "protocolUpdateRequired"),
             ("the rule removed", [], "protocolUpdateRequired", None),
             ("the rules unreadable", None, None, "relayProtocolPolicyUnavailable"))
    read_at = T0
    _registered(register, gate, read_at, None, "the first registration")
    for name, new_rules, before, after in steps:
        rules["now"] = new_rules
        early, late = _edges(read_at, constants.RULES_TTL)
        _registered(register, gate, early, before,
                    f"{name} {constants.RULES_TTL - EPS:.3f} s after the rules were read")
        _registered(register, gate, late, after,
                    f"{name} {constants.RULES_TTL + EPS:.3f} s after the rules were read")
        read_at = late
    return {"compatibility rules' cache at its edge"}


def _registered(register: Callable[[Any, float], str | None], gate: Any, now: float,
                want: str | None, when: str) -> None:
    got = register(gate, now)
    if got != want:
        raise Divergence(f"a 1.7 client registering at {now:.3f} s ({when}) was "
                         f"{'admitted' if got is None else 'refused ' + got}; 004 keeps the "
                         f"rules 60 s in its cache, so {'admitted' if want is None else want}")


# the relay's pending entries ---------------------------------------------------------------
#: a method of each of 004's classes of relay timeout
PENDING_SAMPLE = (LIGHT_SAMPLE, "run.chatLoad", "run.chatLoadPageBefore", "run.chatOutboxSubmit")


def pending_expiry(new_relay: Callable[[], Any], client: Any) -> set[str]:
    """004, relay decisions: "-32012 Relay-Timeout", after 90 s, "120 für run.chatLoad und
    run.chatLoadThread" and 31 minutes for the outbox submit.  Just before, the entry is
    still pending (its identical retry is -32021); just after, it was answered -32012 and
    the same id is a new request."""
    tried = set()
    for method in PENDING_SAMPLE:
        r = new_relay()
        f = frame("p-1", method, {}, "key-p")
        if r.on_request(client, f, T0) or not r.route((USER, DESK, "p-1")):
            raise Divergence(f"a first {method} request was not forwarded")
        early, late = _edges(T0, keep_pending(method))
        out = r.tick(early) + r.on_request(client, f, early)
        codes = [_code(o) for o in out]
        if codes != [-32021]:
            raise Divergence(f"{method} pending {keep_pending(method) - EPS:.3f} s: the relay "
                             f"sent {codes} (004: still pending, its retry is -32021)")
        codes = [_code(o) for o in r.tick(late)]
        if codes != [-32012]:
            raise Divergence(f"{method} pending {keep_pending(method) + EPS:.3f} s: the relay "
                             f"sent {codes} (004: -32012 once its limit passed)")
        if r.on_request(client, f, late):
            raise Divergence(f"{method}: the id of an expired entry was not taken again")
        tried.add(f"relay timeout of {method} at its edge")
    return tried


def _code(out: Any) -> Any:
    return (out.frame["payload"].get("error") or {}).get("code")


# the desktop's durable claims --------------------------------------------------------------
def _mutation(rid: str) -> dict[str, Any]:
    return forwarded(frame(rid, MUTATION, {"profileId": "p"}, "key-x"))


def _retry(d: Any, rid: str, now: float) -> tuple[str, Any]:
    d.tick(now)
    call = d.receive(_mutation(rid), now)
    kind = d.start(call, now)
    return kind, call


def retention(new_desktop: Callable[[], Any]) -> set[str]:
    """004: "48 Stunden nach dem Speichern seiner Antwort ist ein Schlüssel vergessen, und
    eine Wiederholung läuft als neue Mutation."  A retry just before gets the stored
    answer; one just after runs and gets the new one."""
    d = new_desktop()
    first = d.receive(_mutation("r-1"), T0)
    if d.start(first, T0) != "run":
        raise Divergence(f"a fresh mutation was not run: {first.answer}")
    d.finish(first, {"result": {"ok": "first"}}, T0)
    early, late = _edges(T0, constants.RETENTION)
    d = d.restarted()  # memory holds no claim 48 h: the durable row is what is judged
    kind, call = _retry(d, "r-2", early)
    if kind != "answer" or (call.answer or {}).get("result") != {"ok": "first"}:
        raise Divergence(f"a retry {constants.RETENTION - EPS:.3f} s after the answer was "
                         f"stored got {kind} {call.answer} (004: the stored answer, kept 48 h)")
    kind, call = _retry(d, "r-3", late)
    if kind != "run":
        raise Divergence(f"a retry {constants.RETENTION + EPS:.3f} s after the answer was "
                         f"stored got {kind} {call.answer} (004: the key is forgotten after "
                         f"48 h and the retry runs as a new mutation)")
    return {"retention at its edge"}


def lease(new_desktop: Callable[[], Any]) -> set[str]:
    """004: "Laufende Lease: Fünf Minuten ab dem Anspruch und nie verlängert. Eine noch
    laufende Zeile ohne lebenden Besitzer antwortet bis dahin mit busy und speichert
    danach eine mehrdeutige Antwort."  The owner dies (a restart) after its claim: a retry
    just before the lease ends is busy, one just after is ambiguous."""
    d = new_desktop()
    first = d.receive(_mutation("l-1"), T0)
    if d.start(first, T0) != "run":
        raise Divergence(f"a fresh mutation was not run: {first.answer}")
    d = d.restarted()
    early, late = _edges(T0, constants.LEASE)
    for rid, now, want in (("l-2", early, "busy"), ("l-3", late, "ambiguous")):
        kind, call = _retry(d, rid, now)
        got = wire_answer(call.answer) if kind == "answer" else kind
        if got != want:
            raise Divergence(f"a retry {now - T0:.3f} s after a claim whose owner restarted "
                             f"got {got} (004: busy until the 5-minute lease ends, then "
                             f"ambiguous; {want} here)")
    return {"lease at its edge"}


def _light(d: Any, rid: str, now: float) -> Any:
    return d.receive(forwarded(frame(rid, LIGHT_SAMPLE, {})), now)


def _full(new_desktop: Callable[[], Any]) -> tuple[Any, list[Any], Any]:
    """A desktop whose light slots all run, and one more light call waiting."""
    d = new_desktop()
    held = [_light(d, f"h-{i}", T0) for i in range(LIGHT_SLOTS)]
    for call in held:
        if d.start(call, T0) != "run":
            raise Divergence(f"light call {call.rid} found no free slot")
    return d, held, _light(d, "w", T0)


def slot_wait(new_desktop: Callable[[], Any]) -> set[str]:
    """004: 8 s for a slot, then -32603 "Desktop is busy; retry the request shortly."  A
    slot freed just before 8 s runs the waiting call; just after, it was answered busy."""
    d, held, waiting = _full(new_desktop)
    early, late = _edges(T0, constants.SLOT)
    d.tick(early)
    d.finish(held[0], {"result": {}}, early)
    if not d.can_start(waiting) or d.start(waiting, early) != "run":
        raise Divergence(f"a call waiting {constants.SLOT - EPS:.3f} s for a slot that just "
                         f"freed was not run: {waiting.answer} (004: it waits 8 s)")
    d, held, waiting = _full(new_desktop)
    d.tick(late)
    if wire_answer(waiting.answer) != "busy":
        raise Divergence(f"a call waiting {constants.SLOT + EPS:.3f} s for a slot got "
                         f"{wire_answer(waiting.answer)} (004: -32603 busy after 8 s)")
    return {"slot wait at its edge"}


def enqueue(new_desktop: Callable[[], Any]) -> set[str]:
    """004: 5 s to enqueue an answer, then it is dropped (the relay's entry decides).  An
    answer whose socket frees just before 5 s is sent; just after, there is none."""
    early, late = _edges(T0, constants.ENQUEUE)
    for now, sent in ((early, True), (late, False)):
        d = new_desktop()
        call = _light(d, "e", T0)
        d.start(call, T0)
        d.finish(call, {"result": {"ok": True}}, T0)
        d.tick(now)
        if (call.cid in d.calls) != sent:
            raise Divergence(f"an answer waiting {now - T0:.3f} s to be enqueued was "
                             f"{'dropped' if sent else 'still there'} (004: 5 s to "
                             f"enqueue, then no answer)")
    return {"enqueue at its edge"}


def desktop_expiries(new_desktop: Callable[[], Any]) -> set[str]:
    return retention(new_desktop) | lease(new_desktop) | slot_wait(new_desktop) | \
        enqueue(new_desktop)
