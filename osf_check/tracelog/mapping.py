"""The user's mapping from a deployment's log events to the model's actions.

A mapping is a TOML (or JSON) file::

    model = "graph-relay"
    extends = "base.logmap.toml"            # optional: that mapping's rules come first
    ignore = ["desktop.heartbeat"]          # events that say nothing the model knows

    [[event]]
    name = "tool.run_graph_session"         # the log's event name
    when = { agent = 0 }                    # optional: only lines whose fields equal these
    action = "run_graph_session"            # the model action this line is (or a list
                                            # of actions the log writes alike: any that fits)
    args = { i = "key:idempotency_key" }    # its parameters, from the line's fields
    state = { "attempts[i]" = "attempt" }   # what the model's state must be after it
                    # (an index: an argument, a number, a source, or o*2+a of two arguments,
                    #  whose factor may name a parameter: o*(retries+1)+a)
    outputs = { read = { field = "result", map = { "true" = "result", "false" = "status" } } }

A value's source is a field name; ``"ns:field"``, the number of the field's value among
the distinct values of namespace ``ns`` in the order the log first shows them (run ids
become 0, 1, …); ``"*"``, any value (an argument the log does not tell); a number or a
boolean, itself; or ``{field, map, else}``, the field's value translated.  Actions no
rule names are the **hidden** steps: they may happen between two lines unlogged.  A rule
with no ``action`` is an **observation**: a line that reports state (``state`` only) and
takes no step.  A ``[[monitor]]`` judges a property the model abstracts away (A8, the
completion's size) on the concrete fields of a line.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osf_check.models.dsl import Model
from osf_check.models.errors import BadValue

_SLOT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]+)\])?$")
# a structured variable's element: name, then any [index] and .field steps
_PATH = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[[^\]]+\]|\.[A-Za-z_][A-Za-z0-9_]*)+)$")
_STEP = re.compile(r"\[([^\]]+)\]|\.([A-Za-z_][A-Za-z0-9_]*)")
_AFFINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\*([0-9]+|[A-Za-z_][A-Za-z0-9_]*|"
                     r"\([A-Za-z_][A-Za-z0-9_]*\+[0-9]+\))\+([A-Za-z_][A-Za-z0-9_]*)$")
_FACTOR = re.compile(r"^\(?([A-Za-z_][A-Za-z0-9_]*)(?:\+([0-9]+))?\)?$")
ANY = "*"


class MappingError(BadValue):
    """The mapping file is wrong (bad input: exit 150)."""


@dataclass(frozen=True)
class Source:
    """Where a value comes from: a field, an interned field, a literal, or any value."""

    field: str | None = None
    namespace: str | None = None
    literal: Any = None
    table: dict[str, Any] | None = None
    otherwise: Any = None
    any: bool = False


@dataclass(frozen=True)
class Element:
    """One scalar of a structured variable (``stage[o][a]``, ``run[r].status``,
    ``conn.state``): a fixed offset into its slots plus, per array step, the index (as
    a plain variable's: an argument's name, a number, ``(arg, n, arg)`` or a Source),
    the array's index domain, its length and the step's stride in slots."""

    offset: int
    steps: tuple[tuple[Any, Any, int, int], ...]  # (index, index domain, length, stride)
    domain: Any
    text: str  # the steps as written, for messages: "[o][a]"

    def sources(self) -> tuple[Source, ...]:
        return tuple(i for i, *_ in self.steps if isinstance(i, Source))


@dataclass
class Rule:
    event: str
    action: str | None  # None: an observation, no step (a filter on the possible states)
    when: dict[str, Any]
    args: dict[str, Source]
    #: variable, index (an argument's name, a number, (arg, n, arg) for arg*n+arg, a
    #: Source, or None), value's source
    state: list[tuple[str, Any, Source]]
    outputs: dict[str, Source]
    instances: list[int] = field(default_factory=list)  # the action's instances
    #: the actions the line may be: one, or several the deployment logs alike (a server
    #: logs a completion POST the same whether the desktop had given its copy up or not)
    names: tuple[str, ...] = ()

    def matches(self, fields: dict[str, Any]) -> bool:
        return all(fields.get(k) == v for k, v in self.when.items())



@dataclass
class Monitor:
    """A property the model abstracts away, judged on a line's concrete fields."""

    event: str
    property: str
    fields: dict[str, Source]


@dataclass
class Mapping:
    model: str
    params: dict[str, Any]
    rules: dict[str, list[Rule]]
    ignore: frozenset[str]
    source: str
    monitors: dict[str, list[Monitor]] = field(default_factory=dict)
    #: the document it was compiled from (check-log compiles it again for a larger model)
    doc: dict[str, Any] | None = None

    @property
    def observed(self) -> set[str]:
        return {n for rs in self.rules.values() for r in rs for n in r.names}


def _source(v: Any, where: str) -> Source:
    if isinstance(v, bool) or isinstance(v, int):
        return Source(literal=v)
    if isinstance(v, str):
        if v == ANY:
            return Source(any=True)
        if ":" in v:
            ns, f = v.split(":", 1)
            if not ns or not f:
                raise MappingError(f"{where}: {v!r} is not namespace:field")
            return Source(field=f, namespace=ns)
        return Source(field=v)
    if isinstance(v, dict) and "field" in v and "map" in v and isinstance(v["map"], dict):
        extra = set(v) - {"field", "map", "else"}
        if extra:
            raise MappingError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        return Source(field=str(v["field"]), table=dict(v["map"]), otherwise=v.get("else"))
    raise MappingError(f"{where}: a value comes from a field name, \"namespace:field\", "
                       f"\"*\", a number, true/false or {{field, map, else}}; got {v!r}")


def _rule(model: Model, d: Any, k: int) -> Rule:
    where = f"[[event]] number {k + 1}"
    if not isinstance(d, dict):
        raise MappingError(f"{where} is not a table")
    extra = set(d) - {"name", "when", "action", "args", "state", "outputs"}
    if extra:
        raise MappingError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
    if not isinstance(d.get("name"), str):
        raise MappingError(f"{where}: name is missing or not a string")
    where = f"event {d['name']!r}"
    names = _action_names(model, d, where)
    action = " or ".join(names) if names else None
    insts = [i for i in model.instances if i.name in names]
    if action is None and (d.get("outputs") or not d.get("state")):
        raise MappingError(f"{where}: a rule without an action is an observation: it has "
                           f"state (and args only to name indices), no outputs")
    for key in ("when", "args", "state", "outputs"):
        if not isinstance(d.get(key, {}), dict):
            raise MappingError(f"{where}: {key} must be a table")
    args = {a: _source(v, f"{where}, args.{a}") for a, v in d.get("args", {}).items()}
    # an observation's args only name indices of its state
    known_args = set().union(*(i.args for i in insts)) if action else set(args)
    for a in args:
        if a not in known_args:
            raise MappingError(f"{where}: {action} has no argument {a!r} (it has "
                               f"{', '.join(sorted(known_args)) or 'none'})")
    state = []
    for key, v in d.get("state", {}).items():
        at = f"{where}: state.{key}"
        m = _SLOT.match(key) or _PATH.match(key)
        var = model.var_by_name.get(m.group(1)) if m else None
        if var is None:
            raise MappingError(f"{at}: no variable of {model.name} by that name")
        if var.shape is not None:
            idx: Any = _path(model, var, key[len(var.name):], known_args, action, at)
        else:
            if not _SLOT.match(key):
                raise MappingError(f"{at}: {var.name} is a plain variable or array: name it "
                                   f"{var.name} or {var.name}[index]")
            idx = m.group(2)  # type: ignore[union-attr]
            if (idx is None) != (var.length is None):
                raise MappingError(f"{at}: {var.name} " + ("is an array: give [index]"
                                   if idx is None else "is no array"))
            if idx is not None:
                idx = _index(model, idx, known_args, action, at)
        state.append((var.name, idx, _source(v, f"{where}, state.{key}")))
    outputs = {o: _source(v, f"{where}, outputs.{o}") for o, v in d.get("outputs", {}).items()}
    for o in outputs:
        if not any(o in i.outputs for i in insts):
            raise MappingError(f"{where}: {action} has no output {o!r}")
    return Rule(d["name"], action, dict(d.get("when", {})), args, state, outputs,
                [i.index for i in insts], names)


def _action_names(model: Model, d: dict[str, Any], where: str) -> tuple[str, ...]:
    """The actions a rule's line may be: its ``action``, a name or a non-empty list of
    names (none: an observation).

    Parameters
    ----------
    model : the model the mapping is for
    d : the rule's table
    where : how an error names the rule

    Returns
    -------
    tuple of str
        The names, each an action of ``model``.
    """
    action = d.get("action")
    if action is None:
        return ()
    names = [action] if isinstance(action, str) else action
    if not isinstance(names, list) or not names or \
            not all(isinstance(n, str) for n in names):
        raise MappingError(f"{where}: action must be a string or a non-empty list of strings")
    for n in names:
        if n not in model.action_names:
            raise MappingError(f"{where}: {model.name} has no action {n!r} (its "
                               f"actions: {', '.join(model.action_names)})")
    return tuple(dict.fromkeys(names))


def _index(model: Model, idx: str, known_args: set[str], action: str | None, at: str) -> Any:
    """An index as written between brackets: a number, an argument, ``o*F+a`` of two
    arguments, or a field of the line (``field`` or ``namespace:field``)."""
    affine = _AFFINE.match(idx)
    if idx.isdigit():
        return int(idx)
    if affine:  # o*2+a: a slot of an array indexed by two arguments
        if not {affine.group(1), affine.group(3)} <= known_args:
            raise MappingError(f"{at}: {affine.group(1)} and {affine.group(3)} must be "
                               f"arguments of {action}")
        return (affine.group(1), _factor(model, affine.group(2), at), affine.group(3))
    if idx in known_args:
        return idx
    return _source(idx, at)  # a field, or namespace:field


def _path(model: Model, var: Any, text: str, known_args: set[str], action: str | None,
          at: str) -> Element:
    """The scalar of structured ``var`` that ``text`` (its ``[index]`` and ``.field``
    steps) names, checked against the variable's type: each array takes an index, each
    record or tuple a field, and the steps end at a plain value."""
    from osf_check.models.structured import Array, _Fields
    t, offset, steps = var.shape, 0, []
    for index, name in _STEP.findall(text):
        if isinstance(t, Array) and index:
            stride = t.of.size
            steps.append((_index(model, index.strip(), known_args, action, at),
                          t.index, t.length, stride))
            t = t.of
        elif isinstance(t, _Fields) and name in getattr(t, "fields", {}):
            offset += t.offsets[name]
            t = t.fields[name]
        else:
            want = ("[index]" if isinstance(t, Array) else
                    f".field (one of {', '.join(t.fields)})" if isinstance(t, _Fields) else
                    "nothing more: it is a plain value")
            raise MappingError(f"{at}: {var.name} has no {'.' + name if name else f'[{index}]'} "
                               f"there: it takes {want}")
    if t.size != 1 or isinstance(t, (Array, _Fields)):
        raise MappingError(f"{at}: names a whole {type(t).__name__.lower()} of {var.name}: "
                           f"name one of its plain values (each [index] and .field down to it)")
    return Element(offset, tuple(steps), t.slot_domains()[0], text)


def _factor(model: Model, text: str, where: str) -> int:
    """The factor of ``o*F+a``: a number, a parameter, or (a parameter + a number), so that
    one mapping reads the model at other parameters too (check-log raises bounds)."""
    if text.isdigit():
        return int(text)
    m = _FACTOR.match(text)
    value = model.params.get(m.group(1)) if m else None
    if not isinstance(value, int):
        raise MappingError(f"{where}: {text} is no number, parameter of {model.name} or "
                           f"(parameter+number) (its parameters: {', '.join(model.params)})")
    return value + int(m.group(2) or 0)  # type: ignore[union-attr]


#: what each top-level key of a mapping holds, as the error names it
_SHAPES = {"model": (str, "a string (the model's name)"),
           "extends": (str, "a string (another mapping's file)"),
           "params": (dict, "a table (name = value)"),
           "ignore": (list, "a list of event names"),
           "event": (list, "a list of [[event]] tables"),
           "monitor": (list, "a list of [[monitor]] tables")}


def _check_shapes(doc: dict[str, Any], where: str = "") -> None:
    for key, (kind, what) in _SHAPES.items():
        if key in doc and not isinstance(doc[key], kind):
            raise MappingError(f"{where}{key} must be {what}, not {doc[key]!r}")
    if not all(isinstance(x, str) for x in doc.get("ignore", [])):
        raise MappingError(f"{where}ignore must be {_SHAPES['ignore'][1]}")


def read_document(path: Path, _within: tuple[Path, ...] = ()) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is no content
    except OSError as e:
        raise MappingError(f"cannot read the mapping {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise MappingError(f"the mapping {path} is not UTF-8 text ({e.reason} at byte "
                           f"{e.start})") from None
    try:
        doc = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise MappingError(f"the mapping {path} is not valid "
                           f"{'JSON' if path.suffix == '.json' else 'TOML'}: {e}") from None
    if not isinstance(doc, dict):
        raise MappingError(f"the mapping {path} is not a table")
    _check_shapes(doc, f"{path}: ")
    base = doc.pop("extends", None)
    if base is not None:  # another mapping's rules first, then this one's (params: this one's)
        here = path.resolve()
        if here in _within:
            raise MappingError(f"{path}: extends comes back to itself ("
                               + " -> ".join(str(p) for p in (*_within, here)) + ")")
        under = read_document(path.parent / base, (*_within, here))
        doc = {**under, **doc, "params": {**under.get("params", {}), **doc.get("params", {})},
               "ignore": [x for x in under.get("ignore", []) if x not in {
                   e.get("name") for e in doc.get("event", [])
                   if isinstance(e, dict) and isinstance(e.get("name"), str)}]
               + list(doc.get("ignore", [])),
               "event": [*under.get("event", []), *doc.get("event", [])]}
    return doc


def compile_mapping(model: Model, doc: dict[str, Any], source: str = "") -> Mapping:
    if not isinstance(doc, dict):
        raise MappingError("a mapping is a table (a dict)")
    _check_shapes(doc)
    extra = set(doc) - {"model", "params", "ignore", "event", "monitor"}
    if extra:
        raise MappingError(f"unknown key(s) {', '.join(sorted(extra))} in the mapping (it has "
                           f"model, params, ignore, [[event]] and [[monitor]])")
    if doc.get("model", model.name) != model.name:
        raise MappingError(f"the mapping is for {doc['model']!r}, not {model.name!r}")
    events = doc.get("event", [])
    if not isinstance(events, list) or not events:
        raise MappingError("the mapping has no [[event]] rule")
    rules: dict[str, list[Rule]] = {}
    for k, d in enumerate(events):
        r = _rule(model, d, k)
        rules.setdefault(r.event, []).append(r)
    ignore = doc.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(x, str) for x in ignore):
        raise MappingError("ignore must be a list of event names")
    monitors: dict[str, list[Monitor]] = {}
    if not isinstance(doc.get("monitor", []), list):  # (monitor = 0 was a TypeError)
        raise MappingError("monitor must be a list of [[monitor]] tables")
    for k, d in enumerate(doc.get("monitor", [])):
        mo = _monitor(d, k)
        monitors.setdefault(mo.event, []).append(mo)
    return Mapping(model.name, dict(doc.get("params", {})), rules, frozenset(ignore), source,
                   monitors, doc)


def _monitor(d: Any, k: int) -> Monitor:
    from .monitors import MONITORS
    where = f"[[monitor]] number {k + 1}"
    if not isinstance(d, dict) or set(d) - {"event", "property", "fields"}:
        raise MappingError(f"{where}: a monitor has event, property and fields")
    if not isinstance(d.get("property"), str) or d["property"] not in MONITORS:
        raise MappingError(f"{where}: no monitor for property {d.get('property')!r} (there are "
                           f"{', '.join(sorted(MONITORS))})")
    spec = MONITORS[d["property"]]
    need, may = spec.fields, spec.optional
    fields = d.get("fields", {})
    if not isinstance(d.get("event"), str) or not isinstance(fields, dict) or \
            not set(need) <= set(fields) <= set(need + may):
        raise MappingError(f"{where}: {d.get('property')} reads the fields "
                           f"{', '.join(need)} of one event"
                           + (f" (and may read {', '.join(may)})" if may else ""))
    return Monitor(d["event"], d["property"],
                   {n: _source(v, f"{where}, fields.{n}") for n, v in fields.items()})
