"""Dining philosophers (Chandy-Misra), from tlaplus/Examples
``specifications/DiningPhilosophers/DiningPhilosophers.tla`` (the TLA+ translation of
its PlusCal, action for action), written with flat arrays only, as a model was written
before the DSL had records and quantifiers: a fork's record ``[holder, clean]`` is two
arrays, philosophers and forks (1..NP in the spec) are 0..NP-1, and so is a holder.
``WF_vars(Philosopher(self))`` is weak fairness of the set ``{Loop(self), Think(self),
Eat(self)}``; the mutant ``no-fairness`` drops it.

It exists to be compared with ``tests/public_specs/dining.py``, written with the DSL's
quantifiers: ``benchmarks/tlc/line_counts.py`` counts both, and
``tests/test_public_specs_flat.py`` checks that both explore TLC's state graph.

    osf-check explore --model-file tests/public_specs/flat/dining.py --depth unbounded
"""

from osf_check import (And, Bool, Check, Enum, Goal, If, Int, ModelBuilder, ModelSpec, Not,
                       Param, Property)

PC = Enum("Loop", "Eat", "Think")


def left_fork(p, n):
    return p


def right_fork(p, n):
    return (p + 1) % n


def left_philosopher(p, n):
    return (p - 1) % n


def right_philosopher(p, n):
    return (p + 1) % n


def can_eat(s, p, n):
    """CanEat(p): p holds both its forks and both are clean."""
    left, right = left_fork(p, n), right_fork(p, n)
    return And(s.holder[left] == p, s.holder[right] == p, s.clean[left], s.clean[right])


def build(params, mutant):
    n = params["np"]
    b = ModelBuilder("dining-flat", params, mutant, actors=("philosopher",))
    b.array("holder", Int(0, n - 1), n, actor="philosopher", doc="forks[f].holder")
    b.array("clean", Bool(), n, actor="philosopher", doc="forks[f].clean")
    b.array("hungry", Bool(), n, actor="philosopher")
    b.array("pc", PC, n, actor="philosopher")

    @b.action("philosopher", params={"p": range(n)}, name="Loop")
    def loop(s, p):
        left, right = left_fork(p, n), right_fork(p, n)
        give_left = And(s.holder[left] == p, Not(s.clean[left]))
        give_right = And(Not(give_left), s.holder[right] == p, Not(s.clean[right]))
        return s.pc[p] == PC.Loop, {
            s.holder[left]: If(give_left, left_philosopher(p, n), s.holder[left]),
            s.clean[left]: If(give_left, True, s.clean[left]),
            s.holder[right]: If(give_right, right_philosopher(p, n), s.holder[right]),
            s.clean[right]: If(give_right, True, s.clean[right]),
            s.pc[p]: If(s.hungry[p], If(can_eat(s, p, n), PC.Eat, PC.Loop), PC.Think)}

    @b.action("philosopher", params={"p": range(n)}, name="Think")
    def think(s, p):
        return s.pc[p] == PC.Think, {s.hungry[p]: True, s.pc[p]: PC.Loop}

    @b.action("philosopher", params={"p": range(n)}, name="Eat")
    def eat(s, p):
        return s.pc[p] == PC.Eat, {s.hungry[p]: False, s.clean[left_fork(p, n)]: False,
                                   s.clean[right_fork(p, n)]: False, s.pc[p]: PC.Loop}

    if mutant != "no-fairness":
        for p in range(n):
            b.fairness("weak", [f"Loop(p={p})", f"Think(p={p})", f"Eat(p={p})"],
                       name=f"Philosopher({p + 1})")
    # fork 2 starts with philosopher 1, every other fork f with philosopher f
    b.init(holder=[0 if f == 1 else f for f in range(n)], clean=False, hungry=True,
           pc=PC.Loop)
    return b.build()


SPEC = ModelSpec(name="dining-flat",
                 title="Dining philosophers (DiningPhilosophers.tla), flat arrays",
                 params=(Param("np", 5, 2, 6, "philosophers (NP)"),),
                 mutants={"no-fairness": "Spec without its fairness: a philosopher "
                                         "may stop for ever"},
                 build_fn=build)


def exclusive_access(s, m):
    """ExclusiveAccess: two philosophers who share a fork do not eat at once."""
    n = m.params["np"]
    forks = [{left_fork(p, n), right_fork(p, n)} for p in range(n)]
    return And(*(Not(And(s.pc[p] == PC.Eat, s.pc[q] == PC.Eat))
                 for p in range(n) for q in range(n) if p != q and forks[p] & forks[q]))


def nobody_starves(s, m):
    """NobodyStarves: every philosopher eats again and again ([]<>~hungry[p])."""
    return [Goal.infinitely_often(f"philosopher {p + 1} eats", Not(s.hungry[p]))
            for p in range(m.params["np"])]


PROPERTIES = (
    Property("DP1", "exclusive-access", "dining-flat", exclusive_access.__doc__,
             (Check("inv", exclusive_access),), ()),
    Property("DP2", "nobody-starves", "dining-flat", nobody_starves.__doc__,
             (Check("fair", nobody_starves),), ()),
)
