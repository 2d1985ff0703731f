"""EWD 840, Dijkstra's termination detection in a ring, from tlaplus/Examples
``specifications/ewd840/EWD840.tla`` (written from that spec, action for action).

Its ``Init`` is a *set* of states, ``active \\in [Node -> BOOLEAN]``, ``color \\in
[Node -> Color]``, ``tpos \\in Node``: one ``init_all`` call says it (192 initial states
at N=3), where one ``init`` call per state would need 192.

    osf-check explore --model-file tests/public_specs/ewd840.py --depth unbounded
"""

from osf_check import (Bool, Check, Enum, Exists, ForAll, Goal, If, Int, ModelBuilder,
                       ModelSpec, Not, Or, Param, Property)

COLOR = Enum("white", "black")


def build(params, mutant):
    n = params["nodes"]
    nodes = range(n)
    b = ModelBuilder("ewd840", params, mutant, actors=("node", "token"))
    b.array("active", Bool(), n, actor="node")
    b.array("color", COLOR, n, actor="node")
    b.var("tpos", Int(0, n - 1), actor="token")
    b.var("tcolor", COLOR, actor="token")

    @b.action("token", name="InitiateProbe")
    def initiate_probe(s):
        guard = (s.tpos == 0) & Or(s.tcolor == COLOR.black, s.color[0] == COLOR.black)
        return guard, {s.tpos: n - 1, s.tcolor: COLOR.white, s.color[0]: COLOR.white}

    @b.action("token", params={"i": range(1, n)}, name="PassToken")
    def pass_token(s, i):
        guard = (s.tpos == i) & Or(Not(s.active[i]), s.color[i] == COLOR.black,
                                   s.tcolor == COLOR.black)
        return guard, {s.tpos: i - 1, s.color[i]: COLOR.white,
                       s.tcolor: If(s.color[i] == COLOR.black, COLOR.black, s.tcolor)}

    # SendMsg(i)'s \E j \in Node \ {i}: one instance per pair (i, j)
    @b.action("node", params={"i": nodes, "j": nodes}, name="SendMsg")
    def send_msg(s, i, j):
        if i == j:
            return None
        return s.active[i], {s.active[j]: True,
                             s.color[i]: COLOR.black if j > i else s.color[i]}

    @b.action("node", params={"i": nodes}, name="Deactivate")
    def deactivate(s, i):
        return s.active[i], {s.active[i]: False}

    if mutant != "no-fairness":  # Spec's WF_vars(System), System == the token's actions
        b.fairness("weak", ["InitiateProbe", "PassToken"], name="System")
    b.init_all(active=Bool(), color=COLOR, tpos=Int(0, n - 1), tcolor=COLOR.black)
    b.quiescent(lambda s: True)  # the spec does not check deadlock (CHECK_DEADLOCK FALSE)
    return b.build()


SPEC = ModelSpec(name="ewd840", title="EWD 840 termination detection (EWD840.tla)",
                 params=(Param("nodes", 3, 2, 6, "nodes in the ring (N)"),),
                 mutants={"no-fairness": "Spec without WF_vars(System): the token "
                                         "may stop before it detects termination"},
                 build_fn=build)


def termination_detected(s, m):
    """If the token says the ring terminated, no node is active."""
    detected = (s.tpos == 0) & (s.tcolor == COLOR.white) & (s.color[0] == COLOR.white) \
        & Not(s.active[0])
    return Or(Not(detected), ForAll(range(m.params["nodes"]), lambda i: Not(s.active[i])))


def liveness(s, m):
    """Liveness: terminated ~> terminationDetected."""
    terminated = ForAll(range(m.params["nodes"]), lambda i: Not(s.active[i]))
    detected = (s.tpos == 0) & (s.tcolor == COLOR.white) & (s.color[0] == COLOR.white) \
        & Not(s.active[0])
    return [Goal.leads_to("termination is detected", terminated, detected)]


def some_active(s, m):
    """Not an invariant (a node may deactivate): its counterexample is one step long."""
    return Exists(range(m.params["nodes"]), lambda i: s.active[i]) | (s.tpos != 0)


PROPERTIES = (
    Property("E1", "termination-detection", "ewd840", termination_detected.__doc__,
             (Check("inv", termination_detected),), ()),
    Property("E2", "liveness", "ewd840", liveness.__doc__, (Check("fair", liveness),), ()),
)
