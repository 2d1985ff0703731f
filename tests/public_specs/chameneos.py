"""Chameneos, a concurrency game, from tlaplus/Examples
``specifications/Chameneos/Chameneos.tla`` (written from that spec).  A chameneos's
tuple ``<<colour, meetings>>`` is a record with fields ``colour`` and ``met``; chameneos
``cid`` (1..M in the spec) is index ``cid - 1``, and ``meetingPlace`` is ``cid`` or 0 for
``MeetingPlaceEmpty``.  ``Meet(cid)``'s three branches (enter the empty meeting place,
fade once N meetings happened, meet the one waiting there) are three actions with the
same steps between them.  The cfg sets ``CHECK_DEADLOCK FALSE``.

    osf-check explore --model-file tests/public_specs/chameneos.py --depth unbounded
"""

from osf_check import (And, Check, Enum, ForAll, If, Implies, Int, ModelBuilder, ModelSpec,
                       Param, Property, Record, Sum)

COLOUR = Enum("blue", "red", "yellow", "faded")


def _complement(a, b):
    """Complement(c1, c2): c1 if both are equal, else the third colour (blue, red and
    yellow are 0, 1 and 2)."""
    return If(a == b, a, 3 - a - b)


def build(params, mutant):
    n, m = params["meetings"], params["chameneoses"]
    ids = range(m)
    b = ModelBuilder("chameneos", params, mutant, actors=("chameneos",))
    b.array("chameneoses", Record(colour=COLOUR, met=Int(0, n)), m, actor="chameneos")
    b.var("meetingPlace", Int(0, m), actor="chameneos", doc="0: MeetingPlaceEmpty")
    b.var("numMeetings", Int(0, n), actor="chameneos")

    def active(s, cid):  # Next's \E c \in {x \in ChameneosID : chameneoses[x][1] /= Faded}
        return s.chameneoses[cid].colour != COLOUR.faded

    @b.action("chameneos", params={"cid": ids}, name="Enter")
    def enter(s, cid):
        return (And(active(s, cid), s.meetingPlace == 0, s.numMeetings < n),
                {s.meetingPlace: cid + 1})

    @b.action("chameneos", params={"cid": ids}, name="Fade")
    def fade(s, cid):
        return (And(active(s, cid), s.meetingPlace == 0, s.numMeetings >= n),
                s.chameneoses[cid].update(colour=COLOUR.faded))

    @b.action("chameneos", params={"cid": ids, "other": ids}, name="Meet")
    def meet(s, cid, other):
        if cid == other:
            return None  # meetingPlace /= cid
        me, them = s.chameneoses[cid], s.chameneoses[other]
        new = _complement(me.colour, them.colour)
        return (And(active(s, cid), s.meetingPlace == other + 1),
                {s.meetingPlace: 0, s.numMeetings: s.numMeetings + 1,
                 **me.update(colour=new, met=me.met + 1),
                 **them.update(colour=new, met=them.met + 1)})

    b.init_all(chameneoses={"colour": COLOUR, "met": 0}, meetingPlace=0, numMeetings=0,
               where=lambda s: ForAll(ids, lambda i: active(s, i)))
    b.quiescent(lambda s: True)  # CHECK_DEADLOCK FALSE
    return b.build()


SPEC = ModelSpec(name="chameneos", title="Chameneos (Chameneos.tla)",
                 params=(Param("meetings", 2, 1, 4, "meetings before the game ends (N)"),
                         Param("chameneoses", 3, 2, 4, "chameneoses (M)")),
                 mutants={}, build_fn=build)


def sum_met(s, m):
    """SumMet: once N meetings happened, the chameneoses count 2 * N meetings in all."""
    n = m.params["meetings"]
    return Implies(s.numMeetings == n,
                   Sum(s.chameneoses, lambda c: c.met) == 2 * n)


PROPERTIES = (
    Property("CH1", "sum-met", "chameneos", sum_met.__doc__, (Check("inv", sum_met),), ()),
)
