"""Requests from 004's domains, not the model's: what the wire model abstracts away, tried
on fresh cores of the implementation's own classes and judged from 004 alone.

The model's phones send two methods with abstract keys and params; a relay or desktop
that mishandles anything else passed the tour.  Here each field of a request takes its
valid values and the boundary and invalid ones 004 names: every method it names, in
its class (mutation or read, heavy or light); params that are no object; ids reused
with other params; versions whose text order is not their numeric order; answers whose
UTF-8 size and character count fall on either side of the stored-answer limit; a flood
after idling; handlers of each method class that outlast 45 and 95 s of dispatch.  Each function raises :class:`~.harness.Divergence` saying what the
implementation did and what 004 says, and returns the data classes it tried.
"""

from __future__ import annotations

from typing import Any, Callable

from osf_check.relay.wire.envelope import TRACE

from .deadlines import DEADLINES, dispatch_limit
from .harness import Divergence
from .oracles import HEAVY_004, HEAVY_SLOTS, LIGHT_SAMPLE, LIGHT_SLOTS, MUTATIONS_004, \
    NAMED_004, READS_004, STORED_ANSWER_LIMIT, shape_problem, wire_answer

USER, DESK = "user-1", "desk-1"
PHONE = f"phone-0::{DESK}"
#: 004: the relay type-checks the params of this one method; any other payload is opaque
#: to it, so empty params pass it
RELAY_CHECKED = {"session.syncHistoryState": {"sessionId": "s-1"}}


def _params(method: str) -> dict[str, Any]:
    """Params the relay forwards for this method."""
    return dict(RELAY_CHECKED.get(method, {}))


def frame(rid: str, method: Any, params: Any, key: str | None = None,
          traceparent: str | None = TRACE) -> dict[str, Any]:
    """An ``rpc.request`` as a phone may write it (written here, not by the phone's code,
    which refuses to build some of these)."""
    p: dict[str, Any] = {"id": rid, "method": method, "params": params}
    if traceparent is not None:
        p["traceparent"] = traceparent
    if key is not None:
        p["idempotencyKey"] = key
    return {"type": "rpc.request", "payload": p}


def forwarded(f: dict[str, Any], user: str = USER) -> dict[str, Any]:
    """The frame as the relay forwards it (clientId and userId added from the socket)."""
    return {"type": "rpc.request", "payload": {**f["payload"], "clientId": PHONE, "userId": user}}


def _one(out: list[Any]) -> dict[str, Any] | None:
    """The relay's answer to a frame it read (None: admitted or dropped)."""
    return out[0].frame["payload"] if out else None


def _shaped(where: str, answer: Any) -> None:
    why = shape_problem(answer)
    if why:
        raise Divergence(f"{where}: {why}")


# the relay ---------------------------------------------------------------------------------
def relay_admission(new_relay: Callable[..., Any], client: Any) -> set[str]:
    """Admission of each method 004 names in its class, of malformed frames, and of ids
    reused: "-32021 für ein identisches Duplikat, -32022 für eine andere Anfrage unter
    demselben Schlüssel"."""
    tried: set[str] = set()
    for i, method in enumerate(NAMED_004):
        r = new_relay()
        got = _one(r.on_request(client, frame(f"m-{i}", method, _params(method), "key-1"), 0.0))
        if got is not None:
            raise Divergence(f"{method} (named in 004's manifest) with a key was refused: {got}")
        if not r.route((USER, DESK, f"m-{i}")):
            raise Divergence(f"{method} was admitted but never forwarded to the desktop")
        tried.add(f"method {method}")
    for method in MUTATIONS_004:
        got = _one(new_relay().on_request(client, frame("m", method, {}), 0.0))
        _shaped(f"{method} without a key", got)
        if (got or {}).get("error", {}).get("code") != -32026:
            raise Divergence(f"the mutation {method} without idempotencyKey was answered "
                             f"{got} (004: -32026, reason protocolUpdateRequired)")
    for method in READS_004:
        got = _one(new_relay().on_request(client, frame("m", method, _params(method)), 0.0))
        if got is not None:
            raise Divergence(f"the read {method} without a key was refused: {got} (004 asks "
                             f"a key of mutations only)")
    for method in MUTATIONS_004:  # 004: an empty key is the desktop's -32602, not -32026
        r = new_relay()
        got = _one(r.on_request(client, frame("e", method, {}, ""), 0.0))
        if got is not None or not r.route((USER, DESK, "e")):
            raise Divergence(f"the mutation {method} with an empty key was not forwarded: "
                             f"{got} (004: the relay refuses a missing key, -32026; an empty "
                             f"one is the desktop's -32602)")
    tried |= {"mutation without key", "mutation with an empty key", "read without key"}
    traced = frame("ts", LIGHT_SAMPLE, {})
    traced["payload"]["tracestate"] = "vendor=ü,other=1"  # 004: tracestate is optional
    r = new_relay()
    if _one(r.on_request(client, traced, 0.0)) is not None or not r.route((USER, DESK, "ts")):
        raise Divergence("a request with a tracestate was not forwarded (004: traceparent "
                         "is required, tracestate optional)")
    tried.add("request with tracestate")
    bad = {"unknown method": frame("b", "system.noSuchMethod", {}),
           "empty method": frame("b", "", {}),
           "no traceparent": frame("b", LIGHT_SAMPLE, {}, traceparent=None),
           "malformed traceparent": frame("b", LIGHT_SAMPLE, {}, traceparent="00-x-y-01"),
           "unknown field userId": {"type": "rpc.request", "payload": {
               **frame("b", LIGHT_SAMPLE, {})["payload"], "userId": "someone-else"}},
           "syncHistoryState without sessionId": frame("b", "session.syncHistoryState", {})}
    for name, f in bad.items():
        got = _one(new_relay().on_request(client, f, 0.0))
        if got is None or "error" not in got:
            raise Divergence(f"a request with {name} was not refused before forwarding (004)")
        _shaped(f"the refusal of {name}", got)
        if name.endswith("method") and got["error"].get("code") != -32601:
            raise Divergence(f"a request with {name} was answered {got['error'].get('code')} "
                             f"(004: -32601, not in the relay's allow-list)")
        tried.add(f"request {name}")
    tried |= duplicates(new_relay, client)
    return tried


def duplicates(new_relay: Callable[..., Any], client: Any) -> set[str]:
    """An id pending: the identical request again, then others under the same id."""
    base = ("dup", "system.activateCodexAuthProfile", {"profileId": "a"}, "key-1")
    others = {"other params": ("dup", base[1], {"profileId": "b"}, base[3]),
              "params not an object": ("dup", base[1], ["profileId", "a"], base[3]),
              "other key": ("dup", base[1], base[2], "key-2"),
              "other method": ("dup", "system.activateClaudeAccount", base[2], base[3])}
    r = new_relay()
    if _one(r.on_request(client, frame(*base), 0.0)) is not None:
        raise Divergence("a first request was refused")
    for name, rid in (("identical", "dup"), ("identical, id in spaces", " dup\t")):
        # 004: the pending key holds the trimmed request id
        got = _one(r.on_request(client, frame(rid, *base[1:]), 0.0))
        if (got or {}).get("error", {}).get("code") != -32021:
            raise Divergence(f"the {name} request under a pending id was answered {got} "
                             f"(004: -32021)")
    for name, args in others.items():
        got = _one(r.on_request(client, frame(*args), 0.0))
        code = (got or {}).get("error", {}).get("code")
        # params that are no object may be refused as a malformed frame first
        if code != -32022 and not (name == "params not an object" and code == -32600):
            raise Divergence(f"a request with {name} under a pending id was answered "
                             f"{wire_answer(got)} ({code}) (004: -32022, another request "
                             f"under the same key)")
    return {f"pending id, {n}" for n in ("identical", "identical, id in spaces", *others)}


def rate_limits(relay_cls: type, client: Any) -> set[str]:
    """Token buckets after idling: a bucket refilled while idle holds at most its burst
    (the connection's own limit, small and at its default, and the -32028 answers' 300)."""
    def flood(r: Any, n: int, t: float, tag: str) -> tuple[int, int]:
        outs = [_one(r.on_request(client, frame(f"{tag}-{i}", LIGHT_SAMPLE, {}), t))
                for i in range(n)]
        for o in outs:
            if o is not None:
                _shaped("an answer to a flood", o)
        limited = sum(1 for o in outs if (o or {}).get("error", {}).get("code") == -32028)
        return n - limited, limited
    tried = set()
    for burst, rate, idle in ((2, 1.0, 10.0), (None, None, 60.0)):
        kw = {} if burst is None else {"burst": burst, "rate": rate}
        r = relay_cls(limits={"client": 10**6, "desktop": 10**6, "user": 10**6,
                              "process": 10**6}, **kw)
        r.connect_desktop(USER, DESK)
        cap = r.burst
        flood(r, cap, 0.0, "a")
        passed, _ = flood(r, 3 * cap + 5, idle, "b")
        if passed > cap:
            raise Divergence(f"after {idle:g} s idle, {passed} frames in one instant passed a "
                             f"connection limit of burst {cap} (a token bucket never holds "
                             f"more than its burst)")
        tried.add(f"flood after idling, burst {cap}")
    r = relay_cls(burst=1, rate=1.0)
    r.connect_desktop(USER, DESK)
    answers = r.answer_burst
    flood(r, answers + 2, 0.0, "c")
    _, limited = flood(r, 2 * answers, 100.0, "d")
    if limited > answers:
        raise Divergence(f"after 100 s idle, {limited} -32028 answers in one instant (004: "
                         f"from a token bucket of burst {answers})")
    tried.add("-32028 answers after idling")
    return tried


def params_not_objects(new_relay: Callable[..., Any], new_desktop: Callable[[], Any],
                       client: Any) -> set[str]:
    """Params that are no object, end to end: refused by the relay, or forwarded (004: the
    payload is opaque to the relay) and refused by the desktop; never run."""
    tried = set()
    for name, params in (("a list", ["a"]), ("a string", "a"), ("null", None), ("a number", 1)):
        for method in ("system.activateCodexAuthProfile", LIGHT_SAMPLE):
            r = new_relay()
            f = frame("p", method, params, "key-1")
            got = _one(r.on_request(client, f, 0.0))
            if got is not None:
                _shaped(f"the refusal of params {name}", got)
                if "error" not in got:
                    raise Divergence(f"params {name} were answered with a result by the relay")
            else:
                out = r.route((USER, DESK, "p"))
                d = new_desktop()
                call = d.receive(out[0].frame, 0.0)
                if d.start(call, 0.0) == "run":
                    raise Divergence(f"{method} whose params are {name} was run (004: the "
                                     f"desktop validates params; invalid ones are -32602)")
            tried.add(f"params {name}")
    return tried


# the desktop ---------------------------------------------------------------------------------
def desktop_inputs(new_desktop: Callable[[], Any]) -> set[str]:
    """Slots per class for every heavy method 004 names, params that are no object, a
    user mismatch, and stored answers about the 256 KiB limit."""
    tried = slots(new_desktop)
    d = new_desktop()
    call = d.receive(forwarded(frame("u", LIGHT_SAMPLE, {}), user="someone-else"), 0.0)
    if d.start(call, 0.0) == "run" or wire_answer(call.answer) != "final_error":
        raise Divergence(f"a request for another user was answered {call.answer} (004: "
                         f"forbidden)")
    tried.add("userId of another user")
    return tried | stored_sizes(new_desktop)


def slots(new_desktop: Callable[[], Any]) -> set[str]:
    """004: 8 light slots, 2 heavy ones, "sodass ein langsamer Medien-Lesevorgang
    system.ping nicht aufhalten kann" (and eight pings no heavy call)."""
    tried = set()

    def fill(d: Any, method: str, n: int, tag: str) -> None:
        for i in range(n):
            if d.start(d.receive(forwarded(frame(f"{tag}{i}", method, {})), 0.0), 0.0) != "run":
                raise Divergence(f"{method} {i + 1} found no slot")

    for method in HEAVY_004:
        for light in (LIGHT_SLOTS, 2):
            d = new_desktop()
            fill(d, LIGHT_SAMPLE, light, "l")
            call = d.receive(forwarded(frame("h", method, {}, "key-h")), 0.0)
            if not d.can_start(call):
                raise Divergence(f"{method} (heavy) waits while {light} light calls run: 004 "
                                 f"gives heavy calls their own {HEAVY_SLOTS} slots")
        tried.add(f"heavy {method}")
    d = new_desktop()
    fill(d, HEAVY_004[0], HEAVY_SLOTS, "h")
    fill(d, LIGHT_SAMPLE, LIGHT_SLOTS - 1, "l")
    last = d.receive(forwarded(frame("l-last", LIGHT_SAMPLE, {})), 0.0)
    if not d.can_start(last):
        raise Divergence(f"the {LIGHT_SLOTS}th light call waits while {HEAVY_SLOTS} heavy and "
                         f"{LIGHT_SLOTS - 1} light calls run (004: 8 light slots of their own)")
    d.start(last, 0.0)
    for name, method in (("light", LIGHT_SAMPLE), ("heavy", HEAVY_004[0])):
        over = d.receive(forwarded(frame(f"over-{name}", method, {})), 0.0)
        if d.can_start(over):
            raise Divergence(f"a {name} call found a slot beyond 004's {LIGHT_SLOTS} light and "
                             f"{HEAVY_SLOTS} heavy ones")
    return tried | {"light calls beside full heavy slots", "a slot beyond the limits"}


def stored_sizes(new_desktop: Callable[[], Any]) -> set[str]:
    """"Eine gespeicherte Antwort über 256 KiB wird als mehrdeutig festgehalten": bytes,
    so Japanese text of fewer characters than the limit is over it, and a smaller one
    under it; each answer is stored as it was sent (the retry gets the same)."""
    cases = {"ASCII under the limit": ("x" * (STORED_ANSWER_LIMIT - 4096), False),
             "ASCII over the limit": ("x" * (STORED_ANSWER_LIMIT + 16), True),
             "Japanese over the limit in bytes, under it in characters":
                 ("日" * (STORED_ANSWER_LIMIT // 3 + 4096), True),
             "Japanese under the limit in bytes":
                 ("日" * (STORED_ANSWER_LIMIT // 3 - 4096), False),
             "emoji over the limit in bytes": ("😀" * (STORED_ANSWER_LIMIT // 4 + 1024), True)}
    tried = set()
    for name, (text, over) in cases.items():
        d = new_desktop()
        f = frame("s", "system.activateCodexAuthProfile", {"profileId": "p"}, "key-s")
        call = d.receive(forwarded(f), 0.0)
        if d.start(call, 0.0) != "run":
            raise Divergence(f"a fresh mutation was not run: {call.answer}")
        d.finish(call, {"result": {"profiles": [{"profileId": text, "active": True}]}}, 0.0)
        got = wire_answer(call.answer)
        want = "ambiguous" if over else "success"
        if got != want:
            size = len(text.encode("utf-8"))
            raise Divergence(f"a mutation's answer of {len(text):,} characters, {size:,} UTF-8 "
                             f"bytes ({name}) was stored and sent as {got} (004: an answer "
                             f"over 256 KiB is kept as ambiguous; {want} here)")
        again = d.receive(forwarded({**f, "payload": {**f["payload"], "id": "s2"}}), 1.0)
        d.start(again, 1.0)
        if wire_answer(again.answer) != want:
            raise Divergence(f"the retry of a mutation whose answer was {want} ({name}) got "
                             f"{wire_answer(again.answer)}")
        tried.add(f"stored answer, {name}")
    return tried


#: how long the probes' handlers run: within 45 s, between 45 and 95 s, past 95 s
HANDLER_RUNS = (DEADLINES["dispatch"] / 2, (DEADLINES["dispatch"] + DEADLINES["dispatch_load"]) / 2,
                DEADLINES["dispatch_load"] + 5)


def dispatch_deadlines(new_desktop: Callable[[], Any]) -> set[str]:
    """"Jede Station hat ihre eigene Frist": 45 s of dispatch, "oder 95 für run.chatLoad
    und run.chatLoadThread".  Every heavy method 004 names (the loads and the others)
    and a light one, its handler running each of :data:`HANDLER_RUNS`: the answer comes
    when the handler ends, or at its class's limit as -32603 "Desktop request timed
    out.", whichever is first (the desktop's timers fire when it says they are due)."""
    tried = set()
    for method in (*HEAVY_004, LIGHT_SAMPLE):
        limit = dispatch_limit(method)
        for runs in HANDLER_RUNS:
            at, got = _handled(new_desktop(), method, runs)
            want = ("success", runs) if runs < limit else ("timed_out", limit)
            if (got, at) != want:
                raise Divergence(f"{method} whose handler runs {runs:g} s was answered "
                                 f"{got} at {at:g} s (004: dispatch is cut after "
                                 f"{limit:g} s for {method}, so {want[0]} at {want[1]:g} s)")
        tried.add(f"dispatch limit of {method}")
    return tried


def _handled(d: Any, method: str, runs: float) -> tuple[float | None, str]:
    """(when, what) the desktop answered a call started at 0 whose handler returns
    after ``runs`` seconds; its own timers fire in between, each when due."""
    call = d.receive(forwarded(frame("d", method, {}, "key-d")), 0.0)
    if d.start(call, 0.0) != "run":
        raise Divergence(f"{method}, a fresh call with a free slot, was not run: {call.answer}")
    for t, kind, ref in d.timers():
        if t > runs or call.answer is not None:
            break
        if ref == call.cid and d.fire(kind, ref, t) and call.answer is not None:
            return t, wire_answer(call.answer)
    if call.answer is None and call.stage == "dispatch":
        d.finish(call, {"result": {"ok": True}}, runs)
        return runs, wire_answer(call.answer)
    return None, wire_answer(call.answer)


def timeout_shapes(new_desktop: Callable[[], Any]) -> set[str]:
    """The two -32603 answers (slot wait, dispatch cut), for a call and a joined copy:
    "einfache interne Fehler ohne retryable-Kennzeichen"."""
    d = new_desktop()
    f = forwarded(frame("t", "system.activateCodexAuthProfile", {"profileId": "p"}, "key-t"))
    first = d.receive(f, 0.0)
    d.start(first, 0.0)
    joined = d.receive({**f, "payload": {**f["payload"], "id": "t2"}}, 0.0)
    if d.start(joined, 0.0) != "join":
        raise Divergence(f"a retry while its first copy runs did not join it: {joined.answer}")
    waiting = []
    for i in range(LIGHT_SLOTS + 1):
        c = d.receive(forwarded(frame(f"w{i}", LIGHT_SAMPLE, {})), 0.0)
        if d.can_start(c):
            d.start(c, 0.0)
        else:
            waiting.append(c)
    for t, kind, ref in d.timers():  # every call's deadline, earliest first
        if isinstance(ref, int):
            d.fire(kind, ref, t)
    seen = [c.answer for c in (first, joined, *waiting) if c.answer is not None]
    if not seen:
        raise Divergence("no call was answered after its deadline passed")
    for answer in seen:
        _shaped("a desktop deadline's answer", answer)
    return {"-32603 answers' shape"}
