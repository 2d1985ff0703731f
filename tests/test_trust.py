"""Verdicts a user can bet on: internal errors are not bad input, misspelt mutants are
refused everywhere, fuzz runs repeat exactly, and relay/ holds only the protocol."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from osf_check.fuzz import mutants
from osf_check.fuzz.driver import SYSTEMS, hypothesis_run, make_harness, model_for, replay, tour
from osf_check.models.errors import UnknownName
from osf_check.cli import main

ROOT = Path(__file__).resolve().parents[1]


# internal errors: exit 153, one line, the traceback in a file ------------------------------
def test_a_bug_inside_an_engine_is_an_internal_error_not_bad_input(monkeypatch, tmp_path):
    import osf_check.explorer.check as check
    def broken(*args, **kwargs):
        raise KeyError("internal-bug")

    monkeypatch.setattr(check, "check_graph", broken)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    r = CliRunner().invoke(main, ["explore", "--model", "graph-relay", "--depth", "3"])
    assert r.exit_code == 153, r.output
    lines = [x for x in r.stderr.splitlines() if "internal error" in x]
    assert len(lines) == 1 and "internal error, a bug in osf-check" in lines[0]
    assert r.stderr.strip().splitlines()[-1] == lines[0] and "Traceback" not in r.stderr
    path = Path(re.search(r"traceback in (\S+)", lines[0]).group(1))
    assert path.parent == tmp_path and "KeyError: 'internal-bug'" in path.read_text()


def test_bad_input_still_exits_150():
    r = CliRunner().invoke(main, ["explore", "--model", "graph-relay", "--param", "agents=99"])
    assert r.exit_code == 150 and r.stderr.startswith("osf-check: error:")


def test_an_unknown_mutant_alone_says_it_is_unknown():
    r = CliRunner().invoke(main, ["explore", "--mutant", "no-such-bug"])
    assert r.exit_code == 150
    assert "unknown mutant 'no-such-bug'" in r.stderr and "fresh-key-on-retry" in r.stderr


# misspelt mutants are refused by every API ----------------------------------------------------
MISSPELT = "disconect-leaves-pending"


@pytest.mark.parametrize("call", [
    lambda: tour("wire-relay", mutant=MISSPELT, depth=2),
    lambda: hypothesis_run("wire-relay", mutant=MISSPELT, examples=1),
    lambda: model_for("wire-relay", MISSPELT),
    lambda: make_harness(model_for("wire-relay", None), MISSPELT, None),
    lambda: make_harness(model_for("graph-relay", None), "outbox-of", None),
    lambda: mutants.lookup("graph-relay", "no-generation-check"),
], ids=["tour", "hypothesis", "model_for", "wire harness", "graph harness", "wrong system"])
def test_a_misspelt_mutant_is_refused_with_the_known_names(call):
    with pytest.raises(UnknownName, match="known: "):
        call()


def test_replay_refuses_a_misspelt_mutant():
    tr = {"model": "graph-relay", "params": {}, "steps": []}
    with pytest.raises(UnknownName):
        replay(tr, mutant="outbox-of")


def test_every_catalogue_mutant_of_an_implementation_has_its_bug_class():
    from osf_check.properties import catalogue
    impl = {n for s in SYSTEMS for n in mutants.names(s)}
    model = {m.name for m in catalogue.MUTANTS if m.model in SYSTEMS}
    # every model mutant of a system with an implementation is applied to it
    assert model <= impl, model - impl
    for s in SYSTEMS:
        for n in mutants.names(s):
            assert mutants.lookup(s, n).classes, n


# the reference implementation carries nothing of the checker -----------------------------
def test_relay_holds_no_mutant_no_hook_and_no_ghost():
    text = "\n".join(p.read_text() for p in (ROOT / "osf_check" / "relay").rglob("*.py"))
    for word in ("mutant", "MUTANTS", "fail_next_store", "cancelled_while_queued",
                 "in_memory", "test hook", "ghost"):
        assert word not in text, word


def test_the_harness_judges_answers_without_the_implementations_helpers():
    pattern = r"from (osf_check\.)?relay\.\S+ import .*\b{}\b"
    assert re.search(pattern.format("kind_of"), "from osf_check.relay.wire.errors import kind_of")
    for name in ("graph_harness.py", "wire_harness.py", "oracles.py"):
        text = (ROOT / "fuzz" / name).read_text()
        imports = "\n".join(x for x in text.splitlines() if x.startswith(("from ", "import ")))
        for helper in ("answer_class", "kind_of", "bounded", "fingerprint", "desktop_error"):
            assert not re.search(pattern.format(helper), imports), \
                (name, helper)


# reproducible fuzzing ----------------------------------------------------------------------
@pytest.mark.slow
def test_the_same_seed_gives_the_same_run_wherever_it_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = [hypothesis_run("graph-relay", mutant="queue-on-desktop", examples=300, steps=40,
                           seed=0, profile="dev") for _ in range(2)]
    assert runs[0].failure is not None
    assert runs[0].hypothesis_examples == runs[1].hypothesis_examples
    assert runs[0].path == runs[1].path
    assert not (tmp_path / ".hypothesis").exists()


@pytest.mark.slow
def test_a_database_is_used_only_when_asked_for(tmp_path):
    db = tmp_path / "db"
    rep = hypothesis_run("graph-relay", mutant="queue-on-desktop", examples=300, steps=40,
                         seed=0, profile="dev", db=str(db))
    assert rep.failure is not None and db.exists()


def test_a_fuzz_run_leaves_nothing_in_the_directory_it_ran_in(tmp_path):
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    code = ("from osf_check.fuzz.driver import hypothesis_run\n"
            "r = hypothesis_run('graph-relay', examples=5, steps=5, seed=0, profile='dev')\n"
            "assert r.failure is None, r.failure\n")
    env = {k: v for k, v in __import__("os").environ.items()
           if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PYTHONPATH"] = str(root)
    run = tmp_path / "cwd"
    run.mkdir()
    p = subprocess.run([sys.executable, "-c", code], cwd=run, env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    assert list(run.iterdir()) == []  # no .hypothesis, no database, no cache


def test_importing_the_reference_implementation_loads_nothing_of_the_checker():
    import subprocess
    import sys
    code = ("import sys, osf_check.relay.wire.app, osf_check.relay.wire.relay_router, "
            "osf_check.relay.graph.server, osf_check.relay.graph.desktop\n"
            "print(sorted(m for m in sys.modules if m.startswith(('osf_check.explorer', "
            "'osf_check.fuzz', 'osf_check.models', 'osf_check.api', 'numpy', 'z3'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_the_mutants_whose_counterexamples_replay_refuses_are_the_docs_four():
    """replay refuses a trace whose states the implementation's abstraction cannot show
    (variables sized otherwise); docs/fuzzing.md names the mutants whose models do that."""
    from osf_check.explorer.check import prepare
    from osf_check.fuzz.driver import IMPL_MUTANTS, _same_shape
    from osf_check.models.errors import BadValue
    from osf_check.properties import catalogue
    refused = []
    for mu in catalogue.MUTANTS:
        if mu.model not in SYSTEMS or mu.name not in IMPL_MUTANTS[mu.model]:
            continue
        theirs, _, _ = prepare(mu.model, params=dict(mu.params), mutant=mu.name)
        ours = model_for(mu.model, mu.name)
        trace = {"mutant": mu.name,
                 "steps": [{"state": theirs.show_state(theirs.initial_states[0])}]}
        try:
            _same_shape(ours, ours.initial_states[0], trace)
        except BadValue:
            refused.append(mu.name)
    assert sorted(refused) == ["fresh-key-on-retry", "retry-mints-new-key",
                               "scope-key-without-method", "server-ignores-key"]
    readme = (Path(__file__).parent.parent / "docs" / "fuzzing.md").read_text()
    assert "four mutants\nwhose models size their variables otherwise (`fresh-key-on-retry`,\n" \
        "`server-ignores-key`, `scope-key-without-method`, `retry-mints-new-key`)" in readme
