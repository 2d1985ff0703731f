"""Logs of the Graph-run relay reference implementation, as a deployment would record them.

The recorder is instrumentation around the implementation (like tracing middleware at
its tool and HTTP boundaries): after each model action the harness performs, it writes
what the components did, in the deployment's own vocabulary (``tool.run_graph_session``,
``desktop.graph_finished``, ``server.completion_received``) with the ids and values they
saw, never the model's names or indices.  What happens only on the network (a lost
response, a lost POST or acknowledgement) is not logged: no station sees it.

One JSON object per line: ``{"time": s, "station": ..., "event": ..., "fields": {...}}``.
"""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterable

from osf_check.fuzz.graph_harness import GraphHarness, project_of
from osf_check.fuzz.harness import Divergence
from osf_check.models.dsl import ActionInstance, Model

Event = tuple[str, str, dict[str, Any]]  # station, event, fields


def _run_fields(h: GraphHarness, r: int) -> dict[str, Any]:
    run = h.server.runs[r]
    return {"command_id": run.command_id, "status": run.status}


def events_of(h: GraphHarness, inst: ActionInstance, outs: dict[str, Any]) -> list[Event]:
    """What the stations logged for ``inst``, just performed on ``h``."""
    n, a = inst.name, inst.args
    d = h.desktop
    if n == "run_graph_session":
        i = a["i"]
        run = h.server.runs[h.ticket[i]]
        return [("server", "tool.run_graph_session",
                 {"agent": 0, "idempotency_key": run.key, "attempt": h.attempts[i],
                  "project_id": run.project_id, **_run_fields(h, h.ticket[i])})]
    if n in ("get_graph_run", "cancel_graph_run"):
        if "i" in a:
            f = {"agent": 0, **_run_fields(h, a["r"])}
            if n == "get_graph_run":
                f["result"] = outs["read"] == "result"
            return [("server", f"tool.{n}", f)]
        target = h.cid(a["r"]) or "00000000-0000-0000-0000-%012d" % (a["r"] + 1)
        return [("server", f"tool.{n}", {"agent": a["a"] + 1, "command_id": target,
                                          "answer": outs["answer"]})]
    if n == "tick":
        return [("desktop", "desktop.round_started", {"resent": len(d.outbox.entries())})]
    if n == "sync":
        return [("desktop", "desktop.synced", {"commands": list(d.commands)})] + [
            ("desktop", "desktop.command_received", {"command_id": cid, "state": c.state})
            for cid, c in d.commands.items() if c.state == "fetched"]
    if n in ("start_graph", "refuse", "control_poll", "control_poll_clear", "graph_finish",
             "receive_ack"):
        cid = h.cid(a["r"])
        c = d.commands[cid]
        f: dict[str, Any] = {"command_id": cid}
        name = {"start_graph": "graph_started", "refuse": "graph_refused",
                "control_poll": "control_polled", "control_poll_clear": "control_polled",
                "graph_finish": "graph_finished", "receive_ack": "completion_acked"}[n]
        if n.startswith("control_poll"):
            f["cancelled"] = c.state == "stopping"
        if n in ("refuse", "graph_finish"):  # the completion it produced, and whether it keeps it
            made = h.net.get(cid)
            f |= {"outcome": made[1]["status"] if made else c.outcome, "stored": cid in d.outbox}
        if n == "graph_finish":
            f["graph_status"] = inst.label.split("o=")[1].rstrip(")")
        if n == "receive_ack":
            f["stored"] = cid in d.outbox
        return [("desktop", f"desktop.{name}", f)]
    if n == "deliver_post":
        r = a["r"]
        payload = h.net[h.cid(r)][1]  # type: ignore[index]
        run = h.server.runs[r]
        return [("server", "server.completion_received",
                 {"execution_id": payload["execution_id"], "posted_status": payload["status"],
                  "run_status": run.status,
                  "result_kept": run.command_id in h.accepted and bool(run.completion)})]
    if n == "round_end":
        return [("desktop", "desktop.round_ended", {"phase": d.phase})]
    if n in ("go_offline", "go_online"):
        return [("desktop", "desktop.connectivity", {"online": d.online})]
    if n == "sync_failed":
        return [("desktop", "desktop.sync_failed", {})]
    if n == "toggle_project":
        p = project_of(a.get("p", 0))
        return [("desktop", "desktop.project_toggled", {"project_id": p,
                                                        "enabled": d.enabled[p]})]
    if n == "toggle_share":
        return [("desktop", "desktop.sharing_changed", {"shared": d.shared})]
    if n == "change_slug":
        return [("desktop", "desktop.slug_changed", {"slug": d.slug})]
    return []  # the network's own steps: lost answers, lost POSTs, a ticket arriving


def record(h: GraphHarness, path: Iterable[int], out: IO[str], *,
           step_seconds: float = 0.5,
           on_error: Callable[[Divergence], None] | None = None) -> int:
    """Perform ``path`` (model instance indices) on ``h`` and write its log to ``out``;
    returns the number of events.  A step the implementation refuses (a mutant's
    divergence) ends the log there, after the events it did produce."""
    n = 0
    t = 0.0
    for ai in path:
        inst = h.model.instances[ai]
        try:
            outs = h.apply(inst)
        except Divergence as e:
            if on_error:
                on_error(e)
            break
        t += step_seconds
        for station, event, fields in events_of(h, inst, outs):
            out.write(json.dumps({"time": round(t, 3), "station": station, "event": event,
                                  "fields": fields}, ensure_ascii=False) + "\n")
            n += 1
    return n


@dataclass
class Walk:
    """A random run of the implementation and its log."""

    path: list[int]  # the model instances performed
    log: str
    #: the first step where the fuzzer's checks find the implementation off the model
    diverged: int | None
    #: per step, the log lines (1-based, first and last) it wrote, or None
    lines: list[tuple[int, int] | None]

    def step_of_line(self, n: int) -> int:
        return next(k for k, r in enumerate(self.lines) if r is not None and r[0] <= n <= r[1])


def walk(model: Model, mutant: str | None, *, seed: int = 0, steps: int = 40,
         step_seconds: float = 0.5, judge: bool = True) -> Walk:
    """Run the implementation at random as a deployment would: the environment (agent,
    owner, network) acts as the model allows it, the desktop takes the decisions it offers
    itself, and the log is recorded as it goes.  The fuzzer's checks run alongside, to say
    where the implementation first left the model (the log checker is not told; without
    ``judge`` they do not run, and ``diverged`` stays None)."""
    from osf_check.fuzz.driver import Checker, make_harness, tour_result
    rng = random.Random(seed)
    chk = Checker(model)
    h = make_harness(model, mutant, None, seed, tour_result)
    labels = {i.label: i.index for i in model.instances}
    s = model.initial_states[0]
    out = io.StringIO()
    w = Walk([], "", None, [])
    n = 0
    try:
        for k in range(steps):
            env = [a for a in chk.enabled(s) if model.instances[a].name not in h.DECIDES]
            own = [labels[x] for x in sorted(h.offers()) if x in labels]
            if not env and not own:
                break
            # a desktop acts on its own decisions at once, half the time before anything
            # else happens (a real one starts the next Graph as soon as it can)
            ai = rng.choice(own if own and rng.random() < 0.5 else env + own)
            inst = model.instances[ai]
            nxt = chk.steps[ai](s)
            try:
                outs = h.apply(inst)
                if judge and w.diverged is None:
                    try:
                        _judge(chk, h, ai, s, outs)
                    except Divergence:
                        w.diverged = k
            except Exception:  # noqa: BLE001 - a step it cannot take ends the run
                if judge and w.diverged is None:
                    w.diverged = k
                break
            w.path.append(ai)
            first = n + 1
            for station, event, fields in events_of(h, inst, outs):
                n += 1
                out.write(json.dumps({"time": round((k + 1) * step_seconds, 3),
                                      "station": station, "event": event, "fields": fields},
                                     ensure_ascii=False) + "\n")
            w.lines.append((first, n) if n >= first else None)
            s = nxt if nxt is not None else s
    finally:
        h.close()
    w.log = out.getvalue()
    return w


def _judge(chk: Any, h: GraphHarness, ai: int, before: tuple, outs: dict[str, Any]) -> None:
    """The fuzzer's checks of one step already performed (``Checker.check`` without the
    apply)."""
    h_apply = h.apply
    h.apply = lambda inst: outs  # type: ignore[method-assign]
    try:
        chk.check(h, ai, before)
    finally:
        h.apply = h_apply  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    """``python -m osf_check.tracelog.record``: a log of a random run of the reference
    implementation on stdout (what ``osf-check check-log`` reads)."""
    import argparse
    import sys
    from osf_check.fuzz.driver import IMPL_MUTANTS, model_for
    ap = argparse.ArgumentParser(prog="python -m osf_check.tracelog.record",
                                 description=main.__doc__.splitlines()[0] if main.__doc__ else "")
    ap.add_argument("--steps", type=int, default=1000, help="model steps to run (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    ap.add_argument("--mutant", default=None, choices=IMPL_MUTANTS["graph-relay"],
                    metavar="NAME", help="switch on one of the implementation's mutants")
    a = ap.parse_args(argv)
    if a.steps < 1:
        ap.error("--steps must be at least 1")
    w = walk(model_for("graph-relay", a.mutant), a.mutant, seed=a.seed, steps=a.steps,
             judge=False)
    sys.stdout.write(w.log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
