"""The jug puzzle of Die Hard 3 (DieHard.tla, Lamport's first TLA+ example), as a model
file written outside osf-check.

A 3-gallon and a 5-gallon jug, a tap and a drain: measure exactly 4 gallons.  D2 says it
cannot be done, so its counterexample is the puzzle's solution.  D1 holds: after every
step one jug is empty or full (which is why exactly 16 states are reachable: 2 x 6 with
the small jug empty or full, 4 x 2 more with the big one empty or full).

    osf-check explore --model-file examples/diehard.py --depth unbounded --continue
"""

from osf_check import Check, Int, Min, ModelBuilder, ModelSpec, Or, Param, Property

SMALL, BIG = 3, 5


def build(params, mutant):
    b = ModelBuilder("diehard", params, mutant, actors=("tap", "small jug", "big jug", "drain"))
    b.var("small", Int(0, SMALL), actor="small jug", doc="gallons in the 3-gallon jug")
    b.var("big", Int(0, BIG), actor="big jug", doc="gallons in the 5-gallon jug")
    # the mutant spills: a pour moves one gallon at most, so both jugs can be part full
    most = 1 if mutant == "pour-one-gallon" else BIG

    @b.action("tap", target="small jug", name="FillSmall")
    def fill_small(s):
        return True, {s.small: SMALL}

    @b.action("tap", target="big jug", name="FillBig")
    def fill_big(s):
        return True, {s.big: BIG}

    @b.action("small jug", target="drain", name="EmptySmall")
    def empty_small(s):
        return True, {s.small: 0}

    @b.action("big jug", target="drain", name="EmptyBig")
    def empty_big(s):
        return True, {s.big: 0}

    @b.action("small jug", target="big jug", name="SmallToBig")
    def small_to_big(s):
        poured = Min(s.small, BIG - s.big, most)
        return True, {s.small: s.small - poured, s.big: s.big + poured}

    @b.action("big jug", target="small jug", name="BigToSmall")
    def big_to_small(s):
        poured = Min(s.big, SMALL - s.small, most)
        return True, {s.small: s.small + poured, s.big: s.big - poured}

    b.init(small=0, big=0)
    return b.build()


SPEC = ModelSpec(
    name="diehard",
    title="The Die Hard jug puzzle (DieHard.tla)",
    params=(Param("goal", 4, 0, BIG, "gallons to measure"),),
    mutants={"pour-one-gallon": "a pour moves one gallon at most"},
    build_fn=build,
)


def empty_or_full(s, m):
    return Or(s.small == 0, s.small == SMALL, s.big == 0, s.big == BIG)


def not_solved(s, m):
    return s.big != m.params["goal"]


PROPERTIES = (
    Property("D1", "a-jug-empty-or-full", "diehard",
             "After every step one jug is empty or full.",
             (Check("inv", empty_or_full),), ("pour-one-gallon",)),
    Property("D2", "never-the-goal", "diehard",
             "The big jug never holds the goal (false: its counterexample is the solution).",
             (Check("inv", not_solved),), ()),
)
