"""The adapter of the Python reference implementation (``osf_check.relay``): the same
harness the in-process fuzzer uses, behind the driver protocol.

    python -m osf_check.driver.reference [--mutant NAME]

It exists to prove the protocol end to end: every implementation mutant the in-process
fuzzer catches must be caught through this process too.  Its store is a file in a
temporary directory, so that ``reopen`` is a real storage crash; snapshots serialize
the database, so a run that restores a snapshot should not then reopen (the fuzzer's
tour restores and never reopens, its Hypothesis walks reopen and never restore).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

from osf_check.fuzz.graph_harness import GraphHarness
from osf_check.fuzz.harness import Divergence
from osf_check.fuzz.late import LATE, named
from osf_check.fuzz.mutants import GraphAgent
from osf_check.fuzz.wire_harness import WireHarness
from osf_check.scratch import memory_dir

from .serve import serve


def _scratch() -> tempfile.TemporaryDirectory:
    # in the room osf-check gives its adapter (OSF_CHECK_SCRATCH, removed by osf-check
    # even if this process is killed), else memory-backed where the machine has it:
    # every step commits, and a tour restores a snapshot before each transition (on a
    # disk each of them waits for an fsync)
    where = os.environ.get("OSF_CHECK_SCRATCH") or memory_dir()
    return tempfile.TemporaryDirectory(prefix="osf-reference-", dir=where)


class GivenGraph(GraphHarness):
    """The graph harness, its start calls made with the key and the arguments osf-check
    sent in the step's data (``given``); an agent mutant (a fresh key per retry) keeps
    its own keys."""

    given: dict[str, Any] = {}

    def key(self, i: int) -> str:
        own = super().key(i)
        return self.given.get("key", own) if type(self.agent) is GraphAgent else own

    def arguments(self, i: int) -> dict[str, Any]:
        return self.given.get("arguments", super().arguments(i))

    def unknown_id(self, r: int) -> str:
        return self.given.get("unknown_id", super().unknown_id(r))

    #: the held answers osf-check asked for in a late request: the checker decides when an
    #: answer arrives, as it does for any adapter, so none arrives unasked
    asked: frozenset[tuple[str, str]] = frozenset()

    def _late_answers(self, after: str) -> None:
        held = self.held
        self.held = {k: v for k, v in held.items() if k in self.asked}
        try:
            super()._late_answers(after)
        finally:
            self.held = held

    def _late_sync_reply(self, label: str) -> None:
        if ("sync", None) in self.asked:
            super()._late_sync_reply(label)

    def _late_poll(self, c: Any, what: str) -> None:
        if ("poll", c.command_id) in self.asked:
            super()._late_poll(c, what)

    def deliver(self, after: str, answers: list[dict[str, Any]]) -> list[str]:
        """The late request: each listed answer the harness holds arrives now (and is
        judged by the harness as in process); returns the deliveries made."""
        self.asked = frozenset((a["kind"], self.cid(a["r"]) if "r" in a else None)
                               for a in answers)
        try:
            done = [self._late_desktop(a, after) for a in answers
                    if a["kind"] in ("sync", "poll")]
            self._late_answers(after)
            return [x for x in done if x] + [named(k, after) for k, cid in self.held
                                             if (k, cid) in self.asked and self._arrives(k, cid)]
        finally:
            self.asked = frozenset()

    def _late_desktop(self, answer: dict[str, Any], after: str) -> str | None:
        """A late answer to the desktop's own call: the last lost sync reply, or a control
        poll's "cancelled" after its Graph was stopped or ended (``after`` says which)."""
        if answer["kind"] == "sync":
            if self.late_reply is None:  # that sync made no call: no reply to deliver
                return None
            self._late_sync_reply(after)
        else:
            self._late_poll(self._command(answer["r"]), after.removeprefix("the Graph "))
        return named(answer["kind"], after)


class GivenWire(WireHarness):
    """The wire harness, its requests made with the params and the operation key
    osf-check sent in the step's data (``given``)."""

    given: dict[str, Any] = {}

    def params(self, o: int) -> dict[str, Any]:
        return self.given.get("params", super().params(o))

    def op_key(self, o: int) -> str:
        return self.given.get("key", super().op_key(o))

    def failure(self, o: int, a: int, outcome: str) -> dict[str, Any]:
        return self.given.get("error", super().failure(o, a, outcome))


class Reference:
    def __init__(self, model: str, params: dict[str, int], seed: int, mutant: str | None):
        from osf_check.fuzz.driver import model_for
        self.model = model_for(model, mutant, params)
        self.mutant, self.seed = mutant, seed
        self.data: dict[str, Any] = {}
        self.tmp = _scratch()
        self.h: Any = None
        self.seen = 0
        self.sent: list[dict[str, Any]] = []
        self.labels = {i.label: i for i in self.model.instances}

    def reset(self) -> None:
        if self.h is not None:
            self.h.close()
        self.tmp.cleanup()
        self.tmp = _scratch()
        # a closure, not the bound method: a snapshot deep-copies the harness, and with it
        # a bound method's object, whose data would then be the snapshot's, not the step's
        handed = lambda r, status: self._handed_over(r, status)  # noqa: E731
        if self.model.name == "wire-relay":
            self.h = GivenWire(self.model, os.path.join(self.tmp.name, "claims.sqlite"),
                               mutant=self.mutant, seed=self.seed)
        else:
            self.h = GivenGraph(self.model, os.path.join(self.tmp.name, "outbox.sqlite"),
                                mutant=self.mutant, seed=self.seed, result_for=handed)
        self.seen = 0

    def _handed_over(self, r: int, status: str) -> Any:
        """What the Graph of this step hands over: osf-check's result, and its error."""
        from osf_check.fuzz.oracles import Failed
        result = self.data.get("result", "done")
        error = self.data.get("error")
        return result if error is None else Failed(result, error)

    def step(self, action: str, args: dict[str, int], label: str,
             data: dict[str, Any]) -> dict[str, Any]:
        inst = self.labels.get(label)
        if inst is None or inst.name != action or dict(inst.args) != args:
            raise ValueError(f"no action {label} of {self.model.name} at these parameters")
        self.data = self.h.given = data
        posts = {k: v for k, v in getattr(self.h, "net", {}).items() if v[0] == "sent"}
        try:
            return self.h.apply(inst)
        except Divergence as e:  # the implementation broke a rule the harness checks
            self.h.violations.append(str(e))
            return {}
        finally:  # the completions this step posted (graph-relay)
            self.sent = [{"post": v[1]} for k, v in getattr(self.h, "net", {}).items()
                         if action == "graph_finish" and v[0] == "sent" and posts.get(k) != v]

    def observe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"offers": sorted(self.h.offers()), "due": self.h.due()}
        try:
            out["state"] = self.model.show_state(self.h.abstract())
        except Divergence as e:  # a state the model cannot express (more runs than keys)
            self.h.violations.append(str(e))
        if hasattr(self.h, "view"):  # what the agent knows of its runs (capability late)
            out["known"] = self.h.view.known
        out["violations"], self.seen = self.h.violations[self.seen:], len(self.h.violations)
        out["sent"], self.sent = self.sent, []
        return out

    def snapshot(self) -> Any:
        return self.h.snapshot(), self.seen

    def restore(self, snap: Any) -> None:
        self.h.restore(snap[0])
        self.seen = snap[1]

    def reopen(self) -> None:
        self.h.reopen()

    def advance(self, seconds: float) -> None:
        self.h.advance(seconds)

    def late(self, after: str, answers: list[dict[str, Any]]) -> list[str]:
        if not hasattr(self.h, "deliver"):
            raise ValueError(f"{self.model.name} loses no answers to deliver late")
        return self.h.deliver(after, answers)

    def idle(self, event: str) -> None:
        if event not in self.h.IDLE:
            raise ValueError(f"{self.model.name} has no idle event {event!r}")
        why = self.h.idle(event)
        if why:
            self.h.violations.append(why)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m osf_check.driver.reference",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--mutant", default=None, help="switch on one of the implementation's "
                                                   "mutants (osf-check list)")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="do not offer snapshots (the harness then replays paths from reset)")
    ap.add_argument("--no-late", action="store_true",
                    help="do not offer late answers (lost answers are then never delivered)")
    ap.add_argument("--no-late-kinds", action="store_true",
                    help="offer late answers without listing their kinds (as an adapter "
                         "written before late_kinds: asked for the first four only)")
    ap.add_argument("--no-late-steps", action="store_true",
                    help="do not announce late_steps (as an adapter written before the "
                         "late_post and late_ack steps: never asked to take them)")
    a = ap.parse_args(argv)
    if a.mutant is not None:
        from osf_check.fuzz.driver import IMPL_MUTANTS
        known = sorted({m for ms in IMPL_MUTANTS.values() for m in ms})
        if a.mutant not in known:
            print(f"reference adapter: no mutant {a.mutant!r} (known: {', '.join(known)})",
                  file=sys.stderr)
            return 2
    caps = ("reopen", "clock", "idle") + (() if a.no_snapshot else ("snapshot",)) + \
        (() if a.no_late else ("late",)) + (() if a.no_late_steps else ("late_steps",))
    name = "osf-check reference (Python)" + (f", mutant {a.mutant}" if a.mutant else "")
    kinds = None if a.no_late_kinds else tuple(LATE)
    return serve(lambda m, p, s: Reference(m, p, s, a.mutant), name=name, capabilities=caps,
                 late_kinds=kinds)


if __name__ == "__main__":
    sys.exit(main())
