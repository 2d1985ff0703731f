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

from osf_check.traces import sequence, story
from osf_check.traces.sequence import dot_sequence, mermaid_sequence

__all__ = ["text", "mermaid_sequence", "mermaid_graph", "dot_graph", "dot_sequence",
           "find_renderer", "render_dot", "RenderError", "lanes"]


class RenderError(RuntimeError):
    pass


lanes = story.lane_actors  # the chart's lanes, for callers of this module


def counted(n: int, noun: str) -> str:
    """``n`` of ``noun``, said as a person would (``noun`` takes an s for more than one).

    >>> counted(1, "model state"), counted(1_200, "line")
    ('1 model state', '1,200 lines')
    """
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def n_steps(n: int) -> str:
    """``n`` steps, said as a person would.

    >>> n_steps(1), n_steps(8)
    ('1 step', '8 steps')
    """
    return counted(n, "step")


def text(tr: Mapping[str, Any]) -> str:
    """The trace as text: each step, who took it, and the full state with changes marked."""
    lines = [story.title(tr)]
    lines += [f"  {part}" for part in story.message_parts(tr)]
    params = ", ".join(f"{k}={v}" for k, v in tr["params"].items())
    lines.append(f"  parameters: {params or 'none'}; seed {tr['seed']}; "
                 f"{n_steps(len(tr['steps']) - 1)}")
    if tr.get("assumptions"):
        lines.append(f"  assumptions in force: {', '.join(tr['assumptions'])}")
    if story.reads(tr):
        lines.append(f"  the property reads: {', '.join(story.reads(tr))}")
    width = max(len(v["name"]) for v in tr["variables"])
    prev = None
    for step in tr["steps"]:
        k = step["index"]
        if _cycles(tr) and k == tr["loop_start"] + 1:
            lines.append("  ── the cycle starts here (it returns to state "
                         f"{tr['loop_start']}) ──")
        if prev is None:
            lines.append("\n  0. initial state")
        else:
            who = step["actor"] + (f" → {step['target']}" if step["target"] else "")
            lines.append(f"\n  {k}. [{who}] {story.step_line(step)}")
        for v in tr["variables"]:
            name = v["name"]
            new = step["state"][name]
            if prev is not None and name in step["changed"]:
                lines.append(f"   * {name:<{width}}  {story.diff(prev['state'][name], new)}")
            else:
                lines.append(f"     {name:<{width}}  {story.fmt(new)}")
        prev = step
    if story.failing_index(tr) is not None:
        lines += ["", *(f"  {x}" for x in story.verdict_lines(tr))]
    if tr.get("stutters"):
        lines.append(f"\n  ⏸ then stutters forever in state {tr['loop_start']}: no fair action "
                     "moves it (a halting or stuttering behaviour)")
    elif tr.get("loop_start") is not None:
        lines.append(f"\n  ↺ back to state {tr['loop_start']}: this cycle can repeat forever")
    return "\n".join(lines) + "\n"


def _cycles(tr: Mapping[str, Any]) -> bool:
    """The trace ends in a cycle of steps (not in stuttering)."""
    return tr.get("loop_start") is not None and not tr.get("stutters")


def mermaid_graph(tr: Mapping[str, Any]) -> str:
    """A Mermaid flowchart: a node per state (changed variables), an edge per action."""
    mm = sequence._mm
    out = ["flowchart TD"]
    steps = tr["steps"]
    for k, step in enumerate(steps):
        body = "initial state" if k == 0 else "<br/>".join(
            mm(f"{n} = {story.fmt(step['state'][n])}") for n in step["changed"]) or "(no change)"
        out.append(f'    s{k}["{k}: {body.replace(chr(34), chr(39))}"]')
    for k in range(1, len(steps)):
        out.append(f'    s{k - 1} -->|"{mm(steps[k]["label"]).replace(chr(34), chr(39))}"| s{k}')
    if tr.get("stutters"):
        out.append(f'    s{len(steps) - 1} -.->|"then stutters forever"| s{len(steps) - 1}')
    elif tr.get("loop_start") is not None and len(steps) > 1:
        out.append(f'    s{len(steps) - 1} -.->|"cycle"| s{tr["loop_start"]}')
    bad = story.failing_index(tr)
    if bad is not None:
        out.append(f"    style s{bad} stroke:#c62828,stroke-width:3px")
    return "\n".join(out) + "\n"


_q = sequence._q


def _dl(lines: list[str]) -> str:
    """A left-justified DOT label from lines (escaped; each ends with \\l)."""
    return '"' + "".join(sequence._esc(x) + "\\l" for x in lines) + '"'


#: the characters of a line of the state-graph view's title
TITLE_WIDTH = 100

#: most states in a column of the state-graph view: a longer trace wraps into columns
ROWS_PER_COLUMN = 12


def column_height(n: int, rows: int = ROWS_PER_COLUMN) -> int:
    """States per column for ``n`` states: as few columns as ``rows`` allows, of equal
    height, so that the last column ends near the bottom and its last state (the
    failing one) is never alone at the top of a column of its own.

    >>> column_height(9), column_height(20), column_height(25)
    (9, 10, 9)
    """
    columns = max(1, -(-n // rows))
    return -(-n // columns)


def _step_label(st: Mapping[str, Any]) -> str:
    return f"{st['label']}\n({st['actor']})"


def dot_graph(tr: Mapping[str, Any], rows: int = ROWS_PER_COLUMN) -> pydot.Dot:
    """The state-graph view: a node per state listing what changed, an edge per action,
    top to bottom in columns of at most ``rows`` states (:func:`column_height`), and a
    legend saying what each variable is."""
    steps = tr["steps"]
    rows = column_height(len(steps), rows)
    # wrapped: a goal's text made one line of the title wider than the picture
    msg = "".join(f"\n{line}" for line in story.message_lines(tr, TITLE_WIDTH))
    g = pydot.Dot("trace", graph_type="digraph", rankdir="TB", fontname="Helvetica",
                  label=_q(story.title(tr) + msg), labelloc="t",
                  newrank="true", nodesep="0.5", ranksep="0.35")
    g.set_node_defaults(shape="box", style="rounded", fontname="Helvetica", fontsize="10")
    g.set_edge_defaults(fontname="Helvetica", fontsize="9")
    bad = story.failing_index(tr)
    loop = tr.get("loop_start")
    for k, step in enumerate(steps):
        if k == 0:
            body = ["0: initial state"] + [f"{n} = {story.fmt(v)}" for n, v in step["state"].items()]
        else:
            # a column's first state names the step into it: the edge that climbs from
            # the previous column's foot carries no label to cross the columns with
            head = f"{k}" if k % rows else f"{k}: after {step['label']} ({step['actor']})"
            body = [head] + [f"{n} = {story.fmt(step['state'][n])}" for n in step["changed"]]
            if len(body) == 1:
                body.append("(no change)")
        if k == bad:
            body += story.verdict_lines(tr)
        attrs: dict[str, str] = {"label": _dl(body)}
        if k == bad:
            attrs.update(color=sequence.RED, penwidth="2.5", fontcolor=sequence.RED, id="failing-step",
                         **{"class": "osf-failing"})
        elif loop is not None and k > loop:
            attrs.update(color=sequence.RED)
        g.add_node(pydot.Node(f"s{k}", **attrs))
    for k in range(1, len(steps)):
        if k % rows:
            g.add_edge(pydot.Edge(f"s{k - 1}", f"s{k}", label=_q(_step_label(steps[k]))))
        else:
            g.add_edge(pydot.Edge(f"s{k - 1}", f"s{k}", constraint="false", style="dashed"))
    for r in range(min(rows, len(steps))):  # the k-th state of every column on one rank
        same = pydot.Subgraph(f"row{r}", rank="same")
        for k in range(r, len(steps), rows):
            same.add_node(pydot.Node(f"s{k}"))
        g.add_subgraph(same)
    if tr.get("stutters"):
        g.add_edge(pydot.Edge(f"s{loop}", f"s{loop}", style="bold", color=sequence.RED,
                              fontcolor=sequence.RED, constraint="false",
                              label=_q("then stutters forever")))
    elif loop is not None and len(steps) > 1:
        g.add_edge(pydot.Edge(f"s{len(steps) - 1}", f"s{loop}", style="bold", color=sequence.RED,
                              fontcolor=sequence.RED, constraint="false",
                              label=_q(f"cycle: back to state {loop}, forever")))
    g.add_node(pydot.Node("legend", shape="note", fontsize="9", label=_legend(tr)))
    return g


def _legend(tr: Mapping[str, Any]) -> str:
    """What each variable the picture names is, and whose it is."""
    named = set(tr["steps"][0]["state"])
    lines = ["variables"]
    for v in tr["variables"]:
        if v["name"] in named:
            doc = v.get("doc") or ""
            lines.append(f"{v['name']} ({v['actor']}){': ' + doc if doc else ''}")
    return _dl(lines)


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
    if fmt == "svg":
        return res.stdout.replace(b'font-family="Helvetica,sans-Serif"', SVG_FONTS)
    return res.stdout


#: Graphviz sizes every box for Helvetica's widths; a viewer without Helvetica fell back
#: to its sans-serif (DejaVu Sans on most Linux machines, a tenth wider), whose text ran
#: out of the boxes.  Fonts of Helvetica's widths first (Arial, Arimo, Liberation Sans),
#: then DejaVu's narrower cut.
SVG_FONTS = (b'font-family="Helvetica,Arial,Arimo,Liberation Sans,DejaVu Sans Condensed,'
             b'sans-serif"')
