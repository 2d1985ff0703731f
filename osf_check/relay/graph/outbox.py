"""The desktop's outbox: completions persisted in SQLite before they are posted.

The file survives a desktop restart: reopening it gives back every completion that
was written and not yet acknowledged.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..jstext import stringify


class Outbox:
    _db: sqlite3.Connection | None  # None while closed

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.open()

    def open(self) -> None:
        self._db = sqlite3.connect(self.path, isolation_level=None)  # autocommit: durable
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS outbox (execution_id TEXT PRIMARY KEY, "
                         "seq INTEGER, payload TEXT NOT NULL)")

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def reopen(self) -> None:
        """Close the database and open the file again (a crash between two steps)."""
        self.close()
        self.open()

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the outbox is closed")
        return self._db

    def put(self, execution_id: str, payload: dict[str, Any]) -> None:
        seq = self.db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM outbox").fetchone()[0]
        self.db.execute("INSERT OR REPLACE INTO outbox VALUES (?, ?, ?)",
                        (execution_id, seq, stringify(payload)))  # SQLite takes no lone half

    def remove(self, execution_id: str) -> None:
        self.db.execute("DELETE FROM outbox WHERE execution_id = ?", (execution_id,))

    def entries(self) -> list[tuple[str, dict[str, Any]]]:
        rows = self.db.execute("SELECT execution_id, payload FROM outbox ORDER BY seq").fetchall()
        return [(e, json.loads(p)) for e, p in rows]

    def __contains__(self, execution_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM outbox WHERE execution_id = ?",
                               (execution_id,)).fetchone() is not None
