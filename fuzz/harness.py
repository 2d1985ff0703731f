"""What every implementation harness shares: the failure type, the flattening of an
abstract state into the model's slot order, and snapshots for the transition tour.

A harness keeps its implementation's SQLite store at ``self.desktop.<STORE>`` (an
object with a ``db`` connection): a snapshot deep-copies everything else and
copies the database, so that the tour can go back to a state and try its next
transition.
"""

from __future__ import annotations

import copy
import sqlite3
import weakref
from pathlib import Path
from typing import Any, Callable

import osf_check.relay as _relay
from osf_check.models.dsl import Model


class Divergence(AssertionError):
    """The implementation did not follow the model (or broke a property)."""


class Violation(Divergence):
    """The implementation broke a property on its own state."""


class Crash(Divergence):
    """The implementation under test raised: a finding about it, not an error of
    osf-check (an exception raised while only the checker's code ran stays one)."""


#: the code under test in process: the reference implementation and its planted bugs,
#: each with the folder its sites are named from (``relay/…``, ``fuzz/mutants.py``)
UNDER_TEST = (Path(_relay.__file__).resolve().parent, Path(__file__).resolve().with_name("mutants.py"))


def _frames(e: BaseException) -> list[tuple[Any, int]]:
    """(frame, line) of ``e``'s traceback, innermost first."""
    out, tb = [], e.__traceback__
    while tb is not None:
        out.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return out[::-1]


def _implementation_object(frame: Any) -> bool:
    """The frame runs a method of the implementation: its ``self`` is an instance of a
    class of the reference implementation (or of a subclass, or a method patched onto
    one, as a user's planted bug is)."""
    me = frame.f_locals.get("self")
    return me is not None and any(k.__module__.startswith(_relay.__name__ + ".")
                                  for k in type(me).__mro__)


def crash_site(e: BaseException) -> str | None:
    """Where the implementation under test was when ``e`` was raised (its innermost
    frame, ``relay/wire/envelope.py:112 in id_ok``), or None if it was not running.  The
    implementation is the reference one and its planted bugs, and any method run on an
    object of it (a user's subclass, or a method patched onto one): a bug planted there
    is the implementation's, not osf-check's."""
    frames = _frames(e)
    for f, line in frames:
        path = Path(f.f_code.co_filename).resolve()
        site = next((u for u in UNDER_TEST if path == u or u in path.parents), None)
        if site is not None:
            base = site.parent if site.is_dir() else site.parent.parent
            return f"{path.relative_to(base).as_posix()}:{line} in {f.f_code.co_name}"
    for f, line in frames:
        if _implementation_object(f):
            return f"{Path(f.f_code.co_filename).name}:{line} in {f.f_code.co_name}"
    return None


class IdleEvents:
    """The environment's events the model leaves out where they change nothing, given to
    the implementation all the same (in process, or through an adapter)."""

    #: events of the environment the model leaves out where they change nothing (a timer
    #: that fires while the round is busy), each named by the model's action it is
    #: where the model does take it
    IDLE: tuple[str, ...] = ()

    def probe(self, enabled: Callable[[str], bool]) -> str | None:
        """Each of :attr:`IDLE` is given to the implementation where the model does not
        enable its action, and must leave it as it was.  ``enabled(name)``: whether the
        model enables an action of that name now.  Returns what the implementation did
        instead, or None."""
        for event in self.IDLE:
            if not enabled(event):
                why = self.idle(event)
                if why:
                    return why
        return None

    def idle(self, event: str) -> str | None:
        """Fire ``event`` (one of :attr:`IDLE`) where the model skips it: what the
        implementation did instead of nothing, or None."""
        raise NotImplementedError(event)


class HarnessBase(IdleEvents):
    #: the attribute of ``self.desktop`` that holds the SQLite store
    STORE = ""
    model: Model
    desktop: Any

    def flatten(self, st: dict[str, Any]) -> tuple:
        """The abstract state, given per variable name, as the model's state tuple."""
        flat: list[int] = []
        for v in self.model.variables:
            x = st[v.name]
            flat.extend(x if isinstance(x, list) else [x])
        return tuple(flat)

    def uncommitted(self) -> str | None:
        """The implementation's store holds a write it has not committed (a crash now
        would lose it: the outbox must be durable before the POST), or None."""
        store = getattr(self.desktop, self.STORE, None)
        try:
            db = getattr(store, "_db", None) or getattr(store, "db", None)
        except Exception:  # noqa: BLE001  (a closed store: nothing is pending)
            db = None
        if isinstance(db, sqlite3.Connection) and db.in_transaction:
            return (f"the implementation's {self.STORE} holds an uncommitted write: a crash "
                    f"now loses it (its database is not in autocommit, or a transaction was "
                    f"left open)")
        return None

    def snapshot(self) -> Any:
        store = getattr(self.desktop, self.STORE)
        # a copy by SQLite's backup API: unlike serialize/deserialize it works the same for
        # a database file (the reference adapter's, so that reopen is a real crash)
        data = sqlite3.connect(":memory:")
        store.db.backup(data)
        setattr(self.desktop, self.STORE, None)  # a connection does not deep-copy
        try:
            state = copy.deepcopy(self.__dict__ | {"model": None})
        finally:
            setattr(self.desktop, self.STORE, store)
        return state, data

    def forget(self, snap: Any) -> None:
        """The tour no longer needs this snapshot (it is only memory here)."""

    def restore(self, snap: Any) -> None:
        state, data = snap
        store = getattr(self.desktop, self.STORE)
        model = self.model
        self.__dict__.update(copy.deepcopy(state))
        self.model = model
        setattr(self.desktop, self.STORE, store)
        data.backup(store.db)


def probed_once(cache: dict[tuple, tuple[Any, Any]], who: tuple, model: Model,
                probe: Callable[[], Any]) -> set:
    """The data probes' classes, run once per run and implementation (``who``): every later
    walk or restored snapshot of the run gets the first outcome again, failure and all.  A
    new run (a new model object) probes again."""
    hit = cache.get(who)
    if hit is None or hit[0]() is not model:
        try:
            outcome: Any = probe()
        except Divergence as e:
            outcome = e
        cache[who] = (weakref.ref(model), outcome)
    done = cache[who][1]
    if isinstance(done, Divergence):
        raise Divergence(str(done))
    return set(done)
