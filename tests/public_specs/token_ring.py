"""Dijkstra's stabilizing token ring (EWD 426), from tlaplus/Examples
``specifications/ewd426/TokenRing.tla`` (written from that spec, action for action).
Every state is initial (``c \\in [Node -> 0..M-1]``); the cfg sets ``CHECK_DEADLOCK
FALSE``, and ``Spec`` has ``WF_vars(Next)``: weak fairness of the set of all actions.
The mutant ``no-fairness`` drops that conjunct, leaving ``Init /\\ [][Next]_vars``.

    osf-check explore --model-file tests/public_specs/token_ring.py --depth unbounded
"""

from osf_check import (And, Check, ForAll, Goal, If, Int, ModelBuilder, ModelSpec, Or,
                       Param, Property)


def _pred(x, m):
    """``(x - 1) % M`` as TLA+ means it (a result in 0..M-1)."""
    return If(x == 0, m - 1, x - 1)


def build(params, mutant):
    n, m = params["nodes"], params["values"]
    b = ModelBuilder("token_ring", params, mutant, actors=("node",))
    b.array("c", Int(0, m - 1), n, actor="node")

    @b.action("node", name="CreateToken")
    def create_token(s):
        return s.c[0] == s.c[n - 1], {s.c[0]: If(s.c[n - 1] == m - 1, 0, s.c[n - 1] + 1)}

    @b.action("node", params={"i": range(1, n)}, name="PassToken")
    def pass_token(s, i):
        return s.c[i] != s.c[i - 1], {s.c[i]: s.c[i - 1]}

    if mutant != "no-fairness":
        b.fairness("weak", ["CreateToken", "PassToken"], name="Next")
    b.init_all(c=Int(0, m - 1))
    b.quiescent(lambda s: True)  # CHECK_DEADLOCK FALSE
    return b.build()


SPEC = ModelSpec(name="token_ring", title="Stabilizing token ring (EWD 426, TokenRing.tla)",
                 params=(Param("nodes", 4, 2, 6, "nodes in the ring (N)"),
                         Param("values", 4, 2, 6, "values of a counter (M), M >= N - 1")),
                 mutants={"no-fairness": "Spec without WF_vars(Next): a behaviour may "
                                         "stop before the ring stabilizes"},
                 build_fn=build)


def unique_token(s, m):
    """UniqueToken: the counters read c[0] up to some node i, then c[0] - 1 after it."""
    n, vals = m.params["nodes"], m.params["values"]
    return Or(*(And(ForAll(range(i), lambda j: s.c[j] == s.c[0]),
                    ForAll(range(i, n), lambda j: s.c[j] == _pred(s.c[0], vals)))
                for i in range(n + 1)))


def stab(s, m):
    """Stab: the ring stabilizes, <>[]UniqueToken."""
    return [Goal.eventually_always("stabilizes", unique_token(s, m))]


PROPERTIES = (
    Property("TR1", "stabilizes", "token_ring", stab.__doc__, (Check("fair", stab),), ()),
)
