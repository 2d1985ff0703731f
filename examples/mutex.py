"""A lock shared by a few clients: every feature of the model DSL in one small file.

Each client, ``rounds`` times, asks for the lock, waits, holds it and lets it go.  M1 says
two clients never hold it at once, M2 that the lock names its holder, M3 that only a
waiting client takes it, M4 that a waiting client gets in on every fair path, and M5
that the clients can always all come to rest.

    osf-check explore --model-file examples/mutex.py --depth unbounded
    osf-check explore --model-file examples/mutex.py --mutant no-lock-check
    osf-check prove --model-file examples/mutex.py --property M2
"""

from osf_check import (And, Check, Count, Enum, Goal, Iff, Implies, Int, ModelBuilder,
                       ModelSpec, Param, Property)

FREE = -1  # the lock's holder when nobody holds it (an integer domain may start below 0)
PC = Enum("idle", "waiting", "critical")  # PC.idle == 0, PC.waiting == 1, PC.critical == 2


def build(params, mutant):
    n, rounds = params["clients"], params["rounds"]
    clients = range(n)
    b = ModelBuilder("mutex", params, mutant, actors=("client", "lock"))
    b.array("pc", PC, n, actor="client",
                 doc="where each client is")
    b.array("done", Int(0, rounds), n, actor="client", doc="rounds each finished")
    b.var("holder", Int(FREE, n - 1), actor="lock", doc="who holds the lock, or -1")

    @b.action("client", target="lock", params={"c": clients})
    def request(s, c):
        return And(s.pc[c] == PC.idle, s.done[c] < rounds), {s.pc[c]: PC.waiting}

    # strong fairness: a client that is enabled to take the lock infinitely often takes it
    @b.action("lock", target="client", params={"c": clients}, fair="strong")
    def acquire(s, c):
        free = True if mutant == "no-lock-check" else s.holder == FREE
        return And(s.pc[c] == PC.waiting, free), {s.pc[c]: PC.critical, s.holder: c}

    # weak fairness: a holder lets the lock go
    @b.action("client", target="lock", params={"c": clients}, fair="weak")
    def release(s, c):
        return s.pc[c] == PC.critical, {s.pc[c]: PC.idle, s.done[c]: s.done[c] + 1,
                                       s.holder: FREE}

    b.init(pc=PC.idle, done=0, holder=FREE)
    if params["inside"]:  # a second initial state: client 0 already holds the lock
        b.init(pc=[PC.critical] + [PC.idle] * (n - 1), done=0, holder=0)
    # once every client has had its rounds nothing is enabled: an end, not a deadlock
    b.quiescent(lambda s: And(*(s.done[c] == rounds for c in clients)))
    # a fair path passes through a free lock infinitely often (or ends)
    b.fair_state("lock free", lambda s: s.holder == FREE)
    # the clients are interchangeable: holder names one of them
    b.symmetric("client", arrays=("pc", "done"), refs=("holder",))
    return b.build()


SPEC = ModelSpec(
    name="mutex",
    title="A lock shared by a few clients",
    params=(Param("clients", 2, 1, 4, "clients sharing the lock"),
            Param("rounds", 1, 1, 3, "times each client takes the lock", bound="count"),
            Param("inside", 0, 0, 1, "1: client 0 may also start holding the lock")),
    mutants={"no-lock-check": "a waiting client takes the lock even when it is held"},
    build_fn=build,
)


def clients(m):
    return range(m.params["clients"])


def one_inside(s, m):
    return Count(s.pc[c] == PC.critical for c in clients(m)) <= 1


def holder_named(s, m):
    return And(*(Iff(s.pc[c] == PC.critical, s.holder == c) for c in clients(m)))


def only_waiters_take(s, t, inst, m):
    if inst.name != "acquire":
        return None  # the check does not concern the other actions
    return s.pc[inst.args["c"]] == PC.waiting


def waiting_gets_in(s, m):
    return [Goal(f"client {c} gets in", s.pc[c] == PC.waiting, s.pc[c] == PC.critical)
            for c in clients(m)]


def can_rest(s, m):
    return [Goal("all idle", True, And(*(s.pc[c] == PC.idle for c in clients(m))))]


def done_counts(s, m):
    # a lemma for k-induction: a client that is not idle has rounds left
    return [Implies(s.pc[c] != PC.idle, s.done[c] < m.params["rounds"]) for c in clients(m)]


PROPERTIES = (
    Property("M1", "mutual-exclusion", "mutex", "Two clients never hold the lock at once.",
             (Check("inv", one_inside),), ("no-lock-check",),
             witness=lambda s, m: Count(s.pc[c] != PC.idle for c in clients(m)) >= 2,
             witness_doc="two clients want the lock at once"),
    Property("M2", "holder-named", "mutex", "The lock names the client that holds it.",
             (Check("inv", holder_named),), ("no-lock-check",), lemmas=done_counts),
    Property("M3", "only-waiters-take", "mutex", "Only a waiting client takes the lock.",
             (Check("trans", only_waiters_take),), ()),
    Property("M4", "waiting-gets-in", "mutex",
             "A waiting client holds the lock later, on every fair path.",
             (Check("fair", waiting_gets_in),), ()),
    Property("M5", "can-rest", "mutex", "From every state, all clients can come to rest.",
             (Check("reach", can_rest),), ()),
)
