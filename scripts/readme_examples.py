"""The console examples of the README and of the pages in ``docs/``, produced by running
them.

    python scripts/readme_examples.py          # check: exit 1 and a diff where one is stale
    python scripts/readme_examples.py --write  # run every example and write its output back,
                                               # and draw the pictures again
    python scripts/readme_examples.py docs/models.md   # the examples of these pages only

A console example is a fenced ``console`` block whose first line is ``$ command``; the
rest of the block is what the command prints (a pipe through ``grep`` or ``sed`` may
abridge it: the reader sees that in the command).  Commands run with bash in a fresh
temporary directory that holds links to ``examples/`` and ``benchmarks/``, so an ``--out`` directory is
not left in the clone.  Timings (``0.34 s``, ``42,648 distinct states/s``) differ from
run to run and machine to machine: they are compared as placeholders.  A command that
two pages show is run once.

The pages' counterexample pictures (:data:`PICTURES`) are drawn by commands too; each
is committed with its trace, and the check compares the committed trace's steps with a
fresh run's (the SVG's bytes depend on the Graphviz renderer found).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def pages() -> list[Path]:
    """The README and every page of the documentation, in that order."""
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```console\n\$ (?P<cmd>[^\n]+)\n(?P<out>.*?)^```$", re.M | re.S)
TIMING = re.compile(r"\b\d[\d,]*(?:\.\d+)? (s\b|distinct states/s|lines/s|examples/s)")


#: docs/img/<stem>.sequence.svg and .trace.json: the command that draws it, and the stem
#: of the files it writes into out/
PICTURES = {
    "a3-complete-overwrites-cancel": (
        "osf-check explore --depth 12 --mutant complete-overwrites-cancel --out out/",
        "graph-relay-complete-overwrites-cancel-A3-trans"),
    "b1-no-generation-check": (
        "osf-check explore --mutant no-generation-check --out out/",
        "wire-relay-no-generation-check-B1-trans"),
    "a10-queue-on-desktop": (
        "osf-check explore --mutant queue-on-desktop --out out/",
        "graph-relay-queue-on-desktop-A10-reach"),
    "a2-outbox-off-fair": (
        "osf-check explore --mutant outbox-off --param intents=1 --property A2 --continue "
        "--out out/", "graph-relay-outbox-off-A2-fair"),
    "a8-node-measure-bytes": (
        "cp -r examples/node-graph-relay bug && (cd bug && git apply bugs/measure-bytes.patch)"
        " && osf-check fuzz --model graph-relay --impl 'node bug/adapter.mjs' --examples 0 "
        "--out out/", "graph-relay-fuzz"),
    "diehard-D2-inv": (
        "osf-check explore --model-file examples/diehard.py --depth unbounded --out out/",
        "diehard-D2-inv"),
}

#: other pictures the pages show: docs/img/<name> <- out/<file> of the command
FILES = {
    "timing-B10-outbox-submit-ios.png": (
        "osf-check timing --set lease=30 --out out/", "timing-B10-outbox-submit-ios.png"),
    "poll-strategies.png": ("osf-check simulate --out out/", "poll-strategies.png"),
}

#: the report screenshot: docs/img/report.png is report.html of this command, in Chromium
SCREENSHOT = "osf-check explore --mutant complete-overwrites-cancel --out out/"


def normal(text: str) -> str:
    """The text with every timing replaced by a placeholder."""
    return TIMING.sub(r"<n> \1", text)


def run(cmd: str, keep: dict[str, bytes] | None = None) -> str:
    """What ``cmd`` prints on stdout, run as the pages' reader would; ``keep`` receives
    the files it wrote into out/ (name -> bytes)."""
    with tempfile.TemporaryDirectory(prefix="osf-readme-") as tmp:
        for shown in ("examples", "benchmarks"):  # what the pages' commands name
            os.symlink(ROOT / shown, Path(tmp) / shown)
        bindir = str(Path(sys.executable).parent)
        env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
        r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp, env=env,
                           capture_output=True, text=True)
        if keep is not None and (Path(tmp) / "out").is_dir():
            keep.update({f.name: f.read_bytes() for f in (Path(tmp) / "out").iterdir()})
    if r.returncode not in (0, 12, 13, 14, 152):  # a documented verdict (152: unknown) is
        # fine; a crash is not
        raise RuntimeError(f"`{cmd}` exited {r.returncode}: {r.stderr.strip()[-500:]}")
    return r.stdout


def examples(text: str) -> list[re.Match[str]]:
    return list(BLOCK.finditer(text))


def _steps(trace: bytes) -> list[str]:
    return [f"{s['actor']}|{s['label']}|{sorted(s['changed'])}"
            for s in json.loads(trace)["steps"]]


def pictures(write: bool) -> int:
    """Draw (``write``) or check each picture; returns how many are stale."""
    stale = 0
    img = ROOT / "docs" / "img"
    for name, (cmd, stem) in PICTURES.items():
        files: dict[str, bytes] = {}
        run(cmd, files)
        trace, svg = files[f"{stem}.trace.json"], files.get(f"{stem}.sequence.svg")
        committed = img / f"{name}.trace.json"
        if not committed.exists() or _steps(committed.read_bytes()) != _steps(trace):
            stale += 1
            print(f"readme_examples: docs/img/{name} is not what `{cmd}` draws now",
                  file=sys.stderr)
        if write:
            if svg is None:
                raise RuntimeError(f"`{cmd}` drew no SVG (is a Graphviz renderer there?)")
            from osf_check.traces import render
            (img / f"{name}.trace.json").write_bytes(trace)
            (img / f"{name}.sequence.svg").write_bytes(svg)
            dot = render.dot_sequence(json.loads(trace)).to_string()
            (img / f"{name}.sequence.png").write_bytes(render.render_dot(dot, "png"))
    for name, (cmd, produced) in FILES.items():
        if not (img / name).exists():
            stale += 1
            print(f"readme_examples: docs/img/{name} is missing", file=sys.stderr)
        if write:
            files = {}
            run(cmd, files)
            (img / name).write_bytes(files[produced])
    if write:
        screenshot(img / "report.png")
    elif not (img / "report.png").exists():
        stale += 1
        print("readme_examples: docs/img/report.png is missing", file=sys.stderr)
    return stale


def screenshot(path: Path) -> None:
    """The report of :data:`SCREENSHOT` in headless Chromium, stepped back one step from
    the failing one, so the picture shows a highlighted change."""
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory(prefix="osf-shot-") as tmp:
        subprocess.run(["bash", "-c", SCREENSHOT], cwd=tmp, capture_output=True,
                       env={**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep
                            + os.environ.get("PATH", "")})
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=os.environ.get("OSF_CHROMIUM",
                                                                  "/usr/bin/chromium"),
                                   args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                                         "--disable-background-networking", "--disable-sync",
                                         "--disable-component-update"])
            page = b.new_page(viewport={"width": 1280, "height": 900})
            page.goto((Path(tmp) / "out" / "report.html").as_uri())
            page.locator(".viewer").focus()
            page.keyboard.press("ArrowLeft")
            page.evaluate("document.querySelector('#violation-0').scrollIntoView({block: 'start'})")
            page.screenshot(path=str(path))
            b.close()


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


def check_page(page: Path, write: bool, fresh: dict[str, str]) -> tuple[int, int]:
    """Run (or take from ``fresh``, the outputs of commands run already) each console
    example of ``page``; print a diff for each stale one and, with ``write``, write the
    page back with the fresh outputs.  Returns (examples, stale)."""
    text = page.read_text(encoding="utf-8")
    found = examples(text)
    stale = 0
    pieces, last = [], 0
    for m in found:
        if m["cmd"] not in fresh:
            fresh[m["cmd"]] = run(m["cmd"])
        out = fresh[m["cmd"]]
        pieces += [text[last:m.start("out")], out]
        last = m.end("out")
        if normal(out) != normal(m["out"]):
            stale += 1
            diff = difflib.unified_diff(m["out"].splitlines(), out.splitlines(),
                                        _name(page), f"$ {m['cmd']}", lineterm="", n=1)
            print("\n".join(diff), file=sys.stderr)
    if write and found:
        page.write_text("".join(pieces) + text[last:], encoding="utf-8")
    return len(found), stale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write fresh outputs into the pages")
    ap.add_argument("page", nargs="*", type=Path,
                    help="check these pages only, not the pictures (default: every page)")
    args = ap.parse_args(argv)
    chosen = [p.resolve() for p in args.page] or pages()
    fresh: dict[str, str] = {}
    n = stale = 0
    for page in chosen:
        found, old = check_page(page, args.write, fresh)
        n, stale = n + found, stale + old
    if not n:
        print("readme_examples: no console example in " + ", ".join(map(_name, chosen)),
              file=sys.stderr)
        return 1
    drawn = 0 if args.page else pictures(args.write)
    drawing = "" if args.page else f", {len(PICTURES)} pictures"
    if args.write:
        print(f"readme_examples: {n} examples{drawing} written in {len(chosen)} pages "
              f"({stale + drawn} had changed)")
        return 0
    print(f"readme_examples: {n} examples{drawing} in {len(chosen)} pages, "
          f"{stale + drawn} stale"
          + ("; run python scripts/readme_examples.py --write" if stale + drawn else ""))
    return 1 if stale + drawn else 0


if __name__ == "__main__":
    sys.exit(main())
