"""The 100,000 limit measures ``JSON.stringify``'s text, and JavaScript writes numbers
its own way: a ``reported_cost`` of 0.0 is ``0`` there and ``0.0`` in Python's
``json.dumps``, so a completion JavaScript posts whole at exactly 100,000 units was
truncated here.  The reference writer (``relay/jstext.py``) and the fuzzer's oracle
(``fuzz/oracles.py``, written apart from it) are held to exact strings, and to Node's own
``JSON.stringify`` where Node is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osf_check.fuzz import oracles
from osf_check.relay.graph.payload import completion_payload, stringify_length
from osf_check.relay.jstext import stringify

NODE = shutil.which("node")

#: (Python value, what JSON.stringify writes for the value JavaScript holds for it)
FORMS = [
    (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-2.5, "-2.5"), (0.1, "0.1"),
    (1e20, "100000000000000000000"), (1.2345678901234568e20, "123456789012345680000"),
    (1e21, "1e+21"), (1.5e300, "1.5e+300"), (1e-6, "0.000001"), (1e-7, "1e-7"),
    (-1.5e-9, "-1.5e-9"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    (float("nan"), "null"), (float("inf"), "null"), (float("-inf"), "null"),
    (2**53, "9007199254740992"), (2**53 + 1, "9007199254740992"), (10**21, "1e+21"),
    (10**400, "null"), (-7, "-7"), (True, "true"), (False, "false"), (None, "null"),
]


@pytest.mark.parametrize("value, text", FORMS, ids=[t for _, t in FORMS])
def test_every_number_form_is_written_as_json_stringify_writes_it(value, text):
    assert stringify(value) == text
    assert oracles.stringify(value) == text


def test_nested_values_write_their_numbers_and_keys_as_javascript_does():
    value = {"b": [0.0, {"c": -0.0, "d": float("nan")}], "1": 1e21, "0": (True, None, 2.50)}
    want = '{"0":[true,null,2.5],"1":1e+21,"b":[0,{"c":0,"d":null}]}'
    assert stringify(value) == want
    assert oracles.utf16_length(oracles.stringify(value)) == len(want)  # its keys unordered


def _filled(units: int, cost: float) -> dict[str, Any]:
    """A completion whose JSON.stringify text is ``units`` long when its cost is ``cost``,
    its envelope written here by hand as JavaScript writes it."""
    envelope = ('{"execution_id":"e1","status":"completed","result":"","total_tokens":1,'
                f'"reported_cost":{"0" if cost == 0 else cost}}}')
    return {"execution_id": "e1", "status": "completed", "result": "x" * (units - len(envelope)),
            "total_tokens": 1, "reported_cost": cost}


@pytest.mark.parametrize("cost", [0.0, -0.0, 0.5])
def test_a_completion_of_exactly_100000_units_with_a_whole_cost_is_posted_whole(cost):
    """Python writes the cost 0.0 as ``0.0``: two units JavaScript does not write, and
    the completion at the limit was posted truncated."""
    at, past = _filled(100_000, cost), _filled(100_001, cost)
    assert stringify_length(at) == 100_000
    assert completion_payload(*at.values()) == at
    assert completion_payload(*past.values())["result_truncated"] is True
    assert oracles.bounded(at, at) is None and oracles.bounded(past, past) is not None


# the real thing -----------------------------------------------------------------------------
#: reads one value a line, written as a JavaScript literal (Python's json.dumps: NaN and
#: Infinity are JavaScript's names, a lone half its \u escape, a big int a literal read
#: as the nearest double, as JSON.parse reads it), and writes its JSON.stringify
ECHO = ("require('readline').createInterface({input: process.stdin})"
        ".on('line', l => process.stdout.write(JSON.stringify((0, eval)('(' + l + ')')) + '\\n'))")


@pytest.fixture(scope="module")
def node() -> Iterator[subprocess.Popen]:
    if NODE is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is missing: .ci/run installs it")
        pytest.skip("no node on this machine to compare with (CI installs it)")
    proc = subprocess.Popen([NODE, "-e", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, encoding="utf-8", bufsize=1)
    yield proc
    proc.stdin.close()
    proc.wait()


def _by_node(proc: subprocess.Popen, value: Any) -> str:
    proc.stdin.write(json.dumps(value) + "\n")
    line = proc.stdout.readline()
    assert line.endswith("\n"), f"node stopped answering (exit {proc.poll()})"
    return line[:-1]


NUMBERS = st.one_of(
    st.floats(), st.integers(), st.integers(-2**70, 2**70).map(float),
    st.floats(1e-8, 1e-5), st.floats(1e19, 1e22),  # where the notation changes
    st.sampled_from([0.0, -0.0, 5e-324, 1.7976931348623157e308, 2.0**53, 2**53 + 1, 10**400]))
TEXT = st.one_of(
    st.text(st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)),
    st.lists(st.sampled_from(["😀", "\ud83d\ude00", "\udc00", "\ud83d", "日", '"', "\\", "\n",
                              "\x7f", "\u2028"])).map("".join))
KEYS = st.one_of(TEXT, st.sampled_from(["0", "1", "10", "01", "-1", "1.5", "4294967294",
                                        "4294967295"])).filter(lambda k: k != "__proto__")
VALUES = st.recursive(
    st.one_of(NUMBERS, TEXT, st.booleans(), st.none()),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(NUMBERS)
def test_numbers_are_written_as_node_writes_them(node, x):
    want = _by_node(node, x)
    assert stringify(x) == want
    assert oracles.stringify(x) == want


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_nested_values_measure_as_node_measures_them(node, value):
    want = _by_node(node, value)
    assert stringify(value) == want
    assert stringify_length(value) == len(want.encode("utf-16-le", "surrogatepass")) // 2
    assert oracles.utf16_length(oracles.stringify(value)) == stringify_length(value)
