"""docs/conformance.md stays true: every test it cites exists, every rule has a status."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
STATUSES = ("followed", "partly", "not yet")


def _rows() -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in DOC.splitlines() if re.match(r"\| [GW]\d+ \|", line)]


def _defined_tests() -> set[str]:
    names: set[str] = set()
    for f in (ROOT / "tests").glob("test_*.py"):
        names |= set(re.findall(r"^def (test_\w+)", f.read_text(encoding="utf-8"), re.M))
    return names


def test_every_rule_has_a_status_and_ids_are_unique():
    rows = _rows()
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)) and len(ids) >= 50
    for r in rows:
        assert any(r[-1].strip("*").startswith(s) or s in r[-1] for s in STATUSES), r[0]


def test_every_cited_test_exists():
    defined = _defined_tests()
    cited = {name for r in _rows() for name in re.findall(r"`(test_\w+)`", "|".join(r))}
    assert cited, "the document cites no test"
    assert sorted(cited - defined) == []


def _counts_sentence() -> str:
    """How many rows of each document's table have each status, as a sentence."""
    counts: dict[str, dict[str, int]] = {}
    part = None
    for line in DOC.splitlines():
        if line.startswith("## "):
            part = line[3:6] if line[3:6] in ("000", "004") else None
        elif part and re.match(r"\| [GW]\d+ \|", line):
            status = line.strip().strip("|").split("|")[-1].strip().strip("*")
            kind = next(k for k in STATUSES if status.startswith(k))
            counts.setdefault(part, {}).setdefault(kind, 0)
            counts[part][kind] += 1
    return "; ".join(
        f"{doc}: {sum(c.values())} rules, " + ", ".join(f"{n} {k}" for k, n in c.items())
        for doc, c in counts.items())


def test_the_rule_counts_in_the_docs_are_the_tables():
    """The counts are written from the tables, never by hand: a row added or a status
    changed fails here until both sentences say the new figures."""
    want = _counts_sentence()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Rules by status: {want}." in DOC, want
    assert f"({want})" in readme, want


def test_the_counts_sentence_moves_with_a_status():
    global DOC
    kept, before = DOC, _counts_sentence()
    try:
        DOC = DOC.replace("| followed |", "| not yet |", 1)
        assert _counts_sentence() != before and "1 not yet" in _counts_sentence()
    finally:
        DOC = kept
