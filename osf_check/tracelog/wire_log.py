"""What the wire protocol's stations log after each model action: the phone (requests
sent, answers received), the relay (forwarding, responses, expiry, the desktop's
socket) and the desktop router (claims, handlers, timers, answers), in the deployment's
vocabulary."""

from __future__ import annotations

from typing import Any

from osf_check.fuzz.wire_harness import SESSION, WireHarness
from osf_check.models.wire_relay.vocab import OUTBOX
from osf_check.models.dsl import ActionInstance

Event = tuple[str, str, dict[str, Any]]  # station, event, fields
TIMERS = {"slot_timeout": "slot_wait", "dispatch_timeout": "dispatch",
          "enqueue_timeout": "enqueue", "lease_expires": "lease",
          "retention_expires": "retention"}


Was = tuple[list[str], list[int], list[str], list[int]]


def _messages(h: WireHarness) -> list[int]:
    """The app's outbox messages per (session, operation) of each outbox operation."""
    return [h.app.messages(SESSION, f"op-{phone}-{key}") if method == OUTBOX else 0
            for phone, method, key in h.c.true_scopes]


def before(h: WireHarness) -> Was:
    """The phones' view and the app's outbox before a step: a line is logged for every
    answer the step brings and every message it enqueues."""
    return list(h.ans), list(h.nfinal), list(h.ph), _messages(h)


def _enqueued(h: WireHarness, was: Was) -> list[Event]:
    return [("app", "app.outbox_message_enqueued",
             {"session_id": SESSION, "operation_id": f"op-{phone}-{key}", "messages": n})
            for (phone, _, key), n, m in zip(h.c.true_scopes, _messages(h), was[3]) if n != m]


def _answers(h: WireHarness, was: Was) -> list[Event]:
    ans, nfinal, ph, _ = was
    out = []
    for o in range(len(h.c.ops)):
        if (h.ans[o], h.nfinal[o], h.ph[o]) != (ans[o], nfinal[o], ph[o]) and \
                h.ph[o] != "waiting":
            out.append(("phone", "phone.answer_received",
                        {"request_id": h.rid(o), "answer": h.ans[o],
                         "answers_for_request": h.nfinal[o], "retry": h.ph[o] == "retry"}))
    return out


def events_of(h: WireHarness, inst: ActionInstance, outs: dict[str, Any],
              was: Was) -> list[Event]:
    n, a = inst.name, inst.args
    rid = h.rid(a["o"]) if "o" in a else None
    lines: list[Event]
    if n in ("send", "send_malformed"):
        o = a["o"]
        lines = [("phone", "phone.request_sent",
                  {"request_id": rid, "attempt": h.tries[o], "malformed": n != "send",
                   "waiting": h.ph[o] == "waiting"})]
    elif n == "give_up":
        lines = [("phone", "phone.gave_up", {"request_id": rid})]
    elif n == "forward":
        lines = [("relay", "relay.forwarded", {"request_id": rid})]
    elif n in ("deliver", "drop_response"):
        lines = [("relay", "relay.response_received",
                  {"request_id": rid, "delivered": h.routed})]
    elif n == "expire":
        lines = [("relay", "relay.request_expired", {"request_id": rid})]
    elif n == "disconnect":
        lines = [("relay", "relay.desktop_disconnected", {})]
    elif n == "reconnect":
        lines = [("relay", "relay.desktop_connected", {})]
    elif n == "restart":
        lines = [("desktop", "desktop.restarted", {})]
    elif n == "claim":
        call = h.desktop.calls.get(h.copy_call.get(h.c.q(a["o"], a["a"]), -1))
        lines = [("desktop", "desktop.claimed",
                  {"request_id": rid, "stage": call.stage if call else "gone"})]
    elif n in TIMERS:
        f: dict[str, Any] = {"timer": TIMERS[n]}
        if rid is not None:
            f["request_id"] = rid
        if n == "dispatch_timeout":
            f["handler_ran"] = bool(a["ran"])
        lines = [("desktop", "desktop.timer_fired", f)]
    elif n == "execute":
        lines = [("desktop", "desktop.handler_finished",
                  {"request_id": rid, "outcome": inst.arg_domains["out"].names[a["out"]],
                   "stored": bool(a["stored"])})]
    elif n in ("join_answer", "join_orphaned"):
        lines = [("desktop", "desktop.joined_resumed",
                  {"request_id": rid, "answer_ready": n == "join_answer"})]
    elif n == "send_answer":
        lines = [("desktop", "desktop.answer_sent", {"request_id": rid})]
    else:
        lines = []
    return lines + _enqueued(h, was) + _answers(h, was)
