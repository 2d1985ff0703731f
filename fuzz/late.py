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
        "post": "a completion POST", "ack": "a completion's 2xx"}
#: the model steps that lose each of them (the step's run is the answer's)
LOST_BY = {"lose_get_reply": "get", "lose_cancel_reply": "cancel", "lose_post": "post",
           "lose_ack": "ack"}
#: the models whose network loses these answers
MODELS = {"graph-relay": tuple(LATE)}
#: how far a status is along a run's life: an answer the agent took later never has a lower
#: one (the harness's own order, not the implementation's)
RANK = {"queued": 0, "running": 1, "completed": 2, "failed": 2, "cancelled": 2}


def arrives(kind: str, status: str | None, acked: bool) -> bool:
    """Whether a held answer of ``kind`` may arrive now, its run's server status being
    ``status`` and ``acked`` saying whether the outbox let the run's completion go on a
    2xx.  A POST arrives once the server holds the run's outcome (until then the model's
    lost POST is one that never arrives); a 2xx once the outbox let the completion go.

    >>> arrives("post", "running", False), arrives("post", "cancelled", False)
    (False, True)
    >>> arrives("ack", "completed", False), arrives("ack", "completed", True)
    (False, True)
    """
    if kind == "post":
        return RANK.get(status or "", 0) == RANK["completed"]
    return kind != "ack" or acked


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
    """A late delivery as the report lists it."""
    return f"{LATE[kind]} after {after}"
