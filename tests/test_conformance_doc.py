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
