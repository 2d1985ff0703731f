"""Not a published specification: a strongly fair action ``A`` enabled in one state of
a cycle, with a smaller cycle that avoids that state (``tlc/sf_subcycle/SFSub.tla``, the
same spec in TLA+).  The graph is 0 <-> 1, 0 <-> 3 (the moves ``M``, weakly fair as a
set) and ``A``: 1 -> 2.  Staying in the 0 <-> 3 cycle never enables ``A``, so it is fair
and ``<>(x = 2)`` fails; a check that judged the whole strongly connected component
{0, 1, 3} (where ``A`` is enabled and never taken) would call it unfair and say "holds".

    osf-check explore --model-file tests/public_specs/sf_subcycle.py --depth unbounded
"""

from osf_check import Check, Goal, Int, ModelBuilder, ModelSpec, Property

MOVES = ((0, 1), (1, 0), (0, 3), (3, 0))


def build(params, mutant):
    b = ModelBuilder("sf_subcycle", params, mutant, actors=("p",))
    b.var("x", Int(0, 3), actor="p")

    @b.action("p", params={"k": range(len(MOVES))}, name="M")
    def move(s, k):
        here, there = MOVES[k]
        return s.x == here, {s.x: there}

    @b.action("p", name="A", fair="strong")
    def a(s):
        return s.x == 1, {s.x: 2}

    b.fairness("weak", ["M"], name="M")
    b.quiescent(lambda s: True)  # CHECK_DEADLOCK FALSE
    b.init(x=0)
    return b.build()


SPEC = ModelSpec(name="sf_subcycle", title="Strong fairness and a sub-cycle", params=(),
                 mutants={}, build_fn=build)


def reach_two(s, m):
    """Reach2: <>(x = 2)."""
    return [Goal.eventually("x = 2", s.x == 2)]


PROPERTIES = (
    Property("SF1", "reach-two", "sf_subcycle", reach_two.__doc__,
             (Check("fair", reach_two),), ()),
)
