"""Dining philosophers (Chandy-Misra), from tlaplus/Examples
``specifications/DiningPhilosophers/DiningPhilosophers.tla`` (written from the TLA+
translation of its PlusCal, action for action).  A fork's record ``[holder, clean]`` is
two arrays, ``holder`` and ``clean``; philosopher and fork ``p`` (1..NP in the spec) is
index ``p - 1``.  ``WF_vars(Philosopher(self))`` is weak fairness of the set
``{Loop(self), Think(self), Eat(self)}``; the mutant ``no-fairness`` drops it.

    osf-check explore --model-file tests/public_specs/dining.py --depth unbounded
"""

from osf_check import (And, Bool, Check, Enum, ForAll, Goal, If, Int, ModelBuilder,
                       ModelSpec, Not, Param, Property)

PC = Enum("Loop", "Eat", "Think")


def _forks(p, n):
    """LeftFork(p), RightFork(p), LeftPhilosopher(p), RightPhilosopher(p), 0-based."""
    return p, (p + 1) % n, (p - 1) % n, (p + 1) % n


def build(params, mutant):
    n = params["np"]
    phils = range(n)
    b = ModelBuilder("dining", params, mutant, actors=("philosopher",))
    b.array("holder", Int(1, n), n, actor="philosopher", doc="forks[f].holder")
    b.array("clean", Bool(), n, actor="philosopher", doc="forks[f].clean")
    b.array("hungry", Bool(), n, actor="philosopher")
    b.array("pc", PC, n, actor="philosopher")

    def can_eat(s, p):
        left, right, _, _ = _forks(p, n)
        return And(s.holder[left] == p + 1, s.holder[right] == p + 1,
                   s.clean[left], s.clean[right])

    @b.action("philosopher", params={"p": phils}, name="Loop")
    def loop(s, p):
        left, right, lp, rp = _forks(p, n)
        give_left = And(s.holder[left] == p + 1, Not(s.clean[left]))
        give_right = And(Not(give_left), s.holder[right] == p + 1, Not(s.clean[right]))
        return s.pc[p] == PC.Loop, {
            s.holder[left]: If(give_left, lp + 1, s.holder[left]),
            s.clean[left]: If(give_left, True, s.clean[left]),
            s.holder[right]: If(give_right, rp + 1, s.holder[right]),
            s.clean[right]: If(give_right, True, s.clean[right]),
            s.pc[p]: If(s.hungry[p], If(can_eat(s, p), PC.Eat, PC.Loop), PC.Think)}

    @b.action("philosopher", params={"p": phils}, name="Think")
    def think(s, p):
        return s.pc[p] == PC.Think, {s.hungry[p]: True, s.pc[p]: PC.Loop}

    @b.action("philosopher", params={"p": phils}, name="Eat")
    def eat(s, p):
        left, right, _, _ = _forks(p, n)
        return s.pc[p] == PC.Eat, {s.hungry[p]: False, s.clean[left]: False,
                                   s.clean[right]: False, s.pc[p]: PC.Loop}

    for p in phils if mutant != "no-fairness" else ():
        b.fairness("weak", [f"{a}(p={p})" for a in ("Loop", "Think", "Eat")],
                   name=f"Philosopher({p + 1})")
    # fork 2 starts with philosopher 1, every other fork f with philosopher f
    b.init(holder=[1 if f == 1 else f + 1 for f in range(n)], clean=False,
           hungry=True, pc=PC.Loop)
    return b.build()


SPEC = ModelSpec(name="dining", title="Dining philosophers (DiningPhilosophers.tla)",
                 params=(Param("np", 5, 2, 6, "philosophers (NP)"),),
                 mutants={"no-fairness": "Spec without its fairness: a philosopher "
                                         "may stop for ever"},
                 build_fn=build)


def exclusive_access(s, m):
    """ExclusiveAccess: two philosophers who share a fork do not eat at once."""
    n = m.params["np"]
    shares = [(p, q) for p in range(n) for q in range(n) if p != q
              and {p, (p + 1) % n} & {q, (q + 1) % n}]
    return ForAll(shares, lambda pq: Not(And(s.pc[pq[0]] == PC.Eat,
                                             s.pc[pq[1]] == PC.Eat)))


def nobody_starves(s, m):
    """NobodyStarves: every philosopher eats again and again ([]<>~hungry[p])."""
    return [Goal.infinitely_often(f"philosopher {p + 1} eats", Not(s.hungry[p]))
            for p in range(m.params["np"])]


PROPERTIES = (
    Property("DP1", "exclusive-access", "dining", exclusive_access.__doc__,
             (Check("inv", exclusive_access),), ()),
    Property("DP2", "nobody-starves", "dining", nobody_starves.__doc__,
             (Check("fair", nobody_starves),), ()),
)
