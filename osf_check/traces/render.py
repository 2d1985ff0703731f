"""Pictures of a trace: text, a state graph and a message-sequence chart.

DOT is built with pydot; SVG/PNG come from a Graphviz renderer found in this
order: ``$OSF_DOT``, ``dot`` on PATH, the ``graphviz-pure`` wheel's executable
(looked up next to the running interpreter, since a venv's bin/ may not be on
PATH).  Mermaid needs no renderer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

import pydot

__all__ = ["text", "mermaid_sequence", "mermaid_graph", "dot_graph", "dot_sequence",
           "find_renderer", "render_dot", "RenderError", "lanes"]

#: lane order of the sequence chart (agent side left, desktop right)
LANE_ORDER = ("agent", "another agent", "phone", "owner", "server", "relay", "desktop",
              "network", "clock", "tm", "rm")


class RenderError(RuntimeError):
    pass


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _diff(old: Any, new: Any) -> str:
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        parts = [f"[{i}] {_fmt(a)}→{_fmt(b)}" for i, (a, b) in enumerate(zip(old, new)) if a != b]
        return ", ".join(parts)
    return f"{_fmt(old)} → {_fmt(new)}"


def _title(tr: Mapping[str, Any]) -> str:
    p = tr.get("property") or {}
    head = f"{tr['model']}"
    if tr.get("mutant"):
        head += f" (mutant {tr['mutant']})"
    if p:
        head += f": {p['id']} {p['name']} [{p['kind']}]"
    return head


def _step_line(step: Mapping[str, Any]) -> str:
    outs = "".join(f" ⇒ {k}={_fmt(v)}" for k, v in step["outputs"].items())
    return f"{step['label']}{outs}"


def text(tr: Mapping[str, Any]) -> str:
    """The trace as text: each step, who took it, and the full state with changes marked."""
    lines = [_title(tr)]
    if tr.get("message"):
        lines.append(f"  {tr['message']}")
    params = ", ".join(f"{k}={v}" for k, v in tr["params"].items())
    lines.append(f"  parameters: {params or 'none'}; seed {tr['seed']}; {len(tr['steps']) - 1} steps")
    if tr.get("assumptions"):
        lines.append(f"  assumptions in force: {', '.join(tr['assumptions'])}")
    width = max(len(v["name"]) for v in tr["variables"])
    prev = None
    for step in tr["steps"]:
        k = step["index"]
        if tr.get("loop_start") is not None and k == tr["loop_start"] + 1:
            lines.append("  ── the cycle starts here (it returns to state "
                         f"{tr['loop_start']}) ──")
        if prev is None:
            lines.append("\n  0. initial state")
        else:
            who = step["actor"] + (f" → {step['target']}" if step["target"] else "")
            lines.append(f"\n  {k}. [{who}] {_step_line(step)}")
        for v in tr["variables"]:
            name = v["name"]
            new = step["state"][name]
            if prev is not None and name in step["changed"]:
                lines.append(f"   * {name:<{width}}  {_diff(prev['state'][name], new)}")
            else:
                lines.append(f"     {name:<{width}}  {_fmt(new)}")
        prev = step
    if tr.get("loop_start") is not None:
        lines.append(f"\n  ↺ back to state {tr['loop_start']}: this cycle can repeat forever")
    return "\n".join(lines) + "\n"


def lanes(tr: Mapping[str, Any]) -> list[str]:
    used = {s["actor"] for s in tr["steps"] if s["actor"]} | {
        s["target"] for s in tr["steps"] if s["target"]}
    order = tr.get("actors") or LANE_ORDER  # the model's own order (older traces: ours)
    known = [a for a in order if a in used]
    return known + sorted(used - set(known))


def _changes(prev: Mapping[str, Any], step: Mapping[str, Any], limit: int = 3) -> str:
    parts = [f"{n}: {_diff(prev['state'][n], step['state'][n])}" for n in step["changed"]]
    if len(parts) > limit:
        parts = parts[:limit] + [f"+{len(parts) - limit} more"]
    return "; ".join(parts)


def _mm(s: str) -> str:
    return s.replace(";", ",").replace("#", "").replace("\n", " ")


def mermaid_sequence(tr: Mapping[str, Any]) -> str:
    """A Mermaid sequence diagram, a participant per actor."""
    ls = lanes(tr)
    ident = {a: a.replace(" ", "_") for a in ls}
    out = ["sequenceDiagram", f"    title {_mm(_title(tr))}"]
    out += [f"    participant {ident[a]} as {a}" for a in ls]
    loop = tr.get("loop_start")
    steps = tr["steps"]
    for prev, step in zip(steps, steps[1:]):
        if loop is not None and step["index"] == loop + 1:
            out.append("    loop fair cycle, forever")
        a, t = ident[step["actor"]], ident.get(step["target"] or "")
        label = _mm(f"{step['index']}. {_step_line(step)}")
        if t:
            out.append(f"    {a}->>{t}: {label}")
        else:
            out.append(f"    Note over {a}: {label}")
        ch = _changes(prev, step)
        if ch:
            out.append(f"    Note right of {t or a}: {_mm(ch)}")
    if loop is not None:
        out.append("    end")
    return "\n".join(out) + "\n"


def mermaid_graph(tr: Mapping[str, Any]) -> str:
    """A Mermaid flowchart: a node per state (changed variables), an edge per action."""
    out = ["flowchart TD"]
    steps = tr["steps"]
    for k, step in enumerate(steps):
        body = "initial state" if k == 0 else "<br/>".join(
            f"{n} = {_fmt(step['state'][n])}" for n in step["changed"]) or "(no change)"
        out.append(f'    s{k}["{k}: {_mm(body)}"]')
    for k in range(1, len(steps)):
        out.append(f'    s{k - 1} -->|"{_mm(steps[k]["label"])}"| s{k}')
    if tr.get("loop_start") is not None and len(steps) > 1:
        out.append(f'    s{len(steps) - 1} -.->|"cycle"| s{tr["loop_start"]}')
    return "\n".join(out) + "\n"


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot_graph(tr: Mapping[str, Any]) -> pydot.Dot:
    """The state-graph view: a node per state listing what changed, an edge per action."""
    g = pydot.Dot("trace", graph_type="digraph", rankdir="TB", fontname="Helvetica",
                  label=_q(_title(tr)), labelloc="t")
    g.set_node_defaults(shape="box", style="rounded", fontname="Helvetica", fontsize="10")
    g.set_edge_defaults(fontname="Helvetica", fontsize="9")
    steps = tr["steps"]
    bad = len(steps) - 1
    for k, step in enumerate(steps):
        if k == 0:
            body = "\\l".join(f"{n} = {_fmt(v)}" for n, v in step["state"].items()) + "\\l"
            label = f"0: initial state\\l{body}"
        else:
            body = "\\l".join(f"{n} = {_fmt(step['state'][n])}" for n in step["changed"])
            label = f"{k}\\l{body}\\l" if body else f"{k}\\l(no change)\\l"
        attrs = {"label": _q(label).replace("\\\\l", "\\l")}
        if k == bad and tr.get("loop_start") is None:
            attrs.update(color="red", penwidth="2")
        g.add_node(pydot.Node(f"s{k}", **attrs))
    for k in range(1, len(steps)):
        st = steps[k]
        g.add_edge(pydot.Edge(f"s{k - 1}", f"s{k}", label=_q(f"{st['label']}\n({st['actor']})")))
    if tr.get("loop_start") is not None and len(steps) > 1:
        g.add_edge(pydot.Edge(f"s{len(steps) - 1}", f"s{tr['loop_start']}", style="dashed",
                              color="red", label=_q("cycle repeats")))
    return g


def dot_sequence(tr: Mapping[str, Any]) -> pydot.Dot:
    """The message-sequence chart: a lane per actor, a row per step, positions pinned
    (laid out by neato -n style pinning, so lifelines stay straight)."""
    ls = lanes(tr)
    steps = tr["steps"]
    n = len(steps)
    dx, dy = 3.4, 0.8
    g = pydot.Dot("sequence", graph_type="digraph", layout="neato", splines="line",
                  fontname="Helvetica", label=_q(_title(tr)), labelloc="t", outputorder="edgesfirst")
    g.set_node_defaults(fontname="Helvetica", fontsize="10", shape="point", width="0.06")
    g.set_edge_defaults(fontname="Helvetica", fontsize="9")
    lid = {a: f"L{i}" for i, a in enumerate(ls)}
    x = {a: i * dx for i, a in enumerate(ls)}

    def pos(a: str, k: int) -> str:
        return f'"{x[a]:.2f},{-k * dy:.2f}!"'

    for a in ls:
        g.add_node(pydot.Node(f"{lid[a]}_h", label=_q(a), shape="box", style="filled",
                              fillcolor="lightgrey", width="1.2", pos=pos(a, 0)))
        g.add_node(pydot.Node(f"{lid[a]}_end", label='""', width="0.01", pos=pos(a, n)))
        g.add_edge(pydot.Edge(f"{lid[a]}_h", f"{lid[a]}_end", arrowhead="none", style="dashed",
                              color="grey"))
    loop = tr.get("loop_start")
    for k in range(1, n):
        st = steps[k]
        label = f"{k}. {_step_line(st)}"
        ch = _changes(steps[k - 1], st)
        if ch:
            label += f"\n{ch}"
        color = "red" if loop is not None and k > loop else "black"
        a = st["actor"]
        g.add_node(pydot.Node(f"{lid[a]}_{k}", label='""', pos=pos(a, k), color=color))
        if st["target"] and st["target"] != a:
            t = st["target"]
            g.add_node(pydot.Node(f"{lid[t]}_{k}", label='""', pos=pos(t, k), color=color))
            g.add_edge(pydot.Edge(f"{lid[a]}_{k}", f"{lid[t]}_{k}", label=_q(label), color=color,
                                  fontcolor=color))
        else:  # a step that talks to nobody: a note beside the actor's lifeline
            g.add_node(pydot.Node(f"{lid[a]}_{k}_note", shape="note", label=_q(label),
                                  fontsize="9", color=color, fontcolor=color,
                                  pos=f'"{x[a] + dx / 2:.2f},{-k * dy:.2f}!"'))
    if loop is not None:
        g.add_node(pydot.Node("loopnote", shape="note", color="red", fontcolor="red",
                              label=_q(f"steps {loop + 1}–{n - 1} (red) repeat forever: "
                                       f"back to the state after step {loop}"),
                              pos=f'"{x[ls[0]]:.2f},{-(n + 0.6) * dy:.2f}!"'))
    return g


def find_renderer() -> str | None:
    """A Graphviz ``dot`` executable: $OSF_DOT, dot on PATH, the graphviz-pure wheel."""
    env = os.environ.get("OSF_DOT")
    if env:
        return env if (Path(env).exists() or shutil.which(env)) else None
    found = shutil.which("dot")
    if found:
        return found
    for cand in (Path(sys.executable).parent / "graphviz-pure", shutil.which("graphviz-pure")):
        if cand and Path(cand).exists():
            return str(cand)
    return None


def render_dot(dot_text: str, fmt: str, renderer: str | None = None) -> bytes:
    """Lay out DOT text as ``svg`` or ``png``; :class:`RenderError` if impossible."""
    exe = renderer or find_renderer()
    if exe is None:
        raise RenderError("no Graphviz renderer found (set $OSF_DOT, install graphviz, or "
                          "pip install graphviz-pure)")
    try:
        res = subprocess.run([exe, f"-T{fmt}"], input=dot_text.encode("utf-8"),
                             capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RenderError(f"renderer {exe} failed: {e}") from None
    if res.returncode != 0 or not res.stdout:
        msg = res.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RenderError(f"renderer {exe} failed: {msg[-1] if msg else res.returncode}")
    return res.stdout
