"""A model's reference, generated from the model: its actions (arguments and their
domains, guard, effect, outputs, actor), variables, fairness and end states, in words
read off the DSL's expressions, for an engineer who writes an adapter or a log mapping.

Expressions are shown in TLA+'s notation: ``∧ ∨ ¬ ⇒``, ``x' = v`` for an update, enum
values by name in quotes, as the driver protocol's JSON writes them.  An action whose
instances differ only in their arguments is shown once, with the argument names where
the instances differ (``phase[r]``); the shown text, its arguments put back, is each
instance's own rendering, exactly (:func:`action_forms` checks it).  An action whose
instances differ in shape (a loop over the other elements, say) is shown instance by
instance.

>>> from osf_check.models.dsl import Enum, Int, ModelBuilder
>>> PC = Enum("idle", "busy")
>>> b = ModelBuilder("m", actors=("worker",))
>>> _ = b.array("pc", PC, 2, actor="worker", doc="each worker's state")
>>> _ = b.var("n", Int(0, 3), actor="worker", doc="jobs done")
>>> @b.action("worker", params={"w": range(2)})
... def start(s, w):
...     return And(s.pc[w] == PC.idle, s.n < 3), {s.pc[w]: PC.busy}
>>> b.init(pc=PC.idle, n=0)
>>> form = action_forms(b.build(), "start")[0]
>>> print(" ∧ ".join(form["guard"]), "|", form["effect"][0])
pc[w] = "idle" ∧ n < 3 | pc'[w] = "busy"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from .dsl import ActionInstance, Domain, Model, Var
from .expr import And, Expr  # noqa: F401  (And: the doctest's)

__all__ = ["describe", "action_forms", "render", "json_shape"]


# ---------------------------------------------------------------------------
# tokens: the rendered text, with the values an action's arguments may stand for kept
# apart, so that the instances of one action can be compared position by position

@dataclass(frozen=True)
class Leaf:
    """A value in the text (an array index or a constant): ``value`` as JSON shows it,
    ``text`` as the reference prints it."""

    value: Any
    text: str


Tokens = list  # of str | Leaf


def _text(tokens: Iterable[Any], names: Mapping[int, str] | None = None) -> str:
    """The tokens as text; ``names`` puts an argument's name at the leaves it indexes."""
    out = []
    for k, t in enumerate(tokens):
        if isinstance(t, Leaf):
            out.append(names.get(k, t.text) if names else t.text)
        else:
            out.append(t)
    return "".join(out)


def _show(d: Domain | None, v: int) -> Leaf:
    """A constant, by name where its context (``d``) names values."""
    if d is not None and v in d and d.kind in ("enum", "bool"):
        shown = d.show(v)
        return Leaf(shown, f'"{shown}"' if d.kind == "enum" else str(shown).lower())
    return Leaf(v, str(v))


# ---------------------------------------------------------------------------
# expressions

#: binding strength: a child binds looser than its parent is parenthesised
_PREC = {"implies": 1, "or": 2, "and": 3, "not": 4, "cmp": 5, "add": 6, "mul": 7, "atom": 9}
_CMP = {"eq": " = ", "ne": " ≠ ", "lt": " < ", "le": " ≤ ", "gt": " > ", "ge": " ≥ "}
_ARITH = {"add": (" + ", "add"), "sub": (" - ", "add"), "mul": (" * ", "mul"),
          "div": (" ÷ ", "mul"), "mod": (" % ", "mul")}
#: an index in a slot's path, ``[0]`` or ``[red]`` (kept by split)
_INDEX = re.compile(r"(\[[^\]]*\])")
_FLIP = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le"}


class Renderer:
    """Renders expressions over one model's slots (current state ``x``, next ``x'``)."""

    def __init__(self, model: Model):
        self.model = model
        self.slot: dict[int, tuple[Var, int | None]] = {}
        for v in model.variables:
            for k, i in enumerate(v.slots):
                self.slot[i] = (v, None if v.length is None else k)
        self.slot_names = model.slot_names
        #: each slot's domain (a record's fields differ: a variable has no one domain)
        self.slot_domains = model.slot_domains
        #: the domain a node's value is in, learnt from where it is used (an answer
        #: computed once and both stored in a variable and compared: its constants are
        #: that variable's values), by node id (nodes are shared, never copied)
        self.hints: dict[int, Domain] = {}
        self._keep: list[Expr] = []  # (the hinted nodes, alive while their ids are keys)
        #: shared parts shown once, by name (TLA+'s LET), by node id
        self.names: dict[int, str] = {}

    def learn(self, e: Expr, dom: Domain | None) -> None:
        """``e``'s value is in ``dom``: so are its branches' (an IF's, a Select's)."""
        if dom is None or id(e) in self.hints:
            return
        self.hints[id(e)] = dom
        self._keep.append(e)
        for x in (e.args[1:] if e.op in ("ite", "select") else ()):
            self.learn(x, dom)

    def learn_compared(self, e: Expr) -> None:
        """In ``a = b``, ``b``'s values are ``a``'s (and back), through the whole tree."""
        seen: set[int] = set()
        stack = [e]
        while stack:
            x = stack.pop()
            if id(x) in seen:
                continue
            seen.add(id(x))
            if x.op in _CMP:
                a, b = x.args
                self.learn(b, self.domain(a))
                self.learn(a, self.domain(b))
            stack.extend(x.args)

    # what a node's values are (for naming the constants it is compared with)
    def domain(self, e: Expr) -> Domain | None:
        got = self.hints.get(id(e))
        if got is not None:
            return got
        if e.op == "slot":
            return self.slot_domains[e.value[0]]
        if e.op == "ite":
            return self.domain(e.args[1]) or self.domain(e.args[2])
        if e.op == "select":
            return next((d for d in map(self.domain, e.args[1:]) if d is not None), None)
        return None

    def truthy(self, e: Expr) -> bool:
        """Whether ``e`` is a truth value (a comparison, a connective, a Bool variable)."""
        if e.op == "slot":
            return self.slot_domains[e.value[0]].kind == "bool"
        return e.op in ("eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "implies",
                        "true", "false")

    def render(self, e: Expr, dom: Domain | None = None) -> tuple[int, Tokens]:
        """``(binding strength, tokens)`` of ``e``; ``dom`` names the constants in it."""
        op = e.op
        dom = dom or self.hints.get(id(e))
        if id(e) in self.names:
            return _PREC["atom"], [self.names[id(e)]]
        if op == "const":
            return _PREC["atom"], [_show(dom, e.value)]
        if op in ("true", "false"):  # a Bool variable's value as JSON writes it, else TLA+'s
            word = op if dom is not None and dom.kind == "bool" else op.upper()
            return _PREC["atom"], [Leaf(op == "true", word)]
        if op == "slot":
            return _PREC["atom"], self._slot(e)
        if op == "select":
            return _PREC["atom"], self._select(e, dom)
        if op in _CMP:
            return self._compare(e)
        if op in ("and", "or"):
            return self._connective(e)
        if op == "not":
            return self._not(e)
        if op == "implies":
            return _PREC["implies"], (self._child(e.args[0], _PREC["implies"] + 1) + [" ⇒ "]
                                      + self._child(e.args[1], _PREC["implies"]))
        if op == "ite":
            c, a, b = e.args
            pa, ta = self.render(a, dom)
            tb = self.render(b, dom)[1]
            if ta == tb:  # IF c THEN v ELSE v is v
                return pa, ta
            return 0, ["IF "] + self.render(c)[1] + [" THEN "] + ta + [" ELSE "] + tb
        sym, kind = _ARITH[op]
        p = _PREC[kind]
        (pa, ta), (pb, tb) = self.render(e.args[0]), self.render(e.args[1])
        zero = [Leaf(0, "0")]
        if op in ("add", "sub") and tb == zero:  # x + 0 is x (a sum built term by term)
            return pa, ta
        if op == "add" and ta == zero:
            return pb, tb
        return p, (ta if pa >= p else ["("] + ta + [")"]) + [sym] + \
            (tb if pb >= p + 1 else ["("] + tb + [")"])

    def text(self, e: Expr, dom: Domain | None = None) -> str:
        return _text(self.render(e, dom)[1])

    def _child(self, e: Expr, at_least: int, dom: Domain | None = None) -> Tokens:
        p, t = self.render(e, dom)
        return t if p >= at_least else ["("] + t + [")"]

    def _slot(self, e: Expr) -> Tokens:
        i, which = e.value
        v, k = self.slot[i]
        prime = "'" if which else ""
        if k is None:
            return [v.name + prime]
        if v.shape is not None:  # a structured variable's slot: its path, proc[1].pc
            # (each number in it a value of its own: instances that differ in an index
            # fold into one text, stage[o][a])
            out: Tokens = []
            for part in _INDEX.split(self.slot_names[i]):
                key = part[1:-1] if part.startswith("[") else ""
                if key.isdigit():
                    out += ["[", Leaf(int(key), key), "]"]
                elif part:
                    out.append(part)
            return out + ([prime] if prime else [])
        if v.elements is not None:  # a set: one bit per element
            return [_show(v.elements, v.elements.lo + k), f" ∈ {v.name}{prime}"]
        return [f"{v.name}{prime}[", Leaf(k, str(k)), "]"]

    def _select(self, e: Expr, dom: Domain | None) -> Tokens:
        """``a[i]`` when the options are an array's elements in order, else a tuple."""
        index, opts = e.args[0], e.args[1:]
        owners = [self.slot[o.value[0]] if o.op == "slot" else None for o in opts]
        if (all(o is not None for o in owners) and len({o[0].name for o in owners}) == 1
                and [o[1] for o in owners] == list(range(len(opts)))
                and len({o.value[1] for o in opts}) == 1 and owners[0][0].elements is None):
            prime = "'" if opts[0].value[1] else ""
            return [f"{owners[0][0].name}{prime}["] + self.render(index)[1] + ["]"]
        around = self._one_index_apart(opts)
        if around is not None:  # proc[i].pc: one field of each element, in index order
            prime = "'" if opts[0].value[1] else ""
            return [around[0] + "["] + self.render(index)[1] + ["]" + around[1] + prime]
        out: Tokens = ["⟨"]
        for k, o in enumerate(opts):
            out += ([", "] if k else []) + self.render(o, dom)[1]
        return out + ["⟩["] + self.render(index)[1] + ["]"]

    def _one_index_apart(self, opts: Sequence[Expr]) -> tuple[str, str] | None:
        """What surrounds the index when ``opts`` are the slots of one structured
        variable whose paths differ in one index only, running through the index's
        values in order (``proc[0].pc``, ``proc[1].pc``): ``("proc", ".pc")``."""
        if not all(o.op == "slot" and o.value[1] == opts[0].value[1] for o in opts):
            return None
        paths = [_INDEX.split(self.slot_names[o.value[0]]) for o in opts]
        if len({len(p) for p in paths}) != 1 or self.slot[opts[0].value[0]][0].shape is None:
            return None
        apart = [k for k in range(len(paths[0])) if len({p[k] for p in paths}) > 1]
        if len(apart) != 1 or not paths[0][apart[0]].startswith("["):
            return None
        keys = [p[apart[0]][1:-1] for p in paths]
        numbered = keys == [str(j) for j in range(len(keys))]
        if not (numbered or (len(set(keys)) == len(keys) and
                             not any(k.lstrip("-").isdigit() for k in keys))):
            return None  # (an index from 1 or an Int range: its numbers are not 0..)
        k = apart[0]
        return "".join(paths[0][:k]), "".join(paths[0][k + 1:])

    def _compare(self, e: Expr) -> tuple[int, Tokens]:
        a, b = e.args
        if e.op in ("eq", "ne") and b.op in ("const", "true", "false") and self.truthy(a):
            # x = TRUE is x, x = FALSE is ¬x (a Bool variable is a truth value)
            v = b.value if b.op == "const" else int(b.op == "true")
            return self.render(a) if bool(v) == (e.op == "eq") else \
                self._not(Expr("not", (a,)))
        da, db = self.domain(a), self.domain(b)
        p = _PREC["cmp"]
        return p, (self._child(a, p + 1, db) + [_CMP[e.op]] + self._child(b, p + 1, da))

    def _connective(self, e: Expr) -> tuple[int, Tokens]:
        p = _PREC[e.op]
        if e.op == "or":
            member = self._membership(e.args)
            if member is not None:
                return _PREC["cmp"], member
        sep = " ∨ " if e.op == "or" else " ∧ "
        out: Tokens = []
        seen: list[Tokens] = []
        for x in e.args:  # (TLA+ gives ∧ and ∨ one precedence: ( ) tell)
            t = self._child(x, _PREC["and"] + 1)
            if t not in seen:  # A ∨ A is A (a condition built twice)
                out += ([sep] if seen else []) + t
                seen.append(t)
        if len(seen) == 1:
            return self.render(e.args[0])
        return p, out

    def _membership(self, args: Sequence[Expr], sign: str = "∈") -> Tokens | None:
        """``x = a ∨ x = b`` as ``x ∈ {a, b}`` (the same ``x``, constants on the right)."""
        if len(args) < 2 or not all(a.op == "eq" and a.args[1].op == "const" for a in args):
            return None
        lhs = [self.render(a.args[0])[1] for a in args]
        if any(t != lhs[0] for t in lhs[1:]) or self.truthy(args[0].args[0]):
            return None
        d = self.domain(args[0].args[0])
        out: Tokens = list(self._child(args[0].args[0], _PREC["cmp"] + 1)) + [f" {sign} {{"]
        for k, a in enumerate(args):
            out += ([", "] if k else []) + [_show(d, a.args[1].value)]
        return out + ["}"]

    def _not(self, e: Expr) -> tuple[int, Tokens]:
        x = e.args[0]
        if x.op in _FLIP:
            return self._compare(Expr(_FLIP[x.op], x.args))
        if x.op == "or":
            member = self._membership(x.args, "∉")
            if member is not None:
                return _PREC["cmp"], member
        return _PREC["not"], ["¬"] + self._child(x, _PREC["not"])


def render(model: Model, e: Expr, dom: Domain | None = None) -> str:
    """``e`` as text over ``model``'s variables.

    >>> from osf_check.models.dsl import Bool, Enum, ModelBuilder
    >>> from osf_check.models.expr import Or, Not
    >>> b = ModelBuilder("m")
    >>> ph = b.var("phase", Enum("idle", "sync", "work"), actor="x")
    >>> on = b.var("online", Bool(), actor="x")
    >>> b.init(phase=0, online=True)
    >>> m = b.build()
    >>> render(m, And(on, Or(ph == 1, ph == 2)))
    'online ∧ phase ∈ {"sync", "work"}'
    >>> render(m, And(Not(on), ph != 0))
    '¬online ∧ phase ≠ "idle"'
    """
    return Renderer(model).text(e, dom)


# ---------------------------------------------------------------------------
# actions: each instance rendered, then the instances of one action folded into one
# text with the arguments' names where (and only where) they differ

def _learn(r: Renderer, inst: ActionInstance) -> None:
    """The domains of the instance's values, from the variables they are stored in and
    compared with (twice: what one comparison names, another may pass on)."""
    for slot, e in inst.updates.items():
        r.learn(e, r.slot_domains[slot])
    for d, e in inst.outputs.values():
        r.learn(e, d)
    for _ in range(2):
        for e in (inst.guard, *inst.updates.values(), *(e for _, e in inst.outputs.values())):
            r.learn_compared(e)


#: a part used twice is named (``LET e1 == …``) when it is at least this long
_NAME_FROM = 40


def _shared(roots: Sequence[Expr]) -> list[Expr]:
    """The nodes reached twice or more from ``roots`` (their own parts once), inner ones
    first: the parts an instance's text would repeat."""
    uses: dict[int, int] = {}
    order: list[Expr] = []

    def walk(e: Expr) -> None:
        uses[id(e)] = uses.get(id(e), 0) + 1
        if uses[id(e)] > 1:
            return
        for x in e.args:
            walk(x)
        order.append(e)
    for e in roots:
        walk(e)
    return [e for e in order if uses[id(e)] > 1 and e.args]


def _lets(r: Renderer, roots: Sequence[Expr]) -> list[tuple[str, Tokens]]:
    """Name each long shared part: ``LET`` lines, inner parts first."""
    r.names = {}
    out: list[tuple[str, Tokens]] = []
    for e in _shared(roots):
        toks = r.render(e)[1]
        if len(_text(toks)) >= _NAME_FROM:
            name = f"e{len(out) + 1}"
            out.append(("let", [f"{name} == "] + toks))
            r.names[id(e)] = name
    return out


def _lines(r: Renderer, inst: ActionInstance) -> list[tuple[str, Tokens]]:
    """Every line of an instance: its shared parts, its guard's conjuncts, its updates,
    its outputs."""
    _learn(r, inst)
    g = inst.guard
    conj = g.args if g.op == "and" else (g,)
    out = _lets(r, [*conj, *inst.updates.values(), *(e for _, e in inst.outputs.values())])
    out += [("guard", r.render(c)[1]) for c in conj]
    for slot in sorted(inst.updates):
        e = inst.updates[slot]
        if e.op == "slot" and e.value == (slot, 0):
            continue  # x' = x: not a change
        target = Expr("slot", value=(slot, 1))
        dom = r.slot_domains[slot]
        if e.op == "ite" and e.args[2].op == "slot" and e.args[2].value == (slot, 0):
            # x' = IF c THEN v ELSE x: a change only where c holds
            toks = (r._slot(target) + [" = "] + r._child(e.args[1], 1, dom)
                    + [" if "] + r.render(e.args[0])[1] + [" (else unchanged)"])
        else:
            toks = r._slot(target) + [" = "] + r.render(e, dom)[1]
        out.append(("effect", toks))
    for name, (d, e) in inst.outputs.items():
        out.append(("outputs", [f"{name} = "] + r.render(e, d)[1]))
    return out


def _shown_args(inst: ActionInstance) -> dict[str, Any]:
    return {k: (inst.arg_domains[k].show(v) if k in inst.arg_domains else v)
            for k, v in inst.args.items()}


def _fold(insts: Sequence[ActionInstance], rendered: Sequence[list[tuple[str, Tokens]]]
          ) -> dict[str, list[str]] | None:
    """One text for every instance, or None when they differ in shape.  A leaf that
    differs between instances must be, in each instance, the value of one argument (the
    same one), or one sum of the integer arguments times constants (the same one): it
    is shown as that.  So the text, with each instance's arguments put in, is that
    instance's rendering."""
    first = rendered[0]
    if any(_skeleton(lines) != _skeleton(first) for lines in rendered):
        return None
    shown = [_shown_args(i) for i in insts]
    out: dict[str, list[str]] = {"let": [], "guard": [], "effect": [], "outputs": []}
    for n, (kind, toks) in enumerate(first):
        names: dict[int, str] = {}
        for k, t in enumerate(toks):
            col = [lines[n][1][k] for lines in rendered]
            if not isinstance(t, Leaf) or all(c == t for c in col):
                continue
            said = _explain([c.value for c in col], shown)
            if said is None:
                return None
            names[k] = said
        out[kind].append(_text(toks, names))
    return out


def _skeleton(lines: list[tuple[str, Tokens]]) -> tuple:
    """An instance's text with its values left out: instances of one skeleton differ
    only in values."""
    return tuple((kind, tuple(t if isinstance(t, str) else None for t in toks))
                 for kind, toks in lines)


def _explain(values: list[Any], shown: list[dict[str, Any]]) -> str | None:
    """An argument, or a sum of integer arguments times constants, whose value in each
    instance is that instance's value here; None if there is none."""
    args = list(shown[0])
    for a in args:
        if all(_same(v, s[a]) for v, s in zip(values, shown)):
            return a
    ints = [a for a in args if all(type(s[a]) is int for s in shown)]
    if not ints or not all(type(v) is int for v in values):
        return None
    coef = _affine([[s[a] for a in ints] for s in shown], values)
    if coef is None:
        return None
    terms = [(c, a) for c, a in zip(coef[1:], ints) if c]
    text = ""
    for c, a in terms:
        mag = f"{abs(c)}*{a}" if abs(c) != 1 else a
        text += (" - " if c < 0 else " + ") + mag if text else ("-" if c < 0 else "") + mag
    if coef[0]:
        text += f" {'-' if coef[0] < 0 else '+'} {abs(coef[0])}"
    return text if terms else None


def _affine(xs: list[list[int]], ys: list[int]) -> list[int] | None:
    """Integers ``c0, c1, …`` with ``y = c0 + c1*x1 + …`` on every row, or None (exact:
    Gaussian elimination over fractions, then every row checked)."""
    from fractions import Fraction
    rows = [[Fraction(1)] + [Fraction(x) for x in row] + [Fraction(y)] for row, y in zip(xs, ys)]
    n = len(rows[0]) - 1
    pivots: list[int] = []
    r = 0
    for col in range(n):
        p = next((i for i in range(r, len(rows)) if rows[i][col] != 0), None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        rows[r] = [v / rows[r][col] for v in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][col] != 0:
                rows[i] = [a - rows[i][col] * b for a, b in zip(rows[i], rows[r])]
        pivots.append(col)
        r += 1
    sol = [Fraction(0)] * n  # (a free coefficient is 0)
    for i, col in enumerate(pivots):
        sol[col] = rows[i][n]
    if any(v.denominator != 1 for v in sol):
        return None
    c = [int(v) for v in sol]
    ok = all(c[0] + sum(a * x for a, x in zip(c[1:], row)) == y for row, y in zip(xs, ys))
    return c if ok else None


def _same(x: Any, y: Any) -> bool:
    return type(x) is type(y) and x == y


def _variants(model: Model) -> list[list[ActionInstance]]:
    """The instances of each action, by name and then by the arguments they take (one
    name may be declared twice, with other arguments: graph-relay's get_graph_run by the
    agent that started the run, ``i``, and by another one, ``a``)."""
    groups: dict[tuple[str, tuple[str, ...]], list[ActionInstance]] = {}
    for i in model.instances:
        groups.setdefault((i.name, tuple(i.args)), []).append(i)
    return list(groups.values())


def action_forms(model: Model, name: str, args: Sequence[str] | None = None
                 ) -> list[dict[str, Any]]:
    """How action ``name`` (the variant of it with arguments ``args``, if given) is
    shown: instances that differ only in values are one form, the rest one form each.
    A form's ``instances`` are the labels it covers (None: every instance) and
    ``applies`` says which in words; it has ``let`` (parts used twice, named),
    ``guard`` (conjuncts), ``effect`` (updates; unlisted variables keep their values)
    and ``outputs``."""
    r = Renderer(model)
    insts = [i for i in model.instances if i.name == name
             and (args is None or tuple(i.args) == tuple(args))]
    rendered = [_lines(r, i) for i in insts]
    groups: dict[tuple, list[int]] = {}
    for k, lines in enumerate(rendered):
        groups.setdefault(_skeleton(lines), []).append(k)
    forms = []
    for ks in groups.values():
        group = [insts[k] for k in ks]
        one = _fold(group, [rendered[k] for k in ks]) \
            if len(ks) > 1 or not group[0].args else None
        if one is not None:
            whole = len(ks) == len(insts)
            forms.append(dict(one, instances=None if whole else [i.label for i in group],
                              applies=None if whole else _applies(group, insts)))
            continue
        for k in ks:
            form: dict[str, Any] = {"let": [], "guard": [], "effect": [], "outputs": [],
                                    "instances": [insts[k].label], "applies": insts[k].label}
            for kind, toks in rendered[k]:
                form[kind].append(_text(toks))
            forms.append(form)
    return forms


def _applies(group: Sequence[ActionInstance], every: Sequence[ActionInstance]) -> str:
    """Which instances a form covers, as a label with the arguments it fixes
    (``execute(o, a, out=success, stored=1)``), or their labels."""
    shown = [_shown_args(i) for i in group]
    alls = [_shown_args(i) for i in every]
    parts, size = [], 1
    for a in group[0].args:
        vals = list(dict.fromkeys(s[a] for s in shown))
        size *= len(vals)
        if len(vals) == len({s[a] for s in alls}):
            parts.append(a)
        elif len(vals) == 1:
            parts.append(f"{a}={vals[0]}")
        else:
            parts.append(f"{a} ∈ {{{', '.join(map(str, vals))}}}")
    if size != len(group):  # not a product of per-argument choices
        return ", ".join(i.label for i in group)
    return f"{group[0].name}({', '.join(parts)})"


def _arguments(insts: Sequence[ActionInstance]) -> list[dict[str, Any]]:
    """Each argument with the values its instances take (in the protocol, ``args``
    carries the integer; an enum's name is the label's)."""
    out = []
    for a in insts[0].args:
        vals = sorted({i.args[a] for i in insts})
        d = insts[0].arg_domains.get(a)
        arg: dict[str, Any] = {"name": a, "values": vals}
        if d is not None:
            arg["names"] = [d.show(v) for v in vals]
        out.append(arg)
    return out


def _actions(model: Model, decides: Sequence[str], idle: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for insts in _variants(model):
        first = insts[0]
        name = first.name
        fair = sorted({i.fairness for i in insts if i.fairness})
        out.append({
            "name": name, "signature": name + (f"({', '.join(first.args)})" if first.args else ""),
            "actor": first.actor, "target": first.target,
            "doc": " ".join(first.doc.split()),
            # the implementation's own decisions are the ones it offers (the harness's
            # DECIDES, checked against offers); osf-check schedules every other step
            "initiative": "implementation" if name in decides else "environment",
            "idle_event": name in idle,
            "arguments": _arguments(insts),
            "instances": [i.label for i in insts],
            "fairness": fair[0] if len(fair) == 1 and all(i.fairness for i in insts) else
            ("some instances" if fair else None),
            "forms": action_forms(model, name, tuple(first.args)),
        })
    return out


# ---------------------------------------------------------------------------
# variables and the rest

def json_shape(v: Var) -> str:
    """What the protocol's JSON holds for ``v`` (one value, an array, a set)."""
    if v.shape is not None:
        return _json_type(v.shape.describe())
    if v.elements is not None:
        e = v.elements
        return ('{"#set": [...]} of ' +
                " | ".join(f'"{n}"' for n in e.names) if e.kind == "enum" else
                f'{{"#set": [...]}} of integers {e.lo}..{e.hi}')
    d = v.domain
    one = (" | ".join(f'"{n}"' for n in d.names) if d.kind == "enum" else
           "true | false" if d.kind == "bool" else f"integer {d.lo}..{d.hi}")
    return one if v.length is None else f"array of {v.length}: {one}"


def _json_type(d: Mapping[str, Any]) -> str:
    """What the JSON of a structured variable's value holds, from its type's
    description (``Type.describe``)."""
    kind = d["kind"]
    if kind == "record":
        return "{" + ", ".join(f'"{k}": {_json_type(f)}' for k, f in d["fields"].items()) + "}"
    if kind == "tuple":
        return '{"#tup": [' + ", ".join(_json_type(f) for f in d["of"]) + "]}"
    if kind == "set":
        return '{"#set": [...]} of ' + _json_type(d["of"])
    if kind == "array":
        ix = d["index"]
        if ix["kind"] == "int" and ix["min"] == 0:
            return f"array of {ix['max'] + 1}: {_json_type(d['of'])}"
        return f'{{"#map": [[key, value], ...]}} from {_json_type(ix)} to {_json_type(d["of"])}'
    if kind == "enum":
        return " | ".join(f'"{n}"' for n in d["values"])
    return "true | false" if kind == "bool" else f"integer {d['min']}..{d['max']}"


def _variables(model: Model) -> list[dict[str, Any]]:
    return [{"name": v.name, "domain": v.describe(), "length": v.length, "actor": v.actor,
             "ghost": v.ghost, "doc": " ".join(v.doc.split()), "json": json_shape(v)}
            for v in model.variables]


def _fairness(model: Model) -> list[dict[str, Any]]:
    """Each fairness constraint once: an action declared ``fair=`` is one constraint per
    instance (shown as one line for the action)."""
    out: list[dict[str, Any]] = []
    by_action: dict[str, dict[str, Any]] = {}
    for i in model.instances:
        if i.fairness is None:
            continue
        got = by_action.get(i.name)
        if got is None or got["kind"] != i.fairness:
            got = {"kind": i.fairness, "of": f"each instance of {i.name}", "actions": []}
            by_action[i.name] = got
            out.append(got)
        got["actions"].append(i.label)
    for f in model.fairness:
        out.append({"kind": f.kind, "of": f.name,
                    "actions": [model.instances[k].label for k in f.instances]})
    return out


def describe(model: Model, *, title: str = "", params: Iterable[Any] = (),
             properties: Iterable[Any] = (), decides: Sequence[str] = (),
             idle: Sequence[str] = (), mutants: Mapping[str, str] | None = None
             ) -> dict[str, Any]:
    """The reference of a built model as a JSON-able dict.

    ``params`` are the spec's :class:`~.dsl.Param` s, ``properties`` the catalogue's
    properties of the model; ``decides`` the actions the implementation takes by itself
    (an adapter lists them in ``offers``) and ``idle`` the environment's events the
    fuzzer also sends where the model skips them (both from the model's fuzz harness,
    empty for a model without one)."""
    r = Renderer(model)
    return {
        "model": model.name, "title": title, "params": dict(model.params),
        "parameters": [{"name": p.name, "value": model.params.get(p.name, p.default),
                        "min": p.lo, "max": p.hi, "doc": p.doc} for p in params],
        "actors": list(model.actors),
        "variables": _variables(model),
        "initial_states": [model.show_state(s) for s in model.initial_states[:4]],
        "initial_state_count": len(model.initial_states),
        "actions": _actions(model, decides, idle),
        "fairness": _fairness(model),
        "fair_states": [{"name": n, "condition": r.text(e)} for n, e in model.fair_states],
        "end_states": r.text(model.quiescent) if model.quiescent is not None else None,
        "properties": [{"id": p.id, "name": p.name, "statement": " ".join(p.statement.split()),
                        "checks": sorted({c.kind for c in p.checks})} for p in properties],
        "harness": {"offers": [a for a in model.action_names if a in decides],
                    "idle_events": [a for a in model.action_names if a in idle],
                    "fuzzable": bool(decides or idle)},
        "mutants": dict(mutants or {}),
    }
