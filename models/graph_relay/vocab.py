"""Value sets of the Graph-run relay model, shared by its components."""

from __future__ import annotations

from dataclasses import dataclass

from ..dsl import Enum

#: a run record on the server (``none``: no run in this slot yet)
STATUS = Enum("none", "queued", "running", "completed", "failed", "cancelled")
TERMINAL = (STATUS.completed, STATUS.failed, STATUS.cancelled)
#: the agent's start call for one intent (``refused``: the server answered that the session
#: is not shared, only at ``listing=1``)
CALL = Enum("idle", "waiting", "lost", "done", "refused")
#: the relay loop's round
PHASE = Enum("idle", "sync", "work")
#: what the desktop knows of one command
EXEC = Enum("none", "fetched", "running", "stopping", "done")
#: the outcome the desktop recorded (history, and the outbox entry's content)
OUTCOME = Enum("none", "completed", "failed", "cancelled")
#: a completion POST
POST = Enum("none", "sent", "acked")
#: what get_graph_run / cancel_graph_run answer a run the caller did not start
#: ("Graph run not found or access removed", or a leak that confirms the id)
ANSWER = Enum("not_found", "access_denied")
#: what get_graph_run answers the agent that started the run: the status only (before
#: a completion was accepted), or the terminal status with the completion's result
READ = Enum("status", "result")


@dataclass(frozen=True)
class Ctx:
    """Parameters and mutant, as the components read them."""

    agents: int
    intents: int
    retries: int
    slugs: int
    runs: int  # run slots on the server
    projects: int  # connected projects; intent i's session belongs to project i % projects
    keys: int  # distinct idempotency keys the clients can send
    mutant: str | None
    listing: int = 0  # 1: the server's session list (what the last syncs uploaded) is modelled

    @property
    def no_key(self) -> int:
        """The ``key`` of a run slot that holds no run: a value that names no intent, so
        renaming the intents leaves an unused slot as it is (0 would name intent 0)."""
        return self.keys

    def on(self, name: str) -> bool:
        return self.mutant == name
