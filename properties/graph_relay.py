"""Properties A1–A7, A9, A10 of the Graph-run relay (properties.md), as DSL expressions.

A8 (`bounded-result`) concerns the completion payload's size, which the model
abstracts away; it is checked on the reference implementation (the fuzz room).
"""

from __future__ import annotations

from osf_check.models.dsl import ActionInstance, Model
from osf_check.models.expr import And, Count, Exists, ForAll, Implies, Not, Or
from osf_check.models.graph_relay import MUTANTS as MODEL_MUTANTS
from osf_check.models.graph_relay.agent import intent_of
from osf_check.models.graph_relay.owner import project_enabled
from osf_check.models.graph_relay.vocab import ANSWER, EXEC, OUTCOME, POST, STATUS, TERMINAL

from .base import Check, Goal, Property, mutant_catalogue, unchanged

MODEL = "graph-relay"


def _ctx(m: Model):
    return m.constants["ctx"]


def _runs(m: Model) -> range:
    return range(_ctx(m).runs)


def terminal(s, r):
    return Exists(TERMINAL, lambda t: s.status[r] == t)


def _consent(s, r, m):
    return And(project_enabled(s, _ctx(m), r), s.shared, s.cur_slug == s.slug[r])


# A1 -------------------------------------------------------------------------
def a1(s, m):
    c = _ctx(m)
    return ForAll(range(c.intents), lambda i: Count(
        _runs(m), lambda r: And(s.status[r] != STATUS.none, intent_of(s.key[r], c) == i)) <= 1)


# A2 -------------------------------------------------------------------------
def a2_core(s, m):
    return ForAll(_runs(m), lambda r: Implies(
        s.status[r] == STATUS.running,
        Or(s.exec[r] == EXEC.fetched, s.exec[r] == EXEC.running,
           s.exec[r] == EXEC.stopping, s.outbox[r], s.post[r] == POST.sent,
           # a sync reply that carried it was lost: the next sync carries it again (the
           # liveness part checks that it does)
           s.exec[r] == EXEC.none)))


def a2_goals(s, m):
    return [Goal(f"run {r}", And(s.exec[r] == EXEC.done, Not(terminal(s, r))), terminal(s, r))
            for r in _runs(m)]


def a2_reach_goals(s, m):
    # every running run can still end, not only one the desktop finished: a run whose sync
    # reply was lost is running on the server and nowhere on the desktop (not under
    # fairness: an owner who disables the project at every sync starves it, as a queued run)
    return [Goal(f"run {r}", s.status[r] == STATUS.running, terminal(s, r))
            for r in _runs(m)]


# A3 -------------------------------------------------------------------------
def a3(s, t, inst: ActionInstance, m):
    return ForAll(_runs(m), lambda r: And(
        Implies(terminal(s, r), t.status[r] == s.status[r]),
        Implies(s.outcome[r] != OUTCOME.none, t.outcome[r] == s.outcome[r])))


# A4 / A6 --------------------------------------------------------------------
def a4(s, t, inst: ActionInstance, m):
    if inst.name != "start_graph":
        return None
    return _consent(s, inst.args["r"], m)


def a6(s, t, inst: ActionInstance, m):
    if inst.name != "start_graph":
        return None
    return Not(s.qcancel[inst.args["r"]])


# A5 -------------------------------------------------------------------------
def a5(s, m):
    return Count(_runs(m), lambda r: Or(s.exec[r] == EXEC.running,
                                        s.exec[r] == EXEC.stopping)) <= 1


# A7 -------------------------------------------------------------------------
def a7(s, t, inst: ActionInstance, m):
    if inst.actor != "another agent":
        return None
    _, answer = inst.outputs["answer"]
    return And(answer == ANSWER.not_found, unchanged(m))


# A9 -------------------------------------------------------------------------
def a9(s, t, inst: ActionInstance, m):
    def step(r, a, b):
        return And(s.status[r] == a, t.status[r] == b)
    return ForAll(_runs(m), lambda r: Or(t.status[r] == s.status[r],
                                         step(r, STATUS.none, STATUS.queued),
                                         step(r, STATUS.queued, STATUS.running),
                                         step(r, STATUS.queued, STATUS.cancelled),
                                         And(s.status[r] == STATUS.running, terminal(t, r))))


# A11 ------------------------------------------------------------------------
def a11(s, t, inst: ActionInstance, m):
    """A completion the server accepts is kept with its result for get_graph_run; and a
    run holds a result only once terminal."""
    if inst.name not in ("deliver_post", "late_post"):  # the POSTs the server takes
        return None
    r = inst.args["r"]
    accepted = Not(terminal(s, r))
    return And(Implies(accepted, t.result[r]), Implies(t.result[r], terminal(t, r)))


# A12 ------------------------------------------------------------------------
def a12(s, t, inst: ActionInstance, m):
    """A sync fetches a command only for its own project, and only if that project is
    enabled (its project's sync carried it)."""
    if inst.name != "sync":
        return None
    c = _ctx(m)
    return ForAll(_runs(m), lambda r: Implies(
        And(s.status[r] == STATUS.queued, t.status[r] == STATUS.running),
        project_enabled(s, c, r)))


# A10 ------------------------------------------------------------------------
def a10_goals(s, m):
    # "handled by the desktop": ran to an end, or closed by it (consent, cancel flag);
    # a cancel of the still-queued run by the agent does not count
    return [Goal(f"run {r}", And(s.status[r] == STATUS.queued, Not(s.online)),
                 Or(s.status[r] == STATUS.completed, s.status[r] == STATUS.failed,
                    And(s.status[r] == STATUS.cancelled, Not(s.qcancel[r]))))
            for r in _runs(m)]


PROPERTIES = (
    Property("A1", "single-run-per-key", MODEL,
             "For each (agent, idempotency key) at most one run exists, however many times the "
             "start call is retried after lost responses (with A9, at most one execution).",
             (Check("inv", a1),), ("fresh-key-on-retry", "server-ignores-key"),
             witness=lambda s, m: Or(*(s.attempts[i] >= 2 for i in range(_ctx(m).intents))),
             witness_doc="a start call retried after a lost response"),
    Property("A2", "no-stuck-running", MODEL,
             "Once the desktop finished a run, the server's run reaches a terminal state: reachable "
             "from every such state, and no fair path avoids it (the desktop online infinitely "
             "often, a POST not lost forever). Core invariant: a run `running` on the server is "
             "executing on the desktop, or its completion is in the outbox or in flight.",
             (Check("inv", a2_core, "safety core"), Check("reach", a2_reach_goals),
              Check("fair", a2_goals)),
             ("outbox-off", "outbox-drop-before-ack"),
             witness=lambda s, m: Or(*(And(s.exec[r] == EXEC.done, Not(terminal(s, r)))
                                       for r in _runs(m))),
             witness_doc="a run finished on the desktop while the server still has it running"),
    Property("A3", "terminal-is-final", MODEL,
             "A terminal status never changes, on the server or in the desktop's recorded "
             "outcome; a run answered cancelled is never reported completed or failed later.",
             (Check("trans", a3),), ("complete-overwrites-cancel",),
             witness=lambda s, m: Or(*(s.exec[r] == EXEC.stopping for r in _runs(m))),
             witness_doc="a running Graph stopped after its cancel flag was seen"),
    Property("A4", "consent-rechecked", MODEL,
             "A Graph starts executing only if, at that very step, its project is enabled, its "
             "session is shared with it, and its slug is the one the command was queued for.",
             (Check("trans", a4),), ("no-consent-recheck", "recheck-ignores-slug"),
             witness=lambda s, m: Or(*(And(s.exec[r] == EXEC.fetched, Not(_consent(s, r, m)))
                                       for r in _runs(m))),
             witness_doc="a fetched command whose consent changed before it ran"),
    Property("A5", "single-worker", MODEL,
             "At most one Graph executes on a desktop at a time; rounds are skipped while busy.",
             (Check("inv", a5),), ("parallel-relay",),
             witness=lambda s, m: Or(*(And(s.exec[r] == EXEC.running, s.exec[q] == EXEC.fetched)
                                       for r in _runs(m) for q in _runs(m) if q != r)),
             witness_doc="a command waiting while another one executes (needs intents >= 2)"),
    Property("A6", "queued-cancel-never-runs", MODEL,
             "A run cancelled while queued is never started.",
             (Check("trans", a6),), ("queued-cancel-ignored",),
             witness=lambda s, m: Or(*(s.qcancel[r] for r in _runs(m))),
             witness_doc="a run cancelled while queued"),
    Property("A7", "foreign-run-indistinguishable", MODEL,
             "get_graph_run / cancel_graph_run for a run of another agent answer exactly as for a "
             "nonexistent id, and change nothing.",
             (Check("trans", a7),), ("leaky-not-found",),
             witness=lambda s, m: Or(*(s.status[r] != STATUS.none for r in _runs(m))),
             witness_doc="a run exists that another agent can ask about"),
    Property("A9", "status-order", MODEL,
             "Status moves only queued → running → terminal (or queued → cancelled).",
             (Check("trans", a9),), ("requeue-on-retry",),
             witness=lambda s, m: Or(*(s.status[r] == STATUS.running for r in _runs(m))),
             witness_doc="a run running on the server"),
    Property("A11", "result-reaches-agent", MODEL,
             "Once the server accepted a run's completion, get_graph_run by the agent that "
             "started it answers the terminal status with the completion's result (or "
             "result_truncated), error, tokens and cost; before that, the status and no result.",
             (Check("trans", a11),), ("status-only",),
             witness=lambda s, m: Or(*(s.result[r] for r in _runs(m))),
             witness_doc="a completion accepted by the server"),
    Property("A12", "projects-apart", MODEL,
             "A sync for project P carries only P's commands and uploads only P's sessions; "
             "list_graph_sessions(P) shows P's last sync, never another project's.",
             (Check("trans", a12),), ("one-project-sync",),
             witness=lambda s, m: Or(*(And(s.status[r] == STATUS.queued,
                                           Not(project_enabled(s, _ctx(m), r)))
                                       for r in _runs(m))),
             witness_doc="a queued run of a disabled project"),
    Property("A10", "offline-work-survives", MODEL,
             "Runs queued while the desktop is offline still reach a terminal state (handled by "
             "the desktop) once it is back.",
             (Check("reach", a10_goals),), ("queue-on-desktop",),
             witness=lambda s, m: Or(*(And(s.status[r] == STATUS.queued, Not(s.online))
                                       for r in _runs(m))),
             witness_doc="a run queued while the desktop is offline"),
)

_WHERE = {"fresh-key-on-retry": "agent", "server-ignores-key": "server",
          "leaky-not-found": "server", "requeue-on-retry": "server",
          "queued-cancel-ignored": "server", "status-only": "server", "one-project-sync": "server"}
#: mutants that need more than the default parameters to show their bug
_PARAMS: dict[str, dict[str, int]] = {
    # the proof that a run is never handled needs its whole future explored: with one
    # intent that future is small (a few thousand states), with two it is millions
    "queue-on-desktop": {"intents": 1},
    # two projects, so that one can be disabled while the other syncs
    "one-project-sync": {"projects": 2},
}
MUTANTS = mutant_catalogue(MODEL, PROPERTIES, MODEL_MUTANTS, where=_WHERE, default_where="desktop",
                           params=_PARAMS)
