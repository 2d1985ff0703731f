"""Transaction commit, from tlaplus/Examples
``specifications/transaction_commit/TCommit.tla`` (written from that spec).  ``RM`` is
``rms`` resource managers; the cfg sets ``CHECK_DEADLOCK FALSE`` (every RM decided is an
end), so the model is quiescent everywhere.  ``Decide(rm)`` is a disjunction of two
steps, both possible in one state (a prepared RM may commit or abort): they are two
actions here, ``DecideCommit`` and ``DecideAbort``, with the same steps between them.

    osf-check explore --model-file tests/public_specs/tcommit.py --depth unbounded
"""

from osf_check import (And, Check, Enum, ForAll, Goal, ModelBuilder, ModelSpec, Not, Or,
                       Param, Property)

STATE = Enum("working", "prepared", "committed", "aborted")


def _can_commit(s, rms):
    return ForAll(rms, lambda r: Or(s.rmState[r] == STATE.prepared,
                                    s.rmState[r] == STATE.committed))


def _not_committed(s, rms):
    return ForAll(rms, lambda r: s.rmState[r] != STATE.committed)


def build(params, mutant):
    rms = range(params["rms"])
    b = ModelBuilder("tcommit", params, mutant, actors=("rm",))
    b.array("rmState", STATE, len(rms), actor="rm")

    @b.action("rm", params={"rm": rms}, name="Prepare")
    def prepare(s, rm):
        return s.rmState[rm] == STATE.working, {s.rmState[rm]: STATE.prepared}

    @b.action("rm", params={"rm": rms}, name="DecideCommit")
    def decide_commit(s, rm):
        return (And(s.rmState[rm] == STATE.prepared, _can_commit(s, rms)),
                {s.rmState[rm]: STATE.committed})

    @b.action("rm", params={"rm": rms}, name="DecideAbort")
    def decide_abort(s, rm):
        return (And(Or(s.rmState[rm] == STATE.working, s.rmState[rm] == STATE.prepared),
                    _not_committed(s, rms)),
                {s.rmState[rm]: STATE.aborted})

    b.init(rmState=STATE.working)
    b.quiescent(lambda s: True)  # CHECK_DEADLOCK FALSE
    return b.build()


SPEC = ModelSpec(name="tcommit", title="Transaction commit (TCommit.tla)",
                 params=(Param("rms", 3, 1, 5, "resource managers (RM)"),),
                 mutants={}, build_fn=build)


def consistent(s, m):
    """TCConsistent: no RM has aborted while another has committed."""
    rms = range(m.params["rms"])
    return ForAll(rms, lambda a: ForAll(rms, lambda c: Not(And(
        s.rmState[a] == STATE.aborted, s.rmState[c] == STATE.committed))))


def all_decide(s, m):
    """<>(every RM committed or aborted): false, TCSpec has no fairness, so a behaviour
    may stop anywhere."""
    rms = range(m.params["rms"])
    return [Goal.eventually("all decide", ForAll(rms, lambda r: Or(
        s.rmState[r] == STATE.committed, s.rmState[r] == STATE.aborted)))]


PROPERTIES = (
    Property("TC1", "consistent", "tcommit", consistent.__doc__,
             (Check("inv", consistent),), ()),
    Property("TC2", "all-decide", "tcommit", all_decide.__doc__,
             (Check("fair", all_decide),), ()),
)
