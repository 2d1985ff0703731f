"""The one trace format (JSON) shared by the explorer, the prover and the fuzzer.

A trace names its model, parameters, mutant, seed and property, and lists its
steps: who acted (actor, and the lane it talked to), which action with which
parameters, what it answered, the full state after the step and which variables
changed.  A lasso (liveness counterexample) also says where its cycle starts.

Loading checks the file thoroughly (shape by JSON Schema, then every state
against the model's variables), so that a malformed or truncated file is a
one-line :class:`TraceError`, never a traceback.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from osf_check.models.dsl import Model
from osf_check.models.errors import BadValue

__all__ = ["TraceError", "FORMAT", "VERSION", "make_trace", "load_trace", "check_actions",
           "to_itf", "from_itf", "dumps"]

FORMAT = "osf-check-trace"
VERSION = 1


class TraceError(BadValue):
    """A trace file that cannot be used; the message says why in one line."""


def make_trace(model: Model, states: Sequence[tuple], actions: Sequence[int | None], *,
               prop: Mapping[str, Any] | None, message: str = "", seed: int = 0,
               loop_start: int | None = None, assumptions: Sequence[str] = (),
               source: str = "explore", stutters: bool = False) -> dict[str, Any]:
    """A trace dict from the model's states and the action instance taken into each.
    ``stutters``: the behaviour stutters forever in its last state (``loop_start`` is
    then that state's index): a halting or stuttering counterexample."""
    steps = []
    prev: tuple | None = None
    for k, (st, ai) in enumerate(zip(states, actions)):
        inst = model.instances[ai] if ai is not None and ai >= 0 else None
        steps.append({
            "index": k,
            "actor": inst.actor if inst else None,
            "target": inst.target if inst else None,
            "action": inst.name if inst else None,
            "args": dict(inst.args) if inst else {},
            "label": inst.label if inst else "initial state",
            "outputs": inst.show_outputs(prev) if inst and prev is not None else {},
            "state": model.show_state(st),
            "changed": model.changed(prev, st) if prev is not None else [],
        })
        prev = st
    return {
        "format": FORMAT,
        "version": VERSION,
        "source": source,
        "model": model.name,
        "params": dict(model.params),
        "mutant": model.mutant,
        "seed": seed,
        "property": dict(prop) if prop else None,
        "message": message,
        "assumptions": list(assumptions),
        "variables": [{"name": v.name, "actor": v.actor, "domain": v.describe(),
                       "length": v.length, "ghost": v.ghost, "doc": v.doc}
                      for v in model.variables],
        "actors": list(model.actors),
        "steps": steps,
        "loop_start": loop_start,
        "stutters": stutters,
    }


def _schema() -> dict[str, Any]:
    return json.loads(resources.files("osf_check.traces").joinpath("trace.schema.json").read_text())


@functools.cache
def _validator() -> Callable[[Any], Any]:
    # fastjsonschema, the one schema library osf-check depends on (the driver protocol's
    # messages use it too); the schema keeps to what its draft-07 compiler reads
    import fastjsonschema
    schema = {k: v for k, v in _schema().items() if k != "$schema"}
    return fastjsonschema.compile({"$schema": "http://json-schema.org/draft-07/schema#", **schema})


def load_trace(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a trace file (``-``: stdin); :class:`TraceError` says what is
    wrong."""
    p = Path(path)
    try:  # a byte-order mark is no content
        text = sys.stdin.buffer.read().decode("utf-8-sig") if str(path) == "-" else \
            p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TraceError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TraceError(f"{p}: cannot read it ({e.__class__.__name__})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        # a file cut short ends inside its last token, with the outer object left open
        tail = text[e.pos:].rstrip()
        looks_json = text.lstrip().startswith(("{", "["))
        cut = looks_json and "\n" not in tail and not text.rstrip().endswith(("}", "]"))
        what = "truncated" if cut else ("not valid JSON" if looks_json else "not JSON")
        raise TraceError(f"{p}: {what} (line {e.lineno}, column {e.colno}: {e.msg})") from None
    if isinstance(data, dict) and "states" in data and "vars" in data and "steps" not in data:
        try:  # an ITF file (this tool's --out writes one next to every trace)
            data = from_itf(data)
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise TraceError(f"{p}: not a usable ITF trace ({e.__class__.__name__}: {e})") from None
    import fastjsonschema  # on first load: its compiled validator costs time at every start
    try:
        _validator()(data)
    except fastjsonschema.JsonSchemaValueException as e:
        where = "/".join(str(x) for x in e.path[1:]) or "top level"
        raise TraceError(f"{p}: not an osf-check trace ({where}: "
                         f"{e.message.removeprefix(e.name or '').strip()})") from None
    if data["loop_start"] is not None and data["loop_start"] >= len(data["steps"]):
        raise TraceError(f"{p}: loop_start {data['loop_start']} is past the last step")
    names = [v["name"] for v in data["variables"]]
    for k, step in enumerate(data["steps"]):
        why = _unreadable(step["state"], names)
        if why is not None:
            raise TraceError(f"{p}: step {k}: {why}")
    return data


def check_actions(tr: Mapping[str, Any], path: str | os.PathLike[str] = "the trace") -> None:
    """Refuse a trace of a catalogue model that takes a step its model has no action for
    (a file edited by hand, or of another version): :class:`TraceError`.  A model the
    catalogue does not hold (one a ``--model-file`` defined) cannot be asked, so its
    trace is drawn as it is."""
    import difflib

    from osf_check.properties import catalogue
    spec = catalogue.MODELS.get(tr["model"])
    if spec is None:
        return
    mutant = tr.get("mutant") if tr.get("mutant") in spec.mutants else None
    try:  # the parameters pick the instances, not the actions: unknown ones are no matter
        params = {k: v for k, v in tr["params"].items() if k in {p.name for p in spec.params}}
        names = set(spec.build(params, mutant).action_names)
    except (LookupError, ValueError) as e:
        raise TraceError(f"{path}: its parameters are not {tr['model']}'s: {e}") from None
    for step in tr["steps"][1:]:
        act = step.get("action")
        if act is not None and act not in names:
            near = difflib.get_close_matches(act, sorted(names), n=1)
            raise TraceError(f"{path}: step {step['index']} takes action {act!r}, which model "
                             f"{tr['model']} does not have"
                             + (f" (did you mean {near[0]!r}?)" if near else
                                f" (its actions: {', '.join(sorted(names))})"))


def _unreadable(state: dict[str, Any], names: list[str]) -> str | None:
    """Why the pictures and the ITF export could not read ``state`` (a KeyError or a
    TypeError inside them), if they could not: every declared variable, no other, each
    holding numbers, booleans, strings or arrays of them."""
    gone = [n for n in names if n not in state]
    more = [n for n in state if n not in names]
    if gone or more:
        return "the state does not hold the trace's variables (" + "; ".join(
            ([f"missing {', '.join(gone)}"] if gone else []) +
            ([f"not declared: {', '.join(more)}"] if more else [])) + ")"
    bad = next((n for n, v in state.items() if not _plain(v)), None)
    if bad is not None:
        return (f"{bad} holds {json.dumps(state[bad])[:60]}, not a value of a state "
                "(numbers, booleans, strings and arrays, records, sets, tuples and maps of "
                "them)")
    return None


def _plain(x: Any) -> bool:
    """Whether ``x`` is a value a state holds: what :func:`to_itf` and the pictures read."""
    if isinstance(x, list):
        return all(_plain(y) for y in x)
    if isinstance(x, dict) and set(x) in ({"#set"}, {"#tup"}):  # as ITF writes them
        [ys] = x.values()
        return isinstance(ys, list) and all(_plain(y) for y in ys)
    if isinstance(x, dict) and set(x) == {"#map"}:
        return isinstance(x["#map"], list) and all(
            isinstance(p, list) and len(p) == 2 and _plain(p[0]) and _plain(p[1])
            for p in x["#map"])
    if isinstance(x, dict):  # a record
        return all(isinstance(k, str) and not k.startswith("#") and _plain(y)
                   for k, y in x.items())
    return isinstance(x, (bool, int, str))


def to_itf(trace: Mapping[str, Any]) -> dict[str, Any]:
    """The trace in ITF, the JSON trace format of Apalache and Quint.

    Arrays become ITF sequences, records objects, enum values strings; sets, tuples
    and arrays indexed by other than 0.. are already in ITF's ``#set``, ``#tup`` and
    ``#map`` forms.  The action taken into each state is kept in the state's ``#meta``.
    """
    def val(x: Any) -> Any:
        if isinstance(x, bool) or isinstance(x, str):
            return x
        if isinstance(x, int):
            return x if abs(x) < 2 ** 53 else {"#bigint": str(x)}
        if isinstance(x, list):
            return [val(y) for y in x]
        if isinstance(x, dict) and ("#set" in x or "#tup" in x):
            return {k: [val(y) for y in ys] for k, ys in x.items()}
        if isinstance(x, dict) and "#map" in x:
            return {"#map": [[val(k), val(v)] for k, v in x["#map"]]}
        if isinstance(x, dict):  # a record: ITF's own form is an object
            return {k: val(v) for k, v in x.items()}
        raise TypeError(x)

    states = []
    for step in trace["steps"]:
        st = {"#meta": {"index": step["index"], "action": step["label"],
                        "actor": step["actor"], "target": step["target"],
                        "name": step["action"], "args": step["args"],
                        "outputs": step["outputs"]}}
        st.update({k: val(v) for k, v in step["state"].items()})
        states.append(st)
    # what ITF has no place for rides in #meta, so that render and replay read the file back
    rest = {k: trace[k] for k in ("model", "params", "mutant", "seed", "property", "message",
                                  "assumptions", "variables", "source", "stutters")
            if k in trace}
    rest["actors"] = list(trace.get("actors") or [])
    out = {
        "#meta": {"format": "ITF", "source": f"osf-check {trace['source']}",
                  "description": f"{trace['model']} {(trace['property'] or {}).get('id', '')} "
                                 f"{trace['message']}".strip(),
                  "varTypes": {v["name"]: v["domain"] for v in trace["variables"]},
                  "osf-check": rest},
        "vars": [v["name"] for v in trace["variables"]],
        "states": states,
    }
    if trace["loop_start"] is not None:
        out["loop"] = trace["loop_start"]
    return out


def _from_itf_value(x: Any) -> Any:
    if isinstance(x, dict):
        if "#bigint" in x:
            return int(x["#bigint"])
        if "#set" in x:  # kept a set: this tool's traces hold sets in ITF's form
            return {"#set": [_from_itf_value(y) for y in x["#set"]]}
        if "#tup" in x:  # kept too: a model's tuples and maps read them back
            return {"#tup": [_from_itf_value(y) for y in x["#tup"]]}
        if "#map" in x:
            return {"#map": [[_from_itf_value(k), _from_itf_value(v)] for k, v in x["#map"]]}
        if "#unserializable" in x:
            return str(x["#unserializable"])
        return {k: _from_itf_value(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_from_itf_value(y) for y in x]
    return x


def from_itf(itf: Mapping[str, Any]) -> dict[str, Any]:
    """An ITF trace back in this module's format: one ``to_itf`` wrote comes back whole;
    another tool's (Apalache, Quint) gets a step per state, its variables on one lane."""
    meta = itf.get("#meta") or {}
    ours = meta.get("osf-check") or {}
    names = list(itf["vars"])
    steps, prev = [], None
    for k, st in enumerate(itf["states"]):
        sm = st.get("#meta") or {}
        state = {n: _from_itf_value(st[n]) for n in names if n in st}
        first = k == 0
        steps.append({
            "index": k, "actor": None if first else (sm.get("actor") or "system"),
            "target": None if first else sm.get("target"),
            "action": None if first else (sm.get("name") or sm.get("action") or f"step{k}"),
            "args": {} if first else dict(sm.get("args") or {}),
            "label": "initial state" if first else str(sm.get("action") or f"step {k}"),
            "outputs": {} if first else dict(sm.get("outputs") or {}),
            "state": state,
            "changed": [] if first else [n for n in names if prev.get(n) != state.get(n)],
        })
        prev = state
    variables = ours.get("variables") or [
        {"name": n, "actor": "system", "domain": {"kind": "itf"}, "length": None,
         "ghost": False} for n in names]
    return {
        "format": FORMAT, "version": VERSION, "source": ours.get("source", "explore"),
        "model": ours.get("model") or str(meta.get("description") or "itf").split(" ")[0],
        "params": ours.get("params", {}), "mutant": ours.get("mutant"),
        "seed": ours.get("seed", 0), "property": ours.get("property"),
        "message": ours.get("message", str(meta.get("description") or "")),
        "assumptions": ours.get("assumptions", []), "variables": variables,
        "actors": ours.get("actors") or [], "steps": steps, "loop_start": itf.get("loop"),
        # ITF's loop at the last state: that state repeats forever (stuttering)
        "stutters": bool(ours.get("stutters", itf.get("loop") == len(steps) - 1)),
    }


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
