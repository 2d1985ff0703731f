"""explore --json claims no more than the text: a depth-bounded run's reach and fair goals
hold only up to the depth (A2 has a fair goal too), with the premise states on the
bound not judged."""

from __future__ import annotations

import json

import jsonschema
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.report import result_schema


def _explore(*args: str) -> tuple[dict, str]:
    r = CliRunner().invoke(main, ["explore", "--model", "graph-relay", *args])
    j = CliRunner().invoke(main, ["explore", "--model", "graph-relay", *args, "--json"])
    doc = json.loads(j.output[j.output.index("{"):])
    jsonschema.validate(doc, result_schema())
    return doc, r.output


def test_a_bounded_reach_property_says_up_to_which_depth_and_what_was_not_judged():
    doc, text = _explore("--depth", "6", "--property", "A2")
    (a2,) = doc["models"][0]["properties"]
    assert not doc["complete"] and a2["status"] == "holds"
    assert a2["up_to_depth"] == 6 and "holds up to depth 6" in text
    # the text's count of premise states on the bound, not judged
    assert a2["undecided"] > 0 and f"A2 {a2['undecided']:,}" in text


def test_another_bounded_reach_property_holds_only_up_to_the_depth_too():
    doc, text = _explore("--depth", "5", "--property", "A10")
    (a10,) = doc["models"][0]["properties"]
    assert a10["status"] == "holds" and a10["up_to_depth"] == 5
    assert "holds up to depth 5" in text


def test_a_complete_run_holds_outright():
    doc, text = _explore("--param", "intents=1", "--param", "agents=2", "--param", "retries=0",
                         "--param", "slugs=1", "--depth", "unbounded", "--property", "A2")
    (a2,) = doc["models"][0]["properties"]
    assert doc["complete"] and a2["up_to_depth"] is None and a2["undecided"] == 0
    assert a2["status"] == "holds" and "holds up to" not in text
