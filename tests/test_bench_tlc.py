"""benchmarks/bench_tlc.py (TLC beside osf-check) without Java: its reading of TLC's
output and its comparison on TLC output written here; the recorded TLC figures
(benchmarks/tlc/results.json) against the counts the public-spec tests pin; and the line
counts of docs/tla-guide.md against the model files."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


bench = _load("bench_tlc", BENCH / "bench_tlc.py")
lines = _load("tlc_line_counts", BENCH / "tlc" / "line_counts.py")
liveness = _load("public_specs_liveness", ROOT / "tests" / "test_public_specs_liveness.py")
RESULTS = json.loads((BENCH / "tlc" / "results.json").read_text())
BY_RUN = {r["run"]: r for r in RESULTS["runs"]}

HOLDS = """TLC2 Version 2.18 of 20 March 2023 (rev: 3ea3222)
Computing initial states...
Finished computing initial states: 192 distinct states generated at 2026-12-06 03:33:13.
Progress(9) at 2026-12-06 03:33:13: 2,001 states generated, 302 distinct states found, 0 states left on queue.
Checking temporal properties for the complete state space with 302 total distinct states
Model checking completed. No error has been found.
2001 states generated, 302 distinct states found, 0 states left on queue.
The depth of the complete state graph search is 9.
"""

INVARIANT = """TLC2 Version 2.18 of 20 March 2023 (rev: 3ea3222)
Finished computing initial states: 1 distinct state generated at 2026-12-06 03:33:13.
Error: Invariant NotSolved is violated.
Error: The behavior up to this point is:
State 1: <Initial predicate>
big = 0

State 2: <FillBigJug line 1>
big = 5

State 3: <BigToSmall line 2>
big = 2

73 states generated, 14 distinct states found, 8 states left on queue.
The depth of the complete state graph search is 7.
"""

LASSO = """TLC2 Version 2.18 of 20 March 2023 (rev: 3ea3222)
Finished computing initial states: 1 distinct state generated at 2026-12-06 03:43:24.
Checking temporal properties for the complete state space with 4 total distinct states
Error: Temporal properties were violated.

Error: The following behavior constitutes a counter-example:

State 1: <Initial predicate>
x = 0

State 2: <M line 8, col 9 to line 8, col 23 of module SFSub>
x = 3

Back to state 1: <M line 9, col 9 to line 9, col 23 of module SFSub>

6 states generated, 4 distinct states found, 0 states left on queue.
"""


def _osf(**kw):
    base = {"initial": 192, "generated": 2001, "distinct": 302, "depth": 9,
            "verdict": "holds", "trace_states": None, "seconds": 1.0}
    return {**base, **kw}


def test_tlcs_figures_are_read_from_its_output():
    f = bench.parse_tlc(HOLDS)
    assert f["version"] == "TLC2 Version 2.18 of 20 March 2023 (rev: 3ea3222)"
    assert (f["initial"], f["generated"], f["distinct"], f["depth"]) == (192, 2001, 302, 9)
    assert (f["verdict"], f["complete"], f["trace_states"]) == ("holds", True, None)
    f = bench.parse_tlc(INVARIANT)
    assert (f["verdict"], f["error"], f["complete"]) == (
        "violated", "Invariant NotSolved is violated.", False)
    assert (f["trace_states"], f["trace_end"], f["distinct"]) == (3, None, 14)
    f = bench.parse_tlc(LASSO)
    assert (f["verdict"], f["complete"], f["depth"]) == ("violated", True, None)
    assert (f["trace_states"], f["trace_end"]) == (2, "back to state 1")
    f = bench.parse_tlc(LASSO.replace("Back to state 1: <M", "State 3: Stuttering <M"))
    assert (f["trace_states"], f["trace_end"]) == (2, "stuttering")
    assert bench.parse_tlc("Error: Parsing or semantic analysis failed.\n")["depth"] is None


def test_a_count_that_differs_from_tlcs_is_a_mismatch():
    tlc = {**bench.parse_tlc(HOLDS), "seconds": 2.0}
    assert bench.compare(tlc, _osf()) == []
    assert bench.compare(tlc, _osf(distinct=301, generated=1817)) == [
        "distinct 302 != 301", "generated 2001 != 1817"]
    assert bench.compare(tlc, _osf(depth=8)) == ["depth 9 != 8"]
    assert bench.compare(tlc, _osf(verdict="violated")) == ["verdict holds != violated"]
    # TLC checking TypeOK alone is no verdict on the model's own properties
    assert bench.compare(tlc, _osf(verdict="violated"), same_checks=False) == []


def test_where_tlc_stopped_at_an_invariant_only_its_trace_is_compared():
    tlc = {**bench.parse_tlc(INVARIANT), "seconds": 2.0}
    whole = _osf(initial=1, distinct=16, generated=97, depth=8, verdict="violated")
    assert bench.compare(tlc, {**whole, "trace_states": 3}) == []
    assert bench.compare(tlc, {**whole, "trace_states": 4}) == ["trace_states 3 != 4"]


def test_the_side_by_side_row_shows_osf_check_slower_and_a_mismatch():
    run = bench.RUNS[0]
    tlc = {**bench.parse_tlc(HOLDS), "seconds": 2.0}
    row = bench.row(run, tlc, _osf(seconds=5.0))
    assert row.startswith("ewd840") and row.endswith("match, slower x2.5")
    row = bench.row(run, tlc, _osf(generated=1817, seconds=0.5))
    assert "MISMATCH: generated 2001 != 1817" in row and "slower" not in row


def test_writing_one_run_keeps_the_other_runs_recorded_figures(tmp_path, monkeypatch):
    # --only with --write replaces the named run's figures and no other run's (without
    # Java: TLC's answer is made up here, and differs from the recorded one)
    out = tmp_path / "tlc"
    out.mkdir()
    (out / "results.json").write_text(json.dumps(RESULTS))
    jar = tmp_path / "tla2tools.jar"
    jar.write_bytes(b"jar")
    examples = tmp_path / "Examples"
    (examples / "specifications").mkdir(parents=True)
    fresh = {**bench.recorded_figures(out)["dp2"], "distinct": 12, "seconds": 1.0}
    monkeypatch.setattr(bench, "run_tlc", lambda jar, examples, run: fresh)
    monkeypatch.setattr(bench, "run_osf", lambda run: _osf(seconds=0.1))
    bench.main(["--jar", str(jar), "--examples", str(examples), "--only", "dp2",
                "--write", str(out)])
    written = json.loads((out / "results.json").read_text())
    by_run = {r["run"]: r for r in written["runs"]}
    assert list(by_run) == list(BY_RUN)
    assert by_run["dp2"]["distinct"] == 12
    assert {k: r for k, r in by_run.items() if k != "dp2"} == {
        k: r for k, r in BY_RUN.items() if k != "dp2"}
    assert "| dp2 | `DiningPhilosophers.cfg DiningPhilosophers.tla` | 1 | 23 | 12 |" in (
        out / "results.md").read_text()


def test_every_run_has_its_files_and_recorded_figures():
    folders = {p.name for p in (ROOT / "tests" / "public_specs" / "tlc").iterdir()
               if p.is_dir()}
    assert {bench.run_folder(r).name for r in bench.RUNS} == folders
    for r in bench.RUNS:
        assert (bench.run_folder(r) / r.cfg).is_file(), r.name
        assert (ROOT / "tests" / "public_specs" / f"{r.model}.py").is_file(), r.name
    assert list(BY_RUN) == [r.name for r in bench.RUNS]
    assert RESULTS["tlc_version"].startswith("TLC2 Version ")
    assert all(r["verdict"] in ("holds", "violated") for r in RESULTS["runs"])


# the counts pinned in tests/test_public_specs*.py outside OTHER_PARAMETERS: run ->
# (distinct, depth) where TLC searched the whole graph, else the trace's states
PINNED = {
    "ewd840": (302, 9), "ewd840_nofair": (302, None), "missionaries_typeok": (64, 13),
    "diehard_typeok": (16, 8), "tcommit": (34, 7), "tcommit_decided": (34, None),
    "twophase_tc": (288, 11), "chameneos": (492, 8), "chameneos_44": (34534, 13),
    "dining": (67, 29), "dining_nofair": (67, None), "token_ring": (256, 1),
    "token_ring_nofair": (256, None), "alloc": (64, 5), "alloc_3c2r": (400, 6),
    "alloc2_obtain": (64, None), "alloc2_infoften": (64, None), "alloc2_return": (64, 5),
    "alloc_wf": (64, None), "a32w": (400, None), "sf_subcycle": (4, None),
    "wf_set": (3, 2), "parreach": (393, 18), "parreach_term": (393, 18),
    "parreach_nofair": (393, None), "parreach_graph": (5903, 28),
}
# the counterexamples TLC printed, as the tests' docstrings give them: states, then how
# the lasso closes (None: an invariant's trace)
STUTTER = "stuttering"
TRACES = {"missionaries": (12, None), "diehard": (7, None), "ewd840_nofair": (3, STUTTER),
          "tcommit_decided": (4, STUTTER), "dining_nofair": (27, STUTTER),
          "token_ring_nofair": (1, STUTTER), "alloc2_obtain": (5, STUTTER),
          "alloc2_infoften": (5, STUTTER), "alloc_wf": (5, "back to state 3"),
          "a32w": (6, STUTTER), "sf_subcycle": (2, "back to state 1"),
          "wf_set_each": (2, "back to state 1"), "parreach_nofair": (16, STUTTER)}


@pytest.mark.parametrize("run", list(PINNED))
def test_a_pinned_count_is_the_recorded_tlc_figure(run):
    assert (BY_RUN[run]["distinct"], BY_RUN[run]["depth"]) == PINNED[run]


@pytest.mark.parametrize("entry", liveness.OTHER_PARAMETERS, ids=lambda e: e[0])
def test_the_other_parameters_are_the_recorded_tlc_figures(entry):
    run, *_, distinct, depth, generated, verdict = entry
    r = BY_RUN[run]
    assert (r["distinct"], r["depth"], r["generated"], r["verdict"]) == (
        distinct, depth, generated, verdict)


@pytest.mark.parametrize("run", list(TRACES))
def test_a_counterexample_length_in_a_docstring_is_tlcs(run):
    assert BY_RUN[run]["verdict"] == "violated"
    assert (BY_RUN[run]["trace_states"], BY_RUN[run]["trace_end"]) == TRACES[run]


def test_lines_of_code_leave_comments_and_docstrings_out():
    py = '"""Doc\nstring."""\n\n# a comment\nx = (1,\n     2)  # trailing\n\n\n' \
         'def f():\n    """Doc."""\n    return x\n'
    assert lines.python_lines(py) == 4
    tla = "---- MODULE M ----\n(* a (* nested *)\n comment *)\nx == 1 \\* note\n\\* only\n===="
    assert lines.tla_lines(tla) == 3


def test_the_guides_line_counts_are_the_model_files():
    doc = json.loads(lines.LINES.read_text())
    assert set(doc["models"]) == set(lines.TRANSLATIONS)
    for name, m in doc["models"].items():
        source = (ROOT / "tests" / "public_specs" / f"{name}.py").read_text()
        assert m["translation"] == lines.python_lines(source), name
        flat = lines.TRANSLATIONS[name][1]
        if flat is not None and flat.file is not None:  # (a commit's copy cannot change)
            assert m["flat_file"] == flat.file, name
            assert m["flat"] == lines.python_lines((ROOT / flat.file).read_text()), name
        assert ("flat" in m) == (flat is not None), name
        if flat is not None:
            assert m["shorter_pct"] == lines.shorter_by(m["translation"], m["flat"]), name
    guide = lines.GUIDE.read_text()
    assert lines.guide_with(guide, doc) == guide


def test_a_flat_version_is_read_from_a_file_or_from_a_commit(monkeypatch):
    flat = lines.TRANSLATIONS["twophase"][1]
    source = (ROOT / "tests" / "public_specs" / "flat" / "twophase.py").read_text()
    assert lines.flat_entry("twophase", flat) == {
        "flat_file": "tests/public_specs/flat/twophase.py",
        "flat": lines.python_lines(source)}
    # the commit form reads the model file's own path at that commit
    shown = []

    def git(*args, repo=lines.ROOT):
        shown.append(args)
        return "abc1234\n" if args[0] == "rev-parse" else "x = 1\ny = 2\n"
    monkeypatch.setattr(lines, "git", git)
    assert lines.flat_entry("chameneos", lines.Flat(commit="e06ea66^")) == {
        "flat_commit": "abc1234", "flat": 2}
    assert shown == [("rev-parse", "--short", "e06ea66^"),
                     ("show", "abc1234:tests/public_specs/chameneos.py")]


def test_the_comparison_with_the_flat_version_can_come_out_worse():
    assert lines.shorter_by(90, 100) == 10.0 and lines.versus(90, 100) == "10.0 % shorter"
    assert lines.shorter_by(105, 100) == -5.0 and lines.versus(105, 100) == "5.0 % longer"
    assert lines.versus(100, 100) == "same length"
    doc = {"models": {
        "a": {"translation": 90, "flat": 100, "flat_file": "tests/public_specs/flat/a.py", "shorter_pct": 10.0,
              "tla_module": "specifications/A/A.tla", "tla": 50},
        "b": {"translation": 130, "flat": 100, "flat_commit": "abc1234", "shorter_pct": -30.0,
              "tla_module": "specifications/B/B.tla", "tla": 60},
        "c": {"translation": 40, "tla_module": "specifications/C/C.tla", "tla": 30}}}
    text = lines.table(doc)
    assert "| a | 90 | 100 (flat/a.py) | 10.0 % shorter | A.tla: 50 |" in text
    assert "| b | 130 | 100 (commit abc1234) | 30.0 % longer | B.tla: 60 |" in text
    assert "| c | 40 | none | | C.tla: 30 |" in text
    # together the longer one outweighs the shorter one: the summary says so
    assert text.endswith("Of the 2 model files with a flat-array version, shorter than it: 1, "
                         "longer: 1, the same length: 0; together 220 lines against 200 "
                         "(10.0 % longer).")


@pytest.mark.parametrize("argv,message", [
    (["--examples", "/no/such/examples-61"],
     "/no/such/examples-61: not a git checkout of tlaplus/Examples"),
    ([], "the following arguments are required: --examples")])
def test_line_counts_refuses_bad_input_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        lines.main(argv)
    assert e.value.code == 150
    assert capsys.readouterr().err.strip() == f"line_counts: {message}"
