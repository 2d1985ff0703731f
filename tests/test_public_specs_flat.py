"""The flat-array translations of tlaplus/Examples specifications
(``tests/public_specs/flat/``), which ``benchmarks/tlc/line_counts.py`` compares with the
structured ones: each explores TLC's state graph, as its structured twin does, with the
same verdicts, and uses none of the structured constructs it is compared against.

TLC figures: ``benchmarks/tlc/results.md`` (and ``results.json``), by run name, the same
runs ``tests/test_public_specs.py`` and ``tests/test_public_specs_liveness.py`` cite:
TLC2 Version 2.18 of 20 March 2023 (rev: 3ea3222), the released v1.7.3 tla2tools.jar,
tlaplus/Examples at commit 32a32c7b, one worker, with the command
``java -XX:+UseParallelGC -cp tla2tools.jar tlc2.TLC -workers 1 -fp 0 -config X.cfg X.tla``.
Depth: TLC counts states (an initial state is depth 1), our histogram has one entry per
BFS level, so TLC's depth d is a histogram of d entries; a TLC trace of n states is a
counterexample of n - 1 steps here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import osf_check

SPECS = Path(__file__).resolve().parent / "public_specs"
FLAT = SPECS / "flat"

# What the flat versions do without: the DSL's structured state and its quantifiers over
# domains (Count of a list of conditions is the older helper, and stays allowed).
STRUCTURED = {"set", "init_all", "ForAll", "Exists", "Choose", "Record", "Tuple", "SetOf",
              "Array"}

# (TLC run, model file, mutant, parameters, TLC's distinct states, depth (None where TLC
# prints none: a liveness violation) and generated states, every verdict)
RUNS = [
    ("twophase_tc", "twophase", None, {"rms": 3}, 288, 11, 1146, {"TP1": "holds"}),
    ("tp4", "twophase", None, {"rms": 4}, 1568, 14, 8258, {"TP1": "holds"}),
    ("missionaries_typeok", "missionaries", None, {}, 64, 13, None, {"MC1": "violated"}),
    ("dining", "dining", None, {"np": 5}, 67, 29, 336, {"DP1": "holds", "DP2": "holds"}),
    ("dining_nofair", "dining", "no-fairness", {"np": 5}, 67, None, 336,
     {"DP1": "holds", "DP2": "violated"}),
    ("dp2", "dining", None, {"np": 2}, 11, 11, 23, {"DP1": "holds", "DP2": "holds"}),
    ("dp3", "dining", None, {"np": 3}, 19, 17, 58, {"DP1": "holds", "DP2": "holds"}),
    ("dp4", "dining", None, {"np": 4}, 35, 23, 141, {"DP1": "holds", "DP2": "holds"}),
    ("ewd840", "ewd840", None, {"nodes": 3}, 302, 9, None, {"E1": "holds", "E2": "holds"}),
    ("ewd840_nofair", "ewd840", "no-fairness", {"nodes": 3}, 302, None, None,
     {"E1": "holds", "E2": "violated"}),
    ("parreach", "parreach", None, {}, 393, 18, 747,
     {"PR1": "holds", "PR2": "holds", "PR3": "holds"}),
    ("parreach_nofair", "parreach", "no-fairness", {}, 393, None, 747,
     {"PR1": "holds", "PR2": "holds", "PR3": "violated"}),
    ("parreach_graph", "parreach", None, {"graph": 1}, 5903, 28, 15119,
     {"PR1": "holds", "PR2": "holds", "PR3": "holds"}),
]
FLAT_NAMES = ["twophase", "missionaries", "dining", "ewd840", "parreach"]


def _explore(path, mutant, params):
    return (osf_check.Checker(path).mutant(mutant).params(**params).depth(None)
            .keep_going().explore())


@pytest.mark.parametrize("run,name,mutant,params,distinct,depth,generated,status", RUNS,
                         ids=[r[0] for r in RUNS])
def test_a_flat_version_explores_tlcs_graph_with_the_structured_verdicts(
        run, name, mutant, params, distinct, depth, generated, status):
    """TLC's generated count is compared where ours is the same count (it is larger for
    EWD840 and MissionariesAndCannibals: see docs/tla-guide.md); there the structured
    version's count is."""
    flat = _explore(FLAT / f"{name}.py", mutant, params)
    structured = _explore(SPECS / f"{name}.py", mutant, params)
    assert flat.distinct == distinct  # TLC 2.18, the run named by the test's id
    if depth is not None:
        assert len(flat.histogram) == depth  # TLC 2.18
    if generated is not None:
        assert flat.generated == generated  # TLC 2.18
    assert flat.generated == structured.generated
    assert flat.status == status == structured.status


def test_the_flat_missionaries_answer_is_tlcs_length():
    """TLC run ``missionaries`` (the published cfg): Solution violated, a 12-state trace,
    so 11 steps here, ending with everybody on the west bank."""
    r = _explore(FLAT / "missionaries.py", None, {})
    [v] = r.to_json()["violations"]
    assert v["length"] == 12 - 1  # TLC 2.18, missionaries
    last = v["trace"]["steps"][-1]["state"]
    assert (last["east"], last["west"]) == ([False] * 6, [True] * 6)


def test_the_flat_ewd840_has_tlcs_initial_states():
    """TLC run ``ewd840``: "192 distinct states generated" at Init."""
    r = _explore(FLAT / "ewd840.py", None, {"nodes": 3})
    assert len(r.model.initial_states) == 192  # TLC 2.18, ewd840


@pytest.mark.parametrize("name", FLAT_NAMES)
def test_a_flat_version_has_the_structured_ones_actions(name):
    def actions(path):
        r = osf_check.Checker(path).depth(0).explore()
        return sorted(i.label for i in r.model.instances)
    assert actions(FLAT / f"{name}.py") == actions(SPECS / f"{name}.py")


def structured_names(source: str) -> set[str]:
    """The names of :data:`STRUCTURED` a model file uses (as a name or an attribute)."""
    used = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.alias):
            used.add(node.name)
    return used & STRUCTURED


@pytest.mark.parametrize("name", FLAT_NAMES)
def test_a_flat_version_uses_no_structured_construct(name):
    assert structured_names((FLAT / f"{name}.py").read_text()) == set()
    model = osf_check.Checker(FLAT / f"{name}.py").depth(0).explore().model
    assert all(v.elements is None and v.shape is None for v in model.variables)


def test_the_construct_check_finds_each_form_of_use():
    # the check above could pass by finding nothing: here it finds an import, a call, a
    # method and a name passed along, and the structured files' constructs
    source = ("from osf_check import Exists, Record\nb.set('x', E, actor='a')\n"
              "b.init_all(x=Bool())\nForAll(r, f)\nhelper(Choose)\n")
    assert structured_names(source) == {"Exists", "Record", "set", "init_all", "ForAll",
                                        "Choose"}
    assert structured_names("Count(x[i] for i in r)\nAnd(*xs)") == set()
    for name in FLAT_NAMES:
        assert structured_names((SPECS / f"{name}.py").read_text()), name


@pytest.mark.parametrize("mutant", ["b-skips-c", "c-drops-w"])
def test_the_flat_parreach_breaks_what_the_structured_one_breaks(mutant):
    """Our own mutants (no TLC run): the same verdicts and counterexample lengths."""
    def outcome(path):
        r = _explore(path, mutant, {})
        return r.status, {v["property"]: v["length"] for v in r.to_json()["violations"]}
    flat = outcome(FLAT / "parreach.py")
    assert "violated" in flat[0].values()
    assert flat == outcome(SPECS / "parreach.py")
