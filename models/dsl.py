"""The model DSL: typed state variables, guarded actions, parameters.

A model is a fixed list of state variables with finite domains and a list of
guarded actions, written once and read by every engine.  A state is a tuple of
small integers, one per *slot* (a scalar variable is one slot, an array of n
elements is n slots).

>>> from osf_check.models.dsl import ModelBuilder, Bool, Int
>>> b = ModelBuilder("counter")
>>> n = b.var("n", Int(0, 3), actor="server")
>>> on = b.var("on", Bool(), actor="server")
>>> @b.action("server")
... def inc(s):
...     return s.n < 3, {s.n: s.n + 1}
>>> @b.action("server")
... def flip(s):
...     return True, {s.on: Not(s.on)}
>>> b.init(n=0, on=False)
>>> m = b.build()
>>> [i.label for i in m.instances]
['inc', 'flip']
>>> m.initial_states
[(0, 0)]
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from .domains import Bool, Domain, Enum, Int
from .errors import BadValue, ModelError
from .expr import INT64, Expr, If, Not, OutOfRange, Select, Slot, as_expr, bounds, evaluate  # noqa: F401
from .structured import Array, CellRef, as_type
from .views import ArrayView, ElemRef, SetView

__all__ = [
    "Domain", "Bool", "Enum", "Int", "Var", "Param", "ActionInstance", "Fairness", "Model",
    "ModelBuilder", "ModelError", "StateView", "SymmetricSet", "SetView",
]


# ---------------------------------------------------------------------------
# variables and state views

@dataclass
class Var:
    """A state variable: a scalar (``length is None``) or a fixed-size array."""

    name: str
    domain: Domain
    length: int | None
    first_slot: int
    actor: str
    ghost: bool = False
    doc: str = ""
    #: a finite set's elements (one bit slot per element, see ModelBuilder.set)
    elements: Domain | None = None
    #: a structured variable's type (a record, tuple, set or array of them: see
    #: models.structured); ``length`` is then how many slots it packs into
    shape: Any = None

    @property
    def slots(self) -> range:
        return range(self.first_slot, self.first_slot + (self.length or 1))

    def slot_domains(self) -> list[Domain]:
        if self.shape is not None:
            return self.shape.slot_domains()
        return [self.domain] * (self.length or 1)

    def slot_names(self) -> list[str]:
        if self.shape is not None:
            return self.shape.slot_names(self.name)
        return [self.name] if self.length is None else [f"{self.name}[{i}]"
                                                         for i in range(self.length)]

    def show(self, state: Sequence[int]) -> Any:
        """The value as a person reads it: a set as ``{"#set": [elements]}`` (ITF's form)."""
        if self.shape is not None:
            return self.shape.show([state[i] for i in self.slots])
        if self.elements is not None:
            e = self.elements
            return {"#set": [e.show(e.lo + k) for k, i in enumerate(self.slots) if state[i]]}
        vals = [self.domain.show(state[i]) for i in self.slots]
        return vals if self.length is not None else vals[0]

    def describe(self) -> dict[str, Any]:
        if self.shape is not None:
            return self.shape.describe()
        if self.elements is not None:
            return {"kind": "set", "of": self.elements.describe()}
        return self.domain.describe()

    def parse(self, x: Any) -> list[int]:
        if self.shape is not None:
            return self.shape.parse(x)
        if self.elements is not None:
            if not isinstance(x, Mapping) or not isinstance(x.get("#set"), list):
                raise BadValue('expected a set, {"#set": [...]}')
            have = {self.elements.parse(y) for y in x["#set"]}
            return [int(self.elements.lo + k in have) for k in range(self.length or 0)]
        if self.length is None:
            return [self.domain.parse(x)]
        if not isinstance(x, list) or len(x) != self.length:
            raise BadValue(f"expected a list of {self.length} values")
        return [self.domain.parse(v) for v in x]


class StateView:
    """Attribute access to the variables of one state (current or next)."""

    def __init__(self, variables: Mapping[str, Var], which: int = 0):
        self._vars, self._which = variables, which

    def __getattr__(self, name: str) -> Any:
        try:
            v = self._vars[name]
        except KeyError:
            raise AttributeError(f"the model has no variable {name!r}") from None
        if v.shape is not None:
            return v.shape.view(v.first_slot, self._which, v.name)
        if v.length is None:
            return Slot(v.first_slot, self._which)
        return (SetView if v.elements is not None else ArrayView)(v, self._which)


# ---------------------------------------------------------------------------
# parameters

@dataclass(frozen=True)
class Param:
    """A model parameter: an integer in ``lo..hi``, or a tuple of such integers (say, the
    capacities of several jugs) when its default is a tuple.

    ``bound`` says the parameter is how much of an unbounded quantity the model covers,
    not a setting of the system, so that a larger value only adds behaviours:
    ``"count"``, how often something may happen (reconnects, retries: a counter sized by
    it stops the next one at the top of its domain); ``"size"``, how many of a kind of
    element there are (runs, operations: arrays and ids sized by it, which a log may
    name one more of).  ``check-log`` relies on it to tell a log the protocol forbids
    from one that outgrows the model.

    >>> Param("rms", 3, 1, 12, "resource managers").check("4")
    4
    >>> Param("jugs", (3, 5), 1, 9, "capacities").check("4, 9, 2")
    (4, 9, 2)
    >>> Param("jugs", (3, 5), 1, 9, "capacities").check("3,,5")
    Traceback (most recent call last):
    ...
    osf_check.models.errors.BadValue: parameter jugs takes integers separated by commas, like 3,5; got '3,,5'
    >>> Param("jugs", (3, 5), 1, 9, "capacities").check([3, 10])
    Traceback (most recent call last):
    ...
    osf_check.models.errors.BadValue: parameter jugs=(3, 10): 10 is outside 1..9
    >>> Param("gens", 2, 1, 3, "connections", bound="often")
    Traceback (most recent call last):
    ...
    osf_check.models.errors.ModelError: parameter gens: bound is "count", "size" or "" (a setting), not 'often'
    """

    name: str
    default: int | tuple[int, ...]
    lo: int
    hi: int
    doc: str
    bound: str = ""

    def __post_init__(self) -> None:
        if self.bound not in ("", "count", "size"):
            raise ModelError(f"parameter {self.name}: bound is \"count\", \"size\" or "
                             f"\"\" (a setting), not {self.bound!r}")

    @property
    def is_tuple(self) -> bool:
        return isinstance(self.default, tuple)

    def check(self, value: Any) -> int | tuple[int, ...]:
        if self.is_tuple:
            return self._check_tuple(value)
        if isinstance(value, str):
            try:
                value = int(value, 10)
            except ValueError:
                raise BadValue(f"parameter {self.name} takes an integer, got {value!r}") from None
        if not isinstance(value, int) or isinstance(value, bool):
            raise BadValue(f"parameter {self.name} takes an integer, got {value!r}")
        if not self.lo <= value <= self.hi:
            raise BadValue(f"parameter {self.name}={value} is outside {self.lo}..{self.hi}")
        return value

    def _check_tuple(self, value: Any) -> tuple[int, ...]:
        what = (f"parameter {self.name} takes integers separated by commas, like "
                f"{','.join(map(str, self.default))}")  # type: ignore[arg-type]
        if isinstance(value, str):
            try:  # (an empty element, "3,,5" or "3,", is a slip, not a shorter tuple)
                value = [int(x, 10) for x in value.strip().strip("()[]").split(",")]
            except ValueError:
                raise BadValue(f"{what}; got {value!r}") from None
        if not isinstance(value, (list, tuple)) or not value or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in value):
            raise BadValue(f"{what}; got {value!r}")
        for x in value:
            if not self.lo <= x <= self.hi:
                raise BadValue(f"parameter {self.name}={tuple(value)}: {x} is outside "
                               f"{self.lo}..{self.hi}")
        return tuple(value)


# ---------------------------------------------------------------------------
# actions

@dataclass
class ActionInstance:
    """One action with its parameters bound: a guard and simultaneous updates."""

    index: int
    name: str
    actor: str
    target: str | None
    args: dict[str, int]
    guard: Expr
    updates: dict[int, Expr]  # slot -> new value, read from the current state
    fairness: str | None  # "strong", "weak" or None
    doc: str = ""
    #: answers the action gives (messages, not state), read from the current state
    outputs: dict[str, tuple[Domain, Expr]] = field(default_factory=dict)
    #: the domain of parameters whose values have names (for labels)
    arg_domains: dict[str, Domain] = field(default_factory=dict)

    def output(self, name: str, state: Sequence[int]) -> Any:
        """Output ``name`` on ``state``, as a person reads it.  A value outside the
        output's domain (an enum would show another name: -1 is the last) or a Select
        past its end is a :class:`ModelError` naming the action and the output."""
        d, e = self.outputs[name]
        try:
            v = evaluate(e, state)
        except IndexError as err:
            raise ModelError(f"action {self.label}'s output {name}: {err}") from None
        if v not in d:
            raise ModelError(f"action {self.label}'s output {name} is {v}, outside its "
                             f"domain {d}")
        return d.show(v)

    def show_outputs(self, state: Sequence[int]) -> dict[str, Any]:
        return {k: self.output(k, state) for k in self.outputs}

    @property
    def label(self) -> str:
        if not self.args:
            return self.name
        shown = {k: (self.arg_domains[k].show(v) if k in self.arg_domains else v)
                 for k, v in self.args.items()}
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in shown.items())})"


@dataclass(frozen=True)
class SymmetricSet:
    """Elements ``0..size-1`` that play equal roles: ``arrays`` are the variables indexed
    by them (one slot per element), ``refs`` the variables whose values name one of
    them (a value outside ``0..size-1`` names none and stays as it is).  A declaration
    is a claim: the engines test it against the model before they reduce anything."""

    name: str
    size: int
    arrays: tuple[str, ...]
    refs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fairness:
    """A fairness constraint over a set of action instances, as TLA+'s ``WF_vars(A \\/ B)``
    or ``SF_vars(\\E s: A(s))`` states it: the set is enabled in a state when one of its
    members can take a step that changes the state, and a step of any member is a step
    of the set.  ``kind`` is ``"weak"`` or ``"strong"``; ``instances`` are indices into
    :attr:`Model.instances`."""

    name: str
    kind: str
    instances: tuple[int, ...]


@dataclass
class Model:
    """A built model: what every engine reads."""

    name: str
    params: dict[str, int]
    mutant: str | None
    variables: list[Var]
    instances: list[ActionInstance]
    initial_states: list[tuple[int, ...]]
    quiescent: Expr | None
    fair_states: list[tuple[str, Expr]] = field(default_factory=list)
    constants: dict[str, Any] = field(default_factory=dict)
    #: who acts, in the order a sequence chart draws their lanes (declared by the model,
    #: or in order of first use)
    actors: tuple[str, ...] = ()
    #: sets of interchangeable elements the model declares (see ModelBuilder.symmetric)
    symmetries: list["SymmetricSet"] = field(default_factory=list)
    #: fairness over sets of action instances (ModelBuilder.fairness); an action declared
    #: with ``fair=`` is a set of its own (see :meth:`fair_sets`)
    fairness: list[Fairness] = field(default_factory=list)

    def fair_sets(self) -> list[Fairness]:
        """Every fairness constraint: one per instance declared ``fair=`` (each instance
        its own, as before sets could be declared), then the declared sets."""
        return [Fairness(i.label, i.fairness, (i.index,)) for i in self.instances
                if i.fairness is not None] + list(self.fairness)

    #: the initial states as one predicate over slots (true exactly on
    #: ``initial_states`` within the domains), which z3 reads instead of one constraint
    #: per initial state; None: z3 reads ``initial_states``
    init_pred: Expr | None = None
    #: the initial states init_pred was built for (their hash): a copy given other
    #: initial states keeps this field, so the mismatch shows
    init_for: int | None = None

    def init_predicate(self) -> Expr | None:
        """:attr:`init_pred` if it still describes :attr:`initial_states` (a copy of the
        model given other initial states, ``dataclasses.replace``, keeps the old
        predicate: it is then dropped, not trusted)."""
        if self.init_pred is None or self.init_for != hash(tuple(self.initial_states)):
            return None
        return self.init_pred

    @property
    def nslots(self) -> int:
        return sum(v.length or 1 for v in self.variables)

    @property
    def var_by_name(self) -> dict[str, Var]:
        return {v.name: v for v in self.variables}

    @property
    def slot_domains(self) -> list[Domain]:
        return [d for v in self.variables for d in v.slot_domains()]

    @property
    def slot_names(self) -> list[str]:
        return [n for v in self.variables for n in v.slot_names()]

    @property
    def action_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for a in self.instances:
            seen.setdefault(a.name, None)
        return list(seen)

    def view(self, which: int = 0) -> StateView:
        return StateView(self.var_by_name, which)

    def show_state(self, state: Sequence[int]) -> dict[str, Any]:
        return {v.name: v.show(state) for v in self.variables}

    def parse_state(self, d: Mapping[str, Any]) -> tuple[int, ...]:
        """The inverse of :meth:`show_state`; ``ValueError`` on anything foreign."""
        if not isinstance(d, Mapping):
            raise BadValue("a state is an object of variable: value")
        extra = set(d) - {v.name for v in self.variables}
        if extra:
            raise BadValue(f"unknown variable(s) {', '.join(sorted(extra))}")
        out: list[int] = []
        for v in self.variables:
            if v.name not in d:
                raise BadValue(f"variable {v.name} is missing")
            try:
                out.extend(v.parse(d[v.name]))
            except ValueError as e:
                raise BadValue(f"variable {v.name}: {e}") from None
        return tuple(out)

    def changed(self, a: Sequence[int], b: Sequence[int]) -> list[str]:
        return [v.name for v in self.variables if any(a[i] != b[i] for i in v.slots)]

    def bits(self) -> int:
        return sum(d.bits for d in self.slot_domains)

    def fingerprint(self) -> str:
        """A digest of everything a search of this model reads: its variables and their
        domains, every action instance (guard, updates, fairness, outputs), the initial
        states, the legitimate end states, the fair states and the symmetric sets (not
        its name, parameters or documentation).  Two models with one fingerprint are one
        transition system; a checkpoint, or a model registered under the same name,
        whose fingerprint differs is of another one.

        >>> from osf_check.models.two_phase import SPEC
        >>> a, b = SPEC.build({"rms": 2}), SPEC.build({"rms": 2})
        >>> a.fingerprint() == b.fingerprint() != SPEC.build({"rms": 3}).fingerprint()
        True
        >>> b.initial_states = [tuple(1 - v for v in b.initial_states[0])]
        >>> a.fingerprint() == b.fingerprint()
        False
        """
        h = hashlib.sha256()

        def put(*parts: Any) -> None:
            h.update(repr(parts).encode())
            h.update(b"\0")
        for v in self.variables:
            put("var", v.name, v.length, str(v.domain), repr(v.domain))
            if v.shape is not None:  # (absent: a plain variable's digest is unchanged)
                put("type", repr(v.shape))
        for a in self.instances:
            put("action", a.label, a.guard, sorted(a.updates.items()), a.fairness,
                sorted((k, repr(d), e) for k, (d, e) in a.outputs.items()))
        put("init", self.initial_states)
        put("quiescent", self.quiescent)
        put("fair states", self.fair_states)
        if self.fairness:  # (absent: the digest of a model without sets is unchanged)
            put("fairness", self.fairness)
        put("symmetric", [(s.name, s.size, s.arrays, s.refs) for s in self.symmetries])
        return h.hexdigest()[:16]


def slot_ranges(domains: Sequence["Domain"]) -> Callable[[int], tuple[int, int]]:
    """Each slot's least and greatest value, by slot number (what :func:`~.expr.bounds`
    takes)."""
    return [(d.lo, d.hi) for d in domains].__getitem__


def within_int64(domains: Sequence["Domain"], exprs: Iterable[tuple[Expr, str]]) -> None:
    """Check each ``(expression, what it is)`` with every slot over its domain: a
    :class:`ModelError` names the first that could compute past 64-bit integers."""
    slot_range = slot_ranges(domains)
    exprs = list(exprs)  # (alive while the memo is: its keys are their nodes' ids)
    memo: dict[int, tuple[int, int]] = {}
    for e, what in exprs:
        try:
            bounds(e, slot_range, memo)
        except OutOfRange as err:
            raise ModelError(f"{what}: {err} (numpy, which the vector engine and the "
                             "graph checks compute with, would wrap it around): narrow "
                             "the domains or the constants") from None


def _where(fn: Callable[..., Any]) -> str:
    """The file and line an action function is defined at."""
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else repr(fn)


def _one_label_each(instances: Sequence["ActionInstance"],
                    fns: Sequence[Callable[..., Any]]) -> None:
    """Traces, check-log's mappings and the driver protocol find an action instance by
    its label: two with one label are a model error."""
    first: dict[str, int] = {}
    for inst, fn in zip(instances, fns):
        j = first.setdefault(inst.label, inst.index)
        if j != inst.index:
            raise ModelError(f"two action instances are labelled {inst.label} (actions at "
                             f"{_where(fns[j])} and {_where(fn)}): give them different names")


class ModelBuilder:
    """Collects variables, actions and the initial state; :meth:`build` freezes them.

    ``actors`` names who acts (the lanes of a sequence chart, in that order).  Given, every
    variable's and action's actor must be one of them, so a misspelt one is an error;
    left out, any name is an actor, in order of first use.

    >>> b = ModelBuilder("ping", actors=("client", "server"))
    >>> _ = b.var("x", Int(0, 1), actor="clinet")
    Traceback (most recent call last):
    ...
    osf_check.models.errors.ModelError: actor 'clinet' is not one of the model's actors (client, server): declare it in ModelBuilder(actors=...) or fix the name
    """

    def __init__(self, name: str, params: Mapping[str, Any] | None = None,
                 mutant: str | None = None, *, actors: Sequence[str] | None = None):
        self.name = name
        self.params = dict(params or {})
        self.mutant = mutant
        self._declared = tuple(actors) if actors is not None else None
        if self._declared is not None and (
                len(set(self._declared)) != len(self._declared) or
                not all(isinstance(a, str) and a for a in self._declared)):
            raise ModelError(f"actors must be distinct non-empty names, got {actors!r}")
        self._actors: dict[str, None] = dict.fromkeys(self._declared or ())
        self._vars: dict[str, Var] = {}
        self._nslots = 0
        self._actions: list[tuple[Any, ...]] = []
        self._init: list[dict[str, Any]] = []
        self._quiescent: Callable[[StateView], Any] | None = None
        self._fair_states: list[tuple[str, Callable[[StateView], Any]]] = []
        self._fairness: list[tuple[Any, ...]] = []
        self.constants: dict[str, Any] = {}
        self._symmetries: list[SymmetricSet] = []

    # variables -------------------------------------------------------------
    def var(self, name: str, domain: Any, *, actor: str, ghost: bool = False,
            doc: str = "") -> Any:
        """A scalar variable of a domain, or a structured one of a type (``Record``,
        ``Tuple``, ``SetOf``, ``Array``: see :mod:`osf_check.models.structured`)."""
        if not isinstance(domain, Domain):
            return self._structured(name, domain, actor, ghost, doc)
        return self._add(name, domain, None, actor, ghost, doc)

    def array(self, name: str, domain: Any, length: Any, *, actor: str,
              ghost: bool = False, doc: str = "") -> Any:
        """An array of ``length`` elements of ``domain`` (indexed 0..length-1).  The
        element may be a type (a ``Record``...), ``length`` a domain to index by (an
        ``Enum``'s names, an ``Int`` range) and a pair of them, ``(rows, columns)``, makes
        a two-dimensional array, read ``a[r, c]`` or ``a[r][c]``."""
        if isinstance(domain, Domain) and isinstance(length, int) and not isinstance(length, bool):
            if length < 1:
                raise ModelError(f"array {name} needs at least one element")
            return self._add(name, domain, length, actor, ghost, doc)
        dims = length if isinstance(length, tuple) else (length,)
        if not dims:
            raise ModelError(f"array {name} needs at least one dimension")
        t: Any = domain
        try:
            for n in reversed(dims):
                t = Array(t, n)
        except ModelError as e:
            raise ModelError(f"array {name}: {e}") from None
        return self._structured(name, t, actor, ghost, doc)

    def _structured(self, name: str, t: Any, actor: str, ghost: bool, doc: str) -> Any:
        t = as_type(t)
        return self._add(name, t.slot_domains()[0], t.size, actor, ghost, doc, shape=t)

    def set(self, name: str, elements: Domain, *, actor: str, ghost: bool = False,
            doc: str = "") -> SetView:
        """A set of elements of a small domain (TLA+'s ``x \\in SUBSET elements``): one
        bit slot per element, shown in traces as a set of the elements' names."""
        return self._add(name, Bool(), elements.size, actor, ghost, doc, elements)

    def _add(self, name: str, domain: Domain, length: int | None, actor: str,
             ghost: bool, doc: str, elements: Domain | None = None, shape: Any = None) -> Any:
        if name in self._vars:
            raise ModelError(f"variable {name} declared twice")
        self._actor(actor)
        v = Var(name, domain, length, self._nslots, actor, ghost, doc, elements, shape)
        self._vars[name] = v
        self._nslots += length or 1
        return getattr(StateView(self._vars), name)

    def _actor(self, actor: Any) -> None:
        if not isinstance(actor, str) or not actor:
            raise ModelError(f"an actor is a non-empty name, got {actor!r}")
        if self._declared is not None and actor not in self._declared:
            raise ModelError(f"actor {actor!r} is not one of the model's actors "
                             f"({', '.join(self._declared)}): declare it in "
                             "ModelBuilder(actors=...) or fix the name")
        self._actors.setdefault(actor, None)

    @property
    def state(self) -> StateView:
        return StateView(self._vars)

    def components(self, comps: Iterable[Any], ctx: Any) -> None:
        """Declare every component's variables, then every component's actions (so that
        an action may read another component's variables)."""
        comps = list(comps)
        for comp in comps:
            comp.declare(self, ctx)
        for comp in comps:
            comp.actions(self, ctx)

    # actions ---------------------------------------------------------------
    def action(self, actor: str, *, target: str | None = None,
               params: Mapping[str, Iterable[int]] | None = None,
               fair: str | None = None, name: str | None = None,
               labels: Mapping[str, Domain] | None = None
               ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register ``fn(s, **params) -> (guard, {lvalue: value}[, outputs])`` as an action.

        ``outputs`` maps an answer's name to ``(domain, expression)``: what the
        action answers its caller, computed from the current state.

        ``params`` gives each parameter its values: a range, a list, or a domain (TLA+'s
        ``\\E self \\in Procs : A(self)``).  A parameter over a domain names its
        instances with the domain's names (``A(self=p1)``); ``labels`` gives (or
        overrides) the domain that names a parameter's values.

        ``fair`` is ``"strong"`` or ``"weak"`` fairness for liveness checks.

        >>> Procs = Enum("p1", "p2")
        >>> b = ModelBuilder("procs")
        >>> pc = b.array("pc", Bool(), Procs, actor="p")
        >>> @b.action("p", params={"self": Procs})
        ... def step(s, self):
        ...     return Not(s.pc[self]), {s.pc[self]: True}
        >>> b.init(pc=False)
        >>> [i.label for i in b.build().instances]
        ['step(self=p1)', 'step(self=p2)']
        """
        self._actor(actor)
        if target is not None:
            self._actor(target)
        if fair not in (None, "strong", "weak"):
            raise ModelError("fair is 'strong', 'weak' or None")

        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            named = {k: d for k, d in (params or {}).items() if isinstance(d, Domain)}
            self._actions.append((actor, target, dict(params or {}), fn, fair, name or fn.__name__,
                                  {**named, **(labels or {})}))
            return fn

        return deco

    def init(self, **values: Any) -> None:
        """One initial state: every variable by name (arrays take one value for all)."""
        self._init.append(values)

    def init_all(self, where: Callable[[StateView], Any] | None = None, **values: Any) -> None:
        """A set of initial states, as TLA+'s ``Init`` writes it: each variable takes a
        value, or a :class:`Domain` for every value in it (an array: every element
        independently, TLA+'s ``[Nodes -> BOOLEAN]``), and ``where``, a predicate over
        the state, keeps those that satisfy it.  The explicit engines enumerate them;
        ``prove`` states the predicate once.

        >>> b = ModelBuilder("ring")
        >>> _ = b.array("active", Bool(), 3, actor="node")
        >>> _ = b.var("token", Int(0, 2), actor="node")
        >>> b.init_all(active=Bool(), token=0, where=lambda s: s.active[0])
        >>> m = b.build()
        >>> len(m.initial_states), m.initial_states[0]
        (4, (1, 0, 0, 0))
        """
        self._init.append(dict(values, **({"__where__": where} if where else {})))

    def symmetric(self, name: str, arrays: Sequence[str], refs: Sequence[str] = ()) -> None:
        """Declare that the elements indexing ``arrays`` are interchangeable (TLC's
        ``SYMMETRY``): permuting them, together with the values of ``refs`` that name
        them, maps every run of the model to a run.  ``explore --symmetry`` then stores
        one state per class of permuted states, after testing the claim."""
        if not arrays:
            raise ModelError(f"symmetric set {name}: name the arrays its elements index")
        sizes: set[int] = set()
        for a in (*arrays, *refs):
            if a not in self._vars:
                raise ModelError(f"symmetric set {name}: no variable {a} (declare it first)")
        for a in arrays:
            length = self._vars[a].length
            if length is None:
                raise ModelError(f"symmetric set {name}: {a} is not an array")
            if not _one_slot_each(self._vars[a]):
                raise ModelError(f"symmetric set {name}: {a} is an array of records, sets "
                                 "or arrays, whose elements the symmetry cannot permute yet: "
                                 "declare one plain array per field to use symmetry")
            sizes.add(length)
        if len(sizes) != 1:
            raise ModelError(f"symmetric set {name}: its arrays have different lengths "
                             f"({', '.join(map(str, sorted(sizes)))})")
        size = sizes.pop()
        for r in refs:
            d = self._vars[r].domain
            if not (d.lo <= 0 and size - 1 <= d.hi):
                raise ModelError(f"symmetric set {name}: {r}'s domain {d} cannot name every "
                                 f"one of its {size} elements")
        if size >= 2:  # one element has nothing to swap with
            self._symmetries.append(SymmetricSet(name, size, tuple(arrays), tuple(refs)))

    def quiescent(self, fn: Callable[[StateView], Any]) -> None:
        """States where having nothing to do is a legitimate end, not a deadlock."""
        self._quiescent = fn

    def fair_state(self, name: str, fn: Callable[[StateView], Any]) -> None:
        """A condition that must hold infinitely often on every fair path."""
        self._fair_states.append((name, fn))

    def fairness(self, kind: str, actions: Sequence[str], name: str | None = None, *,
                 where: Mapping[str, Any] | None = None, each: str | None = None) -> None:
        """Weak or strong fairness of a set of actions, as TLA+ writes ``WF_vars(A \\/ B)``
        (``b.fairness("weak", ["A", "B"])``) or ``SF_vars(\\E s: Alloc(s))``
        (``b.fairness("strong", ["Alloc"])``).

        ``actions`` are action names (every instance of the action) or instance labels
        (``"Alloc(s=1)"``, one instance).  The set is enabled in a state when one of its
        instances can take a step that changes the state; a step of any of them is a step
        of the set.  Weak: no fair behaviour keeps the set enabled from some point on
        without taking its steps infinitely often; strong: none has it enabled infinitely
        often without taking its steps infinitely often.

        ``where`` keeps the instances whose parameters have the given values (a name or
        a number): ``where={"self": "p1"}`` is ``WF_vars(p("p1"))`` for ``p(self)`` the
        disjunction of ``actions``.  ``each`` names a parameter and declares one set per
        value of it, TLA+'s ``\\A self \\in Procs : WF_vars(p(self))``; each is named
        ``name(self=p1)``.  Every action listed must then have that parameter.

        >>> Procs = Enum("p1", "p2")
        >>> b = ModelBuilder("procs")
        >>> pc = b.array("pc", Int(0, 2), Procs, actor="p")
        >>> @b.action("p", params={"self": Procs})
        ... def a(s, self):
        ...     return s.pc[self] == 0, {s.pc[self]: 1}
        >>> @b.action("p", params={"self": Procs})
        ... def c(s, self):
        ...     return s.pc[self] == 1, {s.pc[self]: 2}
        >>> b.fairness("weak", ["a", "c"], name="p", each="self")
        >>> b.init(pc=0)
        >>> m = b.build()
        >>> [(f.name, [m.instances[i].label for i in f.instances]) for f in m.fairness]
        [('p(self=p1)', ['a(self=p1)', 'c(self=p1)']), ('p(self=p2)', ['a(self=p2)', 'c(self=p2)'])]
        """
        if kind not in ("weak", "strong"):
            raise ModelError(f"fairness is 'weak' or 'strong', got {kind!r}")
        if isinstance(actions, str) or not actions:
            raise ModelError("fairness: name the actions as a list, e.g. "
                             "b.fairness('weak', ['Send', 'Receive'])")
        if each is not None and not isinstance(each, str):
            raise ModelError(f"fairness: each names one parameter, e.g. each='self', "
                             f"not {each!r}")
        self._fairness.append((name or " \\/ ".join(actions), kind, tuple(actions),
                               dict(where or {}), each, name is None))

    # build -----------------------------------------------------------------
    def build(self) -> Model:
        variables = list(self._vars.values())
        view = StateView(self._vars)
        doms = [d for v in variables for d in v.slot_domains()]
        names = [n for v in variables for n in v.slot_names()]
        instances: list[ActionInstance] = []
        where: list[Callable[..., Any]] = []  # each instance's function
        for actor, target, params, fn, fair, name, labels in self._actions:
            params = {k: list(v) for k, v in params.items()}  # (read twice below)
            keys = list(params)
            for k, d in labels.items():  # (an enum shows -1 as its last name)
                off = [v for v in params.get(k, ()) if v not in d]
                if k not in params or off:
                    raise ModelError(f"action {name}: labels name parameter {k}, which "
                                     + (f"takes {off[0]}, outside {d}" if off else
                                        "it does not have"))
            for combo in itertools.product(*(list(params[k]) for k in keys)):
                args = dict(zip(keys, combo))
                try:
                    res = fn(view, **args)
                    if res is None:
                        continue  # parameter combination that cannot occur
                    if not isinstance(res, tuple) or len(res) not in (2, 3):
                        raise ModelError("an action returns (guard, {variable: value}) or "
                                         "(guard, updates, outputs), or None")
                    guard, upd, *rest = res
                    outs = {k: (d, as_expr(e))
                            for k, (d, e) in (rest[0] if rest else {}).items()}
                    guard = as_expr(guard)
                    if guard.op == "false":
                        continue
                    updates = self._resolve(upd, name, args)
                    within_int64(doms, [(guard, "its guard")]
                                 + [(e, f"its update of {names[i]}") for i, e in updates.items()]
                                 + [(e, f"its output {k}") for k, (_, e) in outs.items()])
                except ModelError as e:
                    raise ModelError(f"{e} (action {name} at {_where(fn)})") from None
                instances.append(ActionInstance(len(instances), name, actor, target, args,
                                                guard, updates, fair, (fn.__doc__ or "").strip(),
                                                outs, labels))
                where.append(fn)
        _one_label_each(instances, where)
        if not self._init:
            raise ModelError("a model needs at least one initial state (ModelBuilder.init)")
        inits: list[tuple[int, ...]] = []
        preds: list[Expr] = []
        for values in self._init:
            got, pred = self._init_set(values, variables, view)
            inits.extend(got)
            preds.append(pred)
        q = as_expr(self._quiescent(view)) if self._quiescent else None
        fs = [(n, as_expr(f(view))) for n, f in self._fair_states]
        within_int64(doms, ([(q, "the quiescent condition")] if q is not None else [])
                     + [(f, f"fair state {n}") for n, f in fs])
        if not inits:
            raise ModelError("no state satisfies the initial condition (ModelBuilder."
                             "init_all's where): a model needs at least one initial state")
        from .expr import Or
        return Model(self.name, dict(self.params), self.mutant, variables, instances,
                     list(dict.fromkeys(inits)), q, fs, dict(self.constants),
                     tuple(self._actors), list(self._symmetries),
                     [fs for f in self._fairness for fs in _fair_sets(instances, *f)],
                     Or(*preds),
                     hash(tuple(dict.fromkeys(inits))))

    def _init_set(self, values: Mapping[str, Any], variables: list[Var],
                  view: StateView) -> tuple[list[tuple[int, ...]], Expr]:
        """The states one ``init``/``init_all`` call names, and the predicate that holds
        exactly on them (within the domains)."""
        from .expr import And
        where = values.get("__where__")
        missing = set(self._vars) - set(values)
        if missing:
            raise ModelError(f"initial state does not set {', '.join(sorted(missing))}")
        choices: list[list[int]] = []
        conds: list[Expr] = []
        for v in variables:
            x = values[v.name]
            if v.shape is not None:
                try:
                    ranges = v.shape.values(x, True)
                except ValueError as e:
                    raise ModelError(f"initial value of {v.name}: {e}") from None
                for i, r, d in zip(v.slots, ranges, v.slot_domains()):
                    choices.append(list(r))
                    if len(r) == 1:
                        conds.append(Slot(i) == r.start)
                    elif (r.start, r.stop - 1) != (d.lo, d.hi):
                        conds.append(And(Slot(i) >= r.start, Slot(i) <= r.stop - 1))
                continue
            if isinstance(x, Domain):
                if not (v.domain.lo <= x.lo and x.hi <= v.domain.hi):
                    raise ModelError(f"initial values {x} of {v.name} outside {v.domain}")
                for i in v.slots:
                    choices.append(list(range(x.lo, x.hi + 1)))
                    if (x.lo, x.hi) != (v.domain.lo, v.domain.hi):
                        conds.append(And(Slot(i) >= x.lo, Slot(i) <= x.hi))
                continue
            if v.elements is not None:
                x = _init_bits(v, x)
            xs = list(x) if isinstance(x, (list, tuple)) else [x] * (v.length or 1)
            if len(xs) != (v.length or 1):
                raise ModelError(f"initial value of {v.name} has the wrong length")
            for i, val in zip(v.slots, xs):
                val = _init_value(v, val)
                if val not in v.domain:
                    raise ModelError(f"initial value {val} of {v.name} outside {v.domain}")
                choices.append([val])
                conds.append(Slot(i) == val)
        keep = as_expr(where(view)) if where is not None else None
        states = [st for st in itertools.product(*choices)
                  if keep is None or evaluate(keep, st)]
        return states, And(*conds, *([keep] if keep is not None else []))

    def _resolve(self, upd: Mapping[Expr, Any], name: str, args: Mapping[str, int]) -> dict[int, Expr]:
        out: dict[int, Expr] = {}
        constant: set[int] = set()
        for lv, val in upd.items():
            val = as_expr(val)
            if isinstance(lv, CellRef) and lv.which == 0:
                # a structured variable's scalar at a computed place: each slot it may
                # name keeps its value unless the place is that slot
                for slot, cond in lv.cells:
                    out[slot] = If(cond, val, out.get(slot, Slot(slot)))
            elif isinstance(lv, ElemRef):
                # a[i] := v for a computed i: each element keeps its value unless i names it
                for k, slot in enumerate(lv.var.slots):
                    old = out.get(slot, Slot(slot))
                    out[slot] = If(lv.index == k, val, old)
            elif isinstance(lv, Expr) and lv.op == "slot" and lv.value[1] == 0:
                slot = lv.value[0]
                if slot in constant:
                    raise ModelError(f"action {name}{dict(args)} assigns slot {slot} twice")
                constant.add(slot)
                out[slot] = val
            else:
                raise ModelError(f"action {name}: left side {lv!r} is not a state variable")
        return out


def _init_bits(v: Var, x: Any) -> list[int]:
    """The bits of set variable ``v`` for an initial value: ``{"#set": [...]}`` or any
    collection of elements, each a name or a number (as ``Enum.name`` gives it)."""
    if isinstance(x, bool):  # every element or none, as for an array of Bool
        return [int(x)] * (v.length or 0)
    if isinstance(x, int):
        # an enum's value is a number: `vroot=Nodes.n1` must not mean "1 for every
        # element", which is every node
        e = v.elements
        assert e is not None
        one = f"[{e.show(x)!r}] for the set holding {e.show(x)}, " if x in e else ""
        raise ModelError(f"initial value of {v.name}: {x!r} is not a set of {e} "
                         f"(an element alone is not the set that holds it); write {one}"
                         "[] for the empty set, or True / False for every element / none")
    items = x.get("#set") if isinstance(x, Mapping) else x
    if isinstance(items, str) or not isinstance(items, Iterable):
        raise ModelError(f'initial value of {v.name}: expected a set, {{"#set": [...]}} '
                         f"or a list of elements, got {x!r}")
    e = v.elements
    assert e is not None  # (called for a set variable only)
    try:
        have = {e.read(y) for y in items}
    except ValueError as err:
        raise ModelError(f"initial value of {v.name}: {err}") from None
    return [int(e.lo + k in have) for k in range(v.length or 0)]


def _init_value(v: Var, val: Any) -> int:
    """One slot's initial value: a number, or (an enum's) a name."""
    if isinstance(val, str):
        try:
            return v.domain.read(val)
        except ValueError as err:
            raise ModelError(f"initial value of {v.name}: {err}") from None
    return int(val)


def _one_slot_each(v: Var) -> bool:
    """Whether each element of array ``v`` is one slot (what symmetry permutes)."""
    t = v.shape
    return t is None or (hasattr(t, "of") and t.of.size == 1)


def _fair_sets(instances: Sequence[ActionInstance], name: str, kind: str,
               actions: Sequence[str], where: Mapping[str, Any], each: str | None,
               default_name: bool) -> list[Fairness]:
    """A declared fairness set with its names resolved to instances (action names take
    every instance, labels one), kept to those ``where`` names; with ``each``, one set
    per value of that parameter.  A name or a value that matches nothing is a model
    error."""
    members = [inst for a in actions for inst in _named(instances, name, a)]
    for k in [*where, *([each] if each else [])]:
        lacking = [i for i in members if k not in i.args]
        if lacking:
            raise ModelError(f"fairness {name}: action {lacking[0].name} has no parameter "
                             f"{k!r} to select its instances by")
    for k, want in where.items():
        members = [i for i in members if _arg_is(i, k, want)]
        if not members:
            raise ModelError(f"fairness {name}: no instance of {', '.join(actions)} has "
                             f"{k}={want!r}")
    suffix = ", ".join(f"{k}={v}" for k, v in where.items())
    if suffix and default_name:
        name = f"{name} ({suffix})"
    if each is None:
        return [Fairness(name, kind, tuple(dict.fromkeys(i.index for i in members)))]
    out = []
    for v in sorted({i.args[each] for i in members}):
        group = [i for i in members if i.args[each] == v]
        shown = f"{each}={_arg_shown(group[0], each)}"
        title = f"{name} ({shown})" if default_name else f"{name}({shown})"
        out.append(Fairness(title, kind, tuple(dict.fromkeys(i.index for i in group))))
    return out


def _named(instances: Sequence[ActionInstance], fairness: str, a: str) -> list[ActionInstance]:
    """The instances an action name (all of them) or an instance label (one) names."""
    got = [i for i in instances if a in (i.name, i.label)]
    if not got:
        raise ModelError(f"fairness {fairness}: no action or action instance named {a!r} "
                         f"(the actions are {', '.join(sorted({i.name for i in instances}))})")
    return got


def _arg_shown(inst: ActionInstance, k: str) -> Any:
    """Parameter ``k``'s value in ``inst`` as its label shows it."""
    d = inst.arg_domains.get(k)
    return d.show(inst.args[k]) if d is not None else inst.args[k]


def _arg_is(inst: ActionInstance, k: str, want: Any) -> bool:
    """Whether parameter ``k`` of ``inst`` is ``want``: a value as the label shows it
    (an enum's name) or its number."""
    if isinstance(want, str):
        return str(_arg_shown(inst, k)) == want
    return bool(inst.args[k] == want)
