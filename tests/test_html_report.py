"""report.html: one self-contained page per run, tested in a real headless Chromium.

A trace is input: a trace whose labels, names and messages hold markup and script must
show them as text, run nothing and break nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.cli import main

ROOT = Path(__file__).resolve().parents[1]
A3 = ROOT / "docs/img/a3-complete-overwrites-cancel.trace.json"
HOSTILE = '<script>alert("label")</script><img src=x onerror="alert(1)">'


def _chromium() -> str | None:
    exe = os.environ.get("OSF_CHROMIUM") or shutil.which("chromium") or \
        shutil.which("chromium-browser")
    return exe if exe and Path(exe).exists() else None


@pytest.fixture(scope="module")
def page():
    """A headless Chromium page (Debian's chromium driven by Playwright).  CI installs
    both (.ci/run), so there a missing browser is a failure, not a skip."""
    exe = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        exe = None
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the report in a browser: install chromium and "
                        "pip install '.[browser]' (.ci/run does)")
        pytest.skip("no chromium or playwright here (pip install '.[browser]', apt install chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        pg = browser.new_page(viewport={"width": 1300, "height": 1000})
        yield pg
        browser.close()


def _open(page, path: Path) -> dict:
    """Load ``path``; what the page said on its console, the dialogs it opened, the
    requests it made."""
    seen: dict = {"console": [], "dialogs": [], "requests": []}
    page.on("console", lambda m: seen["console"].append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: seen["console"].append(f"pageerror: {e}"))
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return seen


def _hostile_trace(tmp_path: Path) -> Path:
    tr = json.loads(A3.read_text())
    tr["steps"][2]["label"] = HOSTILE
    tr["property"]["name"] = "</script><b id='injected'>bold</b>"
    tr["message"] = '"><svg onload="alert(2)"><!--'
    tr["variables"][0]["doc"] = "<i>doc</i>"
    tr["steps"][3]["outputs"] = {"out<u>": "]]></text><script>alert(3)</script>"}
    f = tmp_path / "hostile.trace.json"
    f.write_text(json.dumps(tr))
    return f


def test_explore_writes_a_self_contained_report(tmp_path):
    res = CliRunner().invoke(main, ["explore", "--mutant", "complete-overwrites-cancel",
                                    "--out", str(tmp_path)])
    assert res.exit_code == 12
    page = (tmp_path / "report.html").read_text()
    assert "osf-check explore --mutant complete-overwrites-cancel --seed 0" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//|url\(\s*["']?https?:|@import""", page)
    assert "A3 terminal-is-final" in page and page.count('class="viewer"') == 1
    assert "states per depth graph relay complete overwrites cancel" in page  # the plot
    assert page.count("<figure>") == 2  # the chart and the plot (no trace picture twice)


@pytest.mark.parametrize("command", ["explore", "prove"])
def test_the_reproduce_line_repeats_the_run(tmp_path, command):
    """The line named the models a --model-file loaded (``--model-file diehard``), not
    the file: run, it was an error."""
    import html
    import shlex
    import subprocess
    import sys
    model = tmp_path / "my jugs.py"  # (a space: the line quotes it)
    model.write_text((ROOT / "examples" / "diehard.py").read_text())
    args = [command, "--model-file", str(model), "--continue", "--out", str(tmp_path / "o")]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 12, first.output
    page = (tmp_path / "o" / "report.html").read_text()
    line = html.unescape(re.search(r"<pre id='repro'>([^<]*)</pre>", page).group(1))
    argv = shlex.split(line)
    assert argv[:4] == ["osf-check", command, "--model-file", str(model)], argv
    again = subprocess.run([sys.executable, "-m", "osf_check.cli", *argv[1:], "--json"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 12, again.stderr
    want = json.loads((tmp_path / "o" / f"{'result' if command == 'explore' else command}"
                       ".json").read_text())
    got = json.loads(again.stdout)
    keys = ("states", "exit_code") if command == "explore" else ("exit_code",)
    assert [got[k] for k in keys] == [want[k] for k in keys]


def test_hostile_strings_are_escaped_everywhere(tmp_path):
    f = _hostile_trace(tmp_path)
    out = tmp_path / "r.html"
    res = CliRunner().invoke(main, ["render", str(f), "--format", "html", "-o", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text()
    assert "<script>alert" not in html and "<b id='injected'>" not in html
    assert "<svg onload" not in html and "<i>doc</i>" not in html
    # the page's own two scripts only: the trace's JSON and the viewer
    assert len(re.findall(r"<script\b", html)) == 2
    mermaid = re.search(r"<pre>(sequenceDiagram.*?)</pre>", html, re.S).group(1)
    assert "<" not in mermaid  # Mermaid text escaped too


@pytest.mark.slow
def test_the_report_loads_without_errors_and_steps_through_a_trace(page, tmp_path):
    res = CliRunner().invoke(main, ["explore", "--mutant", "complete-overwrites-cancel",
                                    "--out", str(tmp_path)])
    assert res.exit_code == 12
    seen = _open(page, tmp_path / "report.html")
    assert seen["console"] == [] and seen["dialogs"] == []
    assert all(u.startswith(("file:", "data:")) for u in seen["requests"]), seen["requests"]
    current = page.locator(".steps li.current")
    assert current.inner_text().startswith("8. graph_finish")  # opens on the failing step
    assert page.locator(".steps li.failing").count() == 1
    page.locator(".viewer").focus()
    page.keyboard.press("ArrowLeft")
    assert current.inner_text().startswith("7. control_poll")
    assert page.locator(".state td.changed").count() == 2  # outcome and exec change at 7
    page.locator(".viewer .next").click()
    assert current.inner_text().startswith("8. ")
    page.locator(".steps li").nth(6).click()
    assert current.inner_text().startswith("6. cancel_graph_run")
    assert page.locator(".pos").inner_text() == "step 6 of 8"
    assert page.locator("img[alt^='sequence chart']").evaluate("i => i.naturalWidth") > 300


def test_a_check_log_report_says_whether_the_red_step_is_the_models_version_of_the_line(
        page, tmp_path):
    """A log line the model has no version of at all ends the trace on the step that
    explains the line before; the page said of it "the model and the log part here"."""
    flaps = "".join(json.dumps({"time": t + 1.0, "station": "relay", "event": ev,
                                "fields": {}}) + "\n"
                    for t, ev in enumerate(["relay.desktop_disconnected",
                                            "relay.desktop_connected"] * 2))
    log = tmp_path / "flaps.jsonl"
    log.write_text(flaps)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["check-log", str(log), "--mapping",
                                    str(ROOT / "examples/wire-relay.logmap.toml"),
                                    "--out", str(out)])
    assert res.exit_code == 152, res.output
    seen = _open(page, out / "report.html")
    assert seen["console"] == [], seen
    assert page.locator(".pos").inner_text() == \
        "step 3 of 3: line 4 of the log cannot follow this step"
    # a line the model reads otherwise: its version is the red step
    tr = json.loads((out / "wire-relay-log.trace.json").read_text())
    tr["property"]["read"] = True
    f = tmp_path / "read.trace.json"
    f.write_text(json.dumps(tr))
    page_file = tmp_path / "read.html"
    assert CliRunner().invoke(main, ["render", str(f), "--format", "html", "-o",
                                     str(page_file)]).exit_code == 0
    _open(page, page_file)
    assert page.locator(".pos").inner_text() == "step 3 of 3: the model and the log part here"


def test_a_hostile_trace_runs_nothing_and_shows_its_text(page, tmp_path):
    f = _hostile_trace(tmp_path)
    out = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["render", str(f), "--format", "html", "-o",
                                     str(out)]).exit_code == 0
    seen = _open(page, out)
    assert seen["dialogs"] == [] and seen["console"] == [], seen
    assert page.locator("#injected").count() == 0 and page.locator("img[src='x']").count() == 0
    page.locator(".steps li").nth(2).click()
    assert HOSTILE in page.locator(".steps li.current").inner_text()
    assert "</script><b id='injected'>bold</b>" in page.locator("h3").first.inner_text()


def test_hostile_strings_stay_text_in_the_pictures_and_mermaid_files(tmp_path):
    from osf_check.traces import render
    from osf_check.traces.format import load_trace
    tr = load_trace(_hostile_trace(tmp_path))
    for view in (render.dot_sequence, render.dot_graph):
        svg = render.render_dot(view(tr).to_string(), "svg").decode()
        assert "<script" not in svg and "<img" not in svg and "<b " not in svg
        assert "&lt;script&gt;alert(&quot;label&quot;)" in svg or \
            "&lt;script&gt;alert(\"label\")" in svg  # shown, as text
    for mm in (render.mermaid_sequence(tr), render.mermaid_graph(tr)):
        assert "<script" not in mm and "<img" not in mm and "<svg" not in mm


def test_a_prove_report_colours_each_verdict_by_what_it_settles(tmp_path):
    """A refutation was drawn in the colour of "unknown" (the map of classes lacked
    "refuted"); "proved in part" is not a proof of the whole property and says what it
    leaves to explore."""
    from osf_check.html_report import build
    prop = {"id": "X", "name": "x", "kind": "inv", "k": None, "method": None, "note": None,
            "unchecked": []}
    doc = {"command": "prove", "properties": [
        {**prop, "id": "P1", "status": "proved", "method": "k-induction", "k": 1},
        {**prop, "id": "P2", "status": "refuted", "k": 3},
        {**prop, "id": "P3", "kind": "inv + reach + fair", "status": "proved in part",
         "method": "k-induction", "k": 1, "unchecked": ["reach", "fair"]},
        {**prop, "id": "P4", "status": "unknown", "note": "induction failed"}]}
    page = build(doc, repro="osf-check prove")
    cells = dict(re.findall(r'<td>(P\d)</td>.*?<td class="(\w+)">', page, re.S))
    assert cells == {"P1": "ok", "P2": "bad", "P3": "unknown", "P4": "unknown"}, cells
    assert "k-induction; its reach and fair checks are explore&#x27;s: not checked here" \
        in page


def test_the_report_opens_at_its_summary_with_the_top_band_drawn(page, tmp_path):
    """Each step viewer showed its failing step with scrollIntoView, which scrolls the page
    too: the report opened far below its summary, and a headless screenshot of it had a
    blank band at the top (the page was scrolled away from what was painted)."""
    import io

    from PIL import Image
    res = CliRunner().invoke(main, ["explore", "--mutant", "outbox-off", "--out", str(tmp_path)])
    assert res.exit_code == 12
    _open(page, tmp_path / "report.html")
    assert page.evaluate("window.scrollY") == 0
    band = Image.open(io.BytesIO(page.screenshot(clip={"x": 0, "y": 0, "width": 1300,
                                                        "height": 60}))).convert("RGB")
    dark = sum(1 for r, g, b in band.getdata() if r + g + b < 200)  # the header's slate
    assert dark > 0.5 * band.width * band.height, dark
    # the step list (not the page) still scrolls to the failing step when it must
    box = page.locator(".steps").evaluate(
        "l => { const c = l.querySelector('li.current');"
        " return [c.offsetTop, c.offsetHeight, l.scrollTop, l.clientHeight]; }")
    top, height, scrolled, shown = box
    assert scrolled <= top and top + height <= scrolled + shown, box
