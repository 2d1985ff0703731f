"""The catalogue: every model, property, mutant and assumption, looked up by name.

Lookups raise :class:`LookupError` with a message that names what exists, so
that the CLI can print it as a one-line error.

>>> spec("graph-relay").name
'graph-relay'
>>> [p.id for p in properties_of("graph-relay")][:3]
['A1', 'A2', 'A3']
"""

from __future__ import annotations

from osf_check.models import graph_relay, two_phase, wire_relay
from osf_check.models.spec import ModelSpec

from . import graph_relay as a_props
from . import two_phase as t_props
from . import wire_relay as b_props
from typing import Sequence

from osf_check.models.errors import BadValue, UnknownName, did_you_mean

from .base import Assumption, Mutant, Property

__all__ = ["MODELS", "PROPERTIES", "MUTANTS", "ASSUMPTIONS", "SOURCES", "spec",
           "properties_of", "mutant", "select_properties", "default_models", "register",
           "unregister"]

MODELS: dict[str, ModelSpec] = {}
PROPERTIES: tuple[Property, ...] = ()
MUTANTS: tuple[Mutant, ...] = ()
ASSUMPTIONS: tuple[Assumption, ...] = ()
#: where each model came from: ``built-in``, ``file /abs/path.py`` or ``entry point …``
SOURCES: dict[str, str] = {}


def from_source(source: str) -> list[str]:
    """The models a source (a file, an entry point, a module) has already registered."""
    return [n for n, s in SOURCES.items() if s == source]


def _one_name_each(model: str, properties: Sequence[Property], source: str) -> None:
    """``--property`` takes an id (in any case) or a name: each must name one property."""
    ids = {p.id.upper(): p.id for p in properties}
    names: set[str] = set()
    for p in properties:
        if p.name in names:
            raise BadValue(f"model {model!r} from {source}: property name {p.name} is used "
                           "twice")
        other = ids.get(p.name.upper())
        if other is not None and other != p.id:
            raise BadValue(f"model {model!r} from {source}: property name {p.name} is also "
                           f"the id of {other}")
        names.add(p.name)


def register(model: ModelSpec, properties: Sequence[Property] = (),
             mutants: Sequence[Mutant] = (), assumptions: Sequence[Assumption] = (), *,
             source: str) -> None:
    """Add a model with its properties, mutants and assumptions to the catalogue (what
    :mod:`osf_check.properties.sources` does for a model file or an entry point)."""
    global PROPERTIES, MUTANTS, ASSUMPTIONS
    if model.name in MODELS:
        raise BadValue(f"model {model.name!r} from {source} is already defined "
                       f"({SOURCES[model.name]}): give your model another name")
    ids = [p.id for p in properties]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise BadValue(f"model {model.name!r} from {source}: property id {dup[0]} is used twice")
    _one_name_each(model.name, properties, source)
    unknown = sorted({n for p in properties for n in p.mutants} - set(model.mutants))
    if unknown:
        raise BadValue(f"model {model.name!r} from {source}: a property names mutant "
                       f"{unknown[0]!r}, which the ModelSpec's mutants do not list")
    MODELS[model.name] = model
    SOURCES[model.name] = source
    PROPERTIES += tuple(properties)
    MUTANTS += tuple(mutants)
    ASSUMPTIONS += tuple(assumptions)


for _spec, _props in ((graph_relay.SPEC, a_props), (wire_relay.SPEC, b_props),
                      (two_phase.SPEC, t_props)):
    register(_spec, _props.PROPERTIES, _props.MUTANTS, getattr(_props, "ASSUMPTIONS", ()),
             source="built-in")


def unregister(source: str) -> list[str]:
    """Take out the models ``source`` registered, with their properties, mutants and
    assumptions (a model file edited since it was loaded is then loaded anew); returns
    their names."""
    global PROPERTIES, MUTANTS, ASSUMPTIONS
    names = from_source(source)
    for n in names:
        del MODELS[n], SOURCES[n]
    PROPERTIES = tuple(p for p in PROPERTIES if p.model not in names)
    MUTANTS = tuple(m for m in MUTANTS if m.model not in names)
    ASSUMPTIONS = tuple(a for a in ASSUMPTIONS if a.model not in names)
    return names


def default_models() -> list[str]:
    """What a bare ``osf-check explore`` checks: the shipped models marked default (a model
    from a file or a package is checked when named)."""
    return [n for n, s in MODELS.items() if s.default and SOURCES[n] == "built-in"]


def spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise UnknownName(f"unknown model {name!r} ({did_you_mean(name, MODELS)}known: "
                          f"{', '.join(MODELS)})") from None


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
            near = did_you_mean(w, [x for p in props for x in (p.id, p.name)])
            raise UnknownName(f"model {model} has no property {w!r} "
                              f"({near}it has: {', '.join(p.id for p in props)})")
        out.extend(h for h in hit if h not in out)
    return out


def mutant(model: str, name: str) -> Mutant:
    for m in MUTANTS:
        if m.model == model and m.name == name:
            return m
    others = [m.model for m in MUTANTS if m.name == name]
    hint = f" (it is a mutant of {others[0]}: add --model {others[0]})" if others else ""
    mine = [m.name for m in MUTANTS if m.model == model]
    near = "" if others else did_you_mean(name, mine)
    raise UnknownName(f"model {model} has no mutant {name!r}{hint} "
                      f"({near}it has: {', '.join(mine)})")


def assumption(model: str, name: str) -> Assumption:
    for a in ASSUMPTIONS:
        if a.model == model and a.name == name:
            return a
    mine = [a.name for a in ASSUMPTIONS if a.model == model]
    raise UnknownName(f"model {model} has no assumption {name!r} ({did_you_mean(name, mine)}"
                      f"it has: {', '.join(mine) or 'none'})")
