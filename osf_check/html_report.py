"""``report.html``: one self-contained page for a run (no server, no network).

It holds the summary, each counterexample with its sequence chart and a step-by-step
view of its states, the plots, and the command, parameters and seed that reproduce the
run.  A trace is input (it travels between people and CI jobs), so nothing from it
reaches the page as markup: text is escaped, a trace's data is JSON that cannot close
its script element, pictures are ``<img>`` data URIs (an SVG shown that way runs no
script), and a Content-Security-Policy lets only the page's own script run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from osf_check.properties.base import undecided
from osf_check.traces import render, story
from osf_check.output import atomic_write

__all__ = ["build", "write", "traces_in"]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;
color:#212121;background:#fafafa}
header{background:#263238;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header .meta{opacity:.85;font-size:13px}main{padding:8px 24px 40px;max-width:1400px}
h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0;background:#fff}
th,td{border:1px solid #e0e0e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eceff1}td.num{text-align:right;font-variant-numeric:tabular-nums}
.bad{color:#c62828;font-weight:600}.ok{color:#2e7d32}.unknown{color:#ef6c00}
pre{background:#fff;border:1px solid #e0e0e0;padding:8px;overflow:auto;white-space:pre-wrap}
figure{margin:10px 0;background:#fff;border:1px solid #e0e0e0;padding:8px;overflow:auto}
figure img{max-width:100%;height:auto}figcaption{font-size:12px;color:#555}
.viewer{display:grid;grid-template-columns:minmax(220px,340px) 1fr;gap:12px;outline:none}
.viewer:focus{box-shadow:0 0 0 2px #90caf9}
.steps{position:relative;margin:0;padding:0;list-style:none;max-height:520px;overflow:auto;background:#fff;
border:1px solid #e0e0e0}
.steps li{padding:3px 8px;cursor:pointer;border-bottom:1px solid #f0f0f0;font-size:13px}
.steps li.current{background:#1565c0;color:#fff}.steps li.failing{border-left:4px solid #c62828}
.steps li.loop{border-left:4px dashed #c62828}
.controls{grid-column:1/3;display:flex;gap:8px;align-items:center}
.controls button{font:inherit;padding:2px 10px}
.state td.changed{background:#fff3e0;font-weight:600}.state tr.reads td:first-child::after{
content:" ◆";color:#c62828}
.hint{color:#666;font-size:12px}
"""

SCRIPT = """
"use strict";
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
function fmt(v) {
  if (Array.isArray(v)) return "[" + v.map(fmt).join(", ") + "]";
  if (v !== null && typeof v === "object" && Array.isArray(v["#set"])) return "{" + v["#set"].map(fmt).join(", ") + "}";
  if (v !== null && typeof v === "object" && Array.isArray(v["#tup"])) return "<<" + v["#tup"].map(fmt).join(", ") + ">>";
  if (v !== null && typeof v === "object") {
    const pairs = Array.isArray(v["#map"]) ? v["#map"] : Object.entries(v);
    return "[" + pairs.map(p => fmt(p[0]) + " |-> " + fmt(p[1])).join(", ") + "]";
  }
  return String(v);
}
function change(a, b) {
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    const d = [];
    a.forEach((x, i) => { if (fmt(x) !== fmt(b[i])) d.push("[" + i + "] " + fmt(x) + " → " + fmt(b[i])); });
    return d.join(", ") + "   (now " + fmt(b) + ")";
  }
  return fmt(a) + " → " + fmt(b);
}
for (const box of document.querySelectorAll(".viewer")) {
  const tr = JSON.parse(document.getElementById(box.dataset.trace).textContent);
  const steps = tr.steps, n = steps.length;
  const reads = new Set((tr.property && tr.property.reads) || []);
  const loop = tr.loop_start;
  const failing = (loop === null && tr.property && n > 1) ? n - 1 : -1;
  const list = box.querySelector(".steps"), body = box.querySelector(".state tbody");
  const pos = box.querySelector(".pos");
  const items = steps.map((s, k) => {
    const who = s.actor ? s.actor + (s.target && s.target !== s.actor ? " → " + s.target : "") : "";
    const li = el("li", k === 0 ? "0. initial state" : k + ". " + s.label + (who ? "  (" + who + ")" : ""));
    if (k === failing) li.classList.add("failing");
    if (loop !== null && k > loop) li.classList.add("loop");
    li.addEventListener("click", () => show(k));
    list.appendChild(li);
    return li;
  });
  let cur = 0;
  // scroll the step list only: scrollIntoView scrolls every scrolling ancestor, the page
  // too, so a report opened at each viewer's failing step far down, not at its summary
  function reveal(li) {
    const top = li.offsetTop, bottom = top + li.offsetHeight;  // (the list is positioned)
    if (top < list.scrollTop) list.scrollTop = top;
    else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight;
  }
  function show(k) {
    cur = Math.max(0, Math.min(n - 1, k));
    items.forEach((li, i) => {
      li.classList.toggle("current", i === cur);
      if (i === cur) li.setAttribute("aria-current", "step");
      else li.removeAttribute("aria-current");
    });
    reveal(items[cur]);
    const s = steps[cur], prev = cur > 0 ? steps[cur - 1] : null;
    body.replaceChildren();
    for (const v of tr.variables) {
      const row = el("tr");
      if (reads.has(v.name)) row.className = "reads";
      const name = el("td", v.name);
      if (v.doc) name.title = v.actor + ": " + v.doc;
      row.appendChild(name);
      const changed = prev !== null && s.changed.includes(v.name);
      row.appendChild(el("td", changed ? change(prev.state[v.name], s.state[v.name])
                                       : fmt(s.state[v.name]), changed ? "changed" : ""));
      body.appendChild(row);
    }
    pos.textContent = "step " + cur + " of " + (n - 1) +
      (cur === failing ? (tr.source !== "check-log" ? ": the property fails here"
                          : tr.property.read === false
                          ? ": line " + tr.property.line + " of the log cannot follow this step"
                          : ": the model and the log part here") : "") +
      (loop !== null && cur > loop ? ": in the cycle" : "") +
      (tr.stutters && cur === n - 1 ? ": then stutters forever (no fair action moves it)" : "");
  }
  box.querySelector(".prev").addEventListener("click", () => show(cur - 1));
  box.querySelector(".next").addEventListener("click", () => show(cur + 1));
  box.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight" || e.key === "j") { show(cur + 1); e.preventDefault(); }
    if (e.key === "ArrowLeft" || e.key === "k") { show(cur - 1); e.preventDefault(); }
  });
  show(failing >= 0 ? failing : 0);
}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its <script> element or open a comment in it."""
    return (json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _img(data: bytes, mime: str, alt: str) -> str:
    return (f'<img alt="{_e(alt)}" src="data:{mime};base64,'
            f'{base64.b64encode(data).decode()}">')


def traces_in(doc: Any) -> list[dict[str, Any]]:
    """Every trace a result document holds (explore, prove, fuzz), in document order,
    each once (explore lists a violation under its model and in the run's summary)."""
    seen: dict[str, dict[str, Any]] = {}

    def walk(x: Any) -> Iterator[dict[str, Any]]:
        if isinstance(x, Mapping):
            if x.get("format") == "osf-check-trace":
                yield dict(x)
                return
            for v in x.values():
                yield from walk(v)
        elif isinstance(x, list):
            for v in x:
                yield from walk(v)

    for tr in walk(doc):
        seen.setdefault(json.dumps(tr, sort_keys=True), tr)
    return list(seen.values())


def _status(s: Any) -> str:
    cls = {"holds": "ok", "proved": "ok", "ok": "ok", "violated": "bad", "fails": "bad",
           "refuted": "bad", "safety": "bad", "liveness": "bad",
           "deadlock": "bad"}.get(str(s), "unknown")
    return f'<td class="{cls}">{_e(s)}</td>'


def _how(p: Mapping[str, Any]) -> str:
    """How a property's prove verdict was reached, and what a proof in part leaves open."""
    parts = [p.get("note") or p.get("method") or ""]
    if p["status"] == "proved in part":
        parts.append(undecided(p["unchecked"]))
    return "; ".join(x for x in parts if x)


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for r in rows:
        cells = []
        for x in r:
            if isinstance(x, str) and x.startswith("<td"):
                cells.append(x)  # already a cell (a status)
            elif isinstance(x, (int, float)) and not isinstance(x, bool):
                cells.append(f'<td class="num">{x:,}</td>' if isinstance(x, int)
                             else f'<td class="num">{x:,.2f}</td>')
            else:
                cells.append(f"<td>{_e(x)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "".join(out) + "</table>"


def _goals(g: Mapping[str, Any] | None) -> str:
    """A fuzz run's goals as the table shows them: reached of all, and those missed.

    >>> _goals({"reached": 1, "total": 2, "each": [{"property": "B8", "goal": "waiters",
    ...         "depth": None, "not_reached": "unreachable"}]})
    '1/2 (not reached: B8 waiters)'
    >>> _goals(None)  # a fuzz.json of a version without goals
    ''
    """
    if not g or not g.get("total"):
        return ""
    missed = [f"{x['property']} {x['goal']}" for x in g["each"] if x["depth"] is None]
    return f"{g['reached']}/{g['total']}" + (f" (not reached: {'; '.join(missed)})"
                                             if missed else "")


def _params(p: Mapping[str, Any] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in (p or {}).items()) or "defaults"


def _summary(doc: Mapping[str, Any]) -> str:
    cmd = doc.get("command")
    if cmd == "explore":
        out = [_table(["model", "mutant", "parameters", "distinct states", "depth", "complete",
                       "verdict"],
                      [[m["model"], m["mutant"] or "", _params(m["params"]), m["distinct_states"],
                        m["depth_reached"], "yes" if m["complete"] else "no",
                        _status(m["verdict"])]
                       for m in doc["models"]])]
        for m in doc["models"]:
            out.append(f"<h3>{_e(m['model'])}: properties</h3>")
            out.append(_table(["id", "name", "kind", "status"],
                              [[p["id"], p["name"], p["kind"], _status(p["status"])]
                               for p in m["properties"]]))
        return "".join(out)
    if cmd == "prove":
        # how each verdict was reached: the note says it (a refutation's search, why
        # unknown, every reachable state), else the method (k-induction)
        return _table(["id", "name", "kind", "status", "k", "how"],
                      [[p["id"], p["name"], p["kind"], _status(p["status"]), p.get("k") or "",
                        _how(p)] for p in doc["properties"]])
    if cmd == "fuzz":
        return _table(["system", "mutant", "tour states", "tour transitions", "goals reached",
                       "hypothesis examples", "failure"],
                      [[r["model"], r.get("mutant") or "", f"{r['tour']['states'][0]:,}/"
                        f"{r['tour']['states'][1]:,}", f"{r['tour']['transitions'][0]:,}/"
                        f"{r['tour']['transitions'][1]:,}", _goals(r.get("goals")),
                        r["hypothesis"]["examples"], r.get("failure") or ""]
                       for r in doc["runs"]])
    if cmd == "timing":
        return _table(["method class", "desktop by (s)", "phone waits (s)", "relay keeps (s)",
                       "B9", "B10"],
                      [[c["name"], c["desktop_last"], c["phone"], c["relay"], _status(c["B9"]),
                        _status(c["B10"])] for c in doc["classes"]])
    if cmd == "simulate":
        return "".join(f"<h3>{_e(t['title'])}</h3>" + _table(t["columns"], t["rows"]) +
                       (f"<p class='hint'>{_e(t['note'])}</p>" if t.get("note") else "")
                       for t in doc["tables"])
    if cmd == "check-log":
        fail = doc.get("failing") or {}
        lim = fail.get("limits") or {}
        why = fail.get("why", []) + ([f"bounds: {lim['verdict']}"] if lim else []) + \
            (["more unlogged steps in a row might explain it (--hidden-depth)"]
             if fail.get("hidden_cut") else [])
        return _table(["model", "log", "lines", "lines/s", "verdict", "first unexplained line",
                       "why", "properties exercised", "witness not shown met"],
                      [[doc["model"], doc["log"], doc["lines"], doc["events_per_second"],
                        doc["verdict"], fail.get("line", ""), "; ".join(why),
                        ", ".join(doc["exercised"]),
                        "; ".join(f"{v['property']} ({v['witness']})"
                                  for v in doc.get("unwitnessed", []))]])
    if cmd == "render":
        return _table(["model", "mutant", "parameters", "property", "steps", "source"],
                      [[t["model"], t.get("mutant") or "", _params(t["params"]),
                        story.title(t).split(": ", 1)[-1] if t.get("property") else "",
                        len(t["steps"]) - 1, t["source"]] for t in traces_in(doc)])
    return f"<pre>{_e(json.dumps(doc, indent=2, ensure_ascii=False))}</pre>"


def _trace_section(k: int, tr: Mapping[str, Any], svg: bytes | None) -> str:
    p = tr.get("property") or {}
    head = story.named(p) if p else "trace"
    parts = [f'<section class="violation" id="violation-{k}">',
             f"<h3>{_e(head)} <span class='hint'>({_e(tr['model'])}"
             f"{', mutant ' + _e(tr['mutant']) if tr.get('mutant') else ''}; "
             f"{render.n_steps(len(tr['steps']) - 1)})</span></h3>"]
    if tr.get("message"):
        parts.append(f"<p>{'<br>'.join(_e(m) for m in story.message_parts(tr))}</p>")
    if tr.get("stutters"):
        parts.append(f"<p>The behaviour then stutters forever in state {tr['loop_start']}: "
                     "no fair action moves it.</p>")
    if story.reads(tr):
        parts.append(f"<p class='hint'>The property reads: {_e(', '.join(story.reads(tr)))} "
                     "(marked ◆ below).</p>")
    parts.append(
        f'<div class="viewer" tabindex="0" data-trace="trace-{k}" '
        f'aria-label="step-by-step view of {_e(head)}">'
        '<div class="controls"><button class="prev" type="button">← previous</button>'
        '<button class="next" type="button">next →</button><span class="pos"></span>'
        '<span class="hint">(← → or k j keys; click a step)</span></div>'
        '<ol class="steps"></ol>'
        '<table class="state"><thead><tr><th>variable</th><th>value</th></tr></thead>'
        '<tbody></tbody></table></div>')
    if svg is not None:
        parts.append(f"<figure>{_img(svg, 'image/svg+xml', 'sequence chart of ' + head)}"
                     "<figcaption>sequence chart: the failing step in red</figcaption></figure>")
    parts.append(f"<details><summary>Mermaid text</summary><pre>"
                 f"{_e(render.mermaid_sequence(tr))}</pre></details>")
    parts.append(f'<script type="application/json" id="trace-{k}">{_json_for_script(tr)}'
                 "</script></section>")
    return "".join(parts)


def build(doc: Mapping[str, Any], *, repro: str, images: Sequence[tuple[str, bytes]] = (),
          version: str = "") -> str:
    """The page for result document ``doc``; ``images`` are (caption, SVG) plots."""
    traces = list(traces_in(doc))
    sections = []
    for k, tr in enumerate(traces):
        try:
            svg = render.render_dot(render.dot_sequence(tr).to_string(), "svg")
        except render.RenderError:
            svg = None  # the step view and the Mermaid text still tell the story
        sections.append(_trace_section(k, tr, svg))
    result = doc.get("result") or doc.get("verdict") or \
        ("ok" if doc.get("exit_code") == 0 else f"exit {doc.get('exit_code')}")
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    csp = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           f"script-src 'sha256-{script_hash}'")
    body = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        f"<title>osf-check {_e(doc.get('command', ''))}: {_e(result)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<header><h1>osf-check {_e(doc.get('command', ''))}: {_e(result)}</h1>"
        f"<div class='meta'>exit code {_e(doc.get('exit_code'))}"
        f"{' · seed ' + _e(doc['seed']) if doc.get('seed') is not None else ''}"
        f"{' · osf-check ' + _e(version) if version else ''}</div></header><main>",
        "<h2>Reproduce</h2>",
        f"<pre id='repro'>{_e(repro)}</pre>",
        "<h2>Summary</h2>", _summary(doc),
    ]
    if traces:
        head = "The log up to its first unexplained line" if doc.get("command") == "check-log" \
            else f"Counterexamples ({len(traces)})"
        body += [f"<h2>{head}</h2>", *sections]
    if images:
        body.append("<h2>Plots</h2>")
        body += [f"<figure>{_img(data, 'image/svg+xml', cap)}<figcaption>{_e(cap)}"
                 "</figcaption></figure>" for cap, data in images]
    body.append(f"</main><script>{SCRIPT}</script></body></html>\n")
    return "".join(body)


def write(out: Path, doc: Mapping[str, Any], *, repro: str, version: str = "",
          plots: Sequence[Path] = ()) -> Path:
    """Write ``out/report.html``; ``plots`` are the run's SVG plots, captioned by name."""
    images = [(p.stem.replace("-", " "), p.read_bytes()) for p in plots if p.suffix == ".svg"]
    path = out / "report.html"
    atomic_write(path, build(doc, repro=repro, images=images, version=version))
    return path
