"""What a search learns, whichever engine ran it: the :class:`Exploration` (states,
parent links, edges, counts) and the :class:`Violation` found in it.

The explicit and vector engines fill these in, and the graph checks, the symmetry
reduction, the reports and the CLI read them; they sit apart from every engine so that
each of those imports them without importing a search.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Callable

from osf_check.models.dsl import Model

from osf_check.explorer.compiled.pycompile import compile_steps, compile_unpack

__all__ = ["Violation", "Exploration", "Progress", "WorkerLost"]

Progress = Callable[[int, int, int, float], None]  # depth, distinct, generated, seconds


@dataclass
class Violation:
    """A property that failed, with the shortest path (ids of states) that shows it."""

    prop: str
    kind: str  # inv, trans, deadlock, reach, fair
    message: str
    path: list[int]  # state ids from an initial state
    actions: list[int]  # action instance index taken into path[i] (-1 for the first)
    loop_start: int | None = None  # index into path where the lasso's cycle starts
    #: the behaviour ends by stuttering forever in its last state (``loop_start`` is that
    #: state's index): a halting or stuttering counterexample, not a cycle of steps
    stutters: bool = False
    #: the model's own states, where ``path`` names states of a symmetry-reduced search
    #: (``actions`` then are the model's steps between them)
    states: list[tuple] | None = None


@dataclass
class Exploration:
    """Everything a BFS learned; the graph part is filled only when asked for."""

    model: Model
    bound: int | None
    packed: list[int] = field(default_factory=list)
    parent: array = field(default_factory=lambda: array("q"))
    via: array = field(default_factory=lambda: array("q"))
    level_start: list[int] = field(default_factory=list)  # first id of each depth
    generated: int = 0
    fired: list[int] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    complete: bool = False
    stopped: str | None = None  # why the search ended early: violation, max-states
    expanded: int = 0  # ids < expanded have had all their successors computed
    seconds: float = 0.0
    seconds_before: float = 0.0  # of ``seconds``, those of the run a --resume continues
    edges: tuple[array, array, array] | None = None  # src, dst, action instance
    ids: dict[int, int] = field(default_factory=dict)  # packed state -> id
    witness_seen: dict[str, bool] = field(default_factory=dict)
    trans_applied: dict[str, int] = field(default_factory=dict)
    #: how a partial-order reduced search expanded its states (a PorStats), else None
    por: Any = None

    @property
    def distinct(self) -> int:
        return len(self.packed)

    @property
    def depth_reached(self) -> int:
        return len(self.level_start) - 1

    @property
    def unexpanded(self) -> int:
        return self.distinct - self.expanded

    def stored_bytes(self) -> int:
        """Bytes held for the visited set: the packed states (each an int object shared by
        the dedup dict and the id list), the dict, and the parent/action links."""
        import sys
        ints = sum(sys.getsizeof(p) for p in self.packed)
        return (ints + sys.getsizeof(self.ids) + sys.getsizeof(self.packed)
                + self.parent.itemsize * len(self.parent) + self.via.itemsize * len(self.via))

    def edges_by_source(self) -> tuple[Any, Any, Any]:
        """The recorded edges (sorted by source) as numpy arrays, by source: where each
        state's edges start (``distinct + 1`` offsets, counted here), targets, actions."""
        import numpy as np
        n = self.distinct
        assert self.edges is not None, "bfs(keep_graph=True) records the edges"
        if not n:
            return np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
        src, dst, act = (e if isinstance(e, np.ndarray) else np.frombuffer(e, dtype=np.int64)
                         for e in self.edges)
        off = np.zeros(n + 1, dtype=np.int64)  # out-degrees summed: one pass, no search
        np.cumsum(np.bincount(src, minlength=n), out=off[1:])
        return off, dst, act

    def histogram(self) -> list[int]:
        bounds = self.level_start + [self.distinct]
        return [bounds[i + 1] - bounds[i] for i in range(len(self.level_start))]

    def path_to(self, sid: int) -> tuple[list[int], list[int]]:
        ids, acts = [], []
        while sid >= 0:
            ids.append(sid)
            acts.append(self.via[sid])
            sid = self.parent[sid]
        return ids[::-1], acts[::-1]

    def state(self, sid: int) -> tuple:
        return self._unpack(self.packed[sid])

    def trace_states(self, v: Violation) -> list[tuple]:
        """The states of ``v``'s counterexample; a violating edge's target (id -1) is
        recomputed from the state before it."""
        if v.states is not None:
            return list(v.states)
        states: list[tuple] = []
        for sid, ai in zip(v.path, v.actions):
            if sid >= 0:
                states.append(self.state(sid))
            else:
                states.append(compile_steps(self.model)[ai](states[-1]))
        return states

    def __post_init__(self) -> None:
        self._unpack = compile_unpack(self.model)


class WorkerLost(RuntimeError):
    """A worker process died (killed, out of memory): the run has no verdict; a
    checkpoint, if one was written, resumes it."""
