"""The agent's side of get_graph_run and cancel_graph_run: what it knows of its runs.

An answer can arrive late, after an answer the server gave later (the network held
it; the agent had given up on that call and asked again).  A run's status only moves
forward (queued, running, then one terminal status that stays), so an answer that
would move it back is older than what the agent knows, and is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .server import TERMINAL

#: how far a status is along a run's life; a later answer never has a lower one
PROGRESS = {"queued": 0, "running": 1, **{t: 2 for t in TERMINAL}}


def completion(answer: dict[str, Any]) -> dict[str, Any]:
    """The accepted completion an answer carries (get_graph_run's, once there is one)."""
    return {k: v for k, v in answer.items() if k not in ("command_id", "status")}


def newer(known: dict[str, Any] | None, answer: dict[str, Any]) -> bool:
    """Whether ``answer`` tells more than ``known`` (None: nothing known yet).  At a
    terminal status only the completion can still come (a cancel's answer has none);
    the server keeps the first it accepted, so one known stays."""
    if known is None:
        return True
    was, now = PROGRESS.get(known.get("status"), -1), PROGRESS.get(answer.get("status"), -1)
    if now != was:
        return now > was
    return was < PROGRESS["completed"] or not completion(known)


@dataclass
class AgentRuns:
    """The agent's view of the runs it started, by command id."""

    known: dict[str, dict[str, Any]] = field(default_factory=dict)

    def read(self, answer: dict[str, Any]) -> None:
        """get_graph_run's answer: the run's status, and its completion once accepted."""
        self._take(answer)

    def cancelled(self, answer: dict[str, Any]) -> None:
        """cancel_graph_run's answer: the run's status after the cancel."""
        self._take(answer)

    def _take(self, answer: dict[str, Any]) -> None:
        # filed under the run the answer names, never the one asked about last: answers
        # to two calls can cross
        cid = answer.get("command_id")
        if isinstance(cid, str) and newer(self.known.get(cid), answer):
            self.known[cid] = dict(answer)
