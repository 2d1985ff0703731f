"""A property's hand-written lemmas are the user's, not mined: ``prove`` reports them
apart from the mined invariants, in the model's own names (as ``describe`` writes
expressions), never in the engine's slot notation."""

from __future__ import annotations

from pathlib import Path

import jsonschema

import osf_check
from osf_check.report import result_schema

MUTEX = Path(__file__).resolve().parents[1] / "examples" / "mutex.py"
LEMMAS = ['pc[0] ≠ "idle" ⇒ done[0] < 1', 'pc[1] ≠ "idle" ⇒ done[1] < 1']


def _m2(result):
    return next(p for p in result.to_json()["properties"] if p["id"] == "M2")


def test_lemmas_are_reported_as_written_and_not_counted_as_mined():
    # depth 2: the sample is too small for the BFS to prove M2, so induction does,
    # with mined invariants and the two lemmas of examples/mutex.py
    pr = osf_check.Checker(MUTEX).prove(sample_depth=2)
    jsonschema.validate(pr.to_json(), result_schema())  # lemmas.held is in the schema
    m2 = _m2(pr)
    assert (m2["status"], m2["method"]) == ("proved", "k-induction")
    assert m2["lemmas"] == {"proved": 2, "given": 2, "held": LEMMAS}
    assert m2["mined"] and not set(m2["mined"]) & set(LEMMAS)
    for shown in m2["mined"] + m2["lemmas"]["held"]:
        assert "s[" not in shown and "ne(" not in shown, shown  # not the engine's notation
    text = pr.text()
    assert (f"with {len(m2['mined'])} strengthening invariants and 2 hand-written lemmas"
            in text)
    assert "      hand-written lemma: " + LEMMAS[0] in text


def test_a_proof_from_lemmas_alone_mentions_no_mined_invariant():
    pr = osf_check.Checker(MUTEX).prove(sample_depth=0)
    m2 = _m2(pr)
    assert m2["status"] == "proved" and m2["mined"] == []
    line = next(x for x in pr.text().splitlines() if "M2 holder-named" in x)
    assert line.endswith("proved (k=1, with 2 hand-written lemmas)"), line
    assert "mined strengthening invariants" not in pr.text()
