"""System A, the Graph-run relay (agent → server queue → desktop), as one model.

Split by component: :mod:`.agent` (start with idempotency key, retry after a lost
answer, cancel, another agent's probes), :mod:`.server` (run records, queue,
cancellation flag), :mod:`.desktop` (the relay loop), :mod:`.outbox` (outbox,
completion POSTs and their loss), :mod:`.owner` (sharing).

>>> m = SPEC.build()
>>> m.params
{'agents': 2, 'intents': 2, 'retries': 1, 'slugs': 2, 'projects': 1, 'listing': 0}
"""

from __future__ import annotations

from ..dsl import Model, ModelBuilder, Param
from ..expr import And, Or
from ..spec import ModelSpec
from . import agent, desktop, outbox, owner, server
from .vocab import CALL, EXEC, OUTCOME, PHASE, POST, STATUS, TERMINAL, Ctx

COMPONENTS = (agent, server, desktop, outbox, owner)

MUTANTS = {
    "fresh-key-on-retry": "the client mints a new idempotency key for every retry",
    "server-ignores-key": "the server queues a new run for a retried key",
    "outbox-off": "completions are kept only in memory: a lost POST is never re-sent",
    "outbox-drop-before-ack": "a completion leaves the outbox when sent, not when acknowledged",
    "complete-overwrites-cancel": "a Graph that finishes after the stop overwrites the "
                                  "cancelled outcome, and the server accepts it",
    "no-consent-recheck": "the desktop runs a fetched command without re-checking sharing",
    "recheck-ignores-slug": "the re-check looks at project and sharing but not the slug",
    "parallel-relay": "the desktop starts the next command while one is still executing",
    "queued-cancel-ignored": "cancelling a queued run only sets the flag; the run stays queued",
    "leaky-not-found": "a run of another agent answers 'access denied', not 'not found'",
    "requeue-on-retry": "a retried start call re-queues the run it finds",
    "queue-on-desktop": "the queue lives on the desktop: work sent while it is offline is lost",
    "one-project-sync": "a project's sync carries every queued command, whatever its project",
    "status-only": "the server keeps only the completion's status: get_graph_run never "
                   "returns the result",
}

_EXTRA_RUNS = ("fresh-key-on-retry", "server-ignores-key")


def ctx(params: dict[str, int], mutant: str | None) -> Ctx:
    i, k = params["intents"], params["retries"]
    extra = mutant in _EXTRA_RUNS
    return Ctx(agents=params["agents"], intents=i, retries=k, slugs=params["slugs"],
               runs=i * (k + 1) if extra else i, projects=params["projects"],
               keys=i * (k + 1) if mutant == "fresh-key-on-retry" else i,
               mutant=mutant, listing=params["listing"])


def build(params: dict[str, int], mutant: str | None) -> Model:
    c = ctx(params, mutant)
    b = ModelBuilder("graph-relay", params, mutant, actors=(
        "agent", "another agent", "owner", "server", "desktop", "network", "clock"))
    b.constants["ctx"] = c
    b.components(COMPONENTS, c)
    init = dict(call=CALL.idle, attempts=0, ticket=0,
                status=STATUS.none, key=c.no_key, slug=0, flag=False, result=False, qcancel=False,
                online=True, phase=PHASE.idle, exec=EXEC.none,
                outcome=OUTCOME.none, outbox=False, post=POST.none,
                enabled=True, shared=True, cur_slug=0, proj=0)
    if c.on("queue-on-desktop"):
        init["lost"] = False
    if c.listing:
        # the server's list starts empty: nothing is listed until a sync uploads it
        init.update(listed=False, up_slug=0)
    b.init(**init)

    def quiet(s):
        # nothing left to do: every run terminal, no round, nothing in flight
        return And(s.phase == PHASE.idle,
                   *(Or(s.status[r] == STATUS.none, *(s.status[r] == t for t in TERMINAL))
                     for r in range(c.runs)),
                   *(s.post[r] == POST.none for r in range(c.runs)))
    b.quiescent(quiet)
    b.fair_state("desktop online", lambda s: s.online)
    # run ids are handed out lowest-free-first, so runs are not interchangeable, but
    # intents are: renaming them renames the keys that name them (an unused run's key
    # names none).  A claim, proved before use: under fresh-key-on-retry a key names an
    # attempt, and at projects=2 an intent's project tells it apart, so both are refused.
    b.symmetric("intent", arrays=("call", "attempts", "ticket"), refs=("key",))
    return b.build()


SPEC = ModelSpec(
    name="graph-relay",
    title="System A: agent → server queue → desktop relay loop (graph-relay.md)",
    params=(
        Param("agents", 2, 2, 3, "agent connections; agent 0 starts every run, the others "
              "probe runs they did not start",
              bound="size"),
        Param("intents", 2, 1, 3, "runs agent 0 means to start (one idempotency key each)",
              bound="size"),
        Param("retries", 1, 0, 2, "times a start call is retried after a lost answer",
              bound="count"),
        # not a bound: a rename goes round the slugs (cur_slug + 1 mod slugs), so another
        # number renames differently rather than further
        Param("slugs", 2, 1, 3, "slugs the shared session can have (1: never renamed)"),
        Param("projects", 1, 1, 2, "connected projects, each with one shared session; intent "
              "i starts runs of project i mod projects (2: A12's two projects apart is checked "
              "too; 1: only that a disabled project's command is not fetched)"),
        # a setting, not a bound: 1 adds the server's list and the refusal (2.9 times the
        # default's states), so the default leaves them out
        Param("listing", 0, 0, 1, "1: the server keeps the session list the last syncs "
              "uploaded (listed or not, and the slug), refuses a start for an unlisted "
              "session and files a new run under the uploaded slug; 0: every start is "
              "filed under the session's current slug, as if a sync had just uploaded it"),
    ),
    mutants=MUTANTS,
    build_fn=build,
)
