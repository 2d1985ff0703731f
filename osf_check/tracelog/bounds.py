"""Where the model's bounds, and not the protocol, stop a log.

A model covers a bounded part of an unbounded system: so many reconnects, retries, runs
(its parameters marked ``bound``, see :class:`~osf_check.models.dsl.Param`).  A log of a
correct deployment goes further as soon as it lasts: a third reconnect is no step of a
model with ``gens=2``.  Calling that line unexplained would blame the implementation for
the model's size, so a refusal is only a refusal when no bound was reached on the way.

A bound stops a behaviour in one of two ways, which the models keep to: a counter sized
by a ``count`` bound stands at the top of its domain (the guard of the next step reads
it there), or a log names an element beyond what a ``size`` bound sizes (a third run
id, beyond an array or a domain).  :func:`bounds_of` finds what each bound parameter
sizes by building the model once more with that parameter one higher (or one lower, at
its largest) and comparing the variables and the actions' argument domains.

>>> from osf_check.fuzz.driver import model_for
>>> b = bounds_of(model_for("wire-relay", None))
>>> sorted(b.of_var["gen"]), b.values["gens"]
(['gens'], (2, 3))
>>> b.kinds["gens"], b.kinds["ops"]
('count', 'size')
>>> b.reached(model_for("wire-relay", None).initial_states[0])  # switches=0: none allowed
{'switches'}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from osf_check.models.dsl import Model, ModelError
from osf_check.models.errors import BadValue

__all__ = ["Bounds", "bounds_of"]


@dataclass
class Bounds:
    """What a model's bound parameters size."""

    #: bound parameter -> (its value, the largest the model takes)
    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: bound parameter -> "count" or "size", and the least value it takes
    kinds: dict[str, str] = field(default_factory=dict)
    lows: dict[str, int] = field(default_factory=dict)
    #: the catalogue's spec that builds the model (None: no bound to raise)
    spec: Any = None
    #: (slot, the top of its domain, the parameter that sizes it)
    tops: list[tuple[int, int, str]] = field(default_factory=list)
    #: variable -> the parameters its length or its domain's top grows with
    of_var: dict[str, frozenset[str]] = field(default_factory=dict)
    #: (action, argument) -> the parameters its domain grows with
    of_arg: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)

    def reached(self, state: Sequence[int]) -> set[str]:
        """The bound parameters whose counters ``state`` holds at their top."""
        return {p for slot, top, p in self.tops if state[slot] == top}

    def raise_(self, params: set[str]) -> dict[str, int]:
        """Those of ``params`` below their largest value, each at its largest."""
        return {p: hi for p, (v, hi) in self.values.items() if p in params and v < hi}

    def below_largest(self, params: set[str]) -> dict[str, int]:
        """The counts among ``params``, each one below its largest value (where it can
        be)."""
        return {p: hi - 1 for p, (_, hi) in self.values.items()
                if p in params and self.kinds[p] == "count" and hi > self.lows[p]}

    def build(self, model: Model, params: dict[str, int]) -> Model:
        """``model`` built again with ``params`` changed (say, bounds :meth:`raise_`d)."""
        assert self.spec is not None, "a model with no spec has no bound to change"
        return self.spec.build({**model.params, **params}, model.mutant)

    def unsized(self, params: set[str], model: Model) -> list[str]:
        """The variables of ``model`` that none of ``params`` sizes."""
        return [x.name for x in model.variables
                if not self.of_var.get(x.name, frozenset()) & params]


def _spec_of(model: Model):
    """The catalogue's spec that builds ``model`` again, or None (a model built by hand,
    or with assumptions dropped: its larger versions are not ours to build)."""
    from osf_check.properties import catalogue
    try:
        spec = catalogue.spec(model.name)
        same = spec.build(model.params, model.mutant)
    except (BadValue, ValueError, KeyError):
        return None
    return spec if same.fingerprint() == model.fingerprint() else None


#: bounds found, by the model's fingerprint and the spec that builds it (a library caller
#: checks many logs against one model; finding them builds it several times)
_FOUND: dict[tuple, tuple[object, Bounds]] = {}


def bounds_of(model: Model) -> Bounds:
    """What each bound parameter of ``model`` sizes (nothing for a model whose spec
    marks no bound, or that the catalogue cannot build again)."""
    from osf_check.properties import catalogue
    spec = catalogue.MODELS.get(model.name)
    key = (model.fingerprint(), model.name, model.mutant, tuple(sorted(model.params.items())),
           getattr(spec, "params", None))
    got = _FOUND.get(key)
    if got is not None and got[0] is spec:
        return got[1]
    out = _find(model)
    _FOUND[key] = (spec, out)
    return out


def _find(model: Model) -> Bounds:
    spec = _spec_of(model)
    out = Bounds(spec=spec)
    if spec is None:
        return out
    of_var: dict[str, set[str]] = {}
    of_arg: dict[tuple[str, str], set[str]] = {}
    grown_top: dict[str, set[str]] = {}
    for p in spec.params:
        v = model.params.get(p.name)
        if not p.bound or not isinstance(v, int) or p.lo == p.hi:
            continue
        out.values[p.name] = (v, p.hi)
        out.kinds[p.name], out.lows[p.name] = p.bound, p.lo
        try:
            other = spec.build({**model.params, p.name: v + 1 if v < p.hi else v - 1},
                               model.mutant)
        except Exception as e:  # a user's model: its bound must be one it can be built at
            raise ModelError(f"parameter {p.name} is marked as a bound, but {model.name} "
                             f"cannot be built with {p.name}="
                             f"{v + 1 if v < p.hi else v - 1}: {e}") from None
        small, big = (model, other) if v < p.hi else (other, model)
        sv, bv = small.var_by_name, big.var_by_name
        for name, x in bv.items():
            y = sv.get(name)
            if y is None or y.length != x.length:
                of_var.setdefault(name, set()).add(p.name)
            elif x.domain.hi != y.domain.hi:
                of_var.setdefault(name, set()).add(p.name)
                if p.bound == "count":  # a size's tops are ids (the last run), no counters
                    grown_top.setdefault(name, set()).add(p.name)
        sa, ba = _arg_tops(small), _arg_tops(big)
        for key, hi in ba.items():
            if sa.get(key) != hi:
                of_arg.setdefault(key, set()).add(p.name)
    out.of_var = {k: frozenset(v) for k, v in of_var.items()}
    out.of_arg = {k: frozenset(v) for k, v in of_arg.items()}
    for x in model.variables:
        for p in sorted(grown_top.get(x.name, ())):
            out.tops.extend((slot, x.domain.hi, p) for slot in x.slots)
    return out


def _arg_tops(model: Model) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for inst in model.instances:
        for a, d in inst.arg_domains.items():
            out[(inst.name, a)] = max(out.get((inst.name, a), d.hi), d.hi)
    return out
