"""Lamport's two-phase commit (TwoPhase.tla), the benchmark model.

Written action for action like the TLA+ spec, so that distinct and generated
state counts equal TLC's (N=3: 288 distinct, 1,146 generated).  ``msgs`` is a
set of messages, kept as one bit per possible message.

>>> m = SPEC.build({"rms": 2})
>>> len(m.instances), m.nslots
(12, 9)
"""

from __future__ import annotations

from .dsl import Bool, Enum, Model, ModelBuilder, Param
from .expr import And
from .spec import ModelSpec

RM = Enum("working", "prepared", "committed", "aborted")
TM = Enum("init", "committed", "aborted")


def build(params: dict[str, int], mutant: str | None) -> Model:
    n = params["rms"]
    b = ModelBuilder("two-phase", params, mutant, actors=("tm", "rm", "network"))
    b.array("rmState", RM, n, actor="rm", doc="each resource manager's state")
    b.var("tmState", TM, actor="tm", doc="the transaction manager's state")
    b.array("tmPrepared", Bool(), n, actor="tm",
            doc="the resource managers the TM has received Prepared from")
    b.array("msgPrepared", Bool(), n, actor="network", doc="[type |-> Prepared, rm |-> r] \\in msgs")
    b.var("msgCommit", Bool(), actor="network", doc="[type |-> Commit] \\in msgs")
    b.var("msgAbort", Bool(), actor="network", doc="[type |-> Abort] \\in msgs")
    R = range(n)

    @b.action("tm", params={"r": R}, name="TMRcvPrepared")
    def tm_rcv_prepared(s, r):
        return And(s.tmState == TM.init, s.msgPrepared[r]), {s.tmPrepared[r]: True}

    @b.action("tm", target="rm", name="TMCommit")
    def tm_commit(s):
        # the mutant commits once any resource manager is prepared
        ready = And(*s.tmPrepared) if mutant != "commit-without-all-prepared" else s.tmPrepared[0]
        return And(s.tmState == TM.init, ready), {s.tmState: TM.committed, s.msgCommit: True}

    @b.action("tm", target="rm", name="TMAbort")
    def tm_abort(s):
        return s.tmState == TM.init, {s.tmState: TM.aborted, s.msgAbort: True}

    @b.action("rm", target="tm", params={"r": R}, name="RMPrepare")
    def rm_prepare(s, r):
        return s.rmState[r] == RM.working, {s.rmState[r]: RM.prepared, s.msgPrepared[r]: True}

    @b.action("rm", params={"r": R}, name="RMChooseToAbort")
    def rm_choose_to_abort(s, r):
        return s.rmState[r] == RM.working, {s.rmState[r]: RM.aborted}

    @b.action("rm", params={"r": R}, name="RMRcvCommitMsg")
    def rm_rcv_commit(s, r):
        return s.msgCommit, {s.rmState[r]: RM.committed}

    @b.action("rm", params={"r": R}, name="RMRcvAbortMsg")
    def rm_rcv_abort(s, r):
        return s.msgAbort, {s.rmState[r]: RM.aborted}

    # TLC's SYMMETRY Permutations(RM): the resource managers play equal roles
    b.symmetric("rm", arrays=("rmState", "tmPrepared", "msgPrepared"))
    b.init(rmState=RM.working, tmState=TM.init, tmPrepared=False, msgPrepared=False,
           msgCommit=False, msgAbort=False)
    return b.build()


SPEC = ModelSpec(
    name="two-phase",
    title="Lamport's two-phase commit (TwoPhase.tla), for benchmarks",
    params=(Param("rms", 3, 1, 12, "number of resource managers"),),
    mutants={"commit-without-all-prepared":
             "the transaction manager commits as soon as the first resource manager is prepared"},
    build_fn=build,
    default=False,
)
