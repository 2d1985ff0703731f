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

Time is given, never read: the end of a lease and the end of a row's retention are
timers (:meth:`DurableClaims.timers`) that the shell fires; their deadlines come from
the row's own timestamps, so they survive a restart with the file.

>>> reg = DurableClaims(":memory:")
>>> s = Scope("u1", "phone::desk", "system.activateCodexAuthProfile", "k-1")
>>> reg.claim(s, {"name": "a"}, now=0.0).kind
'run'
>>> reg.claim(s, {"name": "b"}, now=1.0).kind
'conflict'
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import constants
from .errors import answer_class, desktop_error
from .text import compact, paired

__all__ = ["AMBIGUOUS", "DurableClaims", "MemoryClaims", "Row", "Scope", "answer_class",
           "fingerprint"]

LEASE = float(constants.LEASE)
RETENTION = float(constants.RETENTION)
MAX_ROWS = 4_096
MAX_ANSWER = 256 * 1024
MAX_WAITERS = 32
MAX_COMPLETED = 512
MAX_RUNNING = 64
REPLAY_SAFE = frozenset({"run.chatOutboxSubmit", "files.appendChatAttachmentUploadChunk",
                         "files.finishChatAttachmentUpload", "files.cancelChatAttachmentUpload"})

AMBIGUOUS = desktop_error("ambiguous", "The first attempt's outcome is unknown; do not assume "
                          "it did not run.")
BUSY = desktop_error("busy", "The first attempt may still run; retry later.")


def fingerprint(params: Any) -> str:
    text = compact(params, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Scope:
    user: str
    device: str
    method: str
    key: str


def _columns(s: Scope) -> tuple[str, ...]:
    """The scope as SQLite stores it (text the router read: no lone half, see .text)."""
    return tuple(paired(x) for x in (s.user, s.device, s.method, s.key))


@dataclass(frozen=True)
class Decision:
    kind: str  # run, replay, conflict, busy, ambiguous, capacity
    answer: dict[str, Any] | None = None


@dataclass(frozen=True)
class Row:
    fp: str
    state: str  # running, stored
    answer: dict[str, Any] | None
    claimed_at: float
    stored_at: float | None
    lease_over: bool


class DurableClaims:
    """One SQLite row per scope key; the file survives a restart of the desktop."""

    def __init__(self, path: str | Path, max_rows: int = MAX_ROWS):
        self.path, self.max_rows = str(path), max_rows
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("CREATE TABLE IF NOT EXISTS claims (user TEXT, device TEXT, method TEXT, "
                        "key TEXT, fp TEXT NOT NULL, state TEXT NOT NULL, answer TEXT, "
                        "claimed_at REAL NOT NULL, stored_at REAL, lease_over INTEGER NOT NULL "
                        "DEFAULT 0, PRIMARY KEY (user, device, method, key))")

    def close(self) -> None:
        self.db.close()

    _WHERE = "WHERE user=? AND device=? AND method=? AND key=?"

    def row(self, s: Scope) -> Row | None:
        r = self.db.execute("SELECT fp, state, answer, claimed_at, stored_at, lease_over FROM "
                            "claims " + self._WHERE, _columns(s)).fetchone()
        if r is None:
            return None
        return Row(r[0], r[1], json.loads(r[2]) if r[2] is not None else None, r[3], r[4],
                   bool(r[5]))

    def rows(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM claims").fetchone()[0]

    # decisions ---------------------------------------------------------------------------
    def conflicts(self, s: Scope, params: Any) -> bool:
        row = self.row(s)
        return row is not None and row.fp != fingerprint(params)

    def claim(self, s: Scope, params: Any, now: float, owner_alive: bool = False) -> Decision:
        """Decide what a request with this scope key and params meets (``owner_alive``: the
        in-memory layer knows a live copy; then the caller joins it instead)."""
        row = self.row(s)
        if row is None:
            if self._full(self.rows()):
                return Decision("capacity", desktop_error("capacity", "too many idempotency keys"))
            self.db.execute("INSERT INTO claims VALUES (?,?,?,?,?,?,?,?,?,0)",
                            (*_columns(s), fingerprint(params), "running", None, now, None))
            return Decision("run")
        if self.conflicts(s, params):
            return Decision("conflict", desktop_error(
                "conflict", "idempotency key reused with other params"))
        if row.state == "stored":
            assert row.answer is not None
            if answer_class(row.answer) == "retryable":
                self._reclaim(s, now)
                return Decision("run")
            return Decision("replay", row.answer)
        # running: a live copy (the in-memory layer joins it) or an orphan
        if owner_alive:
            return Decision("busy", BUSY)
        if self._may_rerun(s, row):
            self._reclaim(s, now)
            return Decision("run")
        if not row.lease_over:
            return Decision("busy", BUSY)
        self._store(s, AMBIGUOUS, now)
        return Decision("ambiguous", AMBIGUOUS)

    def _full(self, rows: int) -> bool:
        """No room for a new key's row."""
        return rows >= self.max_rows

    @staticmethod
    def _may_rerun(s: Scope, row: Row) -> bool:
        """An orphaned running row runs again only for the replay-safe methods."""
        return s.method in REPLAY_SAFE

    def _reclaim(self, s: Scope, now: float) -> None:
        self.db.execute("UPDATE claims SET state='running', answer=NULL, claimed_at=?, "
                        "stored_at=NULL, lease_over=0 " + self._WHERE,
                        (now, *_columns(s)))

    def _store(self, s: Scope, answer: dict[str, Any], now: float) -> None:
        self.db.execute("UPDATE claims SET state='stored', answer=?, stored_at=? " + self._WHERE,
                        (compact(answer), now, *_columns(s)))

    def store(self, s: Scope, answer: dict[str, Any], now: float) -> tuple[dict[str, Any], bool]:
        """Store the answer for replay.  Returns what the caller must send and whether it was
        stored: an answer over 256 KiB is stored (and sent) as ambiguous; if the store fails
        the row stays ``running`` and the answer is ambiguous, never a success without a
        replay entry."""
        if len(compact(answer).encode("utf-8")) > MAX_ANSWER:
            answer = AMBIGUOUS
        try:
            self._store(s, answer, now)
        except sqlite3.Error:
            return AMBIGUOUS, False
        return answer, True

    # time ----------------------------------------------------------------------------------
    def timers(self) -> list[tuple[float, str, Scope]]:
        """(deadline, "lease" or "retention", scope) of every row, from its own timestamps."""
        out = []
        for u, d, m, k, state, claimed, stored, over in self.db.execute(
                "SELECT user, device, method, key, state, claimed_at, stored_at, lease_over "
                "FROM claims ORDER BY user, device, method, key"):
            if state == "running" and not over:
                out.append((claimed + LEASE, "lease", Scope(u, d, m, k)))
            elif state == "stored":
                out.append((stored + RETENTION, "retention", Scope(u, d, m, k)))
        return sorted(out, key=lambda t: (t[0], t[1], t[2].user, t[2].device, t[2].method,
                                          t[2].key))

    def end_lease(self, s: Scope, now: float) -> bool:
        row = self.row(s)
        if row is None or row.state != "running" or row.lease_over or now < row.claimed_at + LEASE:
            return False
        self.db.execute("UPDATE claims SET lease_over=1 " + self._WHERE,
                        _columns(s))
        return True

    def release(self, s: Scope) -> None:
        """Let a completed claim go at once (chunk-append: its ledger reconciles reruns)."""
        self.db.execute("DELETE FROM claims " + self._WHERE, _columns(s))

    def forget(self, s: Scope, now: float) -> bool:
        """48 h after its answer was stored the row is deleted: the key is forgotten."""
        row = self.row(s)
        if row is None or row.stored_at is None or now < row.stored_at + RETENTION:
            return False
        self.db.execute("DELETE FROM claims " + self._WHERE, _columns(s))
        return True

    def tick(self, now: float) -> int:
        """Fire every due lease and retention timer; returns how many fired."""
        n = 0
        for deadline, kind, s in self.timers():
            if deadline <= now:
                n += self.end_lease(s, now) if kind == "lease" else self.forget(s, now)
        return n


@dataclass
class MemClaim:
    state: str = "none"  # none (dropped, waiters still parked), running, done
    answer: dict[str, Any] | None = None
    waiters: int = 0


class MemoryClaims:
    """Process-local claims: a retry joins a running copy (up to 32 waiters per key); the
    last 512 completed results are replayed; at most 64 claims run at once."""

    def __init__(self, waiters: int = MAX_WAITERS, completed: int = MAX_COMPLETED,
                 running: int = MAX_RUNNING):
        self.max_waiters, self.max_completed, self.max_running = waiters, completed, running
        self.claims: OrderedDict[Scope, MemClaim] = OrderedDict()

    def state(self, s: Scope) -> str:
        c = self.claims.get(s)
        return c.state if c else "none"

    def get(self, s: Scope) -> MemClaim:
        return self.claims.get(s) or MemClaim()

    def running(self) -> int:
        return sum(1 for c in self.claims.values() if c.state == "running")

    def full(self, s: Scope) -> bool:
        """No room for one more waiter on this key."""
        return self.get(s).waiters >= self.max_waiters

    def start(self, s: Scope) -> None:
        c = self.claims.setdefault(s, MemClaim())
        c.state, c.answer = "running", None
        self.claims.move_to_end(s)

    def join(self, s: Scope) -> None:
        self.claims[s].waiters += 1

    def leave(self, s: Scope) -> None:
        c = self.claims.get(s)
        if c is not None:
            c.waiters = max(0, c.waiters - 1)
            if c.state == "none" and not c.waiters:
                del self.claims[s]

    def complete(self, s: Scope, answer: dict[str, Any]) -> None:
        c = self.claims.setdefault(s, MemClaim())
        c.state, c.answer = "done", answer
        self.claims.move_to_end(s)
        done = [k for k, v in self.claims.items() if v.state == "done" and v.waiters == 0]
        for k in done[: max(0, len(done) - self.max_completed)]:
            del self.claims[k]

    def forget(self, s: Scope) -> None:
        """A completed claim is let go (unless copies still wait for its answer)."""
        c = self.claims.get(s)
        if c is not None and c.state == "done" and not c.waiters:
            del self.claims[s]

    def drop(self, s: Scope) -> None:
        """The owner was cut at the dispatch limit: the claim is gone; parked waiters find
        no claim and time out."""
        c = self.claims.get(s)
        if c is not None:
            c.state, c.answer = "none", None
            if not c.waiters:
                del self.claims[s]
