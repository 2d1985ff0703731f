"""The message-sequence chart of a trace, as DOT (pinned positions) and as Mermaid.

Layout, in inches: a lifeline per lane, a row per step, each row as tall as its
label.  Labels are nodes filled white and drawn after the lifelines, so no lifeline
crosses them; a message's label sits above its arrow, a local step is a box on its
actor's lifeline.  The failing step is red and says which property fails and what
the variables it reads hold; a lasso's cycle is framed, with an arrow back up to
where it starts.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any, Mapping

import pydot

from osf_check.traces import story

__all__ = ["dot_sequence", "mermaid_sequence"]

CHAR_W = 0.068   # inches per character of a 9 pt Helvetica label (a little generous)
LINE_H = 0.17    # inches per label line
MIN_DX, MAX_DX = 2.8, 4.6
RED = "#c62828"


def _q(s: str) -> str:
    """A quoted DOT string."""
    return '"' + _esc(s) + '"'


def _lines(tr: Mapping[str, Any], k: int, width_in: float, lanes: list[str]) -> list[str]:
    step = tr["steps"][k]
    here = step["actor"] if step["target"] and step["target"] != step["actor"] \
        else story.home_lane(tr, step, lanes)
    who = "" if step["actor"] == here else f"{step['actor']}: "  # on another's lifeline
    head = f"{k}. {who}{story.step_line(step)}"
    body = [head] + story.changes(tr, k)
    if k == story.failing_index(tr):
        body += story.verdict_lines(tr)
    cols = max(int(width_in / CHAR_W), 16)
    out: list[str] = []
    for line in body:
        out += textwrap.wrap(line, cols, break_on_hyphens=False, break_long_words=False) or [""]
    return out


@dataclass
class _Row:
    k: int
    top: float          # y of the row's top edge (negative downwards)
    bottom: float
    y: float            # the arrow's (or the box's centre) y
    label_y: float
    lines: list[str]
    src: str
    dst: str | None     # None: a local step


def _spacing(tr: Mapping[str, Any], lanes: list[str]) -> float:
    """Lane spacing wide enough for most message labels on one or two lines."""
    pos = {a: i for i, a in enumerate(lanes)}
    need = MIN_DX
    for st in tr["steps"][1:]:
        t = st["target"]
        if t and t != st["actor"] and t in pos and st["actor"] in pos:
            span = abs(pos[t] - pos[st["actor"]])
            head = len(story.step_line(st)) + 4
            need = max(need, min(head * CHAR_W + 0.4, MAX_DX * span) / span)
    return min(need, MAX_DX)


def _rows(tr: Mapping[str, Any], lanes: list[str], dx: float) -> list[_Row]:
    pos = {a: i for i, a in enumerate(lanes)}
    rows, top = [], -0.75
    for k in range(1, len(tr["steps"])):
        st = tr["steps"][k]
        t = st["target"]
        if t and t != st["actor"] and st["actor"] in pos and t in pos:
            span = abs(pos[t] - pos[st["actor"]])
            lines = _lines(tr, k, span * dx - 0.3, lanes)
            h = len(lines) * LINE_H + 0.1
            y = top - h - 0.12
            rows.append(_Row(k, top, y - 0.2, y, top - h / 2 - 0.04, lines, st["actor"], t))
        else:
            lines = _lines(tr, k, 1.7 * dx, lanes)
            h = len(lines) * LINE_H + 0.16
            y = top - h / 2 - 0.1
            rows.append(_Row(k, top, top - h - 0.22, y, y, lines,
                             story.home_lane(tr, st, lanes), None))
        top = rows[-1].bottom
    return rows


def dot_sequence(tr: Mapping[str, Any]) -> pydot.Dot:
    """The message-sequence chart: a lane per actor, a row per step, positions pinned."""
    lanes = story.lane_actors(tr)
    dx = _spacing(tr, lanes)
    rows = _rows(tr, lanes, dx)
    x = {a: i * dx for i, a in enumerate(lanes)}
    bottom = (rows[-1].bottom if rows else -1.0) - 0.45
    # wrapped to the chart's width (about 11 characters an inch at 12 points): a check-log
    # message runs to a few hundred characters, and one line of it overflowed the picture
    cols = max(60, int(((len(lanes) - 1) * dx + 2.2) * 11))
    label = story.title(tr) + "".join(f"\n{line}" for line in story.message_lines(tr, cols))
    g = pydot.Dot("sequence", graph_type="digraph", layout="neato", splines="line",
                  fontname="Helvetica", fontsize="12", label=_q(label), labelloc="t",
                  outputorder="edgesfirst", pad="0.3")
    g.set_node_defaults(fontname="Helvetica", fontsize="9", shape="point", width="0.05",
                        label='""')
    g.set_edge_defaults(fontname="Helvetica", fontsize="9", arrowsize="0.7")

    def at(xx: float, yy: float) -> str:
        return f'"{xx:.2f},{yy:.2f}!"'

    for i, a in enumerate(lanes):
        g.add_node(pydot.Node(f"L{i}_h", label=_q(a), shape="box", style="filled,rounded",
                              fillcolor="#e0e0e0", width="1.1", fontsize="10", pos=at(x[a], 0)))
        g.add_node(pydot.Node(f"L{i}_end", width="0.01", pos=at(x[a], bottom)))
        g.add_edge(pydot.Edge(f"L{i}_h", f"L{i}_end", arrowhead="none", style="dashed",
                              color="#9e9e9e"))
    lid = {a: f"L{i}" for i, a in enumerate(lanes)}
    loop = tr.get("loop_start")
    bad = story.failing_index(tr)
    if loop is not None:
        _frame(g, tr, rows, lanes, x, loop, at)
    for r in rows:
        hot = r.k == bad or (loop is not None and r.k > loop)
        color = RED if hot else "black"
        text = "\\l".join(_esc(s) for s in r.lines) + "\\l"
        ident = {"id": "failing-step", "class": "osf-failing"} if r.k == bad else {}
        if r.dst is None:
            g.add_node(pydot.Node(f"{lid[r.src]}_{r.k}", shape="box", style="filled,rounded",
                                  fillcolor="#fff8e1" if not hot else "#ffebee", color=color,
                                  fontcolor=color, label=f'"{text}"', margin="0.12,0.04",
                                  penwidth="2" if r.k == bad else "1",
                                  pos=at(x[r.src], r.y), **ident))
            continue
        a, b = f"{lid[r.src]}_{r.k}", f"{lid[r.dst]}_{r.k}"
        g.add_node(pydot.Node(a, pos=at(x[r.src], r.y), color=color))
        g.add_node(pydot.Node(b, pos=at(x[r.dst], r.y), color=color))
        g.add_edge(pydot.Edge(a, b, color=color, penwidth="2" if hot else "1.2"))
        g.add_node(pydot.Node(f"{a}_label", shape="box", style="filled", fillcolor="white",
                              color="white", fontcolor=color, label=f'"{text}"',
                              margin="0.04,0.01", pos=at((x[r.src] + x[r.dst]) / 2, r.label_y),
                              **ident))
    return g


def _esc(s: str) -> str:
    """A line of a DOT label: quotes and backslashes escaped (\\l ends a line)."""
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _frame(g: pydot.Dot, tr: Mapping[str, Any], rows: list[_Row], lanes: list[str],
           x: dict[str, float], loop: int, at: Any) -> None:
    """A lasso's cycle: a red frame around its rows and an arrow back to its start; a
    behaviour that stutters forever: a note under its last row."""
    if tr.get("stutters"):
        left = -0.9
        low = min((r.bottom for r in rows), default=0.0)
        note = f"then stutters forever in state {loop}: no fair action moves it"
        g.add_node(pydot.Node("loop_note", shape="box", style="filled", fillcolor="white",
                              color="white", fontcolor=RED, label=_q(note), id="loop",
                              pos=at(left + 0.35 + len(note) * CHAR_W / 2, low - 0.25)))
        return
    cyc = [r for r in rows if r.k > loop]
    if not cyc:
        return
    top, bottom = cyc[0].top + 0.05, cyc[-1].bottom + 0.05
    left, right = -0.9, x[lanes[-1]] + 0.9
    g.add_node(pydot.Node("loop_frame", shape="box", style="dashed,rounded", color=RED,
                          fixedsize="true", width=f"{right - left:.2f}",
                          height=f"{top - bottom:.2f}",
                          pos=at((left + right) / 2, (top + bottom) / 2)))
    n = len(tr["steps"]) - 1
    g.add_node(pydot.Node("loop_up_from", width="0.01", color=RED,
                          pos=at(left + 0.25, bottom + 0.1)))
    g.add_node(pydot.Node("loop_up_to", width="0.01", color=RED, pos=at(left + 0.25, top - 0.1)))
    g.add_edge(pydot.Edge("loop_up_from", "loop_up_to", color=RED, penwidth="2"))
    note = (f"loop: after step {n}, back to the state after step {loop}; "
            f"steps {loop + 1}–{n} repeat forever")
    g.add_node(pydot.Node("loop_note", shape="box", style="filled", fillcolor="white",
                          color="white", fontcolor=RED, label=_q(note), id="loop",
                          pos=at(left + 0.35 + len(note) * CHAR_W / 2, bottom - 0.05)))


def _mm(s: str) -> str:
    """Mermaid text: its separators (; #) and markup (< >) cannot come from a trace."""
    return (s.replace(";", ",").replace("#", "").replace("\n", " ").replace("<", "‹")
            .replace(">", "›"))


def mermaid_sequence(tr: Mapping[str, Any]) -> str:
    """A Mermaid sequence diagram, a participant per lane."""
    ls = story.lane_actors(tr)
    ident = {a: "p" + "".join(c if c.isalnum() else "_" for c in a) for a in ls}
    out = ["sequenceDiagram", f"    title {_mm(story.title(tr))}"]
    out += [f"    participant {ident[a]} as {_mm(a)}" for a in ls]
    loop = tr.get("loop_start")
    bad = story.failing_index(tr)
    steps = tr["steps"]
    for k in range(1, len(steps)):
        step = steps[k]
        if loop is not None and k == loop + 1 and not tr.get("stutters"):
            out.append(f"    loop steps {loop + 1}–{len(steps) - 1} repeat forever")
        label = _mm(f"{k}. {story.step_line(step)}")
        t = step["target"]
        if t and t != step["actor"] and t in ident and step["actor"] in ident:
            out.append(f"    {ident[step['actor']]}->>{ident[t]}: {label}")
            where = ident[t]
        else:
            home = story.home_lane(tr, step, ls)
            where = ident[home]
            who = "" if step["actor"] == home else f"{_mm(step['actor'] or '')}: "
            out.append(f"    Note over {where}: {who}{label}")
        notes = story.changes(tr, k) + (story.verdict_lines(tr) if k == bad else [])
        if notes:
            out.append(f"    Note right of {where}: {_mm(', '.join(notes))}")
    if tr.get("stutters"):
        out.append(f"    Note over {', '.join(ident[a] for a in ls[:2])}: then stutters forever "
                   f"in state {loop}")
    elif loop is not None:
        out.append("    end")
    return "\n".join(out) + "\n"
