"""Deadline analysis of the wire protocol with z3 (linear real arithmetic).

A request reaches the desktop at time 0 (the relay creates its pending entry and
the phone starts waiting at the same moment; network latency is left out, which
only makes every margin smaller).  The desktop waits ``w`` for a slot, runs the
handler for ``d`` and takes ``e`` to enqueue the answer, each at most its
deadline; its last possible answer is slot + dispatch + enqueue.

- **B9**: for every method class, every schedule answers before the relay's
  pending entry expires; otherwise z3 gives the violating schedule.
- **B10**: the durable claim's lease (taken when the slot is granted) outlives the
  handler that took it.
- **Gives up first**: every place where the phone stops waiting before the desktop
  may answer, with a concrete schedule for each thing the phone's immediate retry
  (same key) can meet: the first copy still waiting for its slot, the running claim
  (it joins), the stored answer, or, only if the lease were shorter than the
  handler, a first copy whose lease ended while it still runs (a race: it can run
  twice).

>>> report = analyse()
>>> report.ok, [c.name for c in report.classes][:2]
(True, ['older timeline page', 'first timeline load'])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping

import z3
from osf_check.models.errors import BadValue
from osf_check.relay import constants as doc

__all__ = ["DEADLINES", "CLASSES", "analyse", "TimingReport", "ClassReport", "Schedule"]

#: every deadline of wire-relay.md, in seconds (settable with --set name=seconds)
DEADLINES: dict[str, float] = {
    "slot": doc.SLOT, "dispatch": doc.DISPATCH, "dispatch_load": doc.DISPATCH_LOAD,
    "enqueue": doc.ENQUEUE, "phone_older_page": doc.PHONE_OLDER_PAGE,
    "phone_first_load": doc.PHONE_FIRST_LOAD, "phone_outbox_ios": doc.PHONE_OUTBOX_IOS,
    "phone_outbox_android": doc.PHONE_OUTBOX_ANDROID, "phone_other": doc.PHONE_OTHER,
    "relay_older_page": doc.RELAY_OLDER_PAGE, "relay_first_load": doc.RELAY_FIRST_LOAD,
    "relay_outbox": doc.RELAY_OUTBOX, "relay_other": doc.RELAY_OTHER, "lease": doc.LEASE,
    "retention": doc.RETENTION,
}


@dataclass(frozen=True)
class MethodClass:
    name: str
    methods: str
    dispatch: str
    phone: str
    relay: str


CLASSES = (
    MethodClass("older timeline page", "run.chatLoadPageBefore", "dispatch", "phone_older_page",
                "relay_older_page"),
    MethodClass("first timeline load", "run.chatLoad, run.chatLoadThread", "dispatch_load",
                "phone_first_load", "relay_first_load"),
    MethodClass("outbox submit (iOS)", "run.chatOutboxSubmit", "dispatch", "phone_outbox_ios",
                "relay_outbox"),
    MethodClass("outbox submit (Android)", "run.chatOutboxSubmit", "dispatch",
                "phone_outbox_android", "relay_outbox"),
    MethodClass("anything else", "every other method", "dispatch", "phone_other", "relay_other"),
)


@dataclass
class Schedule:
    """One concrete timeline from a z3 model (seconds from the request's arrival)."""

    slot_wait: float
    dispatch: float
    enqueue: float
    retry_at: float | None = None

    @property
    def claim_at(self) -> float:
        return self.slot_wait

    @property
    def stored_at(self) -> float:
        return self.slot_wait + self.dispatch

    @property
    def answer_at(self) -> float:
        return self.slot_wait + self.dispatch + self.enqueue

    def as_dict(self) -> dict[str, float]:
        d = {"slot_wait": self.slot_wait, "dispatch": self.dispatch, "enqueue": self.enqueue,
             "answer_at": self.answer_at}
        if self.retry_at is not None:
            d["retry_at"] = self.retry_at
        return d


@dataclass
class ClassReport:
    name: str
    methods: str
    desktop_last: float
    phone: float
    relay: float
    lease: float
    b9: bool
    b9_schedule: Schedule | None  # a violating schedule
    b10: bool
    b10_schedule: Schedule | None
    gives_up_first: bool
    retry_meets: dict[str, Schedule] = field(default_factory=dict)


@dataclass
class TimingReport:
    deadlines: dict[str, float]
    classes: list[ClassReport]

    @property
    def ok(self) -> bool:
        return all(c.b9 and c.b10 for c in self.classes)


def _num(v: z3.ExprRef) -> float:
    f = Fraction(str(v.as_fraction())) if hasattr(v, "as_fraction") else Fraction(str(v))
    return float(f)


def _solve(constraints: list, names: tuple[str, ...], seed: int, maximize=None) -> dict | None:
    opt = z3.Optimize()  # seeded through the global smt.random_seed
    opt.add(*constraints)
    if maximize is not None:
        opt.maximize(maximize)
    got = opt.check()
    if got == z3.unknown:  # never read as "no violating schedule", which would say "holds"
        raise RuntimeError(f"z3 could not decide a timing query ({opt.reason_unknown()})")
    if got != z3.sat:
        return None
    m = opt.model()
    return {n: _num(m.eval(z3.Real(n), model_completion=True)) for n in names}


def analyse(overrides: Mapping[str, float] | None = None, seed: int = 0) -> TimingReport:
    """Check B9 and B10 for every method class and list where someone gives up first."""
    z3.set_param("smt.random_seed", seed)
    dl = dict(DEADLINES)
    for k, v in (overrides or {}).items():
        if k not in dl:
            raise BadValue(f"unknown deadline {k!r} (known: {', '.join(dl)})")
        if not 0 <= v < math.inf:  # nan fails both; inf would reach z3 as no number
            raise BadValue(f"deadline {k} must be a finite number of seconds, 0 or more, "
                           f"got {v}")
        dl[k] = float(v)
    w, d, e, r = z3.Real("w"), z3.Real("d"), z3.Real("e"), z3.Real("r")
    names = ("w", "d", "e", "r")
    out = []
    for mc in CLASSES:
        slot, disp, enq = dl["slot"], dl[mc.dispatch], dl["enqueue"]
        phone, relay, lease = dl[mc.phone], dl[mc.relay], dl["lease"]
        bounds = [0 <= w, w <= slot, 0 <= d, d <= disp, 0 <= e, e <= enq]
        answer = w + d + e
        # B9: is there a schedule whose answer comes at or after the entry's expiry?
        bad9 = _solve(bounds + [answer >= relay], names, seed, maximize=answer)
        s9 = Schedule(bad9["w"], bad9["d"], bad9["e"]) if bad9 else None
        # B10: is there a handler that outlives its lease (taken at the slot grant)?
        bad10 = _solve(bounds + [d >= lease], names, seed, maximize=d)
        s10 = Schedule(bad10["w"], bad10["d"], bad10["e"]) if bad10 else None
        late = _solve(bounds + [answer > phone], names, seed, maximize=answer)
        rep = ClassReport(mc.name, mc.methods, slot + disp + enq, phone, relay, lease,
                          bad9 is None, s9, bad10 is None, s10, late is not None)
        if late is not None:
            # the phone retries with the same key the moment it gives up
            retry = [r == phone] + bounds + [answer > phone]
            regions = {
                "waits with the first copy for a slot, then joins its claim": [r < w],
                "joins the running claim (in-memory) and gets its answer": [w <= r, r < w + d,
                                                                            r < w + lease],
                "gets the stored answer": [w + d <= r],
                "races a live first copy whose lease ended: can run twice": [w + lease <= r,
                                                                             r < w + d],
            }
            for what, cond in regions.items():
                got = _solve(retry + cond, names, seed)
                if got is not None:
                    rep.retry_meets[what] = Schedule(got["w"], got["d"], got["e"], got["r"])
        out.append(rep)
    return TimingReport(dl, out)


def text(report: TimingReport) -> str:
    lines = ["method class × station (seconds from the request's arrival at the desktop)",
             f"  {'class':<25} {'desktop by':>10} {'phone waits':>11} {'relay keeps':>11}   "
             f"{'B9':<8} {'B10':<8} phone gives up first"]
    for c in report.classes:
        lines.append(f"  {c.name:<25} {c.desktop_last:>10g} {c.phone:>11g} {c.relay:>11g}   "
                     f"{'holds' if c.b9 else 'FAILS':<8} {'holds' if c.b10 else 'FAILS':<8} "
                     f"{'yes' if c.gives_up_first else 'no'}")
    for c in report.classes:
        if not c.b9 and c.b9_schedule:
            s = c.b9_schedule
            lines.append(f"\nB9 fails for {c.name}: slot wait {s.slot_wait:g} s + dispatch "
                         f"{s.dispatch:g} s + enqueue {s.enqueue:g} s = answer at "
                         f"{s.answer_at:g} s, but the relay forgets the request at {c.relay:g} s: "
                         f"the answer finds no route and the phone gets -32012")
        if not c.b10 and c.b10_schedule:
            s = c.b10_schedule
            lines.append(f"\nB10 fails for {c.name}: the claim is taken at {s.claim_at:g} s, its "
                         f"lease ends at {s.claim_at + c.lease:g} s, the handler runs until "
                         f"{s.stored_at:g} s: a retry can race the live first copy")
    gave = [c for c in report.classes if c.gives_up_first]
    if gave:
        lines.append("\nwhere the phone gives up before the desktop may answer (it retries at "
                     "once, same key):")
    for c in gave:
        lines.append(f"  {c.name}: the phone stops at {c.phone:g} s, the desktop may answer "
                     f"until {c.desktop_last:g} s")
        for what, s in c.retry_meets.items():
            lines.append(f"    - {what}: e.g. slot wait {s.slot_wait:g} s, dispatch "
                         f"{s.dispatch:g} s, retry at {s.retry_at:g} s")
    changed = {k: v for k, v in report.deadlines.items() if v != DEADLINES[k]}
    if changed:
        lines.append("\ndeadlines changed with --set: " + ", ".join(
            f"{k}={v:g} s (spec {DEADLINES[k]:g} s)" for k, v in changed.items()))
    lines.append("\n" + verdict(report))
    return "\n".join(lines) + "\n"


def verdict(report: TimingReport) -> str:
    """One line: which of B9 and B10 fail, and for which method classes."""
    if report.ok:
        return "B9 and B10 hold for every method class"
    parts = []
    for prop, attr in (("B9", "b9"), ("B10", "b10")):
        bad = [c.name for c in report.classes if not getattr(c, attr)]
        parts.append(f"{prop} fails for {', '.join(bad)}" if bad else
                     f"{prop} holds for every method class")
    return "; ".join(parts)


def slug(name: str) -> str:
    """A file-name part for a method class: ``outbox submit (iOS)`` -> ``outbox-submit-ios``."""
    return "-".join("".join(ch if ch.isalnum() else " " for ch in name.lower()).split())
