"""Several model steps in one step of the implementation.

Real code does not stop at the model's step boundaries: a desktop that syncs and
starts the Graph it fetched in one go, a relay that claims as it receives.  Such an
implementation is checked without being split, in one of two ways:

- its adapter says which model steps it took (``took``: the labels, the one it was
  asked for first); each must be one the model enables where the one before it left
  the model, and the last must leave the model where the implementation is;
- it says nothing, and the implementation may take its own steps (:attr:`OWN` of its
  harness) unannounced: the model's successor is searched forward over those steps
  only, breadth first, for the state the implementation is in.  The search is bounded;
  a bound hit is a failure that says so, never a pass.

A step answered with one observation and nothing more still means that one step.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Sequence

from osf_check.models.dsl import Model

from .harness import Divergence

#: how far the search looks past the requested step: hidden steps, and states visited
DEPTH, STATES = 6, 20_000

Step = Callable[[tuple], tuple | None]


def declared(model: Model, steps: Sequence[Step], ai: int, before: tuple,
             labels: Sequence[str]) -> list[int]:
    """The model steps an adapter says the implementation took for action ``ai``, as
    instance indices after ``ai``; each checked to be enabled where the model then is."""
    asked = model.instances[ai].label
    if not labels or labels[0] != asked:
        raise Divergence(f"asked for {asked}, the implementation says it took "
                         f"{', '.join(labels) or 'nothing'}: the first step taken must be "
                         f"the one asked for")
    index = {i.label: i.index for i in model.instances}
    out, s = [], steps[ai](before)
    for label in labels[1:]:
        bi = index.get(label)
        t = steps[bi](s) if bi is not None and s is not None else None
        if t is None:
            raise Divergence(f"on {asked} the implementation says it also took {label}, "
                             f"which the model does not enable there")
        out.append(bi)
        s = t
    return out


def unasked(todo: list[int], took: Sequence[int]) -> list[int]:
    """``todo``, the rest of a path of model steps being driven, without the steps the
    implementation just took by itself where the path takes them next (they are done).

    >>> unasked([3, 4, 5], [3]), unasked([3, 4, 5], [4]), unasked([3], [])
    ([4, 5], [3, 4, 5], [3])
    """
    n = len(took)
    return todo[n:] if n and todo[:n] == list(took) else todo


def search(steps: Sequence[Step], own: Sequence[int], start: tuple,
           target: tuple) -> list[int] | str:
    """The shortest sequence of the implementation's own steps (``own``, instance
    indices) that takes the model from ``start`` to ``target``; else why not, as a
    sentence: none exists, or the bound was hit first (unknown)."""
    parent: dict[tuple, tuple[tuple, int] | None] = {start: None}
    frontier = deque([(start, 0)])
    cut = False
    while frontier:
        s, d = frontier.popleft()
        if s == target:
            return _path(parent, s)
        if d == DEPTH or len(parent) >= STATES:
            cut = True
            continue
        for bi in own:
            t = steps[bi](s)
            if t is not None and t not in parent:
                parent[t] = (s, bi)
                frontier.append((t, d + 1))
    if cut:
        return (f"unknown whether the implementation's own steps lead there: the search "
                f"stopped at {DEPTH} hidden steps or {STATES:,} states")
    return "nor do any of the implementation's own steps lead there"


def _path(parent: dict[tuple, tuple[tuple, int] | None], s: tuple) -> list[int]:
    out = []
    while parent[s] is not None:
        s, bi = parent[s]  # type: ignore[misc]
        out.append(bi)
    return out[::-1]


def breaking(steps: Sequence[Step], invs: Sequence[tuple[str, Callable[[tuple], bool]]],
             start: tuple, depth: int = 2) -> list[int] | None:
    """The shortest sequence of the model's steps (at most ``depth``) that takes
    ``start``, a state the model does not reach here, to one that breaks an invariant;
    None if there is none so near."""
    parent: dict[tuple, tuple[tuple, int] | None] = {start: None}
    frontier = deque([(start, 0)])
    while frontier:
        s, d = frontier.popleft()
        if not all(f(s) for _, f in invs):
            return _path(parent, s)
        if d == depth or len(parent) >= STATES:
            continue
        for bi, step in enumerate(steps):
            t = step(s)
            if t is not None and t not in parent:
                parent[t] = (s, bi)
                frontier.append((t, d + 1))
    return None
