"""The partitioned search on a Ray cluster: one actor per shard, arrays in Ray's object store.

Ray (``pip install 'osf-check[cluster]'``) is the transport, nothing else: the search is
:func:`.partition.partitioned_bfs` and each actor holds a :class:`.partition.Shard`.
Successors travel as object references: a worker's part for owner ``o`` is one object,
and ``o``'s ``merge`` receives the references, which Ray resolves by copying the arrays
from the node that made them to the node that needs them (never through the driver).
Why Ray and not Dask distributed: actors that keep state (a shard's visited set) between
calls, and methods returning several objects (one per owner), are Ray's core; Dask's
actors are experimental and its futures are built for stateless tasks.

``address`` is ``"local"`` (a Ray instance started here, one CPU per worker, stopped at
the end) or an existing cluster's address (``ray start --head`` prints it; ``"auto"``
finds one running on this machine).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

import numpy as np

from osf_check.models.errors import BadValue

from .partition import Shard, Slices, Summary, WorkerLost, gather, sent_bytes, summary_told
from .shard_edges import place

__all__ = ["RayShards"]


def connect(address: str, workers: int) -> tuple[Any, bool]:
    """Ray, connected to ``address``; whether we started it (and so must stop it)."""
    try:
        import ray
    except ImportError:
        raise BadValue("--cluster needs Ray: pip install 'osf-check[cluster]'") from None
    if ray.is_initialized():
        return ray, False
    why = _unreachable(address)
    if why is not None:  # Ray itself would wait for ever on a wrong address
        raise BadValue(f"--cluster {address}: cannot reach a Ray cluster there ({why}); "
                       "start one with `ray start --head` or use --cluster local")
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False,
             "include_dashboard": False}
    try:
        if address == "local":
            ray.init(num_cpus=workers, **quiet)
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise BadValue(f"--cluster {address}: cannot reach a Ray cluster there ({first}); "
                       "start one with `ray start --head` or use --cluster local") from None
    return ray, True


def _unreachable(address: str) -> str | None:
    """Why nothing can answer at ``address`` (None: something may; ``auto`` and ``local``
    are Ray's to resolve)."""
    import socket
    if address in ("auto", "local"):
        return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return "an address is HOST:PORT as `ray start --head` prints it, auto or local"
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as e:
        return f"nothing answers at {host}:{port}: {e.strerror or e}"
    return None


def _by_value(ray: Any) -> None:
    """Send the user's model modules to the actors with the model: a model file is
    loaded under a name no other process can import (its functions, pickled by
    reference, killed every actor that unpickled them)."""
    import sys

    from osf_check.properties.sources import USER_MODULES
    for module in USER_MODULES.values():
        if sys.modules.get(module.__name__) is module:
            ray.cloudpickle.register_pickle_by_value(module)


class RayShards:
    """Shards as Ray actors (the transport :func:`.partition.partitioned_bfs` drives)."""

    def __init__(self, make: Callable[[int, int], Shard], parts: int, address: str,
                 graph: bool = False):
        """``parts`` actors (0: one per CPU of the cluster, at least 2); ``graph``: the
        shards keep the graph's edges (``make`` builds them so)."""
        import os
        self.actors: list[Any] = []
        self.ray, self.owned = connect(address, parts or os.cpu_count() or 2)
        ray = self.ray
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if not parts:
            parts = max(2, cpus)
        elif parts > cpus:  # an actor takes a CPU: the others would wait for ever
            self.close()
            raise BadValue(f"--workers {parts}: the Ray cluster at {address} has {cpus} "
                           "CPUs, one per worker is needed")
        self.parts, self.shuffled = parts, 0
        _by_value(ray)
        actor = ray.remote(num_cpus=1)(_ShardActor)
        self.actors = [actor.remote(make, w, parts) for w in range(parts)]
        self.sent: list[list[Any]] = []  # per worker, its references, one per owner
        self.new_keys: list[Any] = []
        self.graph = graph
        # with the graph: per owner, its answers to each worker for the last level
        self.answers: list[list[Any]] = []

    def _answers_to(self, w: int) -> list[Any]:
        return [self.answers[o][w] for o in range(self.parts)] if self.answers else []

    def _get(self, refs: list[Any]) -> list[Any]:
        from ray.exceptions import RayActorError, RayTaskError
        try:
            return self.ray.get(refs)
        except RayActorError as e:
            raise WorkerLost(f"a Ray actor of the search died ({type(e).__name__})") from None
        except RayTaskError as e:  # the worker's own exception, raised here
            raise e.as_instanceof_cause() from None

    def load(self, levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]],
             edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> list[int]:
        ref = self.ray.put((levels, edges))  # once in the object store, read by every actor
        return self._get([a.load.remote(ref) for a in self.actors])

    def expand(self, failed: set[str]) -> list[dict[str, Any]]:
        outs = [a.expand.options(num_returns=1 + self.parts).remote(sorted(failed),
                                                                   *self._answers_to(w))
                for w, a in enumerate(self.actors)]
        self.answers = []
        stats = self._get([o[0] for o in outs])
        self.sent = [list(o[1:]) for o in outs]
        self.shuffled += sum(s.pop("shuffled") for s in stats)
        return stats

    def merge(self) -> list[tuple[int, int]]:
        extra = self.parts if self.graph else 0  # the answers, final if nothing is new
        outs = [a.merge.options(num_returns=2 + extra).remote(*[self.sent[s][w] for s in
                                                                range(self.parts)])
                for w, a in enumerate(self.actors)]
        self.sent = []
        self.new_keys = [o[1] for o in outs]
        self.answers = [list(o[2:]) for o in outs] if self.graph else []
        return self._get([o[0] for o in outs])

    def number(self, start: int) -> list[dict[str, Any]]:
        n = 1 + (self.parts if self.graph else 0)
        outs = [a.number.options(num_returns=n).remote(start, *self.new_keys)
                for a in self.actors]
        if self.graph:  # the answers, now final
            self.answers = [list(o[1:]) for o in outs]
            outs = [o[0] for o in outs]
        got = self._get(outs)
        self.new_keys = []
        return got

    def leave(self, count: int) -> Slices:
        """The states, gathered here now (the actors go with the cluster)."""
        return Slices(count, arrays=gather(self._get([a.dump.remote() for a in self.actors])))

    def gather_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every actor's edges, placed here in one process's order."""
        got = self._get([a.edges.remote(*self._answers_to(w))
                         for w, a in enumerate(self.actors)])
        self.answers = []
        return place(got, max(self._get([a.total.remote() for a in self.actors])))

    def stored_bytes(self) -> int:
        return sum(self._get([a.stored_bytes.remote() for a in self.actors]))

    def close(self) -> None:
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.actors = []
        if self.owned:
            self.ray.shutdown()


class _ShardActor:
    """A shard in a Ray actor: a worker's part for each owner is its own object."""

    def __init__(self, make: Callable[[int, int], Shard], w: int, parts: int):
        from osf_check.explorer.store.allocator import keep_freed_memory
        keep_freed_memory()  # the actor's process is a worker's alone (as the CLI's)
        self.shard, self.w = make(w, parts), w

    def load(self, got: tuple[Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, int]],
                              tuple[np.ndarray, np.ndarray, np.ndarray] | None]) -> int:
        levels, edges = got
        return self.shard.load(list(levels), edges)

    def expand(self, failed: list[str], *answers: np.ndarray) -> tuple[Any, ...]:
        stats, parts = self.shard.expand(set(failed), list(answers) or None)
        stats["shuffled"] = sent_bytes(parts, self.w, self.shard.out is not None)
        return (stats, *parts)

    def merge(self, *incoming: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
              ) -> tuple[Any, ...]:
        new = self.shard.merge(list(incoming))
        told = summary_told(new)
        if self.shard.out is None:
            return told, new
        return (told, new, *(self.shard.replies or [None] * self.shard.parts))

    def number(self, start: int, *summaries: Summary) -> Any:
        got = self.shard.number(start, list(summaries))
        if self.shard.out is None:
            return got
        assert self.shard.replies is not None
        return (got, *self.shard.replies)

    def edges(self, *answers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.shard.edges(list(answers) or None)
        assert self.shard.out is not None
        return self.shard.out.arrays()

    def total(self) -> int:
        return self.shard.total

    def dump(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.shard.dump()

    def stored_bytes(self) -> int:
        return self.shard.stored_bytes()
