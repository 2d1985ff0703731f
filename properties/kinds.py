"""The kinds of check a property may hold, by name: the one list :class:`~.base.Check`
accepts and the checker reads to know what a violation means and which phase judges it.

A kind is judged by whoever declares it: an engine (:attr:`.Engine.judges`, the searches
decide ``inv`` and ``trans`` in every state and step) or the graph checks after the
search (``reach`` and ``fair``).  A kind registered here that no phase of a run judges
leaves its property inconclusive (exit 152), never "holds"; ``prove`` decides ``inv`` and
``trans`` only and calls the rest explore's.  See ``docs/extending.md``.

>>> list(KINDS)
['inv', 'trans', 'reach', 'fair']
>>> KINDS["fair"].verdict, KINDS["fair"].graph
('liveness', True)
"""

from __future__ import annotations

from dataclasses import dataclass

from osf_check.models.errors import BadValue

__all__ = ["Kind", "KINDS", "register", "unregister", "verdict_of", "on_graph"]


@dataclass(frozen=True)
class Kind:
    """One kind of check.

    Parameters
    ----------
    name : str
        What ``Check(name, fn)`` takes.
    doc : str
        What ``fn`` returns and what holding means.
    verdict : str
        What a violation is: ``safety`` (exit 12) or ``liveness`` (exit 13).
    graph : bool
        Judged on the reachable graph once the search is done (the search then keeps
        its edges), rather than by the search state by state.
    """

    name: str
    doc: str
    verdict: str
    graph: bool = False

    def __post_init__(self) -> None:
        if self.verdict not in ("safety", "liveness"):
            raise BadValue(f"check kind {self.name!r}: verdict is safety or liveness, "
                           f"not {self.verdict!r}")


#: every kind, by name, in the order registered
KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add ``kind``; a name taken already is refused."""
    if kind.name in KINDS:
        raise BadValue(f"check kind {kind.name!r} is already registered")
    KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Take ``name`` out again (a test's kind); the built-in ones stay."""
    if name in _BUILT_IN:
        raise BadValue(f"{name!r} is a built-in check kind: it stays")
    KINDS.pop(name, None)


def verdict_of(kind: str) -> str:
    """What a violation of a check of ``kind`` (or a deadlock) makes of the run."""
    return "deadlock" if kind == "deadlock" else KINDS[kind].verdict


def on_graph(kind: str) -> bool:
    """Whether ``kind``'s checks run on the graph after the search."""
    return KINDS[kind].graph


register(Kind("inv", "fn(s, model) -> expression: holds in every reachable state", "safety"))
register(Kind("trans", "fn(s, t, inst, model) -> expression or None: holds on every step "
              "of the action instance", "safety"))
register(Kind("reach", "fn(s, model) -> [Goal]: from every reachable premise state a goal "
              "state is reachable", "liveness", graph=True))
register(Kind("fair", "fn(s, model) -> [Goal]: each goal's temporal form holds on every "
              "fair behaviour", "liveness", graph=True))
_BUILT_IN = frozenset(KINDS)
