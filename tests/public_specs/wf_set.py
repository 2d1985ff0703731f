"""Not a published specification: weak fairness of a set of actions is not weak
fairness of each (``tlc/wf_set/WFSet.tla``, the same spec in TLA+).  The moves ``M`` go
0 <-> 1; ``A`` goes 0 -> 2 and ``B`` 1 -> 2.  On the cycle 0 <-> 1 the set {A, B} is
always enabled and never taken, so ``WF(A \\/ B)`` rules the cycle out and ``<>(x = 2)``
holds; ``A`` and ``B`` are each disabled in every other state of it, so ``WF(A) /\\
WF(B)`` (the mutant ``each``) allows it and the property fails.

    osf-check explore --model-file tests/public_specs/wf_set.py --depth unbounded
"""

from osf_check import Check, Goal, Int, ModelBuilder, ModelSpec, Property


def build(params, mutant):
    b = ModelBuilder("wf_set", params, mutant, actors=("p",))
    b.var("x", Int(0, 2), actor="p")
    each = "weak" if mutant == "each" else None

    @b.action("p", params={"k": (0, 1)}, name="M")
    def move(s, k):
        return s.x == k, {s.x: 1 - k}

    @b.action("p", name="A", fair=each)
    def a(s):
        return s.x == 0, {s.x: 2}

    @b.action("p", name="B", fair=each)
    def b_(s):
        return s.x == 1, {s.x: 2}

    if not each:
        b.fairness("weak", ["A", "B"], name="A \\/ B")
    b.quiescent(lambda s: True)  # CHECK_DEADLOCK FALSE
    b.init(x=0)
    return b.build()


SPEC = ModelSpec(name="wf_set", title="Weak fairness of a set", params=(),
                 mutants={"each": "WF of A and of B instead of WF of A \\/ B"},
                 build_fn=build)


def reach_two(s, m):
    """Reach2: <>(x = 2)."""
    return [Goal.eventually("x = 2", s.x == 2)]


PROPERTIES = (
    Property("WS1", "reach-two", "wf_set", reach_two.__doc__, (Check("fair", reach_two),), ()),
)
