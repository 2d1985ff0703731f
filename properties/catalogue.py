"""The catalogue: every model, property, mutant and assumption, looked up by name.

Lookups raise :class:`LookupError` with a message that names what exists, so
that the CLI can print it as a one-line error.

>>> spec("graph-relay").name
'graph-relay'
>>> [p.id for p in properties_of("graph-relay")][:3]
['A1', 'A2', 'A3']
"""

from __future__ import annotations

from models import graph_relay, two_phase, wire_relay
from models.spec import ModelSpec

from . import graph_relay as a_props
from . import two_phase as t_props
from . import wire_relay as b_props
from .base import Assumption, Mutant, Property
from models.errors import UnknownName

__all__ = ["MODELS", "PROPERTIES", "MUTANTS", "ASSUMPTIONS", "spec", "properties_of",
           "mutant", "select_properties", "default_models"]

MODELS: dict[str, ModelSpec] = {s.name: s for s in (graph_relay.SPEC, wire_relay.SPEC,
                                                      two_phase.SPEC)}
PROPERTIES: tuple[Property, ...] = a_props.PROPERTIES + b_props.PROPERTIES + t_props.PROPERTIES
MUTANTS: tuple[Mutant, ...] = a_props.MUTANTS + b_props.MUTANTS + t_props.MUTANTS
ASSUMPTIONS: tuple[Assumption, ...] = b_props.ASSUMPTIONS


def default_models() -> list[str]:
    return [n for n, s in MODELS.items() if s.default]


def spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise UnknownName(f"unknown model {name!r} (known: {', '.join(MODELS)})") from None


def properties_of(model: str) -> list[Property]:
    return [p for p in PROPERTIES if p.model == model]


def select_properties(model: str, wanted: list[str] | tuple[str, ...] = ()) -> list[Property]:
    """The model's properties, or those named (by id like ``A2`` or name like ``no-stuck-running``)."""
    props = properties_of(model)
    if not wanted:
        return props
    out = []
    for w in wanted:
        hit = [p for p in props if w.upper() == p.id or w == p.name]
        if not hit:
            raise UnknownName(f"model {model} has no property {w!r} "
                              f"(it has: {', '.join(p.id for p in props)})")
        out.extend(h for h in hit if h not in out)
    return out


def mutant(model: str, name: str) -> Mutant:
    for m in MUTANTS:
        if m.model == model and m.name == name:
            return m
    others = [m.model for m in MUTANTS if m.name == name]
    hint = f" (it is a mutant of {others[0]}: add --model {others[0]})" if others else ""
    raise UnknownName(f"model {model} has no mutant {name!r}{hint} "
                      f"(it has: {', '.join(m.name for m in MUTANTS if m.model == model)})")


def assumption(model: str, name: str) -> Assumption:
    for a in ASSUMPTIONS:
        if a.model == model and a.name == name:
            return a
    raise UnknownName(f"model {model} has no assumption {name!r} (it has: "
                      f"{', '.join(a.name for a in ASSUMPTIONS if a.model == model) or 'none'})")
