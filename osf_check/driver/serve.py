"""The adapter's side of the driver protocol, for adapters written in Python.

:func:`serve` reads requests from stdin and writes replies to stdout, one JSON object
per line; an :class:`Implementation` does the work.  Any exception in the
implementation becomes an ``error`` reply naming it, so the harness reports a broken
adapter instead of a verdict.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import IO, Any, Callable, Protocol

from .protocol import VERSION


class Implementation(Protocol):
    """What an adapter does for each request (state is the model's ``show_state``)."""

    def reset(self) -> None: ...
    def step(self, action: str, args: dict[str, int], label: str,
             data: dict[str, Any]) -> dict[str, Any]: ...   # the step's outputs
    def observe(self) -> dict[str, Any]: ...  # state, offers, and optionally due/violations
    def snapshot(self) -> Any: ...
    def restore(self, snap: Any) -> None: ...
    def reopen(self) -> None: ...
    def advance(self, seconds: float) -> None: ...
    def idle(self, event: str) -> None: ...  # a violation in observe if it changed anything
    # capability late: deliver the held answers listed; returns the deliveries, as named in
    # the report ("get_graph_run's answer after cancel_graph_run")
    def late(self, after: str, answers: list[dict[str, Any]]) -> list[str]: ...


def serve(make: Callable[[str, dict[str, int], int], Implementation], *, name: str,
          capabilities: tuple[str, ...] = ("snapshot", "reopen", "clock"),
          late_kinds: tuple[str, ...] | None = None,
          stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer requests until ``bye`` or the end of stdin; returns the exit status.
    ``late_kinds``: with the late capability, the kinds of late answers ``make``'s
    implementation delivers (None: the welcome lists none, and is asked for the first
    four, ``fuzz.late.FIRST_KINDS``)."""
    inp, out = stdin or sys.stdin, stdout or sys.stdout
    impl: Implementation | None = None
    snaps: dict[str, Any] = {}
    for line in inp:
        msg = json.loads(line)
        kind, rid = msg["type"], msg["id"]
        reply: dict[str, Any] = {"id": rid}
        try:
            if kind == "hello":
                if msg["protocol"] != VERSION:
                    raise ValueError(f"protocol {msg['protocol']} is not {VERSION}")
                impl = make(msg["model"], msg["params"], msg["seed"])
                reply |= {"type": "welcome", "protocol": VERSION, "implementation": name,
                          "capabilities": list(capabilities)}
                if late_kinds is not None and "late" in capabilities:
                    reply["late_kinds"] = list(late_kinds)
            elif kind == "bye":
                reply["type"] = "ok"
            elif impl is None:
                raise ValueError(f"{kind} before hello")
            elif kind == "snapshot":
                token = str(len(snaps) and max(int(k) for k in snaps) + 1)
                snaps[token] = impl.snapshot()
                reply |= {"type": "saved", "snapshot": token}
            elif kind == "drop":
                snaps.pop(msg["snapshot"], None)
                reply["type"] = "ok"
            elif kind == "late":
                delivered = impl.late(msg["after"], msg["answers"])
                reply |= {"type": "observed", **impl.observe(), "delivered": delivered}
            else:
                outputs = _act(impl, kind, msg, snaps)
                reply |= {"type": "observed", **impl.observe()}
                if outputs:
                    reply["outputs"] = outputs
        except Exception as e:  # the harness says the adapter failed, quoting this
            traceback.print_exc(file=sys.stderr)
            reply = {"type": "error", "id": rid, "message": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")  # ASCII: a lone half of a pair too
        out.flush()
        if kind == "bye":
            break
    return 0


def _act(impl: Implementation, kind: str, msg: dict[str, Any],
         snaps: dict[str, Any]) -> dict[str, Any] | None:
    if kind == "reset":
        impl.reset()
    elif kind == "step":
        return impl.step(msg["action"], msg["args"], msg["label"], msg.get("data", {}))
    elif kind == "restore":
        impl.restore(snaps[msg["snapshot"]])
    elif kind == "reopen":
        impl.reopen()
    elif kind == "advance":
        impl.advance(msg["seconds"])
    elif kind == "idle":
        impl.idle(msg["event"])
    elif kind != "observe":
        raise ValueError(f"unknown request {kind!r}")
    return None
