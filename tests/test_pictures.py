"""Counterexample pictures tell the story: the failing step in red with its property
and what it reads, the decisive change never folded away, local steps on their own
lifeline, no lane for the clock, a legend and columns in the state graph, and a
lasso's cycle drawn as a loop."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from functools import lru_cache

import pytest

from osf_check import Checker
from osf_check.traces import render, story

SVG = "{http://www.w3.org/2000/svg}"


@lru_cache(maxsize=None)
def _trace(mutant: str, prop: str | None = None, **params: int) -> dict:
    c = Checker("wire-relay" if mutant == "no-generation-check" else "graph-relay")
    c = c.mutant(mutant).params(**params)
    if prop:
        c = c.properties(prop).keep_going(True)
    traces = c.explore().traces
    return next(t for t in traces if prop is None or t["property"]["kind"] == "fair")


def _svg(tr: dict, view: str = "sequence") -> str:
    dot = (render.dot_sequence(tr) if view == "sequence" else render.dot_graph(tr)).to_string()
    return render.render_dot(dot, "svg").decode()


def _failing_text(svg: str) -> str:
    root = ET.fromstring(svg)
    [g] = [g for g in root.iter(f"{SVG}g") if g.get("id") == "failing-step"]
    return " ".join(t.text or "" for t in g.iter(f"{SVG}text"))  # wrapped lines joined


def test_a10_the_failing_step_is_red_and_shows_the_change_that_breaks_it():
    tr = _trace("queue-on-desktop")
    assert tr["property"]["reads"] == ["status", "qcancel", "online"]
    svg = _svg(tr)
    text = _failing_text(svg)
    assert "lost: [0] false→true" in text  # was folded into "+2 more"
    assert "more" not in text
    assert "A10 offline-work-survives fails here" in text
    assert "it reads status = [queued], qcancel = [false], online = false" in text
    assert 'fill="#c62828"' in svg  # the red of the failing step


def test_b1_shows_the_generations_the_story_turns_on():
    tr = _trace("no-generation-check")
    assert set(tr["property"]["reads"]) == {"pgen", "rgen"}
    svg = _svg(tr)
    assert "gen: 0 → 1" in svg            # the reconnect
    assert "pgen: [0] 0→1" in svg          # the retry's entry belongs to generation 1
    assert "it reads pgen = [1, 0], rgen = [[0, 0], [0, 0]]" in _failing_text(svg)


def test_the_property_s_variables_are_never_folded_away():
    tr = _trace("no-generation-check")
    k = next(s["index"] for s in tr["steps"] if "pgen" in s["changed"])
    lines = story.changes(tr, k)
    assert lines[0].startswith("pgen:") and lines[-1].startswith("+")  # others still fold
    tr2 = dict(tr, property=dict(tr["property"], reads=[]))
    assert not any(x.startswith("pgen:") for x in story.changes(tr2, k))  # folded without


def _x(g, node: str) -> float:
    [n] = g.get_node(node)
    return float(n.get("pos").strip('"').split(",")[0])


def test_local_steps_sit_on_their_actor_s_lifeline_and_the_clock_gets_none():
    a3 = _trace("complete-overwrites-cancel")
    lanes = story.lane_actors(a3)
    d = lanes.index("desktop")
    g = render.dot_sequence(a3)
    k = next(s["index"] for s in a3["steps"] if s["action"] == "start_graph")
    assert _x(g, f"L{d}_{k}") == _x(g, f"L{d}_h")
    b1 = _trace("no-generation-check")
    assert "clock" not in story.lane_actors(b1)
    g = render.dot_sequence(b1)
    k = next(s["index"] for s in b1["steps"] if s["action"] == "slot_timeout")
    d = story.lane_actors(b1).index("desktop")
    assert _x(g, f"L{d}_{k}") == _x(g, f"L{d}_h")  # on the desktop's lifeline
    assert "clock: slot_timeout" in g.to_string()


@pytest.mark.parametrize("mutant", ["complete-overwrites-cancel", "no-generation-check",
                                    "queue-on-desktop"])
def test_labels_are_inside_the_picture_and_lifelines_do_not_cross_them(mutant):
    tr = _trace(mutant)
    dot = render.dot_sequence(tr).to_string()
    assert "outputorder=edgesfirst" in dot  # lifelines first, white label boxes over them
    labels = re.findall(r"_label \[([^\]]*)\]", dot)
    assert labels and all('fillcolor=white' in x for x in labels)
    root = ET.fromstring(_svg(tr))
    w, h = (float(v) for v in root.get("viewBox").split()[2:])
    xs = [float(t.get("x")) for t in root.iter(f"{SVG}text")]
    assert min(xs) >= 0 and max(xs) <= w  # nothing cut at either edge


@pytest.mark.slow
def test_the_state_graph_has_a_legend_and_wraps_into_columns():
    tr = _trace("outbox-off", "A2", intents=1)
    assert len(tr["steps"]) > render.ROWS_PER_COLUMN
    svg = _svg(tr, "graph")
    assert "the desktop reaches the server" in svg  # online's meaning, from the model
    root = ET.fromstring(svg)
    w, h = (float(v) for v in root.get("viewBox").split()[2:])
    assert h < 1.5 * w, (w, h)  # columns, not a strip
    one_column = render.render_dot(render.dot_graph(tr, rows=100).to_string(), "svg").decode()
    w1, h1 = (float(v) for v in ET.fromstring(one_column).get("viewBox").split()[2:])
    assert h1 > 2 * w1  # the measure can come out worse


def test_a_lasso_is_drawn_as_a_loop():
    tr = _trace("outbox-off", "A2", intents=1)
    assert tr["loop_start"] is not None
    dot = render.dot_sequence(tr).to_string()
    assert "loop_frame" in dot and "loop_up_from -> loop_up_to" in dot
    svg = _svg(tr)
    n = len(tr["steps"]) - 1
    assert (f"back to the state after step {tr['loop_start']}; steps "
            f"{tr['loop_start'] + 1}–{n} repeat forever") in svg
    mm = render.mermaid_sequence(tr)
    assert f"loop steps {tr['loop_start'] + 1}–{n} repeat forever" in mm


def test_an_svg_names_fonts_of_the_widths_its_boxes_were_sized_for():
    """Graphviz sizes boxes for Helvetica; the SVG said "Helvetica,sans-Serif", and a
    viewer without Helvetica (Chromium on Linux: DejaVu Sans) drew the text past the
    boxes.  Every text now names fonts of Helvetica's widths, then a narrow fallback."""
    tr = _trace("no-generation-check")
    for view in ("sequence", "graph"):
        root = ET.fromstring(_svg(tr, view))
        fonts = {t.get("font-family") for t in root.iter(f"{SVG}text")}
        assert fonts == {"Helvetica,Arial,Arimo,Liberation Sans,DejaVu Sans Condensed,"
                         "sans-serif"}, (view, fonts)


def _node_text_at(svg: str) -> dict[str, tuple[float, float]]:
    """Where each state's first line of text is drawn: ``s3 -> (x, y)``."""
    root = ET.fromstring(svg)
    out = {}
    for g in root.iter(f"{SVG}g"):
        title = g.find(f"{SVG}title")
        text = g.find(f"{SVG}text")
        if title is not None and re.fullmatch(r"s\d+", title.text or "") and text is not None:
            out[title.text] = (float(text.get("x")), float(text.get("y")))
    return out


@pytest.mark.parametrize("mutant,prop,params", [
    ("complete-overwrites-cancel", None, {}),  # 8 steps: was wrapped, its last alone on top
    ("outbox-off", "A2", {"intents": 1})])  # a lasso long enough for two columns
def test_the_state_graph_reads_top_to_bottom_with_the_last_step_last(mutant, prop, params):
    """With columns of 8, an 8-step trace's last state, the failing one, climbed back to
    the top of a column of its own, its edge's label crossed by the edge."""
    tr = _trace(mutant, prop, **params)
    n = len(tr["steps"]) - 1
    at = _node_text_at(_svg(tr, "graph"))
    (x0, y0), (x1, y1) = at[f"s{n - 1}"], at[f"s{n}"]
    # (x is where a box's left-justified text starts: boxes of a column differ by a little)
    assert y1 > y0 and abs(x1 - x0) < 120, (at[f"s{n - 1}"], at[f"s{n}"])  # right below it
    column = [at[f"s{k}"][1] for k in range(n + 1) if abs(at[f"s{k}"][0] - x1) < 120]
    assert y1 == max(column)  # the foot of its column
    dot = render.dot_graph(tr).to_string()
    jumps = [e for e in re.findall(r"s\d+ -> s\d+ \[[^\]]*\]", dot)
             if "constraint=false" in e and "style=dashed" in e]
    assert all("label" not in j for j in jumps), jumps  # nothing for the edge to cross


def test_a_lasso_chart_says_which_goal_never_holds():
    """It said "the goal never holds" of "run 0", never what the goal is."""
    tr = _trace("outbox-off", "A2", intents=1)
    goal = "the goal: status[0] in {completed, failed, cancelled}"
    assert goal in tr["message"]
    for view in ("sequence", "graph"):
        assert goal.replace("{", "").replace("}", "") in \
            " ".join(re.sub(r"<[^>]+>", " ", _svg(tr, view)).split()).replace("{", "") \
            .replace("}", ""), view


A10_GOAL = ("the goal: status[0] = completed or status[0] = failed or (status[0] = cancelled "
            "and not (qcancel[0]))")


def _words(svg: str) -> str:
    """The picture's text, its wrapped lines joined."""
    import html
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", svg)).split())


def test_a_reach_counterexample_says_which_goal_it_never_reaches(tmp_path):
    """A lasso named its goal; a reach counterexample said "run 0" and "the goal", never
    what the goal is, in its text, its JSON, its report and its pictures alike."""
    import html
    import json

    from click.testing import CliRunner

    from osf_check.cli import main
    text = CliRunner().invoke(main, ["explore", "--mutant", "queue-on-desktop", "--out",
                                     str(tmp_path)]).stdout
    assert "A10 offline-work-survives [reach]" in text and f"\n  {A10_GOAL}\n" in text
    assert f"<br>{html.escape(A10_GOAL)}</p>" in (tmp_path / "report.html").read_text()
    r = CliRunner().invoke(main, ["explore", "--mutant", "queue-on-desktop", "--json"])
    [v] = json.loads(r.stdout)["violations"]
    assert v["property"] == "A10" and v["kind"] == "reach"
    assert v["message"].startswith("run 0: ") and A10_GOAL in v["message"]
    for view in ("sequence", "graph"):
        title = _words((tmp_path / f"graph-relay-queue-on-desktop-A10-reach.{view}.svg")
                       .read_text())
        assert "A10 offline-work-survives [reach]" in title and A10_GOAL in title, view


def test_the_state_graph_wraps_a_long_message_in_its_title():
    """The goal's text made the title one line wider than the picture itself."""
    tr = _trace("queue-on-desktop")
    label = render.dot_graph(tr).get_label().strip('"')
    title, *message = label.split("\n")
    assert title == story.title(tr) and len(message) > 1
    assert all(len(line) <= render.TITLE_WIDTH for line in message), message
    goal = next(k for k, line in enumerate(message) if line.startswith("the goal: "))
    assert " ".join(message[goal:]) == A10_GOAL  # the goal on lines of its own
    assert " ".join(message[:goal]) == tr["message"].split("; the goal: ")[0]


def test_a_deadlock_is_named_once():
    """Its property's id and name are both "deadlock": "dl: deadlock deadlock [deadlock]"
    and "× deadlock deadlock fails here", in the text and in every picture's title."""
    tr = {"model": "dl", "mutant": None, "steps": [{"state": {}}, {"state": {}}],
          "property": {"id": "deadlock", "name": "deadlock", "kind": "deadlock"}}
    assert story.title(tr) == "dl: deadlock [deadlock]"
    assert story.verdict_lines(tr) == ["× deadlock fails here"]
