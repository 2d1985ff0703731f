"""Structured state: records, tuples, sets inside them, arrays indexed by an enum or in
two dimensions.  They pack into the slots the engines read, so the checks here are that
a structured model is the transition system its flat writing is, that a computed index
reaches only the element it names, and that traces show the structure."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import osf_check
from osf_check import And, Bool, Enum, Int, ModelBuilder, ModelError, Not
from osf_check.cli import main
from osf_check.models.errors import BadValue
from osf_check.models.expr import evaluate
from osf_check.models.structured import Record, SetOf, Tuple

PROCS = Path(__file__).resolve().parent / "structured" / "procs.py"
PC = Enum("idle", "busy", "done")


def _step(model, state, label):
    [inst] = [i for i in model.instances if i.label == label]
    assert evaluate(inst.guard, state), label
    nxt = list(state)
    for slot, e in inst.updates.items():
        nxt[slot] = evaluate(e, state)
    return tuple(nxt)


def _flat_procs(n: int):
    """procs.py written as before records: one array per field, a set as one flat array
    of bits indexed ``i * 2 + r``, a 2-D array flat as ``i * 2 + r``."""
    b = ModelBuilder("procs-flat", actors=("proc",))
    b.array("pc", PC, n, actor="proc")
    b.array("runs", Int(0, 2), n, actor="proc")
    b.array("holds", Bool(), n * 2, actor="proc")
    b.array("seen", Int(0, 1), n * 2, actor="proc")
    b.array("load", Int(0, n), 2, actor="proc")
    b.var("turn", Int(0, n - 1), actor="proc")

    @b.action("proc", params={"r": range(2)})
    def start(s, r):
        return (And(s.pc[s.turn] == PC.idle, s.runs[s.turn] < 2),
                {s.pc[s.turn]: PC.busy, s.runs[s.turn]: s.runs[s.turn] + 1,
                 s.holds[s.turn * 2 + r]: True, s.seen[s.turn * 2 + r]: 1,
                 s.load[r]: s.load[r] + 1, s.turn: (s.turn + 1) % n})

    @b.action("proc", params={"i": range(n)})
    def finish(s, i):
        return (s.pc[i] == PC.busy,
                {s.pc[i]: PC.idle, s.holds[i * 2]: False, s.holds[i * 2 + 1]: False,
                 **{s.load[r]: s.load[r] - s.holds[i * 2 + r] for r in range(2)}})

    b.init(pc=PC.idle, runs=0, holds=False, seen=0, load=0, turn=0)
    b.quiescent(lambda s: True)
    return b.build()


@pytest.mark.parametrize("n", [2, 3])
def test_records_and_2d_arrays_explore_as_their_flat_writing_does(n):
    r = osf_check.Checker(PROCS).params(procs=n).depth(None).keep_going().explore()
    flat = osf_check.Checker(_flat_procs(n)).depth(None).explore()
    assert (r.distinct, r.generated, len(r.histogram)) == \
        (flat.distinct, flat.generated, len(flat.histogram))
    vec = osf_check.Checker(PROCS).params(procs=n).engine("vector").depth(None) \
        .keep_going().explore()
    assert (vec.distinct, vec.generated) == (r.distinct, r.generated)
    # one slot per field, element after element, each with its field's domain
    m = r.model
    assert m.slot_names[:4] == ["proc[0].pc", "proc[0].runs", "proc[0].holds[r1]",
                                "proc[0].holds[r2]"]
    assert [repr(d) for d in m.slot_domains[:4]] == [repr(PC), "Int(0, 2)", "Bool()", "Bool()"]
    assert m.bits() == flat.model.bits()


def test_a_computed_index_updates_only_the_element_it_names():
    m = osf_check.Checker(PROCS).params(procs=3).depth(0).explore().model
    s = m.parse_state({"proc": [{"pc": "idle", "runs": 0, "holds": {"#set": []}}] * 3,
                       "seen": [[0, 0]] * 3, "load": {"#map": [["r1", 0], ["r2", 0]]},
                       "turn": 1})
    s = _step(m, s, "Start(r=r2)")
    got = m.show_state(s)
    assert got["proc"][1] == {"pc": "busy", "runs": 1, "holds": {"#set": ["r2"]}}
    assert got["proc"][0] == got["proc"][2] == {"pc": "idle", "runs": 0,
                                                "holds": {"#set": []}}
    row = lambda r1, r2: {"#map": [["r1", r1], ["r2", r2]]}  # noqa: E731
    assert got["seen"] == [row(0, 0), row(0, 1), row(0, 0)]
    assert got["load"] == {"#map": [["r1", 0], ["r2", 1]]} and got["turn"] == 2
    s = _step(m, s, "Finish(i=1)")
    assert m.show_state(s)["proc"][1] == {"pc": "idle", "runs": 1, "holds": {"#set": []}}
    assert m.show_state(s)["load"] == {"#map": [["r1", 0], ["r2", 0]]}


def test_a_column_past_its_row_is_an_error_not_the_next_rows_first_element():
    """m[0, 3] of a 2 x 3 array is outside it: each index is checked against its own
    dimension (a flat index 0 * 3 + 3 would read m[1, 0] without a word)."""
    b = ModelBuilder("grid")
    b.array("m", Int(0, 1), (2, 3), actor="x")
    b.var("c", Int(0, 3), actor="x")

    @b.action("x")
    def step(s):
        return s.m[0, s.c] == 0, {s.c: s.c + 1, s.m[1][0]: 1}

    b.init(m=0, c=0)
    b.quiescent(lambda s: True)
    m = b.build()
    for engine in ("explicit", "vector"):
        with pytest.raises(ModelError, match="index 3, outside 0..2"):
            osf_check.Checker(m).engine(engine).depth(None).explore()


def test_an_enum_indexes_an_array_by_name():
    b = ModelBuilder("colours")
    colour = Enum("red", "green")
    b.array("count", Int(0, 3), colour, actor="x")

    @b.action("x", params={"c": range(2)}, labels={"c": colour})
    def bump(s, c):
        return s.count[c] < 3, {s.count[c]: s.count[c] + 1}

    b.init(count={"#map": [["red", 1], ["green", 0]]})
    m = b.build()
    assert m.slot_names == ["count[red]", "count[green]"]
    st = m.initial_states[0]
    assert m.show_state(st) == {"count": {"#map": [["red", 1], ["green", 0]]}}
    assert m.parse_state(m.show_state(st)) == st
    assert evaluate(m.view().count["red"], st) == 1
    with pytest.raises(ModelError, match=r"count\['blue'\]: expected one of red, green"):
        m.view().count["blue"]
    with pytest.raises(BadValue, match="expected a list of 2 values or a"):
        m.parse_state({"count": 3})


def test_z3_reads_each_field():
    """z3 alone (no BFS sample) breaks the invariant over the records' set fields at
    explore's depth, and its counterexample shows the records."""
    p = osf_check.Checker(PROCS).properties("PR1").prove(sample_depth=0)
    [j] = p.to_json()["properties"]
    assert (j["status"], j["k"]) == ("refuted", 2)
    last = j["trace"]["steps"][-1]["state"]
    assert [x["holds"] for x in last["proc"]] == [{"#set": ["r2"]}] * 2


def test_records_tuples_and_sets_in_them_read_write_and_show():
    b = ModelBuilder("rec")
    b.var("r", Record(pc=PC, pair=Tuple(Int(0, 2), Bool()), s=SetOf(Enum("a", "b"))),
          actor="x")

    @b.action("x")
    def go(s):
        return (s.r.pair[0] < 2,
                {**s.r.update(pc="done", s=["b"]), s.r.pair[0]: s.r.pair[0] + 1,
                 s.r.pair[1]: True})

    b.init(r={"pc": "idle", "pair": [0, False], "s": {"#set": ["a"]}})
    m = b.build()
    st = _step(m, m.initial_states[0], "go")
    assert m.show_state(st) == {"r": {"pc": "done", "pair": {"#tup": [1, True]},
                                      "s": {"#set": ["b"]}}}
    assert m.parse_state(m.show_state(st)) == st
    with pytest.raises(BadValue, match="expected a record with fields pc, pair, s"):
        m.parse_state({"r": {"pc": "idle"}})
    with pytest.raises(AttributeError, match="has no field 'pcc'"):
        m.view().r.pcc
    with pytest.raises(ModelError, match="r.pc: expected one of idle, busy, done"):
        m.view().r.update(pc="gone")


def test_init_all_takes_a_domain_for_a_field_and_where_filters():
    b = ModelBuilder("many")
    b.array("p", Record(pc=PC, n=Int(0, 1)), 2, actor="x")
    b.init_all(p={"pc": PC, "n": 0}, where=lambda s: s.p[0].pc != PC.done)
    m = b.build()
    assert len(m.initial_states) == 2 * 3
    assert m.init_predicate() is not None


def test_symmetry_refuses_an_array_of_records():
    b = ModelBuilder("sym")
    b.array("p", Record(pc=PC, n=Int(0, 1)), 2, actor="x")
    with pytest.raises(ModelError, match="p is an array of records"):
        b.symmetric("P", ["p"])


def _cli(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    return r.exit_code, r.stdout


def test_traces_show_records_maps_and_names(tmp_path):
    code, _ = _cli("explore", "--model-file", PROCS, "--depth", "unbounded", "--out",
                   tmp_path)
    assert code == 12
    text = (tmp_path / "procs-PR1-inv.txt").read_text()
    assert "proc  [[pc |-> idle, runs |-> 0, holds |-> {}]" in text
    assert "* proc  [1].pc idle→busy, [1].runs 0→1, [1].holds {}→{r2}" in text
    assert "* load  [r2] 1→2" in text and "* seen  [1][r2] 0→1" in text
    itf_path = tmp_path / "procs-PR1-inv.itf.json"
    itf = json.loads(itf_path.read_text())
    last = itf["states"][-1]
    assert last["proc"][1] == {"pc": "busy", "runs": 1, "holds": {"#set": ["r2"]}}
    assert last["load"] == {"#map": [["r1", 0], ["r2", 2]]}
    assert itf["#meta"]["varTypes"]["proc"]["of"]["kind"] == "record"
    from osf_check.traces.format import load_trace
    assert load_trace(itf_path) == load_trace(tmp_path / "procs-PR1-inv.trace.json")
    code, out = _cli("render", itf_path, "--format", "text")
    assert code == 0 and "[1].holds {}→{r2}" in out
    html = (tmp_path / "report.html").read_text()
    assert '"#map"' in html and '"runs": 1' in html.replace('"runs":1', '"runs": 1')


def test_prove_through_the_cli_shows_records_and_pictures_draw_them(tmp_path):
    """A model with records and sets, proved through the command line: the refutation
    and its pictures speak of records, sets and enum names, not slots."""
    code, out = _cli("prove", "--model-file", PROCS, "--continue")
    assert code == 12
    assert "PR1 not-both-r2                      refuted at depth 2" in out
    assert "   * proc  [1].pc idle→busy, [1].runs 0→1, [1].holds {}→{r2}" in out
    code, _ = _cli("explore", "--model-file", PROCS, "--depth", "unbounded", "--out",
                   tmp_path)
    seq = (tmp_path / "procs-PR1-inv.sequence.mmd").read_text()
    assert "proc: [1].pc idle→busy, [1].runs 0→1, [1].holds {}→{r2}" in seq
    graph = (tmp_path / "procs-PR1-inv.graph.svg").read_text()
    assert "holds |&#45;&gt; {r2}" in graph  # [pc |-> busy, runs |-> 1, holds |-> {r2}]


def test_describe_names_fields_and_reads_each_fields_domain():
    code, out = _cli("describe", "--model-file", PROCS)
    assert code == 0, out
    assert "`proc[turn].runs < 2`" in out  # runs' domain, not pc's, and the path
    assert "`proc[1].holds[r2]' = true if turn = 1 (else unchanged)`" in out
    assert '| `load` | {"#map": [[key, value], ...]} from "r1" \\| "r2" to integer 0..2 |' \
        in out


@pytest.mark.skipif(shutil.which("node") is None, reason="no node to run the page's script")
def test_the_report_page_writes_records_maps_and_tuples_as_the_text_trace_does(tmp_path):
    """The page's own fmt (its script, run by node) against the text trace's."""
    from osf_check.traces.story import fmt
    code, _ = _cli("explore", "--model-file", PROCS, "--depth", "unbounded", "--out",
                   tmp_path)
    html = (tmp_path / "report.html").read_text()
    js = re.search(r"^function fmt\(v\) \{.*?^\}$", html, re.M | re.S).group(0)
    values = [{"pc": "busy", "holds": {"#set": ["r2"]}}, {"#map": [["r1", 0], ["r2", 2]]},
              {"#tup": [1, "busy"]}, [{"a": 1}]]
    out = subprocess.run(["node", "-e", f"{js}\nconsole.log(JSON.stringify("
                          f"{json.dumps(values)}.map(fmt)))"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [fmt(v) for v in values]
    assert json.loads(out)[0] == "[pc |-> busy, holds |-> {r2}]"


def test_a_wrong_record_in_a_model_file_or_a_trace_is_one_line_and_exit_150(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(PROCS.read_text().replace('"procs"', '"procs-bad"').replace(
        'b.init(proc={"pc": "idle", "runs": 0,', 'b.init(proc={"pc": "gone", "runs": 0,'))
    r = CliRunner().invoke(main, ["explore", "--model-file", str(bad)])
    assert r.exit_code == 150
    assert "initial value of proc: expected one of idle, busy, done, got 'gone'" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    _cli("explore", "--model-file", PROCS, "--depth", "unbounded", "--out", tmp_path)
    itf = json.loads((tmp_path / "procs-PR1-inv.itf.json").read_text())
    itf["states"][1]["proc"][0] = {"pc": "busy", "#runs": 1}  # not a record ITF writes
    (tmp_path / "x.itf.json").write_text(json.dumps(itf))
    r = CliRunner().invoke(main, ["render", str(tmp_path / "x.itf.json")])
    assert r.exit_code == 150 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "proc holds" in r.stderr


def test_comparing_whole_records_with_equals_is_not_python_identity():
    b = ModelBuilder("eq")
    b.array("p", Record(pc=PC, n=Int(0, 1)), 2, actor="x")

    @b.action("x")
    def copy(s):
        return Not(s.p[0].equals(s.p[1])), s.p[0].assign(s.p[1])

    b.init(p=[{"pc": "idle", "n": 0}, {"pc": "busy", "n": 1}])
    m = b.build()
    s, st = m.view(), m.initial_states[0]
    with pytest.raises(ModelError, match=r"compare it with \.equals\(other\)"):
        s.p[0] == s.p[1]
    assert evaluate(s.p[0].equals(s.p[0]), st) == 1
    st = _step(m, st, "copy")
    assert m.show_state(st)["p"] == [{"pc": "busy", "n": 1}] * 2


def test_a_check_log_mapping_refuses_a_whole_record():
    """A mapping names one plain value; ``proc[1]`` is a whole record (its slots are its
    fields), so it is refused in one line that says how far to go, not misread as the
    second slot of proc."""
    from osf_check.tracelog.mapping import MappingError, _rule
    m = osf_check.Checker(PROCS).depth(0).explore().model
    with pytest.raises(MappingError, match=r"state\.proc\[1\]: names a whole record of "
                       r"proc: name one of its plain values"):
        _rule(m, {"name": "x", "action": "Finish", "state": {"proc[1]": "c"}}, 0)


def test_an_int_range_indexes_from_its_least_value():
    """TLA+'s [1..2 -> BOOLEAN]: x[1] is the first element, at a constant or a computed
    index alike."""
    b = ModelBuilder("from1")
    b.array("x", Bool(), Int(1, 2), actor="a")
    b.var("i", Int(1, 2), actor="a")

    @b.action("a")
    def mark(s):
        return Not(s.x[s.i]), {s.x[s.i]: True, s.i: 3 - s.i}

    b.init(x=False, i=2)
    m = b.build()
    assert m.slot_names == ["x[1]", "x[2]", "i"]
    st = _step(m, m.initial_states[0], "mark")
    assert m.show_state(st) == {"x": {"#map": [[1, False], [2, True]]}, "i": 1}
    assert evaluate(m.view().x[2], st) == 1
    with pytest.raises(ModelError, match=r"x\[0\] is outside Int\(1, 2\)"):
        m.view().x[0]
