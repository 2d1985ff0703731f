"""Missionaries and cannibals, from tlaplus/Examples
``specifications/MissionariesAndCannibals/MissionariesAndCannibals.tla`` (written from
that spec).  The people on each bank are sets (``ModelBuilder.set``), and the spec's
``\\E S \\in SUBSET who_is_on_bank[bank_of_boat]`` is one action instance per boatload
of one or two people.  ``Solution`` (the east bank never empties) is false: its
counterexample is the puzzle's answer.

    osf-check explore --model-file tests/public_specs/missionaries.py --depth unbounded
"""

import itertools

from osf_check import And, Check, Count, Enum, ModelBuilder, ModelSpec, Or, Property

PEOPLE = Enum("c1", "c2", "c3", "m1", "m2", "m3")
CANNIBALS, MISSIONARIES = range(0, 3), range(3, 6)
BANK = Enum("E", "W")
#: the boatloads, one or two people, named by who is in the boat (labels of Move)
LOADS = [c for k in (1, 2) for c in itertools.combinations(range(6), k)]
LOAD = Enum(*("+".join(PEOPLE.names[i] for i in c) for c in LOADS))


def _safe(bits):
    """IsSafe: only cannibals, or no more cannibals than missionaries (bits: one truth
    value per person, a bank's set after the move)."""
    cann = Count(bits[i] for i in CANNIBALS)
    miss = Count(bits[i] for i in MISSIONARIES)
    return Or(miss == 0, cann <= miss)


def build(params, mutant):
    b = ModelBuilder("missionaries", params, mutant, actors=("boat",))
    b.var("bank_of_boat", BANK, actor="boat")
    b.set("east", PEOPLE, actor="boat", doc="who_is_on_bank[\"E\"]")
    b.set("west", PEOPLE, actor="boat", doc="who_is_on_bank[\"W\"]")

    @b.action("boat", params={"load": range(len(LOADS)), "b": range(2)}, name="Move",
              labels={"b": BANK, "load": LOAD})
    def move(s, load, b):
        here, there = (s.east, s.west) if b == BANK.E else (s.west, s.east)
        S = set(LOADS[load])
        new_here = [And(x, False) if i in S else x for i, x in enumerate(here)]
        new_there = [Or(x, True) if i in S else x for i, x in enumerate(there)]
        guard = And(s.bank_of_boat == b, *(here.contains(i) for i in S),
                    _safe(new_here), _safe(new_there))
        return guard, {s.bank_of_boat: 1 - b, **here.assign(new_here),
                       **there.assign(new_there)}

    b.init(bank_of_boat=BANK.E, east=list(PEOPLE.names), west=[])
    return b.build()


SPEC = ModelSpec(name="missionaries", title="Missionaries and cannibals", params=(),
                 mutants={}, build_fn=build)


def solution(s, m):
    """Solution: the east bank is never empty (false: the puzzle can be solved)."""
    return s.east.card() > 0


PROPERTIES = (
    Property("MC1", "east-never-empty", "missionaries", solution.__doc__,
             (Check("inv", solution),), ()),
)
