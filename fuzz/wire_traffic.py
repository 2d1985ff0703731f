"""Mixed traffic for the relay's rate limit and its -32028 answers' bucket.

A flood of well-formed requests (``wire_inputs.rate_limits``) never shows a relay that
lets frames it does not answer spend the answers' bucket: here frames that get no
answer (malformed JSON, no id, an id over 128 bytes, a bad traceparent, half a
surrogate pair) are interleaved with well-formed requests, in bursts past the limit and
after pauses, and every well-formed request's outcome is judged by an oracle that keeps
both buckets itself, from 004's rules.
"""

from __future__ import annotations

import random
from typing import Any

from .harness import Divergence
from .oracles import LIGHT_SAMPLE, shape_problem
from .wire_inputs import DESK, USER, frame

#: 004, relay decisions, -32028: "aus einem eigenen Token-Bucket von 300 Burst und 150 pro
#: Sekunde"
ANSWER_BURST, ANSWER_RATE = 300, 150.0
#: 004: "Es beantwortet nur eine rpc.request mit einer Anfrage-ID von höchstens 128 Bytes
#: und einem gültigen traceparent [...] Jeder andere Frame über dem Limit erhält keine
#: Antwort."  Each of these is a frame of that other kind.
SILENT = {
    "malformed JSON": lambda i: '{"type": "rpc.request", "payload": {"id": ',
    "no id": lambda i: {"type": "rpc.request", "payload": {
        k: v for k, v in frame("x", LIGHT_SAMPLE, {})["payload"].items() if k != "id"}},
    "id over 128 bytes": lambda i: frame(f"{i:04d}" + "é" * 63, LIGHT_SAMPLE, {}),
    "bad traceparent": lambda i: frame(f"bt-{i}", LIGHT_SAMPLE, {}, traceparent="00-x-y-01"),
    "lone surrogate": lambda i: frame(f"ls-{i}", LIGHT_SAMPLE, {"t": "\udc00"}),
    "not a request": lambda i: {"type": "rpc.cancel", "payload": {"id": f"nr-{i}"}},
}


class Bucket:
    """The oracle's own token bucket: ``burst`` tokens, refilled at ``rate`` a second.
    Written apart from the relay's on purpose: an oracle that called the implementation's
    bucket would share its bugs."""

    def __init__(self, burst: int, rate: float) -> None:
        self.burst, self.rate, self.tokens, self.last = burst, rate, float(burst), None

    def take(self, now: float) -> bool:
        if self.last is not None and now > self.last:
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now if self.last is None else max(self.last, now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


def schedule(rng: random.Random, burst: int, answer_burst: int) -> list[tuple[float, str]]:
    """(time, kind) of each frame: bursts past the connection limit, long enough to drain
    the answers' bucket with silent frames alone, each ended by well-formed requests,
    then short pauses that refill part of both buckets."""
    out: list[tuple[float, str]] = []
    now = 0.0
    for _ in range(4):
        kinds = ["request"] * burst + [rng.choice(sorted(SILENT)) for _ in range(answer_burst + 2)]
        kinds += rng.choices(["request", *sorted(SILENT)], k=answer_burst // 2 + 4)
        kinds += ["request"] * 3
        out += [(now, k) for k in kinds]
        now += rng.choice((0.25, 0.5, 2.0))
    return out


def _outcome(relay: Any, client: Any, f: Any, rid: str, now: float) -> str:
    out = relay.on_request(client, f, now)
    if out:
        payload = out[0].frame["payload"]
        why = shape_problem(payload)
        if why:
            raise Divergence(f"an answer in mixed traffic: {why}")
        code = (payload.get("error") or {}).get("code")
        return f"{code}" if code != -32028 or payload.get("id") == rid else "-32028, other id"
    return "forwarded" if relay.route((USER, DESK, rid)) else "nothing"


def judge(relay: Any, client: Any, plan: list[tuple[float, str]], answer_burst: int,
          answer_rate: float) -> None:
    """Drive ``plan`` through the relay: a well-formed request under the connection's
    limit is forwarded; over it, 004: "Anfrage über dem Ratenlimit der Verbindung -32028,
    retryable" while the answers' bucket holds a token, else no answer.  A silent frame
    never spends that bucket."""
    conn, answers = Bucket(relay.burst, relay.rate), Bucket(answer_burst, answer_rate)
    for i, (now, kind) in enumerate(plan):
        under = conn.take(now)
        if kind != "request":
            relay.on_request(client, SILENT[kind](i), now)
            continue
        rid = f"q-{i}"
        want = "forwarded" if under else "-32028" if answers.take(now) else "nothing"
        got = _outcome(relay, client, frame(rid, LIGHT_SAMPLE, {}), rid, now)
        if got != want:
            before = ", ".join(sorted({k for _, k in plan[:i] if k != "request"}))
            raise Divergence(f"a well-formed request at {now:g} s, frame {i + 1} of mixed "
                             f"traffic (frames without an answer before it: {before}), got "
                             f"{got}; 004's buckets give {want}")


def mixed_traffic(relay_cls: type, client: Any, seed: int = 0) -> set[str]:
    """At 004's answer bucket and the default connection limit, and at small settings of
    both (where one silent frame too many shows)."""
    limits = {"client": 10**6, "desktop": 10**6, "user": 10**6, "process": 10**6}
    rng = random.Random(seed)
    for kw in ({}, {"burst": 3, "rate": 2.0, "answer_burst": 2, "answer_rate": 1.0}):
        r = relay_cls(limits=limits, **kw)
        r.connect_desktop(USER, DESK)
        burst, rate = (ANSWER_BURST, ANSWER_RATE) if not kw else (2, 1.0)
        judge(r, client, schedule(rng, r.burst, burst), burst, rate)
    return {f"mixed traffic, {k}" for k in SILENT} | {"mixed traffic past the limit"}
