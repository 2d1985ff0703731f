"""An implementation's failure is the implementation's: whatever it does to its own
storage or raises, the fuzzer answers with a trace and exit 12, never 153 (a bug in
osf-check).  Each bug is planted here, by a patch of the reference implementation
from the test, not in it."""

from __future__ import annotations

import pytest
import json
import sqlite3

from click.testing import CliRunner

from osf_check.cli import main
from osf_check.fuzz.driver import tour
from osf_check.relay.graph import outbox as outbox_mod
from osf_check.relay.graph.desktop import DesktopRelay


def _fuzz(tmp_path) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["fuzz", "--model", "graph-relay", "--tour-depth", "7",
                                    "--examples", "0", "--json"])
    return res.exit_code, (json.loads(res.stdout) if res.stdout.strip().startswith("{")
                           else {"output": res.output})


@pytest.mark.slow
def test_an_outbox_out_of_autocommit_fails_the_property_not_the_checker(monkeypatch,
                                                                          tmp_path):
    def open_deferred(self):  # the planted bug: Python's default, a deferred transaction
        self._db = sqlite3.connect(self.path)
        self._db.execute("CREATE TABLE IF NOT EXISTS outbox (execution_id TEXT PRIMARY KEY, "
                         "seq INTEGER, payload TEXT NOT NULL)")
    monkeypatch.setattr(outbox_mod.Outbox, "open", open_deferred)
    rep = tour("graph-relay", depth=5)
    assert rep.failure is not None and "uncommitted write" in rep.failure, rep.failure
    code, doc = _fuzz(tmp_path)
    assert code == 12, doc
    assert doc["runs"][0]["trace"]["steps"], doc


@pytest.mark.slow
def test_an_implementation_raising_inside_its_storage_is_a_finding(monkeypatch, tmp_path):
    def acked(self, execution_id):  # the planted bug: the disk refuses the delete
        raise sqlite3.OperationalError("disk I/O error")
    monkeypatch.setattr(DesktopRelay, "acked", acked)
    code, doc = _fuzz(tmp_path)
    assert code == 12, doc  # (was 153: the raise was outside relay/, so "not the implementation")
    run = doc["runs"][0]
    assert "the implementation raised OperationalError" in run["failure"], run["failure"]
    assert "test_fuzz_impl_failures.py" in run["failure"]  # where it was raised
    assert run["trace"]["steps"]
