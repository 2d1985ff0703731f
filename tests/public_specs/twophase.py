"""Two-phase commit, from tlaplus/Examples
``specifications/transaction_commit/TwoPhase.tla`` (written from that spec, action for
action).  ``tmPrepared`` and ``msgs`` are sets (``ModelBuilder.set``); the messages are
the spec's ``Message`` set, one ``Prepared`` message per RM and one ``Commit`` and one
``Abort``, so ``msgs`` is a subset of ``rms + 2`` elements.

    osf-check explore --model-file tests/public_specs/twophase.py --depth unbounded
"""

from osf_check import And, Check, Enum, ForAll, ModelBuilder, ModelSpec, Not, Param, Property

RM_STATE = Enum("working", "prepared", "committed", "aborted")
TM_STATE = Enum("init", "committed", "aborted")


def rm_names(n):
    return Enum(*(f"r{i + 1}" for i in range(n)))


def message_names(n):
    """The spec's ``Message``: ``[type |-> "Prepared", rm |-> r]`` for each RM, then
    ``[type |-> "Commit"]`` and ``[type |-> "Abort"]``."""
    return Enum(*(f"Prepared(r{i + 1})" for i in range(n)), "Commit", "Abort")


def build(params, mutant):
    n = params["rms"]
    rms, rm_enum, msg = range(n), rm_names(n), message_names(n)
    commit, abort = n, n + 1  # the indices of the Commit and Abort messages
    b = ModelBuilder("twophase", params, mutant, actors=("tm", "rm"))
    b.array("rmState", RM_STATE, n, actor="rm")
    b.var("tmState", TM_STATE, actor="tm")
    b.set("tmPrepared", rm_enum, actor="tm")
    b.set("msgs", msg, actor="tm")

    @b.action("tm", params={"rm": rms}, name="TMRcvPrepared", labels={"rm": rm_enum})
    def tm_rcv_prepared(s, rm):
        return (And(s.tmState == TM_STATE.init, s.msgs.contains(rm)),
                s.tmPrepared.add(rm))

    @b.action("tm", name="TMCommit")
    def tm_commit(s):
        all_prepared = ForAll(rms, lambda r: s.tmPrepared.contains(r))
        return (And(s.tmState == TM_STATE.init, all_prepared),
                {s.tmState: TM_STATE.committed, **s.msgs.add(commit)})

    @b.action("tm", name="TMAbort")
    def tm_abort(s):
        return s.tmState == TM_STATE.init, {s.tmState: TM_STATE.aborted, **s.msgs.add(abort)}

    @b.action("rm", params={"rm": rms}, name="RMPrepare", labels={"rm": rm_enum})
    def rm_prepare(s, rm):
        return (s.rmState[rm] == RM_STATE.working,
                {s.rmState[rm]: RM_STATE.prepared, **s.msgs.add(rm)})

    @b.action("rm", params={"rm": rms}, name="RMChooseToAbort", labels={"rm": rm_enum})
    def rm_choose_to_abort(s, rm):
        return s.rmState[rm] == RM_STATE.working, {s.rmState[rm]: RM_STATE.aborted}

    @b.action("rm", params={"rm": rms}, name="RMRcvCommitMsg", labels={"rm": rm_enum})
    def rm_rcv_commit(s, rm):
        return s.msgs.contains(commit), {s.rmState[rm]: RM_STATE.committed}

    @b.action("rm", params={"rm": rms}, name="RMRcvAbortMsg", labels={"rm": rm_enum})
    def rm_rcv_abort(s, rm):
        return s.msgs.contains(abort), {s.rmState[rm]: RM_STATE.aborted}

    b.init(rmState=RM_STATE.working, tmState=TM_STATE.init, tmPrepared=[], msgs=[])
    return b.build()


SPEC = ModelSpec(name="twophase", title="Two-phase commit (TwoPhase.tla)",
                 params=(Param("rms", 3, 1, 5, "resource managers (RM)"),),
                 mutants={}, build_fn=build)


def consistent(s, m):
    """TC!TCConsistent, which TwoPhase implements: no RM has aborted while another has
    committed."""
    rms = range(m.params["rms"])
    return ForAll(rms, lambda a: ForAll(rms, lambda c: Not(And(
        s.rmState[a] == RM_STATE.aborted, s.rmState[c] == RM_STATE.committed))))


PROPERTIES = (
    Property("TP1", "consistent", "twophase", consistent.__doc__,
             (Check("inv", consistent),), ()),
)
