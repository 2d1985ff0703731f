"""Die Hard's jugs, from tlaplus/Examples ``specifications/DieHard/DieHard.tla`` (written
from that spec, action for action).  ``NotSolved`` (``big # 4``) is not an invariant:
its counterexample is the puzzle's answer, the shortest one (breadth-first search).

    osf-check explore --model-file tests/public_specs/diehard.py --depth unbounded
"""

from osf_check import Check, If, Int, ModelBuilder, ModelSpec, Property


def _min(a, b):
    """The spec's ``Min(m, n) == IF m < n THEN m ELSE n``."""
    return If(a < b, a, b)


def build(params, mutant):
    b = ModelBuilder("diehard", params, mutant, actors=("hero",))
    b.var("big", Int(0, 5), actor="hero", doc="gallons in the 5 gallon jug")
    b.var("small", Int(0, 3), actor="hero", doc="gallons in the 3 gallon jug")

    @b.action("hero", name="FillSmallJug")
    def fill_small(s):
        return True, {s.small: 3}

    @b.action("hero", name="FillBigJug")
    def fill_big(s):
        return True, {s.big: 5}

    @b.action("hero", name="EmptySmallJug")
    def empty_small(s):
        return True, {s.small: 0}

    @b.action("hero", name="EmptyBigJug")
    def empty_big(s):
        return True, {s.big: 0}

    @b.action("hero", name="SmallToBig")
    def small_to_big(s):
        new_big = _min(s.big + s.small, 5)
        return True, {s.big: new_big, s.small: s.small - (new_big - s.big)}

    @b.action("hero", name="BigToSmall")
    def big_to_small(s):
        new_small = _min(s.big + s.small, 3)
        return True, {s.small: new_small, s.big: s.big - (new_small - s.small)}

    b.init(big=0, small=0)
    return b.build()


SPEC = ModelSpec(name="diehard", title="Die Hard's jugs (DieHard.tla)", params=(),
                 mutants={}, build_fn=build)


def not_solved(s, m):
    """NotSolved: the big jug never holds 4 gallons (false: the puzzle can be solved)."""
    return s.big != 4


PROPERTIES = (
    Property("DH1", "not-solved", "diehard", not_solved.__doc__,
             (Check("inv", not_solved),), ()),
)
