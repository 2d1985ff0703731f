"""docs/conformance.md stays true: every row has a status its tests bear out, every test
and code symbol it cites exists, and the counts in it and in the README are its tables'."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from osf_check.fuzz import mutants
from osf_check.properties import catalogue

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from conformance_counts import ORDER, counts_sentence, rows, status_of  # noqa: E402

DOC = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
#: the parametrised tests a row may cite with a mutant in brackets, and their mutants
MUTANT_TESTS = {
    "tests/test_graph_relay.py::test_mutant_is_caught_with_a_shortest_counterexample":
        lambda: {m.name for m in catalogue.MUTANTS if m.model == "graph-relay"},
    "tests/test_wire_relay.py::test_mutant_is_caught_with_a_shortest_counterexample":
        lambda: {m.name for m in catalogue.MUTANTS if m.model == "wire-relay"},
    "tests/test_fuzz_graph.py::test_tour_catches_each_implementation_mutant":
        lambda: set(mutants.names("graph-relay")) - {"queue-on-desktop"},
    "tests/test_fuzz_wire.py::test_the_fuzzer_catches_each_implementation_mutant":
        lambda: set(mutants.names("wire-relay")),
}


def cited(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_every_row_has_a_known_status_and_ids_are_unique():
    rs = rows(DOC)
    ids = [r["id"] for r in rs]
    assert len(ids) == len(set(ids))
    assert {r["doc"] for r in rs} == {"000", "004"}
    assert all(r["id"][0] == ("G" if r["doc"] == "000" else "W") for r in rs)
    for r in rs:
        assert status_of(r) in ORDER, r["id"]  # raises on a status it does not know


def test_a_row_cites_tests_exactly_when_its_status_says_something_is_tested():
    """"followed" names the tests that fail without it; "followed, untested", "missing"
    and "not applicable" name none; a reason follows every status but "followed"."""
    for r in rows(DOC):
        kind, tests = status_of(r), cited(r["tests"])
        if kind == "followed":
            assert tests, r["id"]
        elif kind in ("followed, untested", "missing", "not applicable"):
            assert r["tests"] == "—", r["id"]
        if kind != "followed":
            assert len(r["status"]) > len(kind) + 3, f"{r['id']}: say why"


def _defined(path: Path) -> set[str]:
    return set(re.findall(r"^(?:async )?def (test_\w+)", path.read_text(encoding="utf-8"), re.M))


def missing_tests(doc: str) -> list[str]:
    """The cited test node ids that name no test (or no mutant of a parametrised one)."""
    bad = []
    for r in rows(doc):
        for node in cited(r["tests"]):
            base, _, param = node.partition("[")
            path, _, name = base.partition("::")
            f = ROOT / path
            if not (f.is_file() and name in _defined(f)):
                bad.append(node)
            elif param and (base not in MUTANT_TESTS or param[:-1] not in MUTANT_TESTS[base]()):
                bad.append(node)
    return bad


def missing_symbols(doc: str) -> list[str]:
    """The cited ``module:name`` symbols (under ``osf_check``) that do not exist."""
    bad = []
    for r in rows(doc):
        for sym in cited(r["code"]):
            module, _, name = sym.partition(":")
            try:
                obj = importlib.import_module(f"osf_check.{module}")
                for part in name.split("."):
                    obj = getattr(obj, part) if part in dir(obj) else \
                        obj.__dataclass_fields__[part]
            except (ImportError, AttributeError, KeyError):
                bad.append(sym)
    return bad


def test_every_cited_test_exists():
    assert sum(len(cited(r["tests"])) for r in rows(DOC)) > 100
    assert missing_tests(DOC) == []


def test_every_cited_code_symbol_exists():
    assert sum(len(cited(r["code"])) for r in rows(DOC)) > 100
    assert missing_symbols(DOC) == []


@pytest.mark.parametrize("wrong, why", [
    ("tests/test_graph_impl.py::test_run_graph_session_validates_its_input",
     "tests/test_graph_impl.py::test_no_such_test"),
    ("tests/test_graph_relay.py::test_mutant_is_caught_with_a_shortest_counterexample[outbox-off]",
     "tests/test_graph_relay.py::test_mutant_is_caught_with_a_shortest_counterexample[no-such]"),
    ("tests/test_graph_relay.py::test_mutant_is_caught_with_a_shortest_counterexample[outbox-off]",
     "tests/test_graph_relay.py::test_mutant_is_caught_with_a_shortest_counterexample[retry-mints-new-key]"),
])
def test_a_test_that_does_not_exist_is_caught(wrong, why):
    assert missing_tests(DOC.replace(wrong, why, 1)) == [why]


@pytest.mark.parametrize("sym", ["relay.graph.server:GraphServer.no_such",
                                 "relay.no_such_module:x", "relay.wire.relay_router:Entry.nope"])
def test_a_symbol_that_does_not_exist_is_caught(sym):
    doc = DOC.replace("`relay.graph.desktop:DesktopRelay.bind`", f"`{sym}`", 1)
    assert missing_symbols(doc) == [sym]


def test_the_rule_counts_in_the_docs_are_the_tables():
    """The counts are written from the tables, never by hand: a row added or a status
    changed fails here until both sentences say the new figures
    (``python scripts/conformance_counts.py`` writes them)."""
    want = counts_sentence(DOC)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Rules by status: {want}." in DOC, want
    assert f"({want})" in readme, want


def test_the_counts_sentence_moves_with_a_status():
    before = counts_sentence(DOC)
    changed = DOC.replace("| followed |", "| missing: gone |", 1)
    assert counts_sentence(changed) != before and "1 missing" in counts_sentence(changed)
