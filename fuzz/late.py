"""Late answers: which answers the network may lose and deliver late, when each may
arrive, and what a late answer to the agent must leave of its view.

The rules are shared by the in-process graph harness (``graph_harness``), which delivers
the answers itself, and by the driver protocol's checker (``osf_check.driver.external``),
which asks an adapter to deliver them: both try the same answers at the same moments.
"""

from __future__ import annotations

from typing import Any

#: the answers the network may lose that are delivered late, each as the late delivery is
#: listed in the run's report
LATE = {"get": "get_graph_run's answer", "cancel": "cancel_graph_run's answer",
        "post": "a completion POST", "ack": "a completion's 2xx",
        "sync": "a sync reply", "poll": "a control poll's answer"}
#: the kinds an adapter with the driver's ``late`` capability delivers when its welcome
#: does not list its own (``late_kinds``): the ones the capability first had, so that an
#: adapter written then is never asked for an answer it cannot deliver
FIRST_KINDS = ("get", "cancel", "post", "ack")
#: the model steps that lose each of them (the step's run is the answer's; a sync reply
#: has no run, and the desktop's last lost one is the one that arrives)
LOST_BY = {"lose_get_reply": "get", "lose_cancel_reply": "cancel", "lose_post": "post",
           "lose_ack": "ack", "lose_sync_reply": "sync"}
#: the model steps that deliver a lost copy where it changes something (a POST before the
#: run is terminal at the server, a 2xx while the completion is in the outbox): the copy
#: is then no longer held, and never delivered again by the rules below
TAKES = {"late_post": "post", "late_ack": "ack"}
#: what a late delivery after a storage crash is said to come after
RESTART = "a restart"
#: the models whose network loses these answers
MODELS = {"graph-relay": tuple(LATE)}
#: the models with :data:`TAKES`'s steps: an adapter is offered them only when its welcome
#: announces the driver's ``late_steps`` capability (one written before them would fail
#: the run on the first step it does not know)
STEPS = {"graph-relay": tuple(TAKES)}
#: how far a status is along a run's life: an answer the agent took later never has a lower
#: one (the harness's own order, not the implementation's)
RANK = {"queued": 0, "running": 1, "completed": 2, "failed": 2, "cancelled": 2}


def arrives(kind: str, status: str | None, acked: bool) -> bool:
    """Whether a held answer of ``kind`` may arrive now, its run's server status being
    ``status`` and ``acked`` saying whether the outbox let the run's completion go on a
    2xx (the answers of a run: a sync reply and a control poll's answer arrive by
    :func:`sync_arrives` and :func:`poll_arrives`).  A POST arrives once the server holds
    the run's outcome (before that, its arrival changes the run: the model's
    ``late_post``); a 2xx once the outbox let the completion go (before that, the model's
    ``late_ack``).

    >>> arrives("post", "running", False), arrives("post", "cancelled", False)
    (False, True)
    >>> arrives("ack", "completed", False), arrives("ack", "completed", True)
    (False, True)
    """
    if kind == "post":
        return RANK.get(status or "", 0) == RANK["completed"]
    return kind != "ack" or acked


def sync_arrives(after: str) -> bool:
    """Whether a lost sync reply arrives late after ``after`` (a step's name, or
    :data:`RESTART`): after every step from the one that lost it on, not after a restart
    (the call that waited for it died with the desktop).

    >>> sync_arrives("tick"), sync_arrives(RESTART)
    (True, False)
    """
    return after != RESTART


def poll_arrives(action: str, exec_state: str) -> str | None:
    """What the Graph of run r did, after which a control poll's answer "cancelled", sent
    while it ran, arrives late: the step ``action`` on run r left its command in
    ``exec_state``.  It arrives once the Graph was stopped (the poll that found the flag
    sent the stop) and once it ended; None: it does not arrive after this step.

    >>> poll_arrives("control_poll", "stopping"), poll_arrives("graph_finish", "done")
    ('was stopped', 'ended')
    >>> poll_arrives("control_poll_clear", "running") is None
    True
    """
    if action == "graph_finish":
        return "ended"
    if action in ("control_poll", "control_poll_clear") and exec_state == "stopping":
        return "was stopped"
    return None


def went_back(was: dict[str, Any] | None, got: dict[str, Any] | None) -> str | None:
    """What a late answer broke of the agent's view of one run, from ``was`` to ``got``
    (None: it broke nothing): the run's status never goes back, nor, once terminal, the
    completion the agent read.

    >>> went_back({"status": "completed"}, {"status": "running"})
    "took the agent's view of the run from {'status': 'completed'} back to {'status': 'running'}"
    >>> went_back({"status": "running"}, {"status": "completed"}) is None
    True
    """
    if was is None or got == was:
        return None
    rank = RANK.get(was.get("status", ""), -1)
    if got is None or RANK.get(got.get("status", ""), -1) < rank:
        return f"took the agent's view of the run from {was} back to {got}"
    if rank == RANK["completed"] and set(was) - {"command_id", "status"}:
        return f"replaced the completion the agent read ({was}) by {got}"
    return None


def named(kind: str, after: str) -> str:
    """A late delivery as the report lists it (a control poll's answer comes after what
    its Graph did: ``after`` is then ``"the Graph ended"``, say).

    >>> named("poll", "the Graph ended")
    "a control poll's answer after the Graph ended"
    """
    return f"{LATE[kind]} after {after}"
