"""ParReach.tla (tlaplus/Examples ``specifications/MisraReachability/``) with plain
variables and arrays only: a set of nodes is an array of truth values, one per node, and
``toVroot``, a set per process, one array of ``PROCS * NODES`` truth values.

Constants as ``MCParReach.cfg`` sets them: four nodes, ``Root = n1``, two processes, and
``Succ``, with ``graph=0``, the function TLC 2.18 picks for ``MCParReach.tla``'s
``CHOOSE``: ``{n1, n2}`` for every node; with ``graph=1``, the graph of our
``MCParReachGraph.tla``."""

from osf_check import (And, Bool, Check, Enum, Goal, If, Implies, ModelBuilder, ModelSpec,
                       Not, Or, Param, Property, Select)

Nodes = Enum("n1", "n2", "n3", "n4")
Procs = Enum("p1", "p2")
PC = Enum("a", "b", "c", "Done")
NODES, PROCS = 4, 2
ROOT = 0
# GRAPHS[graph][m][n]: n \in Succ[m]
GRAPHS = ([[True, True, False, False]] * NODES,
          [[False, True, True, False], [False, False, False, True],
           [False, False, False, True], [True, False, False, False]])


def to_vroot(s, p, n):
    """Whether node ``n`` is in process ``p``'s ``toVroot``."""
    return s.toVroot[p * NODES + n]


def build(params, mutant):
    b = ModelBuilder("parreach-flat", params, mutant, actors=("proc",))
    succ = GRAPHS[params["graph"]]
    b.array("marked", Bool(), NODES, actor="proc")
    b.array("vroot", Bool(), NODES, actor="proc")
    b.array("pc", PC, PROCS, actor="proc")
    b.array("u", Nodes, PROCS, actor="proc")
    b.array("toVroot", Bool(), PROCS * NODES, actor="proc")

    @b.action("proc", params={"self": range(PROCS), "v": range(NODES)},
              labels={"self": Procs, "v": Nodes})
    def a(s, self, v):
        return And(s.pc[self] == PC.a, s.vroot[v]), {s.u[self]: v, s.pc[self]: PC.b}

    @b.action("proc", params={"self": range(PROCS)}, labels={"self": Procs})
    def a_exit(s, self):
        empty = And(*(Not(s.vroot[n]) for n in range(NODES)))
        return And(s.pc[self] == PC.a, empty), {s.pc[self]: PC.Done}

    @b.action("proc", params={"self": range(PROCS)}, labels={"self": Procs}, name="b")
    def b_(s, self):
        u = s.u[self]
        new = Not(s.marked[u])
        updates = {s.marked[u]: True,
                   s.pc[self]: If(new, PC.a if mutant == "b-skips-c" else PC.c, PC.a),
                   s.vroot[u]: And(s.vroot[u], new)}
        for n in range(NODES):  # toVroot[self] := Succ[u] on the THEN branch
            bit = Select(u, [succ[m][n] for m in range(NODES)])
            updates[to_vroot(s, self, n)] = If(new, bit, to_vroot(s, self, n))
        return s.pc[self] == PC.b, updates

    @b.action("proc", params={"self": range(PROCS), "w": range(NODES)},
              labels={"self": Procs, "w": Nodes})
    def c(s, self, w):
        updates = {to_vroot(s, self, w): False}
        if mutant != "c-drops-w":
            updates[s.vroot[w]] = True
        return And(s.pc[self] == PC.c, to_vroot(s, self, w)), updates

    @b.action("proc", params={"self": range(PROCS)}, labels={"self": Procs})
    def c_exit(s, self):
        empty = And(*(Not(to_vroot(s, self, n)) for n in range(NODES)))
        return And(s.pc[self] == PC.c, empty), {s.pc[self]: PC.a}

    @b.action("proc")
    def Terminating(s):
        return all_done(s), {}

    if mutant != "no-fairness":
        for p in Procs.names:  # WF_vars(p(self)) for each process
            labels = [f"a_exit(self={p})", f"b(self={p})", f"c_exit(self={p})"]
            for n in Nodes.names:
                labels += [f"a(self={p}, v={n})", f"c(self={p}, w={n})"]
            b.fairness("weak", labels, name=f"p({p})")
    b.init(marked=False, vroot=[True, False, False, False], pc=PC.a, u=ROOT,
           toVroot=False)
    return b.build()


def all_done(s):
    return And(*(s.pc[q] == PC.Done for q in range(PROCS)))


def inv(s, m):
    """``Inv``; its type conjuncts hold by the variables' domains."""
    out = []
    for q in range(PROCS):
        idle = Or(s.pc[q] == PC.a, s.pc[q] == PC.b, s.pc[q] == PC.Done)
        empty = And(*(Not(to_vroot(s, q, n)) for n in range(NODES)))
        out.append(Implies(idle, empty))
        out.append(Implies(s.pc[q] == PC.b, Or(s.vroot[s.u[q]], s.marked[s.u[q]])))
    return And(*out)


def vroot_bar(s):
    """``vroot \\cup UNION {toVroot[i] : i \\in Procs}``, one truth value per node."""
    return [Or(s.vroot[n], *(to_vroot(s, q, n) for q in range(PROCS)))
            for n in range(NODES)]


def refines(s, t, inst, m):
    """Each step is a step of Reachable.tla under ``vroot <- vrootBar, pc <- pcBar`` or
    leaves ``marked``, ``vrootBar`` and ``pcBar`` unchanged."""
    vs, vt = vroot_bar(s), vroot_bar(t)
    succ = GRAPHS[m.params["graph"]]
    marked_same = And(*(t.marked[n] == s.marked[n] for n in range(NODES)))
    steps = []
    for v in range(NODES):
        grown = And(*(vt[n] == Or(vs[n], succ[v][n]) for n in range(NODES)))
        shrunk = And(*(vt[n] == And(vs[n], n != v) for n in range(NODES)))
        marks = And(*(t.marked[n] == Or(s.marked[n], n == v) for n in range(NODES)))
        steps.append(And(vs[v], If(s.marked[v], And(shrunk, marked_same),
                                   And(grown, marks))))
    vroot_same = And(*(vt[n] == vs[n] for n in range(NODES)))
    nonempty = Or(*vs)
    step_a = And(Not(all_done(s)),
                 If(nonempty, And(Or(*steps), Not(all_done(t))),
                    And(all_done(t), vroot_same, marked_same)))
    unchanged = And(vroot_same, marked_same, all_done(t) == all_done(s))
    return Or(step_a, unchanged)


def termination(s, m):
    return [Goal.eventually("all Done", all_done(s))]


SPEC = ModelSpec(name="parreach-flat", title="ParReach.tla: parallel reachability (Misra)",
                 params=(Param("graph", 0, 0, 1, "Succ: 0 MCParReach.tla's, 1 ours"),),
                 build_fn=build, mutants={
                     "no-fairness": "Init /\\ [][Next]_vars: a process may stop for good",
                     "b-skips-c": "b goes back to a, its toVroot not added to vroot",
                     "c-drops-w": "c takes w out of toVroot without adding it to vroot"})
PROPERTIES = (
    Property("PR1", "inv", "parreach-flat", "Inv.", (Check("inv", inv),), ("b-skips-c",)),
    Property("PR2", "refines-reachable", "parreach-flat",
             "Refines's safety part: each step is a step of Reachable.tla or none.",
             (Check("trans", refines),), ("c-drops-w",)),
    Property("PR3", "termination", "parreach-flat", "Every process reaches Done.",
             (Check("fair", termination),), ("no-fairness",)),
)
