"""EWD 840, Dijkstra's termination detection in a ring, from tlaplus/Examples
``specifications/ewd840/EWD840.tla`` (action for action), written with flat arrays only,
as a model was written before the DSL had quantifiers and sets of initial states: its
``Init`` (``active \\in [Node -> BOOLEAN]``, ``color \\in [Node -> Color]``, ``tpos \\in
Node``) is one ``init`` call per initial state.

It exists to be compared with ``tests/public_specs/ewd840.py``, written with the DSL's
quantifiers and ``init_all``: ``benchmarks/tlc/line_counts.py`` counts both, and
``tests/test_public_specs_flat.py`` checks that both explore TLC's state graph.

    osf-check explore --model-file tests/public_specs/flat/ewd840.py --depth unbounded
"""

import itertools

from osf_check import (And, Bool, Check, Enum, Goal, If, Int, ModelBuilder, ModelSpec, Not,
                       Or, Param, Property)

COLOR = Enum("white", "black")


def build(params, mutant):
    n = params["nodes"]
    b = ModelBuilder("ewd840-flat", params, mutant, actors=("node", "token"))
    b.array("active", Bool(), n, actor="node")
    b.array("color", COLOR, n, actor="node")
    b.var("tpos", Int(0, n - 1), actor="token")
    b.var("tcolor", COLOR, actor="token")

    @b.action("token", name="InitiateProbe")
    def initiate_probe(s):
        return (And(s.tpos == 0, Or(s.tcolor == COLOR.black, s.color[0] == COLOR.black)),
                {s.tpos: n - 1, s.tcolor: COLOR.white, s.color[0]: COLOR.white})

    @b.action("token", params={"i": range(1, n)}, name="PassToken")
    def pass_token(s, i):
        guard = And(s.tpos == i, Or(Not(s.active[i]), s.color[i] == COLOR.black,
                                    s.tcolor == COLOR.black))
        return guard, {s.tpos: i - 1, s.color[i]: COLOR.white,
                       s.tcolor: If(s.color[i] == COLOR.black, COLOR.black, s.tcolor)}

    @b.action("node", params={"i": range(n), "j": range(n)}, name="SendMsg")
    def send_msg(s, i, j):
        if i == j:  # \E j \in Node \ {i}
            return None
        return s.active[i], {s.active[j]: True, s.color[i]: COLOR.black if j > i else s.color[i]}

    @b.action("node", params={"i": range(n)}, name="Deactivate")
    def deactivate(s, i):
        return s.active[i], {s.active[i]: False}

    if mutant != "no-fairness":  # Spec's WF_vars(System)
        b.fairness("weak", ["InitiateProbe", "PassToken"], name="System")
    for active in itertools.product((False, True), repeat=n):
        for color in itertools.product((COLOR.white, COLOR.black), repeat=n):
            for tpos in range(n):
                b.init(active=list(active), color=list(color), tpos=tpos,
                       tcolor=COLOR.black)
    b.quiescent(lambda s: True)  # CHECK_DEADLOCK FALSE
    return b.build()


SPEC = ModelSpec(name="ewd840-flat", title="EWD 840 termination detection (EWD840.tla), "
                                           "flat arrays",
                 params=(Param("nodes", 3, 2, 6, "nodes in the ring (N)"),),
                 mutants={"no-fairness": "Spec without WF_vars(System): the token "
                                         "may stop before it detects termination"},
                 build_fn=build)


def terminated(s, n):
    return And(*(Not(s.active[i]) for i in range(n)))


def termination_detected(s, n):
    return And(s.tpos == 0, s.tcolor == COLOR.white, s.color[0] == COLOR.white,
               Not(s.active[0]))


def termination_detection(s, m):
    """If the token says the ring terminated, no node is active."""
    n = m.params["nodes"]
    return Or(Not(termination_detected(s, n)), terminated(s, n))


def liveness(s, m):
    """Liveness: terminated ~> terminationDetected."""
    n = m.params["nodes"]
    return [Goal.leads_to("termination is detected", terminated(s, n),
                          termination_detected(s, n))]


PROPERTIES = (
    Property("E1", "termination-detection", "ewd840-flat", termination_detection.__doc__,
             (Check("inv", termination_detection),), ()),
    Property("E2", "liveness", "ewd840-flat", liveness.__doc__, (Check("fair", liveness),), ()),
)
