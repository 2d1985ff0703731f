"""The README and the pages of docs/ tell the truth: their console examples are what the
commands print, their Python examples run, the model files they show are the ones in
examples/, their pictures are what the commands draw, no link leaves the repository, and
they speak to users (no dated history, no issue numbers; the README stays a front page)."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import readme_examples  # noqa: E402

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {p: p.read_text(encoding="utf-8") for p in readme_examples.pages()}
SHARED = "../" + "shared"  # the workplace's folder beside the clone (spelt so, not to match)


@pytest.mark.slow
def test_every_console_example_and_picture_is_what_its_command_gives_now():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_examples.py")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 stale" in r.stdout and len(readme_examples.examples(README)) >= 1
    assert sum(len(readme_examples.examples(t)) for t in PAGES.values()) >= 20


def test_every_page_with_a_console_example_is_checked():
    """The check reads the README and every page under docs/ (a new page is read without
    being named anywhere)."""
    checked = set(readme_examples.pages())
    shown = {p for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
             if "```console" in p.read_text(encoding="utf-8")}
    assert shown and shown <= checked
    assert {ROOT / "docs" / n for n in ("tutorial.md", "models.md", "performance.md")} <= shown


@pytest.mark.slow
def test_the_check_sees_a_stale_example(tmp_path, monkeypatch):
    fake = tmp_path / "README.md"
    fake.write_text("```console\n$ echo 'took 0.25 s'\ntook 0.31 s\n```\n\n"
                    "```console\n$ echo two\nthree\n```\n", encoding="utf-8")
    monkeypatch.setattr(readme_examples, "pages", lambda: [fake])
    monkeypatch.setattr(readme_examples, "PICTURES", {})
    monkeypatch.setattr(readme_examples, "pictures", lambda write: 0)
    assert readme_examples.main([]) == 1  # "three" is stale; the timing is not
    assert readme_examples.main(["--write"]) == 0
    assert "$ echo two\ntwo\n" in fake.read_text() and readme_examples.main([]) == 0


def _run_pycon(text: str, name: str) -> doctest.TestResults:
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for k, block in enumerate(re.findall(r"^```pycon\n(.*?)^```$", text, re.M | re.S)):
        runner.run(parser.get_doctest(block, {}, f"{name} pycon block {k}", name, 0))
    return doctest.TestResults(runner.failures, runner.tries)


def test_the_python_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    results = [_run_pycon(text, p.name) for p, text in PAGES.items()]
    assert sum(r.failed for r in results) == 0 and sum(r.attempted for r in results) >= 10


def test_the_python_example_check_can_fail(monkeypatch):
    monkeypatch.chdir(ROOT)
    wrong = "```pycon\n>>> 1 + 1\n3\n\n```\n"
    assert _run_pycon(wrong, "fake.md").failed == 1


def test_the_model_file_in_the_tutorial_is_the_one_in_examples():
    tutorial = PAGES[ROOT / "docs" / "tutorial.md"]
    shown = re.findall(r"^```python\n(.*?)^```$", tutorial, re.M | re.S)
    assert (ROOT / "examples" / "diehard.py").read_text(encoding="utf-8") in shown


def excerpts(text: str) -> list[tuple[str, str]]:
    """Each Python block of a page that starts with ``# examples/FILE``: (the file, the
    block's other lines)."""
    return re.findall(r"^```python\n# (examples/\S+)\n(.*?)^```$", text, re.M | re.S)


def test_every_excerpt_of_an_example_file_is_verbatim():
    """The model-writing guide quotes examples/mutex.py piece by piece: each piece is in
    the file as shown, so the guide's examples are the runnable file's."""
    found = [(p, f, body) for p, text in PAGES.items() for f, body in excerpts(text)]
    assert len(found) >= 10
    stale = [f"{p.name}: {body[:60]!r}" for p, f, body in found
             if body not in (ROOT / f).read_text(encoding="utf-8")]
    assert stale == []


def test_the_excerpt_check_can_fail():
    page = "```python\n# examples/mutex.py\ndef no_such_function():\n    pass\n```\n"
    [(f, body)] = excerpts(page)
    assert body not in (ROOT / f).read_text(encoding="utf-8")


def test_the_guide_covers_what_a_model_writer_needs():
    """Each feature has a section of the guide, and the section shows it at work (an
    excerpt of the runnable example file or a console run)."""
    guide = PAGES[ROOT / "docs" / "models.md"]
    for feature, shown in [("## Arrays", "b.array("), ("## Variables and their types", "Enum("),
                           ("## Action parameters", "params="),
                           ("## Several initial states", "b.init("),
                           ("## Reach goals", "Goal("), ("## Fairness", "fair="),
                           ("## Deadlocks and `quiescent`", "b.quiescent("),
                           ("## Lemmas", "lemmas=")]:
        section = guide[guide.index(feature):].split("\n## ", 1)[0]
        assert shown in section, feature


DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b[Ii]ssues? #?\d+")


def test_the_user_docs_carry_no_dated_history_or_issue_numbers():
    bad = [f"{p.name}: {m.group(0)}" for p, text in PAGES.items() for m in DATED.finditer(text)]
    assert bad == []
    assert DATED.search("measured 2026-12-04") and DATED.search("since issue 12")


def test_the_readme_is_a_front_page():
    assert len(README.splitlines()) <= 300
    for section in ("## Set-up", "## A worked example", "## Which tests to run when",
                    "## Documentation"):
        assert section in README


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    return [ROOT / f for f in out]


def _outside(f: Path, text: str) -> list[str]:
    """Each relative link of a markdown file that leaves the repository or names nothing,
    and each mention of the workplace's shared folder."""
    bad = []
    if f.suffix == ".md":
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            path = (f.parent / target).resolve()
            if ROOT not in path.parents or not path.exists():
                bad.append(f"{f.name}: {target}")
    if SHARED in text:
        bad.append(f"{f.name}: {SHARED}")
    return bad


def test_no_link_or_path_points_outside_the_repository():
    bad = [b for f in _tracked("*.md", "*.py", "*.toml", "*.yml", "*.txt")
           for b in _outside(f, f.read_text(encoding="utf-8", errors="replace"))]
    assert bad == []


@pytest.mark.parametrize("text, n", [("see [the design](docs/design.md)", 0),
                                     (f"see [it]({SHARED}/design.md)", 2),
                                     ("see [it](docs/nothing.md)", 1),
                                     ("see [it](https://example.org/x.md)", 0)])
def test_the_link_check_can_fail(text, n):
    assert len(_outside(ROOT / "README.md", text)) == n
