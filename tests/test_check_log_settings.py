"""check-log never blames a correct deployment for the model's size or settings.

A log of the correct reference implementation recorded with any one parameter of either
model set otherwise than the model's default is refused (exit 12), when checked with the
shipped mapping at the defaults, only where the model at the deployment's parameters
refuses it too (the mapping does not fit that deployment): a bound is judged by reading it again larger
(:mod:`osf_check.tracelog.bounds`), a setting of few values by trying its other values,
a setting of many values by the mapping stating it (:mod:`osf_check.tracelog.settings`).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.cli import main
from osf_check.fuzz.driver import model_for
from osf_check.properties import catalogue
from osf_check.tracelog.check import check_log
from osf_check.tracelog.mapping import compile_mapping, read_document
from osf_check.tracelog.record import walk

EXAMPLES = Path(__file__).parent.parent / "examples"
SEEDS = range(6)


def _other_values() -> list[tuple[str, str, int]]:
    """Every parameter of both models, at a value other than its default."""
    out = []
    for system in ("graph-relay", "wire-relay"):
        for p in catalogue.spec(system).params:
            out.append((system, p.name, p.default + 1 if p.default < p.hi else p.default - 1))
    return out


def _unstated(doc: dict, name: str) -> dict:
    """The mapping ``doc`` without its statement of the setting ``name``."""
    return {**doc, "params": {k: v for k, v in doc.get("params", {}).items() if k != name}}


@pytest.mark.slow
@pytest.mark.parametrize("system,param,value", _other_values())
def test_a_correct_log_of_another_size_or_setting_is_never_refused(system, param, value):
    deployed = model_for(system, None, {param: value})
    m = model_for(system, None)
    doc = _unstated(read_document(EXAMPLES / f"{system}.logmap.toml"), param)
    mp = compile_mapping(m, doc)
    at_deployed = compile_mapping(deployed, doc)
    for s in SEEDS:
        log = walk(deployed, None, seed=s, steps=60, judge=False).log
        res = check_log(io.StringIO(log), m, mp)
        if res.verdict == "refused":  # then the mapping, not the model's size, is why:
            # the model at the deployment's own parameters refuses the log too
            assert not check_log(io.StringIO(log), deployed, at_deployed).explained, \
                (s, res.failing)


@pytest.mark.slow
def test_two_projects_logs_are_unknown_and_name_the_setting_that_explains_them():
    """It was NOT EXPLAINED (exit 12) for half of these logs: projects is no bound, and
    the model at one project was taken for the deployment."""
    deployed = model_for("graph-relay", None, {"projects": 2})
    m = model_for("graph-relay", None)
    mp = compile_mapping(m, read_document(EXAMPLES / "graph-relay.logmap.toml"))
    unknown = 0
    for s in range(10):
        res = check_log(io.StringIO(walk(deployed, None, seed=s, steps=60).log), m, mp)
        assert res.verdict != "refused", (s, res.failing)
        if res.verdict == "unknown":
            unknown += 1
            assert res.failing["settings"]["explained_at"] == {"projects": 2}
    assert unknown >= 5  # the logs that show the second project


def test_cli_says_which_setting_to_rerun_with(tmp_path):
    deployed = model_for("graph-relay", None, {"projects": 2})
    log = tmp_path / "events.jsonl"
    log.write_text(walk(deployed, None, seed=0, steps=60).log)
    mapping = str(EXAMPLES / "graph-relay.logmap.toml")
    r = CliRunner().invoke(main, ["check-log", str(log), "--mapping", mapping])
    assert r.exit_code == 152, r.output
    assert "rerun with --param projects=2" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["check-log", str(log), "--mapping", mapping, "--param",
                                  "projects=2", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output[r.output.index("{"):])["verdict"] == "explained"


def test_a_refusal_at_unstated_settings_of_many_values_is_unknown():
    """The same mutant's log is refused where the mapping states the deployment's limits,
    and unknown where it does not (a limit of 1..64 is not searched)."""
    mutant = "claim-without-slot"
    r = CliRunner().invoke(main, ["explore", "--mutant", mutant, "--json"])
    doc = json.loads(r.output[r.output.index("{"):])
    story = [st["label"] for st in doc["violations"][0]["trace"]["steps"][1:]]
    m = model_for("wire-relay", mutant)
    log = walk(m, mutant, seed=0, steps=60, prefix=story).log
    mapping = read_document(EXAMPLES / "wire-relay.logmap.toml")
    assert check_log(io.StringIO(log), m, compile_mapping(m, mapping)).verdict == "refused"
    res = check_log(io.StringIO(log), m, compile_mapping(m, _unstated(mapping, "lim_client")))
    assert res.verdict == "unknown" and res.failing["bounded"]
    assert res.failing["settings"] == {"unstated": {"lim_client": 1}, "explained_at": None}
