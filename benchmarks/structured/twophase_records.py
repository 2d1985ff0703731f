"""Lamport's two-phase commit written with the structured constructs, for
``benchmarks/bench_structured.py``.

The same spec as the catalogue's ``two-phase`` (``models/two_phase.py``, flat arrays):
the same actions in the same order, so the two explore the same graph.  Here each
resource manager is one record (its state, whether the TM has its Prepared, whether its
Prepared message was sent), and the TM's two broadcasts are a set of messages.  The
benchmark compares the two: the records and the set lower to the same packed slots
(ordered element by element instead of array by array), so the search should cost the
same.

    osf-check explore --model-file benchmarks/structured/twophase_records.py \\
        --param rms=3 --depth unbounded
"""

from __future__ import annotations

from osf_check import And, Bool, Enum, ForAll, ModelBuilder, ModelSpec, Param, Record

RM = Enum("working", "prepared", "committed", "aborted")
TM = Enum("init", "committed", "aborted")
#: the TM's broadcasts (``[type |-> "Commit"]``, ``[type |-> "Abort"]``)
BROADCAST = Enum("Commit", "Abort")
#: one resource manager: its state, ``r \in tmPrepared``, ``[type |-> "Prepared", rm |-> r]
#: \in msgs``
RM_RECORD = Record(state=RM, tm_has_prepared=Bool(), sent_prepared=Bool())


def build(params, mutant):
    n = params["rms"]
    b = ModelBuilder("two-phase-records", params, mutant, actors=("tm", "rm", "network"))
    b.array("rm", RM_RECORD, n, actor="rm", doc="each resource manager, and what the TM "
            "and the network hold of it")
    b.var("tmState", TM, actor="tm", doc="the transaction manager's state")
    b.set("sent", BROADCAST, actor="network", doc="the TM's broadcasts sent")
    R = range(n)

    @b.action("tm", params={"r": R}, name="TMRcvPrepared")
    def tm_rcv_prepared(s, r):
        return (And(s.tmState == TM.init, s.rm[r].sent_prepared),
                s.rm[r].update(tm_has_prepared=True))

    @b.action("tm", target="rm", name="TMCommit")
    def tm_commit(s):
        ready = ForAll(s.rm, lambda rm: rm.tm_has_prepared)
        return And(s.tmState == TM.init, ready), {s.tmState: TM.committed,
                                                   **s.sent.add("Commit")}

    @b.action("tm", target="rm", name="TMAbort")
    def tm_abort(s):
        return s.tmState == TM.init, {s.tmState: TM.aborted, **s.sent.add("Abort")}

    @b.action("rm", target="tm", params={"r": R}, name="RMPrepare")
    def rm_prepare(s, r):
        return (s.rm[r].state == RM.working,
                s.rm[r].update(state="prepared", sent_prepared=True))

    @b.action("rm", params={"r": R}, name="RMChooseToAbort")
    def rm_choose_to_abort(s, r):
        return s.rm[r].state == RM.working, s.rm[r].update(state="aborted")

    @b.action("rm", params={"r": R}, name="RMRcvCommitMsg")
    def rm_rcv_commit(s, r):
        return s.sent.contains("Commit"), s.rm[r].update(state="committed")

    @b.action("rm", params={"r": R}, name="RMRcvAbortMsg")
    def rm_rcv_abort(s, r):
        return s.sent.contains("Abort"), s.rm[r].update(state="aborted")

    b.init(rm={"state": "working", "tm_has_prepared": False, "sent_prepared": False},
           tmState=TM.init, sent=[])
    return b.build()


SPEC = ModelSpec(
    name="two-phase-records",
    title="Two-phase commit with a record per resource manager, for benchmarks",
    params=(Param("rms", 3, 1, 12, "number of resource managers"),),
    mutants={},
    build_fn=build,
    default=False,
)
