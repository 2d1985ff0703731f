"""The README tells the truth: its console examples are what the commands print, its
Python examples run, its model file is the one in examples/, its pictures are what the
commands draw, and no link leaves the repository."""

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
SHARED = "../" + "shared"  # the workplace's folder beside the clone (spelt so, not to match)


@pytest.mark.slow
def test_every_console_example_and_picture_is_what_its_command_gives_now():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_examples.py")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 stale" in r.stdout and len(readme_examples.examples(README)) >= 5


@pytest.mark.slow
def test_the_check_sees_a_stale_example(tmp_path, monkeypatch):
    fake = tmp_path / "README.md"
    fake.write_text("```console\n$ echo 'took 0.25 s'\ntook 0.31 s\n```\n\n"
                    "```console\n$ echo two\nthree\n```\n", encoding="utf-8")
    monkeypatch.setattr(readme_examples, "README", fake)
    monkeypatch.setattr(readme_examples, "PICTURES", {})
    assert readme_examples.main([]) == 1  # "three" is stale; the timing is not
    assert readme_examples.main(["--write"]) == 0
    assert "$ echo two\ntwo\n" in fake.read_text() and readme_examples.main([]) == 0


def test_the_python_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"^```pycon\n(.*?)^```$", README, re.M | re.S)
    assert blocks
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for k, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"README pycon block {k}", "README.md", 0))
    assert runner.failures == 0 and runner.tries >= 5


def test_the_model_file_in_the_readme_is_the_one_in_examples():
    section = README[README.index("## Writing your own model"):]
    shown = re.search(r"^```python\n(.*?)^```$", section, re.M | re.S).group(1)
    assert shown == (ROOT / "examples" / "diehard.py").read_text(encoding="utf-8")


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
