"""What a counterexample picture says about each step, shared by every view.

A chart has room for a few changes per step.  Which ones it shows decides whether
the story comes across: the variables the failing property reads come first and are
never folded into "+N more"; the failing step says which property fails there and
what the variables it reads hold.
"""

from __future__ import annotations

import textwrap
from typing import Any, Mapping

__all__ = ["fmt", "diff", "named", "message_lines", "message_parts", "title", "step_line", "changes", "failing_index", "verdict_lines",
           "reads", "lane_actors", "home_lane", "LANE_ORDER"]

#: lane order of the sequence chart for traces written before models named their actors
LANE_ORDER = ("agent", "another agent", "phone", "owner", "server", "relay", "desktop",
              "network", "clock", "tm", "rm")


def fmt(v: Any) -> str:
    """A state's value as TLA+ writes it: records and maps ``[k |-> v]``, tuples
    ``<<a, b>>``, sets ``{a, b}``, enum values by name."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, dict) and "#set" in v:  # a set, as a set
        return "{" + ", ".join(fmt(x) for x in v["#set"]) + "}"
    if isinstance(v, dict) and "#tup" in v:
        return "<<" + ", ".join(fmt(x) for x in v["#tup"]) + ">>"
    if isinstance(v, dict):
        pairs = v["#map"] if "#map" in v else v.items()
        return "[" + ", ".join(f"{fmt(k)} |-> {fmt(x)}" for k, x in pairs) + "]"
    return str(v)


def _parts(v: Any) -> list[tuple[str, Any]] | None:
    """The parts of an array, record or map, each with how a path names it (None for a
    value a change shows whole: a number, a name, a set)."""
    if isinstance(v, list):
        return [(f"[{i}]", x) for i, x in enumerate(v)]
    if isinstance(v, dict) and "#map" in v:
        return [(f"[{fmt(k)}]", x) for k, x in v["#map"]]
    if isinstance(v, dict) and not any(k.startswith("#") for k in v):
        return [(f".{k}", x) for k, x in v.items()]
    return None


def _changes(old: Any, new: Any, path: str) -> list[str]:
    a, b = _parts(old), _parts(new)
    if a is None or b is None or [k for k, _ in a] != [k for k, _ in b]:
        return [f"{path} {fmt(old)}→{fmt(new)}"]
    return [c for (k, x), (_, y) in zip(a, b) if x != y for c in _changes(x, y, path + k)]


def diff(old: Any, new: Any) -> str:
    """What changed, part by part (``[1].pc idle→busy``) where both are structured
    alike, else the whole value."""
    a, b = _parts(old), _parts(new)
    if a is None or b is None or [k for k, _ in a] != [k for k, _ in b]:
        return f"{fmt(old)} → {fmt(new)}"
    return ", ".join(_changes(old, new, ""))


def named(p: Mapping[str, Any]) -> str:
    """A property as a trace names it: its id and name, the id once where the name is the
    id (a deadlock's).

    >>> named({"id": "A10", "name": "offline-work-survives"})
    'A10 offline-work-survives'
    >>> named({"id": "deadlock", "name": "deadlock"})
    'deadlock'
    """
    pid, name = p.get("id", ""), p.get("name", "")
    return pid if name == pid else f"{pid} {name}".strip()


def message_lines(tr: Mapping[str, Any], width: int) -> list[str]:
    """The trace's message as a picture's title shows it: wrapped to ``width``, the goal
    of a reach or fair counterexample starting a line of its own.

    >>> message_lines({"message": "run 0: the goal never holds; the goal: x = 1"}, 30)
    ['run 0: the goal never holds', 'the goal: x = 1']
    """
    return [line for part in message_parts(tr) for line in textwrap.wrap(
        part, width, break_on_hyphens=False)]


def message_parts(tr: Mapping[str, Any]) -> list[str]:
    """The trace's message, the goal of a reach or fair counterexample apart (none: no
    message).

    >>> message_parts({"message": "run 0: the goal never holds; the goal: x = 1"})
    ['run 0: the goal never holds', 'the goal: x = 1']
    """
    head, cut, goal = (tr.get("message") or "").partition("; the goal: ")
    return [head, f"the goal: {goal}"] if cut else [head] if head else []


def title(tr: Mapping[str, Any]) -> str:
    p = tr.get("property") or {}
    head = f"{tr['model']}"
    if tr.get("mutant"):
        head += f" (mutant {tr['mutant']})"
    if p:
        head += f": {named(p)} [{p['kind']}]"
    return head


def step_line(step: Mapping[str, Any]) -> str:
    outs = "".join(f" ⇒ {k}={fmt(v)}" for k, v in step["outputs"].items())
    return f"{step['label']}{outs}"


def reads(tr: Mapping[str, Any]) -> list[str]:
    """The variables the failing property reads (empty for older traces)."""
    return list((tr.get("property") or {}).get("reads") or [])


def changes(tr: Mapping[str, Any], k: int, limit: int = 3) -> list[str]:
    """Step ``k``'s changes, one ``name: old → new`` each: the failing property's
    variables first and always shown, the others up to ``limit`` lines in all; the
    failing step shows every change (one of them is what breaks the property)."""
    prev, step = tr["steps"][k - 1], tr["steps"][k]
    if k == failing_index(tr):
        limit = len(step["changed"])
    first = set(reads(tr))
    names = sorted(step["changed"], key=lambda n: n not in first)  # stable: model order kept
    shown = [n for n in names if n in first]
    rest = [n for n in names if n not in first]
    room = max(limit - len(shown), 0)
    if len(rest) > room:
        room = max(room - 1, 0)  # one line goes to "+N more"
    out = [f"{n}: {diff(prev['state'][n], step['state'][n])}" for n in shown + rest[:room]]
    if len(rest) > room:
        out.append(f"+{len(rest) - room} more")
    return out


def failing_index(tr: Mapping[str, Any]) -> int | None:
    """The step where the property fails (``None`` for a lasso: its whole cycle is)."""
    if tr.get("loop_start") is not None or not tr.get("property") or len(tr["steps"]) < 2:
        return None
    return len(tr["steps"]) - 1


def verdict_lines(tr: Mapping[str, Any]) -> list[str]:
    """What the failing step adds: the property and what the variables it reads hold."""
    p = tr.get("property") or {}
    if not p:
        return []
    last = tr["steps"][-1]["state"]
    if p.get("kind") == "check-log" and "line" in p:  # older traces lack the line
        out = [f"× line {p['line']} ({p['event']}): the model's version of it, where the "
               f"log parts from the model" if p["read"] else
               f"× line {p['line']} ({p['event']}) cannot follow this step: no behaviour "
               f"of the model takes it from here"]
    else:
        out = [f"× {named(p)} fails here"]
    names = [n for n in reads(tr) if n in last]
    if names:
        out.append("it reads " + ", ".join(f"{n} = {fmt(last[n])}" for n in names))
    return out


def lane_actors(tr: Mapping[str, Any]) -> list[str]:
    """The actors that get a lifeline: whoever sends or receives, or changes state of its
    own.  A step that changes only others' state (the clock's ``slot_timeout`` ends the
    desktop's wait) sits on the lifeline of the actor whose state it changes, so the
    clock gets no lifeline for one note."""
    steps = tr["steps"][1:]
    owner = {v["name"]: v["actor"] for v in tr["variables"]}
    used = {s["actor"] for s in steps if s["target"] and s["target"] != s["actor"]}
    used |= {s["target"] for s in steps if s["target"]}
    used |= {s["actor"] for s in steps if any(owner.get(n) == s["actor"] for n in s["changed"])}
    for s in steps:
        if s["actor"] not in used:
            used.add(next((owner[n] for n in s["changed"] if n in owner), s["actor"]))
    order = tr.get("actors") or LANE_ORDER  # the model's own order (older traces: ours)
    known = [a for a in order if a in used]
    return known + sorted(used - set(known) - {None})


def home_lane(tr: Mapping[str, Any], step: Mapping[str, Any], lanes: list[str]) -> str:
    """Where a step that talks to nobody is drawn: its actor's lifeline when it changes
    its actor's own state, else the lifeline of the first actor whose state it changes."""
    owner = {v["name"]: v["actor"] for v in tr["variables"]}
    mine = any(owner.get(n) == step["actor"] for n in step["changed"])
    if step["actor"] in lanes and (mine or not step["changed"]):
        return step["actor"]
    for n in step["changed"]:
        if owner.get(n) in lanes:
            return owner[n]
    return step["actor"] if step["actor"] in lanes else lanes[0]
