"""ParReach.tla (tlaplus/Examples ``specifications/MisraReachability/``): processes that
mark, in parallel, the nodes of a graph reachable from ``Root``, a PlusCal algorithm with
one action per label (``a``, ``b``, ``c``) and ``Terminating``.

Constants as ``MCParReach.cfg`` sets them: ``Nodes = {n1, n2, n3, n4}``, ``Root = n1``,
``Procs = {p1, p2}``.  ``Succ`` is, with ``graph=0``, the function ``MCParReach.tla``
defines, ``CHOOSE succ \\in [Nodes -> SUBSET Nodes] : \\A n : Cardinality(succ[n]) = 2``:
TLC 2.18 picks ``n :> {n1, n2}`` for every node (printed with ``PrintT``), so n3 and n4
are not reachable; with ``graph=1``, the graph of our ``MCParReachGraph.tla``, where
every node is (``tests/public_specs/tlc/parreach_graph/``)."""

from osf_check import (And, Check, Enum, Exists, ForAll, Goal, If, Implies, ModelBuilder,
                       ModelSpec, Not, Or, Param, Property, SetOf, SetTable)

Nodes = Enum("n1", "n2", "n3", "n4")
Procs = Enum("p1", "p2")
PC = Enum("a", "b", "c", "Done")
ROOT = "n1"
n1, n2, n3, n4 = Nodes
GRAPHS = ({n: {n1, n2} for n in Nodes},  # Succ, by the parameter graph
          {n1: {n2, n3}, n2: {n4}, n3: {n4}, n4: {n1}})


def build(params, mutant):
    b = ModelBuilder("parreach", params, mutant, actors=("proc",))
    succ = SetTable(Nodes, Nodes, GRAPHS[params["graph"]])
    b.set("marked", Nodes, actor="proc")
    b.set("vroot", Nodes, actor="proc")
    b.array("pc", PC, Procs, actor="proc")
    b.array("u", Nodes, Procs, actor="proc")
    b.array("toVroot", SetOf(Nodes), Procs, actor="proc")
    each = {"self": Procs}

    # a(self): the IF's two branches are two actions, so that the ELSE branch is one
    # step and not one per node
    @b.action("proc", params={**each, "v": Nodes})
    def a(s, self, v):
        return (And(s.pc[self] == PC.a, s.vroot.contains(v)),
                {s.u[self]: v, s.pc[self]: PC.b})

    @b.action("proc", params=each)
    def a_exit(s, self):
        return And(s.pc[self] == PC.a, s.vroot.is_empty()), {s.pc[self]: PC.Done}

    @b.action("proc", params=each, name="b")
    def b_(s, self):
        u = s.u[self]
        new = Not(s.marked.contains(u))
        bits = succ[u]
        to = s.toVroot[self]
        return s.pc[self] == PC.b, {
            **s.marked.add(u),  # u \in marked on the ELSE branch: no change there
            **to.assign([If(new, bit, old) for bit, old in zip(bits, to)]),
            s.pc[self]: If(new, PC.a if mutant == "b-skips-c" else PC.c, PC.a),
            s.vroot[u]: And(s.vroot.contains(u), new)}

    @b.action("proc", params={**each, "w": Nodes})
    def c(s, self, w):
        added = {} if mutant == "c-drops-w" else s.vroot.add(w)
        return (And(s.pc[self] == PC.c, s.toVroot[self].contains(w)),
                {**added, **s.toVroot[self].remove(w)})

    @b.action("proc", params=each)
    def c_exit(s, self):
        return And(s.pc[self] == PC.c, s.toVroot[self].is_empty()), {s.pc[self]: PC.a}

    @b.action("proc")
    def Terminating(s):
        return ForAll(Procs, lambda q: s.pc[q] == PC.Done), {}

    if mutant != "no-fairness":  # \A self \in Procs : WF_vars(p(self))
        b.fairness("weak", ["a", "a_exit", "b", "c", "c_exit"], name="p", each="self")
    b.init(marked=[], vroot=[ROOT], pc="a", u=ROOT, toVroot=[])
    return b.build()


def inv(s, m):
    """``Inv``; its type conjuncts hold by the variables' domains."""
    return ForAll(Procs, lambda q: And(
        Implies(Or(s.pc[q] == PC.a, s.pc[q] == PC.b, s.pc[q] == PC.Done),
                s.toVroot[q].is_empty()),
        Implies(s.pc[q] == PC.b, Or(s.vroot.contains(s.u[q]), s.marked.contains(s.u[q])))))


def vroot_bar(s):
    """``vrootBar == vroot \\cup UNION {toVroot[i] : i \\in Procs}``, bit by bit."""
    return [Or(s.vroot.contains(n), Exists(Procs, lambda q: s.toVroot[q].contains(n)))
            for n in Nodes]


def done_bar(s):
    """``pcBar = "Done"``."""
    return ForAll(Procs, lambda q: s.pc[q] == PC.Done)


def refines(s, t, inst, m):
    """``[][R!Next]_R!vars`` of ``Refines``, with ``R`` Reachable.tla under the mapping
    ``vroot <- vrootBar, pc <- pcBar``: every step is one of Reachable's or leaves
    ``marked``, ``vrootBar`` and ``pcBar`` unchanged."""
    vs, vt = vroot_bar(s), vroot_bar(t)
    succ = GRAPHS[m.params["graph"]]

    def same(xs, ys):
        return And(*(x == y for x, y in zip(xs, ys)))

    def visit(v):  # R's \E v \in vroot : IF v \notin marked THEN ... ELSE ...
        grown = [Or(x, n in succ[v]) for n, x in zip(Nodes, vs)]
        shrunk = [And(x, n != v) for n, x in zip(Nodes, vs)]
        marked = [Or(x, n == v) for n, x in zip(Nodes, s.marked)]
        return And(vs[v], If(s.marked.contains(v),
                             And(same(vt, shrunk), same(t.marked, s.marked)),
                             And(same(vt, grown), same(t.marked, marked))))

    unchanged = And(same(vt, vs), same(t.marked, s.marked), done_bar(t) == done_bar(s))
    step_a = And(Not(done_bar(s)), If(Or(*vs), And(Or(*(visit(v) for v in Nodes)),
                                                   Not(done_bar(t))),
                                      And(done_bar(t), same(vt, vs),
                                          same(t.marked, s.marked))))
    return Or(step_a, unchanged)


def termination(s, m):
    """``Termination == <>(\\A self \\in ProcSet: pc[self] = "Done")``."""
    return [Goal.eventually("all Done", done_bar(s))]


SPEC = ModelSpec(name="parreach", title="ParReach.tla: parallel reachability (Misra)",
                 params=(Param("graph", 0, 0, 1, "Succ: 0 MCParReach.tla's, 1 ours"),),
                 build_fn=build, mutants={
                     "no-fairness": "Init /\\ [][Next]_vars: a process may stop for good",
                     "b-skips-c": "b goes back to a, its toVroot not added to vroot",
                     "c-drops-w": "c takes w out of toVroot without adding it to vroot"})
PROPERTIES = (
    Property("PR1", "inv", "parreach", "Inv.", (Check("inv", inv),), ("b-skips-c",)),
    Property("PR2", "refines-reachable", "parreach",
             "Refines's safety part: each step is a step of Reachable.tla or none.",
             (Check("trans", refines),), ("c-drops-w",)),
    Property("PR3", "termination", "parreach", "Every process reaches Done.",
             (Check("fair", termination),), ("no-fairness",)),
)
