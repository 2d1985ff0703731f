"""The durable idempotency claims of the wire implementation (relay.wire.idempotency)."""

from __future__ import annotations

import sqlite3

from osf_check.relay.wire.idempotency import (AMBIGUOUS, LEASE, MAX_ANSWER, RETENTION, DurableClaims,
                                    Scope, answer_class)
from osf_check.relay.wire.errors import desktop_error

S = Scope("user-1", "phone-1::desk-1", "system.activateCodexAuthProfile", "op-1")
OK = {"result": {"ok": True}}


def test_claim_run_store_replay(tmp_path):
    reg = DurableClaims(tmp_path / "claims.sqlite")
    assert reg.claim(S, {"a": 1}, 0).kind == "run"
    assert reg.store(S, OK, 10) == (OK, True)
    d = reg.claim(S, {"a": 1}, 20)
    assert (d.kind, d.answer) == ("replay", OK)


def test_other_params_conflict_and_other_method_is_another_key(tmp_path):
    reg = DurableClaims(tmp_path / "c.sqlite")
    reg.claim(S, {"a": 1}, 0)
    assert reg.claim(S, {"a": 2}, 1).kind == "conflict"
    other = Scope(S.user, S.device, "session.delete", S.key)
    assert reg.claim(other, {"a": 2}, 1).kind == "run"


def test_orphan_is_busy_until_the_lease_ends_then_ambiguous_and_never_reruns(tmp_path):
    reg = DurableClaims(tmp_path / "c.sqlite")
    reg.claim(S, {"a": 1}, 0)  # the handler is dropped: the row stays running
    assert reg.tick(LEASE - 1) == 0
    assert reg.claim(S, {"a": 1}, LEASE - 1).kind == "busy"
    assert reg.tick(LEASE) == 1  # the lease is a timer, never extended
    d = reg.claim(S, {"a": 1}, LEASE + 1)
    assert (d.kind, d.answer) == ("ambiguous", AMBIGUOUS)
    assert reg.claim(S, {"a": 1}, LEASE + 2).kind == "replay"  # the ambiguous answer


def test_replay_safe_methods_may_run_again_after_an_interrupted_first_copy(tmp_path):
    reg = DurableClaims(tmp_path / "c.sqlite")
    s = Scope(S.user, S.device, "run.chatOutboxSubmit", "op-2")
    assert reg.claim(s, {"q": 1}, 0).kind == "run"
    assert reg.claim(s, {"q": 1}, 1).kind == "run"


def test_retryable_answers_are_reclaimed(tmp_path):
    reg = DurableClaims(tmp_path / "c.sqlite")
    reg.claim(S, {}, 0)
    reg.store(S, desktop_error("unavailable", retryable=True), 1)
    assert reg.claim(S, {}, 2).kind == "run"


def test_rows_survive_a_restart_and_are_forgotten_after_48_hours(tmp_path):
    p = tmp_path / "c.sqlite"
    reg = DurableClaims(p)
    reg.claim(S, {}, 0)
    reg.store(S, OK, 5)
    reg.close()
    reg = DurableClaims(p)  # the desktop restarted: the durable layer remembers
    assert reg.claim(S, {}, 100).kind == "replay"
    assert reg.tick(4 + RETENTION) == 0
    assert reg.tick(5 + RETENTION) == 1  # deleted 48 h after the answer was stored
    assert reg.claim(S, {}, 5 + RETENTION).kind == "run"  # forgotten: runs as a new mutation


def test_capacity_and_oversized_answers(tmp_path):
    reg = DurableClaims(tmp_path / "c.sqlite", max_rows=2)
    for k in ("a", "b"):
        assert reg.claim(Scope("u", "d", "m", k * 8), {}, 0).kind == "run"
    assert reg.claim(Scope("u", "d", "m", "c" * 8), {}, 0).kind == "capacity"
    big = {"result": "x" * (MAX_ANSWER + 1)}
    assert reg.store(Scope("u", "d", "m", "a" * 8), big, 1) == (AMBIGUOUS, True)
    # a failed store leaves the row running and the answer ambiguous, never a bare success
    reg.db.set_authorizer(lambda action, *a: sqlite3.SQLITE_DENY
                          if action == sqlite3.SQLITE_UPDATE else sqlite3.SQLITE_OK)
    assert reg.store(Scope("u", "d", "m", "b" * 8), OK, 2) == (AMBIGUOUS, False)
    reg.db.set_authorizer(None)
    assert reg.row(Scope("u", "d", "m", "b" * 8)).state == "running"


def test_error_classes():
    assert answer_class(OK) == "final"
    assert answer_class(desktop_error("not_found")) == "final"
    assert answer_class(desktop_error("parse_error")) == "retryable"
    assert answer_class(desktop_error("internal")) == "ambiguous"
    assert answer_class(AMBIGUOUS) == "ambiguous"
