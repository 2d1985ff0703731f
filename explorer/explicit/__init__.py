"""The explicit engine: breadth-first search one state at a time, with parent links, over
the compiled steps (:func:`bfs`).  Its result types, shared with every engine, live in
:mod:`osf_check.explorer.result` and are re-exported here.
"""

from osf_check.explorer.result import Exploration, Progress, Violation

from .bfs import bfs

__all__ = ["bfs", "Exploration", "Progress", "Violation"]
