"""Missionaries and cannibals, from tlaplus/Examples
``specifications/MissionariesAndCannibals/MissionariesAndCannibals.tla``, written with
flat arrays only, as a model was written before the DSL had sets: ``who_is_on_bank`` is
two arrays, ``east`` and ``west``, one truth value per person, and the spec's ``\\E S
\\in SUBSET who_is_on_bank[bank_of_boat]`` is one action instance per boatload of one or
two people.  ``Solution`` (the east bank never empties) is false: its counterexample is
the puzzle's answer.

It exists to be compared with ``tests/public_specs/missionaries.py``, written with sets:
``benchmarks/tlc/line_counts.py`` counts both, and ``tests/test_public_specs_flat.py``
checks that both explore TLC's state graph.

    osf-check explore --model-file tests/public_specs/flat/missionaries.py --depth unbounded
"""

import itertools

from osf_check import And, Bool, Check, Count, Enum, ModelBuilder, ModelSpec, Or, Property

PEOPLE = ("c1", "c2", "c3", "m1", "m2", "m3")
CANNIBALS, MISSIONARIES = range(0, 3), range(3, 6)
BANK = Enum("E", "W")
#: the boatloads, one or two people (Cardinality(S) \in {1, 2})
LOADS = [c for k in (1, 2) for c in itertools.combinations(range(6), k)]
LOAD = Enum(*("+".join(PEOPLE[p] for p in c) for c in LOADS))


def is_safe(on_bank):
    """IsSafe(S): only cannibals, or no more cannibals than missionaries (``on_bank``: one
    truth value per person)."""
    missionaries = Count(on_bank[p] for p in MISSIONARIES)
    return Or(missionaries == 0, Count(on_bank[p] for p in CANNIBALS) <= missionaries)


def build(params, mutant):
    b = ModelBuilder("missionaries-flat", params, mutant, actors=("boat",))
    b.var("bank_of_boat", BANK, actor="boat")
    b.array("east", Bool(), len(PEOPLE), actor="boat", doc='who_is_on_bank["E"]')
    b.array("west", Bool(), len(PEOPLE), actor="boat", doc='who_is_on_bank["W"]')

    @b.action("boat", params={"load": range(len(LOADS)), "b": range(2)}, name="Move",
              labels={"b": BANK, "load": LOAD})
    def move(s, load, b):
        this, other = (s.east, s.west) if b == BANK.E else (s.west, s.east)
        S = LOADS[load]
        new_this = [False if p in S else this[p] for p in range(len(PEOPLE))]
        new_other = [True if p in S else other[p] for p in range(len(PEOPLE))]
        guard = And(s.bank_of_boat == b, *(this[p] for p in S), is_safe(new_this),
                    is_safe(new_other))
        return guard, {s.bank_of_boat: 1 - b, **{this[p]: False for p in S},
                       **{other[p]: True for p in S}}

    b.init(bank_of_boat=BANK.E, east=True, west=False)
    return b.build()


SPEC = ModelSpec(name="missionaries-flat", title="Missionaries and cannibals, flat arrays",
                 params=(), mutants={}, build_fn=build)


def solution(s, m):
    """Solution: the east bank is never empty (false: the puzzle can be solved)."""
    return Or(*(s.east[p] for p in range(len(PEOPLE))))


PROPERTIES = (
    Property("MC1", "east-never-empty", "missionaries-flat", solution.__doc__,
             (Check("inv", solution),), ()),
)
