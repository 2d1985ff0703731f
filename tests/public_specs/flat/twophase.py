"""Two-phase commit, from tlaplus/Examples
``specifications/transaction_commit/TwoPhase.tla``, written with flat arrays only, as a
model was written before the DSL had sets and quantifiers: ``tmPrepared`` is one truth
value per RM, and ``msgs`` is one truth value per message of the spec's ``Message`` set
(a ``Prepared`` message per RM, one ``Commit``, one ``Abort``).

It exists to be compared with ``tests/public_specs/twophase.py``, written with sets:
``benchmarks/tlc/line_counts.py`` counts both, and ``tests/test_public_specs_flat.py``
checks that both explore TLC's state graph.

    osf-check explore --model-file tests/public_specs/flat/twophase.py --depth unbounded
"""

from osf_check import And, Bool, Check, Enum, ModelBuilder, ModelSpec, Not, Param, Property

RM_STATE = Enum("working", "prepared", "committed", "aborted")
TM_STATE = Enum("init", "committed", "aborted")


def build(params, mutant):
    n = params["rms"]
    rms = range(n)
    rm = {"rm": Enum(*(f"r{i + 1}" for i in rms))}  # traces name RMs as the cfg does
    b = ModelBuilder("twophase-flat", params, mutant, actors=("tm", "rm"))
    b.array("rmState", RM_STATE, n, actor="rm")
    b.var("tmState", TM_STATE, actor="tm")
    b.array("tmPrepared", Bool(), n, actor="tm", doc="rm \\in tmPrepared")
    b.array("prepared", Bool(), n, actor="rm",
            doc='[type |-> "Prepared", rm |-> rm] \\in msgs')
    b.var("commit", Bool(), actor="tm", doc='[type |-> "Commit"] \\in msgs')
    b.var("abort", Bool(), actor="tm", doc='[type |-> "Abort"] \\in msgs')

    @b.action("tm", params={"rm": rms}, name="TMRcvPrepared", labels=rm)
    def tm_rcv_prepared(s, rm):
        return And(s.tmState == TM_STATE.init, s.prepared[rm]), {s.tmPrepared[rm]: True}

    @b.action("tm", name="TMCommit")
    def tm_commit(s):
        return (And(s.tmState == TM_STATE.init, *(s.tmPrepared[r] for r in rms)),
                {s.tmState: TM_STATE.committed, s.commit: True})

    @b.action("tm", name="TMAbort")
    def tm_abort(s):
        return s.tmState == TM_STATE.init, {s.tmState: TM_STATE.aborted, s.abort: True}

    @b.action("rm", params={"rm": rms}, name="RMPrepare", labels=rm)
    def rm_prepare(s, rm):
        return (s.rmState[rm] == RM_STATE.working,
                {s.rmState[rm]: RM_STATE.prepared, s.prepared[rm]: True})

    @b.action("rm", params={"rm": rms}, name="RMChooseToAbort", labels=rm)
    def rm_choose_to_abort(s, rm):
        return s.rmState[rm] == RM_STATE.working, {s.rmState[rm]: RM_STATE.aborted}

    @b.action("rm", params={"rm": rms}, name="RMRcvCommitMsg", labels=rm)
    def rm_rcv_commit(s, rm):
        return s.commit, {s.rmState[rm]: RM_STATE.committed}

    @b.action("rm", params={"rm": rms}, name="RMRcvAbortMsg", labels=rm)
    def rm_rcv_abort(s, rm):
        return s.abort, {s.rmState[rm]: RM_STATE.aborted}

    b.init(rmState=RM_STATE.working, tmState=TM_STATE.init, tmPrepared=False,
           prepared=False, commit=False, abort=False)
    return b.build()


SPEC = ModelSpec(name="twophase-flat", title="Two-phase commit (TwoPhase.tla), flat arrays",
                 params=(Param("rms", 3, 1, 5, "resource managers (RM)"),),
                 mutants={}, build_fn=build)


def consistent(s, m):
    """TC!TCConsistent, which TwoPhase implements: no RM has aborted while another has
    committed."""
    rms = range(m.params["rms"])
    return And(*(Not(And(s.rmState[a] == RM_STATE.aborted,
                         s.rmState[c] == RM_STATE.committed)) for a in rms for c in rms))


PROPERTIES = (
    Property("TP1", "consistent", "twophase-flat", consistent.__doc__,
             (Check("inv", consistent),), ()),
)
