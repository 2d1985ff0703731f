"""What the Graph-run relay's stations log after each model action (the server's tools and
endpoints, the desktop relay loop), in the deployment's vocabulary."""

from __future__ import annotations

from typing import Any

from osf_check.fuzz.graph_harness import FINISH, GraphHarness, project_of
from osf_check.models.dsl import ActionInstance

Event = tuple[str, str, dict[str, Any]]  # station, event, fields


def before(h: GraphHarness) -> None:
    """Nothing of the state before a step is needed: each line says what its step did."""
    return None


def _run_fields(h: GraphHarness, r: int) -> dict[str, Any]:
    run = h.server.runs[r]
    return {"command_id": run.command_id, "status": run.status}


def events_of(h: GraphHarness, inst: ActionInstance, outs: dict[str, Any],
              was: None = None) -> list[Event]:
    """What the stations logged for ``inst``, just performed on ``h``."""
    n, a = inst.name, inst.args
    d = h.desktop
    if n == "run_graph_session":
        i = a["i"]
        if h.call[i] == "refused":  # (listing=1) the session is not listed: no run
            return [("server", "tool.run_graph_session_refused",
                     {"agent": 0, "attempt": h.attempts[i],
                      "project_id": project_of(i % h.c.projects), "call": "refused"})]
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
             "receive_ack", "late_ack"):
        cid = h.cid(a["r"])
        c = d.commands[cid]
        f: dict[str, Any] = {"command_id": cid}
        name = {"start_graph": "graph_started", "refuse": "graph_refused",
                "control_poll": "control_polled", "control_poll_clear": "control_polled",
                "graph_finish": "graph_finished", "receive_ack": "completion_acked",
                # a 2xx the desktop had given up is taken as any other: logged alike
                "late_ack": "completion_acked"}[n]
        if n.startswith("control_poll"):
            f["cancelled"] = c.state == "stopping"
        if n in ("refuse", "graph_finish"):  # the completion it produced, and whether it keeps it
            made = h.net.get(cid)
            f |= {"outcome": made[1]["status"] if made else c.outcome, "stored": cid in d.outbox}
        if n == "graph_finish":  # what the Graph handed over, and the POST it made of it
            made = h.net.get(cid)
            f |= {"graph_status": inst.label.split("o=")[1].rstrip(")"),
                  "result": h.finished_with[a["r"]], "error": h.failed_with[a["r"]],
                  "total_tokens": FINISH["tokens"],
                  "reported_cost": FINISH["cost"], "posted": made[1] if made else None}
        if n in ("receive_ack", "late_ack"):
            f["stored"] = cid in d.outbox
        return [("desktop", f"desktop.{name}", f)]
    if n in ("deliver_post", "late_post"):
        # the server cannot tell a POST the desktop gave up from an on-time one: it logs
        # both alike (the late copy is the harness's accepted one, no longer in flight)
        r = a["r"]
        cid = h.cid(r)
        payload = h.net[cid][1] if n == "deliver_post" else h.accepted[cid]  # type: ignore[index]
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


