"""What a property is: an id, a statement, checks of four kinds, and the mutants that break it."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from osf_check.models.dsl import ActionInstance, Model, StateView, within_int64
from osf_check.models.errors import BadValue
from osf_check.models.expr import And, Const, Expr, Slot, fold

from . import kinds as _kinds

__all__ = ["Check", "CheckList", "Property", "Mutant", "Assumption", "KINDS", "FORMS", "Goal",
           "reads"]

#: the kinds of check, by name (the registry of :mod:`.kinds`: one registered there is
#: accepted here)
KINDS = _kinds.KINDS
#: the kinds of check ``prove`` decides.  A property with reach or fair checks besides
#: (A2) is at most "proved in part": its safety checks hold at every depth, the rest
#: is explore's; a refutation of any part refutes it whole.
PROVED = ("inv", "trans")


def undecided(kinds: Sequence[str]) -> str:
    """What a "proved in part" leaves open, as ``prove``'s text and the HTML report say.

    >>> undecided(["reach", "fair"])
    "its reach and fair checks are explore's: not checked here"
    """
    return f"its {' and '.join(kinds)} checks are explore's: not checked here"


#: the temporal forms a ``fair`` check's goal may take (TLA+'s notation), each read on
#: every fair behaviour of the model; a ``reach`` check takes ``~>`` goals only
FORMS = {
    "~>": "premise ~> goal: every premise state is followed, then or later, by a goal state",
    "[]": "[]goal: the goal holds in every state",
    "<>": "<>goal: the goal holds in some state",
    "[]<>": "[]<>goal: the goal holds infinitely often",
    "<>[]": "<>[]goal: from some state on, the goal holds in every state",
}


@dataclass(frozen=True)
class Goal:
    """One instance of a reach/fair check: from ``premise`` states, ``goal`` must follow.

    ``form`` is the temporal form a ``fair`` check reads (:data:`FORMS`): ``"~>"``
    (``premise ~> goal``, the default) or one of ``"[]"``, ``"<>"``, ``"[]<>"``,
    ``"<>[]"`` applied to ``goal`` (the premise is then unused); the constructors
    :meth:`leads_to`, :meth:`always`, :meth:`eventually`, :meth:`infinitely_often` and
    :meth:`eventually_always` read as the formula.

    >>> from osf_check.models.expr import Const
    >>> Goal.infinitely_often("ticks", Const(True)).form
    '[]<>'
    """

    label: str
    premise: Expr
    goal: Expr
    form: str = "~>"

    @classmethod
    def leads_to(cls, label: str, p: Any, q: Any) -> "Goal":
        """``P ~> Q``: ``[](P => <>Q)``."""
        return cls(label, p, q, "~>")

    @classmethod
    def always(cls, label: str, p: Any) -> "Goal":
        """``[]P`` on every fair behaviour."""
        return cls(label, True, p, "[]")

    @classmethod
    def eventually(cls, label: str, p: Any) -> "Goal":
        """``<>P``: every fair behaviour reaches a ``P`` state."""
        return cls(label, True, p, "<>")

    @classmethod
    def infinitely_often(cls, label: str, p: Any) -> "Goal":
        """``[]<>P``."""
        return cls(label, True, p, "[]<>")

    @classmethod
    def eventually_always(cls, label: str, p: Any) -> "Goal":
        """``<>[]P``."""
        return cls(label, True, p, "<>[]")


@dataclass(frozen=True)
class Check:
    """One way a property is checked.  ``s`` (and ``t``, the next state) are state views:
    ``s.x`` is variable ``x``, ``s.a[i]`` an array element, both DSL expressions;
    ``model`` is the built :class:`~osf_check.models.dsl.Model` (its ``params``,
    ``variables``, ``constants``).  Each function is called once, when the check is
    compiled, and returns expressions (a Python ``True`` or ``False`` is a constant, as
    in an action's guard; any other plain value is bad input).

    - ``inv``: ``fn(s, model) -> Expr``, true on every reachable state;
    - ``trans``: ``fn(s, t, inst, model) -> Expr | None``, true on every edge of
      action instance ``inst`` (its ``name``, ``args``, ``actor``) from ``s`` to ``t``;
      ``None`` means the check does not concern that action (no expression is built);
    - ``reach``: ``fn(s, model) -> [Goal]``: from every reachable premise state a
      goal state is reachable;
    - ``fair``: ``fn(s, model) -> [Goal]``: each goal's temporal form (``premise ~>
      goal`` unless the goal says otherwise, :data:`FORMS`) holds on every fair
      behaviour, stuttering and halting ones included (fairness comes from the model's
      actions and fairness sets; ``docs/liveness.md``).

    >>> from osf_check.models.dsl import Bool, Int, ModelBuilder
    >>> from osf_check.models.expr import evaluate
    >>> b = ModelBuilder("counter", actors=("clock",))
    >>> _ = b.var("n", Int(0, 2), actor="clock"); _ = b.var("done", Bool(), actor="clock")
    >>> @b.action("clock")
    ... def inc(s):
    ...     return s.n < 2, {s.n: s.n + 1, s.done: s.n + 1 == 2}
    >>> b.init(n=0, done=False)
    >>> m = b.build()
    >>> inv = Check("inv", lambda s, m: s.n <= 2)
    >>> evaluate(inv.inv(m), (2, 1))
    1
    >>> grows = Check("trans", lambda s, t, inst, m: t.n > s.n if inst.name == "inc" else None)
    >>> evaluate(grows.trans(m, m.instances[0]), (0, 0), (1, 0))
    1
    >>> ends = Check("reach", lambda s, m: [Goal("finishes", s.n == 0, s.done)])
    >>> [g.label for g in ends.goals(m)]
    ['finishes']
    >>> Check("fair", lambda s, m: [Goal("finishes", s.n < 2, s.done)]).kind
    'fair'
    """

    kind: str
    fn: Callable[..., Any]
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown check kind {self.kind} (one of {', '.join(KINDS)})")

    def inv(self, model: Model) -> Expr:
        return predicate(self.fn(model.view(0), model), self.fn, "an inv check")

    def trans(self, model: Model, inst: ActionInstance) -> Expr | None:
        e = self.fn(model.view(0), model.view(1), inst, model)
        return None if e is None else predicate(e, self.fn, "a trans check")

    def goals(self, model: Model) -> list[Goal]:
        got = self.fn(model.view(0), model)
        if not isinstance(got, (list, tuple)) or not all(isinstance(g, Goal) for g in got):
            raise _returned(got, self.fn, f"a {self.kind} check", "a list of Goal")
        for g in got:
            _form(g, self.kind, self.fn)
        out = [Goal(g.label, predicate(g.premise, self.fn, f"a {self.kind} check's premise"),
                    predicate(g.goal, self.fn, f"a {self.kind} check's goal"), g.form)
               for g in got]
        within_int64(model.slot_domains, [(e, f"goal {g.label}") for g in out
                                          for e in (g.premise, g.goal)])
        return out


def _form(g: Goal, kind: str, fn: Callable[..., Any]) -> None:
    """Bad input unless ``g``'s form is one a ``kind`` check reads."""
    allowed = ("~>",) if kind == "reach" else tuple(FORMS)
    if g.form not in allowed:
        code = getattr(inspect.unwrap(fn), "__code__", None)
        where = f"{code.co_filename}, line {code.co_firstlineno}: " if code else ""
        raise BadValue(f"{where}goal {g.label!r} has the temporal form {g.form!r}, which a "
                       f"{kind} check does not read: use one of {', '.join(allowed)}"
                       + (" (or a fair check for the others)" if kind == "reach" else ""))


def predicate(v: Any, fn: Callable[..., Any], what: str) -> Expr:
    """``v``, what a property's function ``fn`` returned, as an expression: a Python bool
    is a constant (``else True`` in a trans check, as in an action's guard); anything else
    that is not an expression is bad input that names ``fn``'s line."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        return Const(v)
    raise _returned(v, fn, what, "an expression: build it from the state's variables "
                    "(s.x == 1, And(...), If(...)); Python's and/or/not and sums of plain "
                    "values give plain values")


def _returned(v: Any, fn: Callable[..., Any], what: str, want: str) -> BadValue:
    """Bad input: ``fn`` (``what``) returned ``v``, not ``want``; names ``fn``'s line."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    where = f"{code.co_filename}, line {code.co_firstlineno}: " if code else ""
    return BadValue(f"{where}{what} returned {v!r} ({type(v).__name__}), not {want}")


@dataclass(frozen=True)
class Property:
    """A property: an id (``A1``), a name, the model it is of, one sentence, its checks,
    and the mutants that must break it (a test of the catalogue checks each does).
    ``witness(s, model)`` is a condition some explored state must meet, or the check is
    reported vacuous; ``assumptions`` name the environment assumptions it needs.

    >>> p = Property("D1", "never-four", "diehard", "The big jug never holds 4.",
    ...              (Check("inv", lambda s, m: s.big != 4),), ())
    >>> p.title, p.kinds
    ('D1 never-four', 'inv')
    """

    id: str
    name: str
    model: str
    statement: str
    checks: tuple[Check, ...]
    mutants: tuple[str, ...]
    #: a condition that must be true on some explored state, or the check is vacuous
    witness: Callable[[StateView, Model], Expr] | None = None
    witness_doc: str = ""
    #: scaled-down limits the property speaks of, each with a condition that holds once
    #: the limit is reached: an explored graph where one never holds leaves that limit
    #: untested (the vacuity guardrail says "limit never reached")
    reaches: tuple[tuple[str, Callable[[StateView, Model], Expr]], ...] = ()
    #: for a limit of ``reaches`` that no depth reaches at the default parameters, the
    #: options that do reach it, so that its warning says what to run
    press: tuple[tuple[str, str], ...] = ()
    assumptions: tuple[str, ...] = ()
    #: other properties whose invariants the proof of this one may assume
    strengthen: tuple[str, ...] = ()
    #: hand-written strengthening invariants for k-induction (proved along with the
    #: mined ones before they are assumed)
    lemmas: Callable[[StateView, Model], list[Expr]] | None = None

    @property
    def kinds(self) -> str:
        return " + ".join(dict.fromkeys(c.kind for c in self.checks))

    @property
    def title(self) -> str:
        return f"{self.id} {self.name}"


@dataclass(frozen=True)
class Mutant:
    """A known bug: switched on in the model by name; must break ``breaks``."""

    name: str
    model: str
    breaks: tuple[str, ...]
    where: str
    description: str
    #: parameters the bug needs to show (merged under the user's --param values)
    params: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Assumption:
    """An environment assumption a property is checked under (droppable by name)."""

    name: str
    model: str
    statement: str
    needed_by: tuple[str, ...] = field(default_factory=tuple)


def mutant_catalogue(model: str, props: Sequence[Property], described: dict[str, str], *,
                     where: dict[str, str], default_where: str,
                     params: dict[str, dict[str, int]] | None = None) -> tuple[Mutant, ...]:
    """The model's mutants, each paired with the properties that name it.

    ``described``: mutant name -> one sentence (a ``ModelSpec``'s ``mutants``); ``where``:
    mutant name -> the component it lives in (``default_where`` for the others);
    ``params``: mutant name -> the parameters the bug needs to show.

    >>> p = Property("T1", "t", "m", "a statement", (Check("inv", lambda s, m: s),), ("bug",))
    >>> [(mu.name, mu.breaks, mu.where, mu.params) for mu in mutant_catalogue(
    ...     "m", [p], {"bug": "a bug", "other": "no property names it"}, where={},
    ...     default_where="server", params={"bug": {"n": 1}})]
    [('bug', ('T1',), 'server', {'n': 1}), ('other', (), 'server', {})]
    """
    return tuple(Mutant(name, model, tuple(p.id for p in props if name in p.mutants),
                        where.get(name, default_where), desc, (params or {}).get(name, {}))
                 for name, desc in described.items())


def reads(model: Model, prop: Property, kind: str, inst: ActionInstance | None = None) -> list[str]:
    """The variables ``prop``'s checks of ``kind`` read, in the model's order: what a
    counterexample picture shows at the failing step.  A ``trans`` check is built for
    ``inst``, the action of the failing step (``None``: every action's).

    >>> from osf_check.models.dsl import Bool, Int, ModelBuilder
    >>> b = ModelBuilder("m", actors=("a",))
    >>> _ = b.var("n", Int(0, 2), actor="a"); _ = b.var("on", Bool(), actor="a")
    >>> _ = b.array("k", Int(0, 1), 2, actor="a")
    >>> @b.action("a")
    ... def inc(s):
    ...     return s.n < 2, {s.n: s.n + 1}
    >>> b.init(n=0, on=False, k=[0, 0])
    >>> m = b.build()
    >>> p = Property("P1", "p", "m", "", (Check("inv", lambda s, m: (s.n < 2) | s.k[1]),), ())
    >>> reads(m, p, "inv"), reads(m, p, "trans")
    (['n', 'k'], [])
    """
    owner = {i: v.name for v in model.variables for i in v.slots}
    exprs: list[Expr] = []
    for c in prop.checks:
        if c.kind != kind:
            continue
        if kind == "inv":
            exprs.append(c.inv(model))
        elif kind == "trans":
            for i in ([inst] if inst is not None else model.instances):
                e = c.trans(model, i)
                if e is not None:
                    exprs.append(e)
        else:
            exprs += [x for g in c.goals(model) for x in (g.premise, g.goal)]
    seen: set[str] = set()
    for e in exprs:
        fold(e, lambda x: seen.add(owner[x.value[0]]) if x.op == "slot" else None,
             lambda op, a: None)
    return [v.name for v in model.variables if v.name in seen]


def unchanged(model: Model, skip: Sequence[str] = ()) -> Expr:
    """Every variable (but those in ``skip``) keeps its value across the step."""
    return And(*(Slot(i, 1) == Slot(i, 0) for v in model.variables if v.name not in skip
                 for i in v.slots))


def witness_conditions(p: Property, m: Model) -> list[tuple[str, Expr]]:
    """Every condition some explored state must meet for ``p``'s check not to be vacuous,
    keyed as in ``Exploration.witness_seen``: the premise under ``p.id``, each limit under
    ``p.id~i``."""
    out = [(p.id, predicate(p.witness(m.view(0), m), p.witness, "a witness"))] \
        if p.witness is not None else []
    out += [(f"{p.id}~{i}", predicate(f(m.view(0), m), f, "a limit's condition"))
            for i, (_, f) in enumerate(p.reaches)]
    return out


@dataclass
class CheckList:
    """What a run checks, compiled once for one model: every engine (the explicit and
    vector searches, the fuzz driver, the symbolic checks, the symmetry test) reads this
    list and interprets its expressions its own way.

    ``trans[i]`` holds the transition checks of action instance ``i``; ``trans_props``
    every property that has transition checks (even if no instance of the model has one,
    so that a check that was never applied can be reported).  Expressions that are
    trivially true are left out.
    """

    invs: list[tuple[str, Expr]]
    witnesses: list[tuple[str, Expr]]
    trans: list[list[tuple[str, Expr]]]
    trans_props: list[str]

    @classmethod
    def of(cls, model: Model, props: Sequence[Property]) -> "CheckList":
        """>>> from osf_check.models.two_phase import SPEC
        >>> from osf_check.properties import catalogue
        >>> cl = CheckList.of(SPEC.build({"rms": 2}), catalogue.properties_of("two-phase"))
        >>> [pid for pid, _ in cl.invs]
        ['T1']
        """
        invs: list[tuple[str, Expr]] = []
        witnesses: list[tuple[str, Expr]] = []
        trans: list[list[tuple[str, Expr]]] = [[] for _ in model.instances]
        trans_props: list[str] = []
        for p in props:
            witnesses += witness_conditions(p, model)
            for c in p.checks:
                if c.kind == "inv":
                    e = c.inv(model)
                    if e.op != "true":
                        invs.append((p.id, e))
                elif c.kind == "trans":
                    if p.id not in trans_props:
                        trans_props.append(p.id)
                    for inst in model.instances:
                        e = c.trans(model, inst)
                        if e is not None and e.op != "true":
                            trans[inst.index].append((p.id, e))
        within_int64(model.slot_domains,
                     [(e, f"property {pid}'s invariant") for pid, e in invs]
                     + [(e, f"property {pid}'s witness") for pid, e in witnesses]
                     + [(e, f"property {pid}'s transition check of "
                         f"{model.instances[i].label}")
                        for i, row in enumerate(trans) for pid, e in row])
        return cls(invs, witnesses, trans, trans_props)

    def compiled(self, inv: Callable[[Expr], Any], trans: Callable[[Expr], Any]) -> "CheckList":
        """The same list with each state predicate passed through ``inv`` and each
        transition check through ``trans`` (an engine's own compiler)."""
        return CheckList([(k, inv(e)) for k, e in self.invs],
                         [(k, inv(e)) for k, e in self.witnesses],
                         [[(k, trans(e)) for k, e in row] for row in self.trans],
                         list(self.trans_props))
