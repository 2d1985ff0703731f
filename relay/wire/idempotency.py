"""The desktop's idempotency registry: in-memory claims and durable SQLite claims.

Scope key: (user, device = clientId, method, key).  A durable row keeps the SHA-256
fingerprint of the serialized params, a 5-minute lease that is never extended, and
the stored answer for 48 hours.  Decisions follow wire-relay.md:

- no row: claim it and run (beyond 4,096 unexpired rows: capacity error, nothing runs);
- same key, other params: conflict, nothing runs;
- a stored answer: replayed (a retryable one is reclaimed and run again);
- a `running` row whose owner is gone: busy until the lease ends, then an ambiguous
  answer is stored and replayed; it never runs again, except for the four
  replay-safe methods, which may run after an interrupted first copy;
- an answer over 256 KiB, or one that could not be stored, is ambiguous.

>>> reg = DurableClaims(":memory:")
>>> s = Scope("u1", "phone::desk", "session.rename", "k-1")
>>> reg.claim(s, {"name": "a"}, now=0.0).kind
'run'
>>> reg.claim(s, {"name": "b"}, now=1.0).kind
'conflict'
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LEASE = 5 * 60.0
RETENTION = 48 * 3600.0
MAX_ROWS = 4_096
MAX_ANSWER = 256 * 1024
REPLAY_SAFE = frozenset({"run.chatOutboxSubmit", "files.appendChatAttachmentUploadChunk",
                         "files.finishChatAttachmentUpload", "files.cancelChatAttachmentUpload"})
FINAL = frozenset({"invalid_request", "method_not_found", "invalid_params", "unauthorized",
                   "forbidden", "not_found", "conflict", "validation", "billing",
                   "payment_required", "not_implemented"})


def answer_class(answer: dict[str, Any]) -> str:
    """final, retryable or ambiguous (a success is final)."""
    err = answer.get("error")
    if err is None:
        return "final"
    if err.get("retryable") or err.get("code") == "parse_error":
        return "retryable"
    return "final" if err.get("code") in FINAL else "ambiguous"


def fingerprint(params: Any) -> str:
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Scope:
    user: str
    device: str
    method: str
    key: str


@dataclass(frozen=True)
class Decision:
    kind: str  # run, replay, conflict, busy, ambiguous, capacity
    answer: dict[str, Any] | None = None


AMBIGUOUS = {"error": {"code": "ambiguous", "message": "The first attempt's outcome is unknown; "
                       "do not assume it did not run."}}


class DurableClaims:
    """One SQLite row per scope key; the file survives a restart of the desktop."""

    def __init__(self, path: str | Path, max_rows: int = MAX_ROWS):
        self.path, self.max_rows = str(path), max_rows
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("CREATE TABLE IF NOT EXISTS claims (user TEXT, device TEXT, method TEXT, "
                        "key TEXT, fp TEXT NOT NULL, state TEXT NOT NULL, answer TEXT, "
                        "claimed_at REAL NOT NULL, stored_at REAL, "
                        "PRIMARY KEY (user, device, method, key))")

    def close(self) -> None:
        self.db.close()

    def _row(self, s: Scope) -> tuple | None:
        return self.db.execute("SELECT fp, state, answer, claimed_at, stored_at FROM claims "
                               "WHERE user=? AND device=? AND method=? AND key=?",
                               (s.user, s.device, s.method, s.key)).fetchone()

    def expire(self, now: float) -> int:
        """Delete rows whose answer was stored 48 h ago or more; the key is forgotten."""
        cur = self.db.execute("DELETE FROM claims WHERE stored_at IS NOT NULL AND "
                              "stored_at + ? <= ?", (RETENTION, now))
        return cur.rowcount

    def rows(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM claims").fetchone()[0]

    def claim(self, s: Scope, params: Any, now: float, owner_alive: bool = False) -> Decision:
        """Decide what a request with this scope key and params meets (``owner_alive``: the
        in-memory layer knows a live copy; then the caller joins it instead)."""
        self.expire(now)
        fp = fingerprint(params)
        row = self._row(s)
        if row is None:
            if self.rows() >= self.max_rows:
                return Decision("capacity", {"error": {"code": "capacity", "retryable": True,
                                                       "message": "too many idempotency keys"}})
            self.db.execute("INSERT INTO claims VALUES (?,?,?,?,?,?,?,?,?)",
                            (s.user, s.device, s.method, s.key, fp, "running", None, now, None))
            return Decision("run")
        rfp, state, answer, claimed_at, _ = row
        if rfp != fp:
            return Decision("conflict", {"error": {"code": "conflict", "message":
                                                   "idempotency key reused with other params"}})
        if state == "stored":
            stored = json.loads(answer)
            if answer_class(stored) == "retryable":
                self._reclaim(s, now)
                return Decision("run")
            return Decision("replay", stored)
        # running: a live copy (the in-memory layer joins it) or an orphan
        if owner_alive:
            return Decision("busy")
        if s.method in REPLAY_SAFE:
            self._reclaim(s, now)
            return Decision("run")
        if now < claimed_at + LEASE:
            return Decision("busy", {"error": {"code": "busy", "retryable": True,
                                               "message": "the first attempt may still run"}})
        self._store(s, AMBIGUOUS, now)
        return Decision("ambiguous", AMBIGUOUS)

    def _reclaim(self, s: Scope, now: float) -> None:
        self.db.execute("UPDATE claims SET state='running', answer=NULL, claimed_at=?, "
                        "stored_at=NULL WHERE user=? AND device=? AND method=? AND key=?",
                        (now, s.user, s.device, s.method, s.key))

    def _store(self, s: Scope, answer: dict[str, Any], now: float) -> None:
        self.db.execute("UPDATE claims SET state='stored', answer=?, stored_at=? WHERE user=? "
                        "AND device=? AND method=? AND key=?",
                        (json.dumps(answer, ensure_ascii=False), now, s.user, s.device, s.method,
                         s.key))

    def store(self, s: Scope, answer: dict[str, Any], now: float) -> dict[str, Any]:
        """Store the answer for replay; returns what the caller must send: the answer, or an
        ambiguous one if it is too large to store (never a success without a replay entry)."""
        text = json.dumps(answer, ensure_ascii=False)
        if len(text.encode("utf-8")) > MAX_ANSWER:
            answer = AMBIGUOUS
        try:
            self._store(s, answer, now)
        except sqlite3.Error:
            return AMBIGUOUS
        return answer
