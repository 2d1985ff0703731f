"""``osf-check describe``: a model's reference, for whoever writes an adapter or a log
mapping for it.  The words come from the model (:mod:`osf_check.models.describe`); this
module gathers what the catalogue and the fuzz harness know of the model besides.
"""

from __future__ import annotations

from typing import Any, Mapping

from osf_check.models.describe import describe

__all__ = ["reference", "reference_text", "to_markdown", "FORMATS"]

#: what ``--format`` takes
FORMATS = ("md", "json")


def reference(model: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The reference of catalogue model ``model`` (loaded from a model file first, if it
    is one) at ``params`` (unnamed ones at their defaults).  An unknown model or a bad
    parameter raises :class:`~osf_check.models.errors.InputError` naming what exists.

    >>> doc = reference("two-phase", {"rms": 2})
    >>> [a["signature"] for a in doc["actions"]][:2]
    ['TMRcvPrepared(r)', 'TMCommit']
    """
    from osf_check.driver.external import decides, idle_events
    from osf_check.properties import catalogue
    spec = catalogue.spec(model)
    m = spec.build(params or {})
    return describe(m, title=spec.title, params=spec.params,
                    properties=catalogue.properties_of(model), decides=decides(model),
                    idle=idle_events(model), mutants=spec.mutants)


def reference_text(model: str, params: Mapping[str, Any] | None = None,
                   fmt: str = "md") -> str:
    """The reference as ``fmt`` prints it: Markdown, or JSON (one document)."""
    import json
    doc = reference(model, params)
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return to_markdown(doc)


# ---------------------------------------------------------------------------
# Markdown

_CHECKS = {"inv": "invariant", "trans": "step check", "reach": "reachability",
           "fair": "liveness"}


def to_markdown(doc: Mapping[str, Any]) -> str:
    """The reference as a Markdown page."""
    out = [f"# {doc['model']}: the model's reference", ""]
    if doc["title"]:
        out += [doc["title"], ""]
    out += _md_intro(doc) + _md_params(doc) + _md_variables(doc) + _md_actions(doc)
    out += _md_fairness(doc) + _md_properties(doc)
    return "\n".join(out).rstrip() + "\n"


def _md_intro(doc: Mapping[str, Any]) -> list[str]:
    params = ", ".join(f"{k}={v}" for k, v in doc["params"].items())
    out = [f"Generated from the model by `osf-check describe --model {doc['model']}`"
           + (f" at {params}" if params else "") + ": the sizes of arrays and the "
           "instances of actions follow the parameters. Expressions use TLA+'s notation: "
           "`∧` and, `∨` or, `¬` not, `x'` the value of `x` after the step; enum values "
           "are quoted, as the driver protocol's JSON writes them. A variable an action's "
           "effect does not list keeps its value.", ""]
    out += ["Actors: " + ", ".join(doc["actors"]) + ".", ""]
    h = doc["harness"]
    if h["fuzzable"]:
        out += ["For an adapter (`osf-check fuzz --impl`, see "
                "[the driver protocol](../driver-protocol.md)): every action below is a "
                "`step` osf-check may send. Those marked **implementation** are the "
                "implementation's own decisions: the adapter lists them in `offers` exactly "
                "when the implementation would take them next ("
                + ", ".join(f"`{a}`" for a in h["offers"]) + "). The others are the "
                "**environment**'s: osf-check chooses when they happen, and the adapter makes "
                "each happen when asked (a call arrives, a message is lost, a timer fires, a "
                "handler ends, the user changes a setting). After each step the adapter "
                "reports the implementation's state as the variables below, and an action's "
                "answers in `outputs`."
                + (" Those marked *idle event* ("
                   + ", ".join(f"`{a}`" for a in h["idle_events"]) + ") are also sent as "
                   "`idle` where the model does not enable them: the implementation must "
                   "then change nothing." if h["idle_events"] else ""), ""]
    return out


def _md_params(doc: Mapping[str, Any]) -> list[str]:
    if not doc["parameters"]:
        return []
    out = ["## Parameters", "", "| parameter | value here | range | meaning |", "|---|---|---|---|"]
    for p in doc["parameters"]:
        out.append(f"| `{p['name']}` | {p['value']} | {p['min']}..{p['max']} | {_cell(p['doc'])} |")
    return out + [""]


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _md_variables(doc: Mapping[str, Any]) -> list[str]:
    where = ("The state an adapter reports in `observed`" if doc["harness"]["fuzzable"] else
             "A state, as traces and `explore` show it")
    out = ["## Variables", "", f"{where}: every variable, as JSON.", "",
           "| variable | JSON value | actor | meaning |", "|---|---|---|---|"]
    for v in doc["variables"]:
        ghost = " (history: kept for the properties)" if v["ghost"] else ""
        out.append(f"| `{v['name']}` | {_cell(v['json'])} | {v['actor']} | "
                   f"{_cell(v['doc'])}{ghost} |")
    out += ["", "Initial state" + ("s" if doc["initial_state_count"] > 1 else "") + ": "
            + "; ".join(f"`{_compact(s)}`" for s in doc["initial_states"])
            + (f" (and {doc['initial_state_count'] - len(doc['initial_states'])} more)"
               if doc["initial_state_count"] > len(doc["initial_states"]) else "") + ".", ""]
    if doc["end_states"]:
        out += ["A state with no enabled action is a legitimate end (not a deadlock) when: "
                f"`{doc['end_states']}`.", ""]
    return out


def _compact(state: Mapping[str, Any]) -> str:
    import json
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in state.items())


def _md_actions(doc: Mapping[str, Any]) -> list[str]:
    out = ["## Actions", ""]
    for a in doc["actions"]:
        out += _md_action(a, doc["harness"]["fuzzable"])
    return out


def _md_action(a: Mapping[str, Any], fuzzable: bool) -> list[str]:
    out = [f"### `{a['signature']}`", ""]
    if a["doc"]:
        out += [a["doc"], ""]
    who = f"Actor: {a['actor']}" + (f", towards {a['target']}" if a["target"] else "")
    if fuzzable:
        who += "; initiative: **" + a["initiative"] + "**"
        if a["idle_event"]:
            who += "; *idle event*"
    if a["fairness"]:
        who += f"; {a['fairness']} fairness"
    out += [who + ".", ""]
    if a["arguments"]:
        out += ["Arguments: " + "; ".join(_md_arg(x) for x in a["arguments"]) + ".", ""]
    for f in a["forms"]:
        if f["applies"] is not None:
            out += [f"`{f['applies']}`:", ""]
        if f["let"]:
            out += ["- where:"] + [f"  - `{x}`" for x in f["let"]]
        out += ["- guard:"] + [f"  - `{g}`" for g in f["guard"]]
        out += (["- effect:"] + [f"  - `{u}`" for u in f["effect"]] if f["effect"] else
                ["- effect: none (the state stays as it is)"])
        if f["outputs"]:
            out += ["- answers:"] + [f"  - `{o}`" for o in f["outputs"]]
        out.append("")
    return out


def _md_arg(x: Mapping[str, Any]) -> str:
    if "names" in x:
        return f"`{x['name']}` ∈ {{" + ", ".join(
            f'"{n}" ({v})' for n, v in zip(x["names"], x["values"])) + "}"
    vals = x["values"]
    if vals == list(range(vals[0], vals[-1] + 1)) and len(vals) > 2:
        return f"`{x['name']}` ∈ {vals[0]}..{vals[-1]}"
    return f"`{x['name']}` ∈ {{" + ", ".join(map(str, vals)) + "}"


def _md_fairness(doc: Mapping[str, Any]) -> list[str]:
    out = ["## Fairness", ""]
    if not doc["fairness"] and not doc["fair_states"]:
        return out + ["None: liveness properties hold only on behaviours that need no "
                      "fairness.", ""]
    for f in doc["fairness"]:
        out.append(f"- {f['kind']} fairness of {f['of']}" +
                   ("" if f["of"].startswith("each instance") else
                    ": " + ", ".join(f"`{x}`" for x in f["actions"])))
    for s in doc["fair_states"]:
        out.append(f"- infinitely often on a fair behaviour ({s['name']}): `{s['condition']}`")
    return out + [""]


def _md_properties(doc: Mapping[str, Any]) -> list[str]:
    if not doc["properties"]:
        return []
    out = ["## Properties", "", "| id | name | checked as | statement |", "|---|---|---|---|"]
    for p in doc["properties"]:
        kinds = ", ".join(_CHECKS.get(k, k) for k in p["checks"])
        out.append(f"| {p['id']} | `{p['name']}` | {kinds} | {_cell(p['statement'])} |")
    out.append("")
    if doc["mutants"]:
        out += ["## Mutants", "", "Bugs planted in the model (`--mutant NAME`):", ""]
        out += [f"- `{k}`: {v}" for k, v in doc["mutants"].items()] + [""]
    return out
