"""scripts/mutation_score.py's arithmetic: the score can come out worse, equivalents
leave the denominator, and bad input is one line and exit 150."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import mutation_score as ms  # noqa: E402


def _meta(tmp_path: Path, codes: dict[str, int | None]) -> Path:
    f = tmp_path / "mutants" / "relay" / "wire" / "x.py.meta"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"exit_code_by_key": codes}), encoding="utf-8")
    return tmp_path


def test_a_survivor_lowers_the_score_and_an_equivalent_leaves_the_denominator(tmp_path):
    names = [f"osf_check.relay.wire.x.x_f__mutmut_{i}" for i in range(4)]
    work = _meta(tmp_path, {names[0]: 1, names[1]: 36, names[2]: 0, names[3]: 33})
    st = ms.collect(work)
    assert st == {names[0]: "killed", names[1]: "killed", names[2]: "survived",
                  names[3]: "no tests"}
    r = ms.score(st, {})["osf_check/relay/wire"]
    assert (r["mutants"], r["killed"], r["score"]) == (4, 2, 50.0)
    assert r["surviving"] == [names[2], names[3]]
    r = ms.score(st, {names[2]: "why"})["osf_check/relay/wire"]
    assert (r["equivalent"], r["score"]) == (1, 66.7)
    all_killed = ms.score({n: "killed" for n in names}, {})["osf_check/relay/wire"]
    assert all_killed["score"] == 100.0 and ms.score(st, {})["osf_check/relay/graph"]["score"] is None


def test_an_equivalent_that_a_test_kills_is_reported():
    names = [f"osf_check.relay.wire.x.x_f__mutmut_{i}" for i in range(2)]
    r = ms.score({names[0]: "killed", names[1]: "survived"},
                 {names[0]: "said to be equivalent", names[1]: "is"})["osf_check/relay/wire"]
    assert r["killed_equivalents"] == [names[0]] and r["surviving"] == []


def test_the_equivalents_file_is_well_formed_and_each_line_says_why():
    eq = ms.equivalents()
    for name, why in eq.items():
        assert name.startswith("osf_check.relay.") and "__mutmut_" in name, name
        assert len(why.split()) >= 4, name


def test_bad_input_is_one_line_and_exit_150(tmp_path, capsys):
    (tmp_path / "x").write_text("", encoding="utf-8")
    assert ms.main(["--keep", str(tmp_path)]) == 150
    assert ms.main(["--jobs", "0"]) == 150
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("mutation_score: ") for line in err)
