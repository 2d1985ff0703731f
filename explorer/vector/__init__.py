"""The vector engine: breadth-first search a level at a time over numpy arrays of packed
states (:func:`vector_bfs`), in one process or partitioned by hash among workers
(:mod:`.partition`) or the nodes of a Ray cluster (:mod:`.cluster`, imported on demand:
Ray is an optional dependency).  It finds the same states, counts and shortest
counterexamples as the explicit engine.
"""

from .partition import WorkerLost
from .search import vector_bfs

__all__ = ["vector_bfs", "WorkerLost"]
