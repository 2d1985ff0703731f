"""Processes handing out a token, written with an array of records, a two-dimensional
array and an array indexed by an enum (the structured-state tests' model).

``proc[i]`` is a process's record: its ``pc``, how many ``runs`` it made and the
resources it ``holds``; ``turn`` names the process whose turn it is (a computed index);
``seen[i, r]`` records which resources each process ever held; ``load`` counts the
processes holding each resource, indexed by the resource's name.
"""

from osf_check import (And, Check, Count, Enum, ForAll, Int, ModelBuilder, ModelSpec, Not,
                       Param, Property)
from osf_check.models.structured import Record, SetOf

PC = Enum("idle", "busy", "done")
RES = Enum("r1", "r2")


def build(params, mutant):
    n = params["procs"]
    b = ModelBuilder("procs", params, mutant, actors=("proc",))
    b.array("proc", Record(pc=PC, runs=Int(0, 2), holds=SetOf(RES)), n, actor="proc")
    b.array("seen", Int(0, 1), (n, RES), actor="proc")
    b.array("load", Int(0, n), RES, actor="proc")
    b.var("turn", Int(0, n - 1), actor="proc")

    @b.action("proc", params={"r": range(RES.size)}, labels={"r": RES}, name="Start")
    def start(s, r):
        p = s.proc[s.turn]  # the process whose turn it is: a computed index
        return (And(p.pc == PC.idle, p.runs < 2),
                {**p.update(pc="busy", runs=p.runs + 1), **p.holds.add(r),
                 s.seen[s.turn, r]: 1, s.load[r]: s.load[r] + 1,
                 s.turn: (s.turn + 1) % n})

    @b.action("proc", params={"i": range(n)}, name="Finish")
    def finish(s, i):
        p = s.proc[i]
        return (p.pc == PC.busy,
                {**p.update(pc="idle", holds=[]),
                 **{s.load[r]: s.load[r] - p.holds.contains(r) for r in range(RES.size)}})

    b.init(proc={"pc": "idle", "runs": 0, "holds": {"#set": []}}, seen=0, load=0, turn=0)
    b.quiescent(lambda s: True)
    return b.build()


SPEC = ModelSpec(name="procs", title="Processes with records", mutants={}, build_fn=build,
                 params=(Param("procs", 2, 1, 3, "processes"),))


def not_both_r2(s, m):
    """No two processes hold r2 at once (false: the turn passes while one holds it)."""
    return Not(Count(range(m.params["procs"]), lambda i: s.proc[i].holds.contains("r2")) >= 2)


def load_counts_holders(s, m):
    """load[r] is the number of processes holding r."""
    n = m.params["procs"]
    return ForAll(RES, lambda r: s.load[r] == Count(range(n),
                                                    lambda i: s.proc[i].holds.contains(r)))


PROPERTIES = (
    Property("PR1", "not-both-r2", "procs", not_both_r2.__doc__,
             (Check("inv", not_both_r2),), ()),
    Property("PR2", "load-counts-holders", "procs", load_counts_holders.__doc__,
             (Check("inv", load_counts_holders),), ()),
)
