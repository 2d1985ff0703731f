"""The search engines, by name: the one list ``explore --engine``, ``Checker.engine`` and
:func:`osf_check.explorer.check.check` read.

An engine is a breadth-first search of a model's reachable states that returns an
:class:`~osf_check.explorer.result.Exploration` (its states, parent links, counts and the
violations of the checks it judges) and, when asked, the graph the reach and fair checks
run on.  Registering one with :func:`register` makes it a choice of the command line and
of the API; nothing else needs to change (see ``docs/extending.md``).

>>> sorted(ENGINES), DEFAULT, choices()
(['explicit', 'vector'], 'vector', ('auto', 'explicit', 'vector'))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from osf_check.models.dsl import Model
from osf_check.models.errors import BadValue
from osf_check.properties.base import Property

from .explicit.bfs import bfs
from .result import Exploration, Progress

__all__ = ["Engine", "Search", "ENGINES", "DEFAULT", "register", "unregister", "get",
           "choices", "needing"]


@dataclass(frozen=True)
class Search:
    """What a run asks of its search, whichever engine runs it.  An engine reads the
    options it has (its :attr:`Engine.features`) and was refused the others before."""

    depth: int | None = 12
    max_states: int | None = None
    keep_graph: bool = False
    check_deadlock: bool = True
    stop_on_violation: bool = True
    progress: Progress | None = None
    reduce: Any = None  # a symmetry Reduction, or None
    checkpoint: str | None = None
    checkpoint_every: float = 300.0
    resume: str | None = None
    workers: int = 1
    tick: Callable[[int, int], None] | None = None
    cluster: str | None = None
    por: bool = False  # partial-order reduction (safety checks only)
    memory: int | None = None  # bytes the store keeps in memory; beyond, it spills
    spill_dir: str | None = None  # where the spill directory is made (None: a temp dir)


@dataclass(frozen=True)
class Engine:
    """One search engine.

    Parameters
    ----------
    name : str
        What ``--engine`` takes.
    doc : str
        One line for the help.
    search : callable
        ``search(model, properties, Search) -> Exploration``.
    judges : frozenset of str
        The property kinds (:mod:`osf_check.properties.kinds`) whose checks the search
        itself decides (the reach and fair checks run on its graph afterwards).  A
        property with a kind nobody judges is reported inconclusive, never as holding.
    features : frozenset of str
        What it offers besides: ``checkpoint`` (``--checkpoint``/``--resume``),
        ``cluster`` (``--cluster``), ``workers`` (more than one process), ``por``
        (``--por``, partial-order reduction), ``memory`` (``--memory``, a budget the
        store spills to disk beyond).
    """

    name: str
    doc: str
    search: Callable[[Model, Sequence[Property], Search], Exploration]
    judges: frozenset[str] = frozenset({"inv", "trans"})
    features: frozenset[str] = field(default_factory=frozenset)


#: every engine, by name, in the order registered
ENGINES: dict[str, Engine] = {}
#: what ``auto`` runs
DEFAULT = "vector"


def register(engine: Engine) -> Engine:
    """Add ``engine``; a name taken already is refused."""
    if engine.name in ENGINES or engine.name == "auto":
        raise BadValue(f"engine {engine.name!r} is already registered: give yours another name")
    ENGINES[engine.name] = engine
    return engine


def unregister(name: str) -> None:
    """Take ``name`` out again (a test's engine)."""
    if name == DEFAULT:
        raise BadValue(f"{name!r} is what auto runs: it stays")
    ENGINES.pop(name, None)


def choices() -> tuple[str, ...]:
    """What ``--engine`` takes: ``auto`` and every engine's name."""
    return ("auto", *ENGINES)


def get(name: str) -> Engine:
    """The engine ``name`` (``auto``: the default); bad input names the known ones."""
    engine = ENGINES.get(DEFAULT if name == "auto" else name)
    if engine is None:
        raise BadValue(f"unknown engine {name!r} (one of {', '.join(choices())})")
    return engine


def needing(feature: str) -> str:
    """The engines with ``feature``, as a message names them: ``the vector engine``."""
    names = [e.name for e in ENGINES.values() if feature in e.features]
    return f"the {' or '.join(names) or 'no'} engine"


def _explicit(m: Model, props: Sequence[Property], s: Search) -> Exploration:
    return bfs(m, props, depth=s.depth, max_states=s.max_states, keep_graph=s.keep_graph,
               check_deadlock=s.check_deadlock, stop_on_violation=s.stop_on_violation,
               progress=s.progress, reduce=s.reduce, por=s.por)


def _vector(m: Model, props: Sequence[Property], s: Search) -> Exploration:
    # lazy for speed: numpy and the store load only for a run that searches with them
    from .vector.search import vector_bfs
    return vector_bfs(m, props, depth=s.depth, max_states=s.max_states,
                      keep_graph=s.keep_graph, check_deadlock=s.check_deadlock,
                      stop_on_violation=s.stop_on_violation, progress=s.progress,
                      checkpoint=s.checkpoint, checkpoint_every=s.checkpoint_every,
                      resume=s.resume, workers=s.workers, tick=s.tick, reduce=s.reduce,
                      cluster=s.cluster, memory=s.memory, spill_dir=s.spill_dir)


register(Engine("explicit", "compiled Python, one state at a time, one process", _explicit,
                features=frozenset({"por"})))
register(Engine("vector", "numpy, a level of packed states at once; checkpoints, workers, "
                "a cluster", _vector, features=frozenset({"checkpoint", "cluster", "workers", "memory"})))
