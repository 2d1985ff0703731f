"""check-log on a model with structured state: a mapping names one plain value of a
record, a two-dimensional array or an array indexed by an enum, and the verdicts and
reasons name it as the model's traces do (``proc[0].runs``, ``load[r2]``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.tracelog.mapping import MappingError, compile_mapping
import osf_check

PROCS = Path(__file__).parent / "structured" / "procs.py"

MAPPING = """\
model = "procs"
params = { procs = 2 }

[[event]]
name = "started"
action = "Start"
args = { r = "res" }
state = { "proc[who].pc" = "pc", "proc[who].runs" = "runs", "seen[who][r]" = 1, "load[res]" = "load" }

[[event]]
name = "finished"
action = "Finish"
args = { i = "who" }
state = { "proc[i].pc" = "pc", "proc[i].runs" = "runs" }
"""

GOOD = [("started", {"res": "r2", "who": 0, "pc": "busy", "runs": 1, "load": 1}),
        ("finished", {"who": 0, "pc": "idle", "runs": 1}),
        ("started", {"res": "r1", "who": 1, "pc": "busy", "runs": 1, "load": 1})]


def _run(tmp_path: Path, events, mapping: str = MAPPING):
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps({"time": k + 1, "station": "p", "event": e, "fields": f})
                           + "\n" for k, (e, f) in enumerate(events)))
    mp = tmp_path / "procs.logmap.toml"
    mp.write_text(mapping)
    return CliRunner().invoke(main, ["check-log", str(log), "--mapping", str(mp),
                                     "--model-file", str(PROCS), "--param", "procs=2"])


def test_a_log_of_records_and_two_dimensional_arrays_is_explained(tmp_path):
    r = _run(tmp_path, GOOD)
    assert r.exit_code == 0, r.output
    assert "explains the whole log" in r.output


@pytest.mark.parametrize("line, fields, words", [
    (1, {"runs": 2}, "Finish(i=0) leaves proc[0].runs = 1 where the log says 2"),
    (0, {"load": 2}, "Start(r=r2) leaves load[r2] = 1 where the log says 2"),
    (0, {"pc": "done"}, 'proc[0].pc = "busy" where the log says "done"'),
])
def test_a_wrong_value_is_refused_naming_the_element_as_the_trace_does(tmp_path, line, fields,
                                                                        words):
    events = [(e, dict(f)) for e, f in GOOD]
    events[line][1].update(fields)
    r = _run(tmp_path, events)
    assert r.exit_code == 12, r.output
    assert f"NOT EXPLAINED: line {line + 1}" in r.output and words in r.output, r.output


def test_an_index_beyond_the_models_parameters_is_not_explained(tmp_path):
    events = [(e, dict(f)) for e, f in GOOD]
    events[0][1]["who"] = 5
    r = _run(tmp_path, events)
    assert r.exit_code != 0, r.output
    assert "proc[who].pc with index 5 is beyond the model's parameters" in r.output, r.output


@pytest.mark.parametrize("key, words", [
    ("proc[i]", "names a whole record of proc"),
    ("proc[i].holds", "names a whole setof of proc"),
    ("proc[i].colour", "proc has no .colour there: it takes .field (one of pc, runs, holds)"),
    ("proc.pc", "proc has no .pc there: it takes [index]"),
    ("seen[i]", "names a whole array of seen"),
    ("proc[i].pc[0]", "it takes nothing more: it is a plain value"),
    ("turn[i]", "turn is no array"),
    ("turn.x", "turn is a plain variable or array: name it turn or turn[index]"),
    ("seen[i*2+j]", "i and j must be arguments of Finish"),
])
def test_a_path_that_does_not_name_one_plain_value_is_refused_in_one_line(key, words):
    m = osf_check.Checker(PROCS).params(procs=2).depth(0).explore().model
    doc = {"model": "procs", "event": [{"name": "finished", "action": "Finish",
                                       "args": {"i": "who"}, "state": {key: "x"}}]}
    with pytest.raises(MappingError, match="state.") as e:
        compile_mapping(m, doc)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)
